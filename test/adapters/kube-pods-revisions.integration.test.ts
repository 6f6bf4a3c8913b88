/**
 * The pods and ControllerRevisions adapters (lib/adapters/kube-pods.ts, kube-revisions.ts) against a real
 * kube-apiserver, as the functions' identity (infra/k8s/rbac.yaml as
 * shipped): a set's pods listed page by page, the guarded pod writes and
 * how the API server refuses a stale one, the watch that paces the rollout,
 * and the ControllerRevisions of the revision history. Objects another
 * writer would have made are written as the admin.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { kubePodWriter, kubeSetPods } from '../../lib/adapters/kube-pods.ts';
import type { KubeClient } from '../../lib/adapters/kube-request.ts';
import { kubeRevisionStore } from '../../lib/adapters/kube-revisions.ts';
import { fixedSidecarSetVersion } from '../../lib/adapters/kube-sidecarsets-version.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import type { JsonPatchOperation } from '../../lib/admission/json-patch.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { LABEL_SIDECARSET_NAME, newRevision, type ControllerRevision } from '../../lib/sidecarset/revisions.ts';
import { ObjectExistsError, WriteConflictError } from '../../lib/ports/errors.ts';
import { createNamespace, createPod, podPath, readPod } from '../../testkit/cluster-pods.ts';
import { sidecar, sidecarSet } from '../../testkit/sidecarset-objects.ts';

const REVISIONS = 'kruise-system';

/** The rollout fence pod-inject writes (no webhook runs here): the pod policy lets the reconciler's group change only a fenced pod. */
const FENCE = { 'serverless-sidecarset/rollout-containers': 'app', 'serverless-sidecarset/rollout-annotations': '' };

function plainPod(namespace: string, name: string, labels: Record<string, string>): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels, annotations: { ...FENCE } }, spec: { containers: [{ name: 'app', image: 'nginx:1' }] } };
}

/** Adds a bookkeeping key, the one kind of annotation the pod policy lets the reconciler's group write on a fenced pod. */
const BOOKKEEPING_OP = { op: 'add', path: '/metadata/annotations/kruise.io~1sidecarset-inplace-update-state', value: '{}' } as const;

