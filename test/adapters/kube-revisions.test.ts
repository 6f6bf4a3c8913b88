import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { kubeClient, settingsConnection } from '../../lib/adapters/kube-request.ts';
import { kubeRevisionSource, revisionSelector, RevisionSelectorError } from '../../lib/adapters/kube-revisions.ts';
import { kubeClusterReader, type RevisionReader, type ServerReader } from '../../lib/adapters/kube-sources.ts';
import { checkKubeconfig, kubeconfigHttpsSettings } from '../../lib/adapters/kubeconfig-reader.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { apiStatus, startFakeApiServer, type FakeApiServer } from './fake-api-server.ts';

describe('revisionSelector', () => {
  it('selects the set by name, then every label given', () => {
    expect(revisionSelector('agent')).toBe('kruise.io/sidecarset-name=agent');
    expect(revisionSelector('agent', { 'apps.kruise.io/sidecarset-custom-version': 'v1.2_3' })).toBe(
      'kruise.io/sidecarset-name=agent,apps.kruise.io/sidecarset-custom-version=v1.2_3',
    );
  });

  it.each([
    ['a value with a comma, which would add a requirement', 'agent', { v: 'a,b=c' }, /^label v="a,b=c" cannot be selected: a valid label must be/],
    ['a value with a space', 'agent', { v: 'a b' }, /^label v="a b" cannot be selected/],
    ['a set name longer than a label value', 'a'.repeat(64), {}, /^label kruise.io\/sidecarset-name="a{64}" cannot be selected: must be no more than 63 characters/],
    ['a key that is not a label key', 'agent', { 'a=b': 'c' }, /^"a=b" is not a label key/],
  ])('refuses %s, naming it', (_name, set, labels, message) => {
    expect(() => revisionSelector(set, labels)).toThrow(RevisionSelectorError);
    expect(() => revisionSelector(set, labels)).toThrow(message);
  });
});

describe('kubeRevisionSource over a reader', () => {
  const reader = (answers: Partial<RevisionReader>): RevisionReader => ({
    readControllerRevision: () => Promise.reject(new Error('not expected')),
    listControllerRevisions: () => Promise.reject(new Error('not expected')),
    ...answers,
  });

  it('lists with the selector in its namespace and returns the items', async () => {
    const asked: string[] = [];
    const source = kubeRevisionSource(
      reader({
        listControllerRevisions: (namespace, selector) => {
          asked.push(`${namespace} ${selector}`);
          return Promise.resolve({ kind: 'ControllerRevisionList', items: [{ metadata: { name: 'agent-1' } }] });
        },
      }),
      'history',
    );
    expect(source.namespace).toBe('history');
    await expect(source.list('agent', { k: 'v' })).resolves.toEqual([{ metadata: { name: 'agent-1' } }]);
    expect(asked).toEqual(['history kruise.io/sidecarset-name=agent,k=v']);
  });

  it.each([
    ['not a list', { items: 'x' }, 'the answer is not a list (no items array)'],
    ['an item that is not an object', { items: [1] }, 'the list holds an item that is not an object'],
  ])('refuses an answer that is %s, naming the read', async (_name, body, message) => {
    const error = (await kubeRevisionSource(reader({ listControllerRevisions: () => Promise.resolve(body) }), 'h').list('agent').catch((e: unknown) => e)) as KubeApiError;
    expect(error).toBeInstanceOf(KubeApiError);
    expect(error.operation).toBe('list ControllerRevisions in namespace "h" labelled kruise.io/sidecarset-name=agent');
    expect(error.message).toBe(message);
  });

  it('refuses a list longer than its page bound, naming the read, rather than reading on without end', async () => {
    let pages = 0;
    const source = kubeRevisionSource(
      reader({
        listControllerRevisions: (_namespace, _selector, _signal, page) => {
          pages++;
          return Promise.resolve({ metadata: { continue: `after-${page?.continue ?? ''}x` }, items: [{ metadata: { name: `r-${pages}` } }] });
        },
      }),
      'h',
      { pageSize: 1, maxPages: 3 },
    );
    await expect(source.list('agent')).rejects.toMatchObject({
      operation: 'list ControllerRevisions in namespace "h" labelled kruise.io/sidecarset-name=agent',
      message: "more than 3 ControllerRevisions carry these labels (read in pages of 1); a set's history is at most a few dozen",
    });
    expect(pages).toBe(3);
  });

  it('names the read in a failure, and never asks for an empty name (that would be the list)', async () => {
    const source = kubeRevisionSource(reader({ readControllerRevision: () => Promise.reject(new Error('socket hang up')) }), 'h');
    const error = (await source.get('agent-1').catch((e: unknown) => e)) as KubeApiError;
    expect(error.operation).toBe('get ControllerRevision "h/agent-1"');
    expect(error.message).toBe('the request failed: socket hang up');
    await expect(source.get('')).rejects.toThrow('a ControllerRevision name cannot be empty');
  });

  it('gives up on a read that outlives its timeout, whatever the caller\'s signal', async () => {
    const source = kubeRevisionSource(
      reader({
        readControllerRevision: (_ns, _name, signal) =>
          new Promise((_resolve, reject) => {
            signal.addEventListener('abort', () => {
              reject(signal.reason as Error);
            });
          }),
      }),
      'h',
      { apiTimeoutMs: 50 },
    );
    // 50 ms against a 10 s test timeout: no flake on a busy machine.
    await expect(source.get('agent-1')).rejects.toThrow(/no answer within 50 ms/);
  });
});

