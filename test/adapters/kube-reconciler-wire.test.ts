/**
 * The reconciler's adapters (pods, SidecarSets, events, namespaces) against a local HTTP server that
 * answers as the API server does, so that what goes over the wire (paths,
 * query, content type, precondition) and how answers become typed errors is
 * checked without a cluster. The end-to-end suite runs them against a real one.
 */
import { describe, expect, it } from '@jest/globals';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { kubeEventSink } from '../../lib/adapters/kube-events.ts';
import { fixedSidecarSetVersion } from '../../lib/adapters/kube-sidecarsets-version.ts';
import { kubeNamespaceSnapshot } from '../../lib/adapters/kube-namespaces.ts';
import { kubePodPages } from '../../lib/adapters/kube-pods.ts';
import { kubeStatusWriter } from '../../lib/adapters/kube-sidecarsets.ts';
import type { PodSummary } from '../../lib/sidecarset/status.ts';
import { ListExpiredError, StatusConflictError } from '../../lib/ports/errors.ts';
import { apiStatus as status, fakeApiServerForSuite, type Route } from './fake-api-server.ts';
import { listedPod } from '../../testkit/status-sync-objects.ts';

const fake = fakeApiServerForSuite();

/** The one client, as the reconciler makes it, without retries: each test sees exactly the requests it caused. */
function client() {
  return kubeConfigClient(parseKubeConfig(fake.kubeconfig(), 'test'), { retryDelaysMs: [] });
}

async function collect(pages: AsyncIterable<readonly PodSummary[]>): Promise<string[][]> {
  const out: string[][] = [];
  for await (const page of pages) out.push(page.map((p) => `${p.namespace}/${p.name}`));
  return out;
}

describe('the pod list', () => {
  const podsPage = (names: string[], next?: string) => ({
    status: 200,
    body: { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '7', ...(next !== undefined ? { continue: next } : {}) }, items: names.map((name) => listedPod({ name, namespace: 'shop' })) },
  });

  it('reads every page in chunks of 500, following continue tokens, as the functions identity', async () => {
    fake.route = (req) => (req.url.includes('continue=') ? podsPage(['c']) : podsPage(['a', 'b'], 'token/+1'));
    const pages = await collect(kubePodPages(client()).pages());
    expect(pages).toEqual([['shop/a', 'shop/b'], ['shop/c']]);
    expect(fake.seen.map((r) => [r.method, r.url])).toEqual([
      ['GET', '/api/v1/pods?limit=500'],
      ['GET', '/api/v1/pods?limit=500&continue=token%2F%2B1'],
    ]);
    expect(fake.seen.every((r) => r.authorization === 'Bearer functions-token')).toBe(true);
  });

  it('keeps only the summary of each pod', async () => {
    fake.route = () => podsPage(['a']);
    const [page] = await (async () => {
      const out: (readonly PodSummary[])[] = [];
      for await (const p of kubePodPages(client()).pages()) out.push(p);
      return out;
    })();
    const summary = page?.[0];
    expect({ ...summary, slim: undefined }).toEqual({ name: 'a', namespace: 'shop', uid: '', labels: { app: 'web' }, inactive: false, slim: undefined, injectedSets: new Set(), hashAnnotation: undefined });
    // The slim pod keeps what readiness and consistency read, and nothing else of the pod.
    expect(summary?.slim.spec?.containers.map((c) => c.name)).toEqual(['app']);
    expect(Object.keys(summary?.slim.metadata ?? {})).toEqual(['annotations']);
  });

  it('says the list expired when a continue token is answered 410', async () => {
    fake.route = (req) => (req.url.includes('continue=') ? status(410, 'Expired', 'The provided continue parameter is too old') : podsPage(['a'], 'old'));
    await expect(collect(kubePodPages(client()).pages())).rejects.toThrow(ListExpiredError);
  });

  it.each<[string, Route, RegExp]>([
    ['a refusal', () => status(403, 'Forbidden', 'pods is forbidden: User "x" cannot list resource "pods"'), /the API server answered 403: pods is forbidden/],
    ['an answer that is not a list', () => ({ status: 200, body: { kind: 'Status' } }), /not a list/],
  ])('fails with a KubeApiError on %s', async (_name, answer, message) => {
    fake.route = answer;
    const list = collect(kubePodPages(client()).pages());
    await expect(list).rejects.toThrow(KubeApiError);
    await expect(collect(kubePodPages(client()).pages())).rejects.toThrow(message);
  });
});

