/**
 * The pod-eviction webhook (answered by the pod-change function): the
 * reconciler may evict only the pod its uid precondition names, and only
 * when that pod has a controller; anything it cannot check is refused
 * (issue 45, item 5). Another identity's eviction is never judged.
 */
import { describe, expect, it } from '@jest/globals';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import type { Pod } from '../../lib/kube/types.ts';
import type { PodSource } from '../../lib/ports.ts';
import { DEFAULT_MAX_BODY_BYTES, serveAdmission } from '../../lib/webhooks/http-handler.ts';
import { evictionVerdict, type EvictedPodRead } from '../../lib/webhooks/pod-eviction.ts';
import type { AdmissionRequest } from '../../lib/admission/review.ts';
import { NOW } from '../../testkit/sidecarset-objects.ts';
import { capturingLogger, SECRET } from '../../testkit/reviews.ts';

const UID = '0b7c3f5e-1111-4c2b-9a51-5d1f3f0e2a10';
const RECONCILER = { username: 'sidecarset-status-sync', groups: ['sidecarset-status-sync', 'system:authenticated'] };
const owner = (controller: boolean | undefined) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', uid: 'rs-uid', ...(controller === undefined ? {} : { controller }) });
const pod = (ownerReferences?: unknown[], uid = UID): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'shop', uid, ...(ownerReferences ? { ownerReferences } : {}) } });

function evictionRequest(preconditions: Record<string, unknown> | undefined, userInfo: Record<string, unknown> = RECONCILER): AdmissionRequest {
  return {
    uid: 'r1',
    kind: { group: 'policy', version: 'v1', kind: 'Eviction' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    subResource: 'eviction',
    name: 'web-0',
    namespace: 'shop',
    operation: 'CREATE',
    userInfo,
    object: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-0', namespace: 'shop' }, ...(preconditions ? { deleteOptions: { preconditions } } : {}) },
  };
}

describe('the reconciler’s eviction decision', () => {
  const cases: [string, Record<string, unknown> | undefined, EvictedPodRead, boolean, string][] = [
    ['a pod a ReplicaSet controls, uid matching', { uid: UID }, { found: pod([owner(true)]) }, true, ''],
    ['a pod with two owners, one its controller', { uid: UID }, { found: pod([owner(false), { ...owner(true), kind: 'StatefulSet' }]) }, true, ''],
    ['a pod with no owner at all', { uid: UID }, { found: pod() }, false, 'may not evict pod shop/web-0: it has no controller (no ownerReference with controller: true)'],
    ['a pod whose owner is not its controller', { uid: UID }, { found: pod([owner(false)]) }, false, 'it has no controller'],
    ['a pod whose owner leaves controller unset', { uid: UID }, { found: pod([owner(undefined)]) }, false, 'it has no controller'],
    ['a pod that is gone', { uid: UID }, { gone: true }, false, 'may not evict pod shop/web-0: there is no such pod'],
    ['a namesake with another uid', { uid: UID }, { found: pod([owner(true)], 'other-uid') }, false, `the eviction names uid ${UID}, the pod of that name is uid other-uid`],
    ['no uid precondition', undefined, { found: pod([owner(true)]) }, false, 'the eviction has no uid precondition'],
    ['an empty uid precondition', { uid: '' }, { found: pod([owner(true)]) }, false, 'the eviction has no uid precondition'],
    ['a pod that could not be read', { uid: UID }, { unreadable: 'get pod shop/web-0: connection refused' }, false, 'it could not be read to check its controller (get pod shop/web-0: connection refused)'],
  ];
  it.each(cases)('%s', (_, preconditions, read, allowed, message) => {
    const verdict = evictionVerdict(evictionRequest(preconditions), read);
    expect(verdict.response.allowed).toBe(allowed);
    if (!allowed) expect(verdict.response.status).toEqual({ code: 403, reason: 'Forbidden', message: expect.stringContaining(message) });
  });
});

/** Serves one review through the pod-change function, as the API server sends it, with `pods` as its pod reads. */
async function serve(request: AdmissionRequest, pods: PodSource | undefined) {
  const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
  const response = await serveAdmission(
    { method: 'POST', path: `/${SECRET}`, headers: { 'content-type': 'application/json' }, timeout: '5s', body, bodyBytes: Buffer.byteLength(body) },
    { fn: 'pod-change', secrets: { current: SECRET }, maxBodyBytes: DEFAULT_MAX_BODY_BYTES },
    { sidecarSets: memorySidecarSetSource([]), namespaces: memoryNamespaceSource([]), clock: { now: () => NOW }, logger: capturingLogger().logger, ...(pods ? { pods } : {}) },
  );
  return { status: response.statusCode, answer: (JSON.parse(response.body) as { response: { allowed: boolean; status?: { message: string } } }).response };
}

/** Pod reads that count their GETs. */
function counting(read: (namespace: string, name: string) => Promise<Pod | undefined>): { pods: PodSource; gets: string[] } {
  const gets: string[] = [];
  return {
    gets,
    pods: {
      get: (namespace, name) => {
        gets.push(`${namespace}/${name}`);
        return read(namespace, name);
      },
    },
  };
}

describe('the pod-change function answering as the pod-eviction webhook', () => {
  it('reads the evicted pod once and refuses the reconciler’s eviction of a pod without a controller, naming it', async () => {
    const { pods, gets } = counting(() => Promise.resolve(pod()));
    const result = await serve(evictionRequest({ uid: UID }), pods);
    expect(result).toMatchObject({ status: 200, answer: { allowed: false, status: { message: expect.stringContaining('shop/web-0: it has no controller') } } });
    expect(gets).toEqual(['shop/web-0']);
  });

  it('admits the reconciler’s eviction of a pod a ReplicaSet controls, with one read', async () => {
    const { pods, gets } = counting(() => Promise.resolve(pod([owner(true)])));
    expect(await serve(evictionRequest({ uid: UID }), pods)).toMatchObject({ status: 200, answer: { allowed: true } });
    expect(gets).toHaveLength(1);
  });

  it('matches the reconciler by its group whatever its username', async () => {
    const { pods } = counting(() => Promise.resolve(pod()));
    const result = await serve(evictionRequest({ uid: UID }, { username: 'eks:role/other', groups: ['sidecarset-status-sync'] }), pods);
    expect(result.answer.allowed).toBe(false);
  });

  it('refuses, fail closed, when the pod cannot be read', async () => {
    const { pods } = counting(() => Promise.reject(new Error('get pod shop/web-0: the server is currently unable to handle the request')));
    const result = await serve(evictionRequest({ uid: UID }), pods);
    expect(result.answer).toMatchObject({ allowed: false, status: { message: expect.stringContaining('could not be read to check its controller (get pod shop/web-0: the server is currently unable') } });
  });

  it('refuses when the function has no pod reads at all', async () => {
    expect((await serve(evictionRequest({ uid: UID }), undefined)).answer).toMatchObject({ allowed: false, status: { message: expect.stringContaining('no pod reads configured') } });
  });

  it('lets another identity’s eviction through unread (an API server that skipped the matchConditions)', async () => {
    const { pods, gets } = counting(() => Promise.resolve(pod()));
    expect(await serve(evictionRequest({ uid: UID }, { username: 'admin', groups: ['system:masters'] }), pods)).toMatchObject({ status: 200, answer: { allowed: true } });
    expect(gets).toEqual([]);
  });
});