describe('what goes over the wire, through both readers', () => {
  const readers = [
    { name: 'settings the project reads itself', make: async (kubeconfig: string): Promise<ServerReader> => kubeClusterReader(kubeClient(settingsConnection(await kubeconfigHttpsSettings(checkKubeconfig(kubeconfig, 'test'))), { retryDelaysMs: [] })) },
    { name: "client-node's KubeConfig credentials", make: (kubeconfig: string): Promise<ServerReader> => Promise.resolve(kubeClusterReader(kubeConfigClient(parseKubeConfig(kubeconfig, 'test'), { retryDelaysMs: [] }))) },
  ];
  let api: FakeApiServer;
  beforeAll(async () => {
    api = await startFakeApiServer();
  });
  afterAll(async () => {
    await api.close();
  });

  it.each(readers)('$name asks for one revision by its encoded path and lists with the selector URI-encoded', async ({ make }) => {
    api.seen.length = 0;
    api.route = (req) =>
      req.url.includes('?') ? { status: 200, body: { kind: 'ControllerRevisionList', items: [] } } : apiStatus(404, 'NotFound', 'controllerrevisions "x" not found');
    const source = kubeRevisionSource(await make(api.kubeconfig()), 'kruise-system');
    await expect(source.get('agent-5d4b')).resolves.toBeUndefined();
    await expect(source.list('agent', { 'apps.kruise.io/sidecarset-custom-version': 'v1.2_3' })).resolves.toEqual([]);
    const [get, list] = api.seen.map((req) => new URL(req.url, 'http://x'));
    expect(get?.pathname).toBe('/apis/apps/v1/namespaces/kruise-system/controllerrevisions/agent-5d4b');
    expect(list?.pathname).toBe('/apis/apps/v1/namespaces/kruise-system/controllerrevisions');
    // Decoded by the server exactly as written: "," "=" and "/" are data of the parameter, not URL syntax.
    expect(list?.searchParams.get('labelSelector')).toBe('kruise.io/sidecarset-name=agent,apps.kruise.io/sidecarset-custom-version=v1.2_3');
    expect([...(list?.searchParams.keys() ?? [])].sort()).toEqual(['labelSelector', 'limit']);
    expect(list?.searchParams.get('limit')).toBe('100');
  });

  it.each(readers)('$name reads the list in pages of 100, following the continue token to the last page', async ({ make }) => {
    api.seen.length = 0;
    const revision = (i: number) => ({ metadata: { name: `agent-${i}` } });
    api.route = (req) => {
      const from = new URL(req.url, 'http://x').searchParams.get('continue');
      const start = from === null ? 0 : Number(from);
      const items = Array.from({ length: Math.min(100, 250 - start) }, (_, i) => revision(start + i));
      return { status: 200, body: { kind: 'ControllerRevisionList', metadata: start + 100 < 250 ? { continue: String(start + 100) } : {}, items } };
    };
    const source = kubeRevisionSource(await make(api.kubeconfig()), 'kruise-system');
    const listed = await source.list('agent');
    expect(listed.map((r) => r.metadata?.name)).toEqual(Array.from({ length: 250 }, (_, i) => `agent-${i}`));
    expect(api.seen.map((req) => new URL(req.url, 'http://x').searchParams.get('continue'))).toEqual([null, '100', '200']);
  });

  it.each(readers)('$name names the read and the API server\'s words in a failure', async ({ make }) => {
    api.route = () => apiStatus(403, 'Forbidden', 'controllerrevisions is forbidden: User "sidecarset-functions" cannot list resource "controllerrevisions"');
    const source = kubeRevisionSource(await make(api.kubeconfig()), 'kruise-system');
    await expect(source.list('agent')).rejects.toMatchObject({
      code: 403,
      operation: 'list ControllerRevisions in namespace "kruise-system" labelled kruise.io/sidecarset-name=agent',
      message: expect.stringContaining('the API server answered 403: controllerrevisions is forbidden') as unknown,
    });
  });
});