const names = (pods: readonly Pod[]) => pods.map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`).sort();
const rvOf = (object: { metadata?: { resourceVersion?: string } } | undefined) => object?.metadata?.resourceVersion ?? '';

describeWithControlPlane('the rollout adapters on a real kube-apiserver, as the functions identity', () => {
  let controlPlane: ControlPlane | undefined;
  let kc: KubeClient;
  const cp = (): ControlPlane => {
    if (controlPlane === undefined) throw new Error('the control plane did not start');
    return controlPlane;
  };
  /** Labels a pod as the admin (another writer), returning its new resourceVersion. */
  const relabel = async (namespace: string, name: string, labels: Record<string, string>): Promise<string> => {
    const res = await cp().request('admin', 'PATCH', podPath(namespace, name), { metadata: { labels } }, 'application/merge-patch+json');
    if (res.status !== 200) throw new Error(`relabelling ${namespace}/${name}: ${res.status} ${res.body}`);
    return rvOf(JSON.parse(res.body) as Pod);
  };

  beforeAll(async () => {
    controlPlane = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    kc = kubeConfigClient(parseKubeConfig(controlPlane.kubeconfig('functions'), 'test'));
    for (const ns of ['roll-a', 'roll-b', 'roll-w']) await createNamespace(controlPlane, ns);
    for (let i = 0; i < 5; i++) await createPod(controlPlane, plainPod('roll-a', `web-${i}`, { app: 'web', tier: i < 2 ? 'front' : 'back' }));
    for (let i = 0; i < 2; i++) await createPod(controlPlane, plainPod('roll-a', `db-${i}`, { app: 'db' }));
    await createPod(controlPlane, plainPod('roll-b', 'web-0', { app: 'web' }));
    // RBAC reaches the authorizer through a watch: wait until the functions identity may list pods and revisions.
    for (const deadline = Date.now() + 30_000; ; ) {
      const pods = await controlPlane.request('functions', 'GET', '/api/v1/pods?limit=1');
      const revisions = await controlPlane.request('functions', 'GET', `/apis/apps/v1/namespaces/${REVISIONS}/controllerrevisions?limit=1`);
      if (pods.status === 200 && revisions.status === 200) break;
      if (Date.now() > deadline) throw new Error(`the functions identity still cannot list: pods ${pods.status}, revisions ${revisions.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 30 * 60_000);

  afterAll(async () => {
    await controlPlane?.stop();
  });

  describe('a set’s pods', () => {
    it('lists a namespace and selector page by page (pages of 2) into one list with its resourceVersion', async () => {
      const { pods, resourceVersion } = await kubeSetPods(kc, { pageSize: 2 }).list({ namespace: 'roll-a', labelSelector: 'app=web' });
      expect(names(pods)).toEqual(['roll-a/web-0', 'roll-a/web-1', 'roll-a/web-2', 'roll-a/web-3', 'roll-a/web-4']);
      expect(resourceVersion).toMatch(/^\d+$/);
    });

    it('lists every namespace when the scope has none, with set-based and existence requirements', async () => {
      const source = kubeSetPods(kc, { pageSize: 2 });
      expect(names((await source.list({ labelSelector: 'app in (web)' })).pods)).toEqual(['roll-a/web-0', 'roll-a/web-1', 'roll-a/web-2', 'roll-a/web-3', 'roll-a/web-4', 'roll-b/web-0']);
      expect(names((await source.list({ namespace: 'roll-a', labelSelector: 'app=web,tier notin (back)' })).pods)).toEqual(['roll-a/web-0', 'roll-a/web-1']);
      expect(names((await source.list({ namespace: 'roll-a', labelSelector: 'app,!tier' })).pods)).toEqual(['roll-a/db-0', 'roll-a/db-1']);
    });

    it('rejects a list the API server refuses, naming the request', async () => {
      await expect(kubeSetPods(kc).list({ namespace: 'roll-a', labelSelector: 'app in (' })).rejects.toMatchObject({
        operation: 'list pods in namespace "roll-a" with selector "app in ("',
        code: 400,
        message: expect.stringMatching(/unable to parse requirement/),
      });
    });
  });

  describe('the guarded pod writes', () => {
    it('applies a JSON Patch whose test of the resourceVersion holds and returns the new resourceVersion', async () => {
      const pod = await createPod(cp(), plainPod('roll-w', 'patched', { app: 'w' }));
      const write = await kubePodWriter(kc).patch('roll-w', 'patched', [
        { op: 'test', path: '/metadata/resourceVersion', value: rvOf(pod) },
        BOOKKEEPING_OP,
      ]);
      const stored = await readPod(cp(), 'roll-w', 'patched');
      expect(write).toEqual({ outcome: 'written', resourceVersion: rvOf(stored) });
      expect(stored?.metadata?.annotations).toEqual({ ...FENCE, 'kruise.io/sidecarset-inplace-update-state': '{}' });
    });

    it('refuses a patch whose test fails (the pod changed since it was read) with WriteConflictError, as the API server answers it', async () => {
      const pod = await createPod(cp(), plainPod('roll-w', 'stale', { app: 'w' }));
      await relabel('roll-w', 'stale', { changed: 'by-someone-else' });
      const ops: JsonPatchOperation[] = [
        { op: 'test', path: '/metadata/resourceVersion', value: rvOf(pod) },
        { op: 'replace', path: '/spec/containers/0/image', value: 'nginx:2' },
      ];
      // What the API server itself answers to a failed test: the adapter's conflict detection reads exactly this.
      const raw = await cp().request('functions', 'PATCH', podPath('roll-w', 'stale'), ops, 'application/json-patch+json');
      // (422 Invalid naming no object, without the patch library's words).
      expect({ status: raw.status, body: JSON.parse(raw.body) as unknown }).toEqual({
        status: 422,
        body: expect.objectContaining({ reason: 'Invalid', message: 'the server rejected our request due to an error in our request', details: {} }),
      });
      await expect(kubePodWriter(kc).patch('roll-w', 'stale', ops)).rejects.toBeInstanceOf(WriteConflictError);
      expect((await readPod(cp(), 'roll-w', 'stale'))?.spec?.containers[0]?.image).toBe('nginx:1');
    });

    it('reports a patch the API server refuses for another reason as that refusal, not as a conflict', async () => {
      const pod = await createPod(cp(), plainPod('roll-w', 'forbidden-change', { app: 'w' }));
      const write = kubePodWriter(kc).patch('roll-w', 'forbidden-change', [
        { op: 'test', path: '/metadata/resourceVersion', value: rvOf(pod) },
        { op: 'replace', path: '/spec/containers/0/name', value: 'renamed' },
      ]);
      await expect(write).rejects.not.toBeInstanceOf(WriteConflictError);
      await expect(write).rejects.toMatchObject({ operation: 'patch pod "roll-w/forbidden-change"', code: 422, message: expect.stringMatching(/is invalid/) });
    });

    it('merges a condition into pods/status by type, keeping the others', async () => {
      await createPod(cp(), plainPod('roll-w', 'conditioned', { app: 'w' }));
      const ready = { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z' };
      const seeded = await cp().request('admin', 'PATCH', `${podPath('roll-w', 'conditioned')}/status`, { status: { conditions: [ready] } }, 'application/strategic-merge-patch+json');
      expect(seeded.status).toBe(200);
      const condition = (status: 'True' | 'False') => ({
        type: 'SidecarSetUpgradable',
        status,
        lastProbeTime: null,
        lastTransitionTime: '2026-01-02T00:00:00Z',
        reason: status === 'True' ? 'AllSidecarsetUpgradable' : 'UpdateImmutableField',
        message: `{"agent":${status === 'True'}}`,
      });
      const writer = kubePodWriter(kc);
      const first = await writer.patchStatus('roll-w', 'conditioned', { status: { conditions: [condition('False')] } });
      const second = await writer.patchStatus('roll-w', 'conditioned', { status: { conditions: [condition('True')] } });
      const stored = await readPod(cp(), 'roll-w', 'conditioned');
      expect(first.outcome).toBe('written');
      expect(second).toEqual({ outcome: 'written', resourceVersion: rvOf(stored) });
      const conditions = stored?.status?.conditions?.map((c) => ({ type: c.type, status: c.status, message: c.message }));
      expect(conditions).toEqual(expect.arrayContaining([{ type: 'Ready', status: 'True', message: undefined }, { type: 'SidecarSetUpgradable', status: 'True', message: '{"agent":true}' }]));
      expect(conditions).toHaveLength(2);
    });

    it('answers gone for a pod that no longer exists, for both writes', async () => {
      const writer = kubePodWriter(kc);
      expect(await writer.patch('roll-w', 'never-was', [{ op: 'test', path: '/metadata/resourceVersion', value: '1' }])).toEqual({ outcome: 'gone' });
      expect(await writer.patchStatus('roll-w', 'never-was', { status: { conditions: [] } })).toEqual({ outcome: 'gone' });
    });
  });

  describe('waiting for a set’s pods to change', () => {
    const scope = { namespace: 'roll-a', labelSelector: 'app=web' };

    it("answers 'changed' when another writer changes a pod in scope after the list", async () => {
      const source = kubeSetPods(kc);
      const { resourceVersion } = await source.list(scope);
      const waiting = source.changed(scope, resourceVersion, new Set(), 20_000);
      await relabel('roll-a', 'web-3', { touched: String(Date.now()) });
      expect(await waiting).toBe('changed');
    });

    it("sees a change made between the list and the watch (the watch starts at the list's resourceVersion)", async () => {
      const source = kubeSetPods(kc);
      const { resourceVersion } = await source.list(scope);
      await relabel('roll-a', 'web-2', { touched: String(Date.now()) });
      expect(await source.changed(scope, resourceVersion, new Set(), 20_000)).toBe('changed');
    });

    it("ignores this process's own writes by their resourceVersions and answers 'timeout' when nothing else changes", async () => {
      const source = kubeSetPods(kc);
      const { pods, resourceVersion } = await source.list(scope);
      const pod = pods.find((p) => p.metadata?.name === 'web-1');
      const own = await kubePodWriter(kc).patch('roll-a', 'web-1', [
        { op: 'test', path: '/metadata/resourceVersion', value: rvOf(pod) },
        BOOKKEEPING_OP,
      ]);
      if (own.outcome !== 'written') throw new Error('the own write did not go through');
      const started = performance.now();
      expect(await source.changed(scope, resourceVersion, new Set([own.resourceVersion]), 1_500)).toBe('timeout');
      // The timeout, not an early answer: at least most of the 1.5 s passed.
      expect(performance.now() - started).toBeGreaterThan(1_000);
    });

    it('with a predicate, wakes only for a change it says is worth it, handed the pod as changed', async () => {
      const source = kubeSetPods(kc);
      const { resourceVersion } = await source.list(scope);
      const told: string[] = [];
      const predicate = (type: string, pod: Pod) => {
        told.push(`${type} ${pod.metadata?.name ?? ''} ${pod.metadata?.labels?.wake ?? ''}`);
        return pod.metadata?.labels?.wake === 'yes';
      };
      await relabel('roll-a', 'web-1', { wake: 'no' });
      expect(await source.changed(scope, resourceVersion, new Set(), 1_500, undefined, predicate)).toBe('timeout');
      await relabel('roll-a', 'web-1', { wake: 'yes' });
      expect(await source.changed(scope, resourceVersion, new Set(), 20_000, undefined, predicate)).toBe('changed');
      expect(told).toEqual(['MODIFIED web-1 no', 'MODIFIED web-1 no', 'MODIFIED web-1 yes']);
    });

    it('does not wake for a change outside the scope', async () => {
      const source = kubeSetPods(kc);
      const { resourceVersion } = await source.list(scope);
      const waiting = source.changed(scope, resourceVersion, new Set(), 1_500);
      await relabel('roll-a', 'db-0', { touched: String(Date.now()) });
      await relabel('roll-b', 'web-0', { touched: String(Date.now()) });
      expect(await waiting).toBe('timeout');
    });

    it("answers 'timeout' at once when the caller's signal ends the wait", async () => {
      const source = kubeSetPods(kc);
      const { resourceVersion } = await source.list(scope);
      const controller = new AbortController();
      const waiting = source.changed(scope, resourceVersion, new Set(), 60_000, controller.signal);
      const started = performance.now();
      controller.abort();
      expect(await waiting).toBe('timeout');
      expect(performance.now() - started).toBeLessThan(10_000);
    });

    it("answers 'error' when the watch cannot be made (a resourceVersion the API server cannot read)", async () => {
      expect(await kubeSetPods(kc).changed(scope, 'not-a-version', new Set(), 20_000)).toBe('error');
    });
  });

  describe('a watch that breaks', () => {
    it("answers 'error', not a change, when the API server goes away mid-watch, and answers again once it is back", async () => {
      const scope = { namespace: 'roll-a', labelSelector: 'app=web' };
      const source = kubeSetPods(kc);
      const { resourceVersion } = await source.list(scope);
      const waiting = source.changed(scope, resourceVersion, new Set(), 60_000);
      // Let the watch be established before the server goes.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const started = performance.now();
      await cp().stopApiServer();
      try {
        expect(await waiting).toBe('error');
        expect(performance.now() - started).toBeLessThan(30_000);
      } finally {
        await cp().startApiServer();
      }
      expect((await source.list(scope)).pods).toHaveLength(5);
    }, 120_000);
  });

  describe('ControllerRevisions', () => {
    const set = (image: string, name = 'agent') => {
      const s = sidecarSet(name, { containers: [sidecar(name, { image })] });
      s.metadata = { ...s.metadata, uid: `uid-${name}` };
      return s;
    };
    const store = () => kubeRevisionStore(kc, REVISIONS);
    const nameOf = (r: ControllerRevision) => r.metadata?.name ?? '';

    it('creates a revision and refuses a second of that name with ObjectExistsError', async () => {
      const revision = newRevision(set('agent:1'), REVISIONS, 1, 0);
      const created = await store().create(revision);
      expect(created.metadata).toMatchObject({ name: nameOf(revision), uid: expect.any(String), resourceVersion: expect.any(String) });
      expect(created.data).toEqual(revision.data);
      await expect(store().create(revision)).rejects.toBeInstanceOf(ObjectExistsError);
    });

    it.each([
      ['v1alpha1 when no version is given (Kruise 1.8\'s CRD)', undefined, 'apps.kruise.io/v1alpha1'],
      ['v1alpha1 when SidecarSets are stored as v1alpha1', 'v1alpha1' as const, 'apps.kruise.io/v1alpha1'],
      ['v1beta1 when SidecarSets are stored as v1beta1 (Kruise 1.9\'s CRD), as Kruise 1.9 writes it', 'v1beta1' as const, 'apps.kruise.io/v1beta1'],
    ])('creates a revision owned by its SidecarSet in %s', async (_name, version, apiVersion) => {
      const owner = set(`agent:owner-${apiVersion}`, `owned-${version ?? 'default'}`);
      const revision = newRevision(owner, REVISIONS, 1, 0);
      const created = await kubeRevisionStore(kc, REVISIONS, version === undefined ? {} : { versions: fixedSidecarSetVersion(version) }).create(revision);
      expect(created.metadata?.ownerReferences).toEqual([
        { apiVersion, kind: 'SidecarSet', name: `owned-${version ?? 'default'}`, uid: `uid-owned-${version ?? 'default'}`, controller: true, blockOwnerDeletion: true },
      ]);
    });

    it('renumbers a revision read at its current resourceVersion, and refuses a stale one with WriteConflictError', async () => {
      const created = await store().create(newRevision(set('agent:2'), REVISIONS, 2, 0));
      const renumbered = await store().setNumber(created, 7);
      expect(renumbered.revision).toBe(7);
      await expect(store().setNumber(created, 8)).rejects.toBeInstanceOf(WriteConflictError);
      expect((await store().get(nameOf(created)))?.revision).toBe(7);
    });

    it('refuses to renumber a revision that is gone with WriteConflictError', async () => {
      const ghost = newRevision(set('agent:ghost'), REVISIONS, 1, 0);
      ghost.metadata = { ...ghost.metadata, resourceVersion: '1' };
      await expect(store().setNumber(ghost, 2)).rejects.toBeInstanceOf(WriteConflictError);
    });

    it('merges labels into a revision', async () => {
      const created = await store().create(newRevision(set('agent:3'), REVISIONS, 3, 0));
      await store().patchLabels(nameOf(created), { 'apps.kruise.io/sidecarset-custom-version': 'v3' });
      expect((await store().get(nameOf(created)))?.metadata?.labels).toEqual({ ...created.metadata?.labels, 'apps.kruise.io/sidecarset-custom-version': 'v3' });
    });

    it('deletes a revision only while it is the one read (same uid), and a revision already gone is fine', async () => {
      const revision = newRevision(set('agent:4'), REVISIONS, 4, 0);
      const first = await store().create(revision);
      await store().delete(first);
      expect(await store().get(nameOf(first))).toBeUndefined();
      await expect(store().delete(first)).resolves.toBeUndefined();
      // Recreated under the same name: the stale read's uid no longer matches, so it stays.
      const second = await store().create(revision);
      await store().delete(first);
      expect((await store().get(nameOf(second)))?.metadata?.uid).toBe(second.metadata?.uid);
    });

    it("lists one set's revisions, with extra labels, and every set's at once", async () => {
      const other = await store().create(newRevision(set('other:1', 'other'), REVISIONS, 1, 0));
      const labelled = await store().create(newRevision(set('agent:5'), REVISIONS, 5, 0));
      await store().patchLabels(nameOf(labelled), { 'apps.kruise.io/sidecarset-custom-version': 'v5' });
      const agent = (await store().list('agent')).map(nameOf);
      expect(agent).toContain(nameOf(labelled));
      expect(agent).not.toContain(nameOf(other));
      expect((await store().list('agent', { 'apps.kruise.io/sidecarset-custom-version': 'v5' })).map(nameOf)).toEqual([nameOf(labelled)]);
      const all = await store().listAll();
      expect(all.map(nameOf)).toEqual(expect.arrayContaining([nameOf(other), nameOf(labelled)]));
      expect(all.every((r) => r.metadata?.labels?.[LABEL_SIDECARSET_NAME] !== undefined)).toBe(true);
    });

    it('lists every revision page by page (limit and continue) when there are more than one page holds', async () => {
      const pages: { limit: number; items: number }[] = [];
      const paged = kubeRevisionStore(kc, REVISIONS, { pageSize: 2, onPage: (page) => pages.push(page) });
      for (let i = 0; i < 5; i++) await store().create(newRevision(set(`paged:${i}`, `paged-${i}`), REVISIONS, 1, 0));
      const all = (await paged.listAll()).map(nameOf);
      const stored = JSON.parse((await cp().request('admin', 'GET', `/apis/apps/v1/namespaces/${REVISIONS}/controllerrevisions?labelSelector=${LABEL_SIDECARSET_NAME}`)).body) as { items: ControllerRevision[] };
      expect(all.sort()).toEqual(stored.items.map(nameOf).sort());
      expect(new Set(all).size).toBe(all.length);
      expect(all.length).toBeGreaterThanOrEqual(5);
      expect(pages.length).toBe(Math.ceil(all.length / 2));
      expect(pages.every((page) => page.limit <= 2)).toBe(true);
      // One set's list pages the same way.
      pages.length = 0;
      expect((await paged.list('paged-3')).map(nameOf)).toHaveLength(1);
      expect(pages).toHaveLength(1);
    });

    it('refuses a list by a name that cannot be a label value before asking', async () => {
      const listed = store().list('agent,other');
      await expect(listed).rejects.toThrow(/label kruise\.io\/sidecarset-name="agent,other" cannot be selected/);
    });
  });
});
