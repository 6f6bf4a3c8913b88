/**
 * The SidecarSet lists (the webhooks' and the reconciler's source, its
 * metadata list, the rollout view's list) read in pages, following continue
 * tokens, each set kept without managedFields, against a local HTTP server
 * that answers as the API server does. The real API server with 40 MiB of
 * sets: test/e2e/large-sidecarsets.integration.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import { FIRST_SIDECARSET_PAGE_SIZE, kubeSidecarSetWatch, NO_SIDECARSET_CRD, SIDECARSET_PAGE_SIZE } from '../../lib/adapters/kube-sidecarsets.ts';
import { kubeClusterReader, kubeSidecarSetSource } from '../../lib/adapters/kube-sources.ts';
import { apiStatus as status, fakeApiServerForSuite, type SeenRequest } from './fake-api-server.ts';

const fake = fakeApiServerForSuite();
const PATH = '/apis/apps.kruise.io/v1alpha1/sidecarsets';

function client() {
  return kubeConfigClient(parseKubeConfig(fake.kubeconfig(), 'test'), { retryDelaysMs: [] });
}

const managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:containers': {} } } }];

const set = (name: string, resourceVersion: string) => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name, resourceVersion, uid: `uid-${name}`, annotations: { note: name }, managedFields },
  spec: { selector: { matchLabels: { app: name } }, containers: [{ name: `${name}-agent`, image: 'agent:1' }] },
});

const metadataOf = (name: string, resourceVersion: string) => ({
  apiVersion: 'meta.k8s.io/v1',
  kind: 'PartialObjectMetadata',
  metadata: { name, resourceVersion, annotations: { note: name }, managedFields },
});

/** Two pages: a and b, then c (the continue token names the snapshot). */
function pagedSets(req: SeenRequest, item: (name: string, resourceVersion: string) => unknown, kind: string) {
  const next = req.url.includes('continue=');
  const names = next ? ['c'] : ['a', 'b'];
  return { status: 200, body: { apiVersion: 'v1', kind, metadata: { resourceVersion: '9', ...(next ? {} : { continue: 'snapshot/9' }) }, items: names.map((n) => item(n, '5')) } };
}

const names = (sets: readonly { metadata?: { name?: string } }[]) => sets.map((s) => s.metadata?.name);

describe('the SidecarSet list', () => {
  it('is read page by page, following the continue token, each set kept without managedFields', async () => {
    fake.route = (req) => pagedSets(req, set, 'SidecarSetList');
    const sets = await kubeSidecarSetSource(kubeClusterReader(client()), { maxStalenessMs: 0 }).list();
    expect(names(sets)).toEqual(['a', 'b', 'c']);
    expect(sets.map((s) => s.metadata)).toEqual(['a', 'b', 'c'].map((name) => ({ name, resourceVersion: '5', uid: `uid-${name}`, annotations: { note: name } })));
    // The first page asks for a few sets (as many of the largest valid ones as fit a page's target); the one
    // read ahead from its head knows no size yet and asks as many.
    expect(fake.seen.map((r) => r.url)).toEqual([`${PATH}?limit=${FIRST_SIDECARSET_PAGE_SIZE}`, `${PATH}?limit=${FIRST_SIDECARSET_PAGE_SIZE}&continue=snapshot%2F9`]);
  });

  it('asks the pages after the first for as many sets as the first page’s bytes per set allow, up to 100', async () => {
    // Three pages: the third is planned from the first (the second was read ahead from the first one's head).
    fake.route = (req) => {
      const page = req.url.includes('continue=p2') ? 2 : req.url.includes('continue=p1') ? 1 : 0;
      const names = page === 0 ? ['a', 'b', 'c', 'd'] : page === 1 ? ['e', 'f', 'g', 'h'] : ['i'];
      const token = page === 0 ? 'p1' : page === 1 ? 'p2' : undefined;
      return { status: 200, body: { apiVersion: 'v1', kind: 'SidecarSetList', metadata: { resourceVersion: '9', ...(token === undefined ? {} : { continue: token }) }, items: names.map((n) => set(n, '5')) } };
    };
    const sets = await kubeSidecarSetSource(kubeClusterReader(client()), { maxStalenessMs: 0 }).list();
    expect(names(sets)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']);
    expect(fake.seen.map((r) => r.url)).toEqual([`${PATH}?limit=${FIRST_SIDECARSET_PAGE_SIZE}`, `${PATH}?limit=${FIRST_SIDECARSET_PAGE_SIZE}&continue=p1`, `${PATH}?limit=${SIDECARSET_PAGE_SIZE}&continue=p2`]);
  });

  it('as metadata, is read page by page too, each item reduced to its name and resourceVersion', async () => {
    fake.route = (req) => pagedSets(req, metadataOf, 'PartialObjectMetadataList');
    const { listSidecarSetMetadata } = kubeClusterReader(client());
    const body = await listSidecarSetMetadata?.(AbortSignal.timeout(5_000));
    expect(body).toEqual({
      kind: 'PartialObjectMetadataList',
      metadata: { resourceVersion: '9' },
      items: ['a', 'b', 'c'].map((name) => ({ kind: 'PartialObjectMetadata', metadata: { name, resourceVersion: '5' } })),
    });
    expect(fake.seen).toHaveLength(2);
  });

  it('in the rollout view, is read page by page, and a 404 says the CRD is missing', async () => {
    fake.route = (req) => pagedSets(req, set, 'SidecarSetList');
    const view = await kubeSidecarSetWatch(client()).list();
    expect([names(view.sets), view.resourceVersion, view.sets.some((s) => 'managedFields' in (s.metadata ?? {}))]).toEqual([['a', 'b', 'c'], '9', false]);
    fake.route = () => status(404, 'NotFound', 'the server could not find the requested resource');
    await expect(kubeSidecarSetWatch(client()).list()).rejects.toThrow(NO_SIDECARSET_CRD);
  });
});