describe('status writes', () => {
  it('merge-patch the status subresource with the resourceVersion as a precondition', async () => {
    fake.route = () => ({ status: 200, body: { metadata: { name: 'log-agent' } } });
    const writer = kubeStatusWriter(client());
    expect(await writer.patchStatus('log-agent', '42', { matchedPods: 3 })).toBe('written');
    expect(fake.seen).toEqual([
      {
        method: 'PATCH',
        url: '/apis/apps.kruise.io/v1alpha1/sidecarsets/log-agent/status',
        contentType: 'application/merge-patch+json',
        authorization: 'Bearer functions-token',
        body: { metadata: { resourceVersion: '42' }, status: { matchedPods: 3 } },
      },
    ]);
  });

  it('turn 409 into a StatusConflictError and 404 into gone', async () => {
    const writer = kubeStatusWriter(client());
    fake.route = () => status(409, 'Conflict', 'the object has been modified');
    await expect(writer.patchStatus('log-agent', '42', {})).rejects.toThrow(StatusConflictError);
    fake.route = () => status(404, 'NotFound', 'sidecarsets "log-agent" not found');
    expect(await writer.patchStatus('log-agent', '42', {})).toBe('gone');
    expect(await writer.get('log-agent')).toBeUndefined();
  });

  it('read a set again as it is stored', async () => {
    fake.route = () => ({ status: 200, body: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'log-agent', resourceVersion: '43' }, spec: { x: 1 } } });
    expect(await kubeStatusWriter(client()).get('log-agent')).toMatchObject({ metadata: { resourceVersion: '43' }, spec: { x: 1 } });
    expect(fake.seen.map((r) => [r.method, r.url])).toEqual([['GET', '/apis/apps.kruise.io/v1alpha1/sidecarsets/log-agent']]);
  });
});

describe('events', () => {
  it('are created in default about the SidecarSet, with a generated name', async () => {
    fake.route = (req) => ({ status: 201, body: req.body });
    const at = new Date('2026-11-30T12:00:00Z');
    await kubeEventSink(client(), { now: () => at }).record({ sidecarSet: { name: '-Log-Agent', uid: 'u-1' }, type: 'Warning', reason: 'PodsNotInjected', message: 'm' });
    expect(fake.seen[0]).toMatchObject({
      method: 'POST',
      url: '/api/v1/namespaces/default/events',
      body: {
        metadata: { generateName: 'log-agent.', namespace: 'default' },
        involvedObject: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', name: '-Log-Agent', uid: 'u-1' },
        type: 'Warning',
        reason: 'PodsNotInjected',
        message: 'm',
        source: { component: 'sidecarset-status-sync' },
        firstTimestamp: '2026-11-30T12:00:00.000Z',
        count: 1,
      },
    });
  });
});

describe('an event about a SidecarSet, on a cluster storing v1beta1', () => {
  it('names the set in the version the cluster stores it in, as Kruise 1.9 does', async () => {
    fake.route = (req) => ({ status: 201, body: req.body });
    await kubeEventSink(client(), { versions: fixedSidecarSetVersion('v1beta1') }).record({ sidecarSet: { name: 'log-agent', uid: 'u-1' }, type: 'Normal', reason: 'RolloutFinished', message: 'm' });
    expect(fake.seen[0]?.body).toMatchObject({ involvedObject: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet', name: 'log-agent', uid: 'u-1' } });
  });
});

describe('namespace labels for a resync', () => {
  it('come from one list, and a namespace created since is read on its own', async () => {
    fake.route = (req) => {
      if (req.url.startsWith('/api/v1/namespaces?')) return { status: 200, body: { kind: 'NamespaceList', metadata: {}, items: [{ metadata: { name: 'shop', labels: { env: 'prod' } } }] } };
      if (req.url === '/api/v1/namespaces/new') return { status: 200, body: { metadata: { name: 'new', labels: { env: 'dev' } } } };
      return status(404, 'NotFound', 'not found');
    };
    const source = kubeNamespaceSnapshot(client());
    expect(await source.labels(['shop', 'new', 'gone'])).toEqual(new Map([['shop', { env: 'prod' }], ['new', { env: 'dev' }]]));
    expect(await source.labels(['shop', 'new'])).toEqual(new Map([['shop', { env: 'prod' }], ['new', { env: 'dev' }]]));
    expect(fake.seen.map((r) => r.url)).toEqual(['/api/v1/namespaces?limit=500', '/api/v1/namespaces/new', '/api/v1/namespaces/gone']);
  });
});
