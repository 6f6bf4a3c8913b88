/**
 * One set's reconcile with the rollout's real adapters against a real
 * kube-apiserver, as the functions' identity: the revision is created in
 * kruise-system, the batch's pods take the guarded JSON Patch (new image,
 * Kruise's annotations) and the SidecarSetUpgradable condition, and a pod
 * changed behind the reconcile's back is skipped as a conflict (a HotUpgrade flip too,
 * whose Event then lands on the pod only when the flip does). The SidecarSet's
 * status and events stay in memory: their adapters are not the point here.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { memoryNamespaceSource } from '../../lib/adapters/memory.ts';
import { kubePodWriter, kubeSetPods } from '../../lib/adapters/kube-pods.ts';
import { kubeRevisionStore } from '../../lib/adapters/kube-revisions.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import type { KubeClient } from '../../lib/adapters/kube-request.ts';
import { kubeEventSink, kubePodEventSink } from '../../lib/adapters/kube-events.ts';
import { applyPatch } from '../../lib/admission/json-patch-apply.ts';
import { podUpdatePatch } from '../../lib/rollout/pod-patch.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { memoryEventSink, memoryPodEventSink, memoryStatusWriter } from '../../lib/adapters/memory-status-sync.ts';
import type { Pod } from '../../lib/kube/types.ts';
import type { PodEventSink } from '../../lib/ports.ts';
import { currentRevisionName } from '../../lib/sidecarset/revisions.ts';
import { rolloutStateEvents } from '../../lib/status-sync/rollout-state.ts';
import { reconcileSet, type ReconcileDeps } from '../../lib/status-sync/set-reconcile.ts';
import { createNamespace, createPod, podPath, readPod } from '../../testkit/cluster-pods.ts';
import { hashOf, NEW_IMAGE, OLD_IMAGE, rolloutPod, rolloutSet } from '../rollout/fixtures.ts';
import { EMPTY, hotSet, injected, kubelet } from '../rollout/hot-fixtures.ts';

const NS = 'rolling';

describeWithControlPlane('one set’s reconcile on a real kube-apiserver, as the functions identity', () => {
  let controlPlane: ControlPlane | undefined;
  const cp = (): ControlPlane => {
    if (controlPlane === undefined) throw new Error('the control plane did not start');
    return controlPlane;
  };
  const set = rolloutSet({ strategy: { type: 'RollingUpdate', maxUnavailable: 2 } });
  set.metadata = { ...set.metadata, resourceVersion: '1' };

  /** Creates the fixture pod as stored by the API server, with its status (ready, on the old image) as a kubelet would report it. */
  async function seed(name: string): Promise<void> {
    const fixture = rolloutPod(set, { name, namespace: NS });
    const { status, ...object } = fixture;
    object.metadata = { ...object.metadata, resourceVersion: undefined };
    await createPod(cp(), JSON.parse(JSON.stringify(object)) as Pod);
    const res = await cp().request('admin', 'PATCH', `${podPath(NS, name)}/status`, { status }, 'application/strategic-merge-patch+json');
    if (res.status !== 200) throw new Error(`status of ${name}: ${res.status} ${res.body}`);
  }

  beforeAll(async () => {
    controlPlane = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    await createNamespace(controlPlane, NS);
    // p-0 last: Kruise's order takes newer pods first, so p-0 is in the first batch even when the
    // creations straddle a second (creationTimestamp's resolution); the tests touch it there.
    for (const name of ['p-1', 'p-2', 'p-3', 'p-0']) await seed(name);
    for (const deadline = Date.now() + 30_000; ; ) {
      const res = await controlPlane.request('functions', 'GET', `/api/v1/namespaces/${NS}/pods?limit=1`);
      if (res.status === 200) break;
      if (Date.now() > deadline) throw new Error(`the functions identity still cannot list pods: ${res.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 30 * 60_000);

  afterAll(async () => {
    await controlPlane?.stop();
  });

  /**
   * The reconcile's ports: the rollout's real adapters as the functions identity,
   * the set's status and events in memory. Another writer changes `touch`
   * right after the reconcile's first pod list, so that pod's guarded write meets
   * a real conflict.
   */
  function realDeps(forSet: SidecarSet, touch: { namespace: string; name: string }, options: { pageSize?: number; podEvents?: (client: KubeClient) => PodEventSink; setEvents?: boolean } = {}) {
    const kc = kubeConfigClient(parseKubeConfig(cp().kubeconfig('functions'), 'test'));
    const setPods = kubeSetPods(kc, options.pageSize === undefined ? {} : { pageSize: options.pageSize });
    const statuses = memoryStatusWriter([forSet]);
    let touched = false;
    const deps: ReconcileDeps = {
      statuses,
      events: options.setEvents === true ? kubeEventSink(kc) : memoryEventSink(),
      namespaces: memoryNamespaceSource([]),
      rollout: {
        revisions: kubeRevisionStore(kc, 'kruise-system'),
        setPods: {
          ...setPods,
          list: async (scope, signal) => {
            const listed = await setPods.list(scope, signal);
            if (!touched) {
              touched = true;
              const res = await cp().request('admin', 'PATCH', podPath(touch.namespace, touch.name), { metadata: { labels: { touched: 'yes' } } }, 'application/merge-patch+json');
              if (res.status !== 200) throw new Error(`touching ${touch.name}: ${res.status}`);
            }
            return listed;
          },
        },
        pods: kubePodWriter(kc),
        podEvents: options.podEvents?.(kc) ?? memoryPodEventSink(),
        clock: { now: () => new Date('2026-12-01T00:00:00Z') },
        states: rolloutStateEvents(),
      },
    };
    return { deps, statuses };
  }

  it('registers the revision, updates the batch with guarded patches, marks them upgradable, and skips a pod that changed meanwhile', async () => {
    // Another writer changes p-0 right after the reconcile listed it: its guarded patch must fail.
    const { deps, statuses } = realDeps(set, { namespace: NS, name: 'p-0' }, { pageSize: 2 });
    const result = await reconcileSet(set, deps, { writeConcurrency: 1 });
    expect(result).toMatchObject({ status: 'written', podsUpdated: 1, conflicts: 1, inFlight: true, errors: [] });
    expect(statuses.writes[0]?.status).toMatchObject({ matchedPods: 4, updatedPods: 0, latestRevision: currentRevisionName(set) });

    const revision = await cp().request('admin', 'GET', `/apis/apps/v1/namespaces/kruise-system/controllerrevisions/${currentRevisionName(set)}`);
    expect(revision.status).toBe(200);

    const pods = await Promise.all(['p-0', 'p-1', 'p-2', 'p-3'].map((name) => readPod(cp(), NS, name)));
    const image = (pod: Pod | undefined) => pod?.spec?.containers.find((c) => c.name === 'sidecar1')?.image;
    // p-0 met the conflict; one other pod of the batch was updated: which one follows Kruise's order
    // (newer pods first), and the fixtures are created within a second or two.
    expect(image(pods[0])).toBe(OLD_IMAGE);
    const updated = pods.filter((pod) => image(pod) === NEW_IMAGE);
    expect(updated).toHaveLength(1);
    const p1 = updated[0];
    const recorded = JSON.parse(p1?.metadata?.annotations?.['kruise.io/sidecarset-hash'] ?? '{}') as Record<string, { hash: string; controllerRevision: string }>;
    expect(recorded['test-sidecarset']).toMatchObject({ hash: hashOf(set), controllerRevision: currentRevisionName(set) });
    expect(p1?.status?.conditions?.find((c) => c.type === 'SidecarSetUpgradable')).toMatchObject({ status: 'True', reason: 'AllSidecarsetUpgradable' });
    // The pod the reconcile wrote is not a change the controller waits for.
    expect(result.watch?.own.has(p1?.metadata?.resourceVersion ?? '')).toBe(true);
  });

  it('does not flip a hot pod that changed behind the reconcile (a conflict, no event); the next reconcile flips it and tells the pod', async () => {
    const ns = 'hot-flip';
    await createNamespace(cp(), ns);
    const hot = hotSet('mesh:v2', '999');
    // Mid-swap: upgraded to mesh:v2 by the set's reconcile N, and the kubelet has run mesh-2 ready since.
    const upgraded = kubelet(applyPatch(injected('mesh:v1', 'h-0'), podUpdatePatch({ pod: injected('mesh:v1', 'h-0'), set: hot, latestRevision: 'r', injectedList: 'hot-set', now: new Date() })) as Pod);
    const { status, ...object } = upgraded;
    object.metadata = { ...object.metadata, namespace: ns, resourceVersion: undefined, uid: undefined };
    await createPod(cp(), JSON.parse(JSON.stringify(object)) as Pod);
    const res = await cp().request('admin', 'PATCH', `${podPath(ns, 'h-0')}/status`, { status }, 'application/strategic-merge-patch+json');
    expect(res.status).toBe(200);

    const { deps, statuses } = realDeps(hot, { namespace: ns, name: 'h-0' }, { podEvents: (kc) => kubePodEventSink(kc) });
    const imagesOf = async () => Object.fromEntries(((await readPod(cp(), ns, 'h-0'))?.spec?.containers ?? []).map((c) => [c.name, c.image]));
    const events = async () => {
      const list = await cp().request('admin', 'GET', `/api/v1/namespaces/${ns}/events`);
      return (JSON.parse(list.body) as { items: { reason: string; type: string; involvedObject: { kind: string; name: string } }[] }).items.map((e) => [e.involvedObject.kind, e.involvedObject.name, e.type, e.reason]);
    };

    const first = await reconcileSet((await statuses.get('hot-set')) as SidecarSet, deps);
    expect(first).toMatchObject({ podsFlipped: 0, conflicts: 1, inFlight: true, errors: [] });
    expect(await imagesOf()).toMatchObject({ 'mesh-1': 'mesh:v1', 'mesh-2': 'mesh:v2' });
    expect(await events()).toEqual([]);

    const second = await reconcileSet((await statuses.get('hot-set')) as SidecarSet, deps);
    expect(second).toMatchObject({ podsFlipped: 1, conflicts: 0, errors: [] });
    expect(await imagesOf()).toMatchObject({ 'mesh-1': EMPTY, 'mesh-2': 'mesh:v2' });
    expect(await events()).toEqual([['Pod', 'h-0', 'Normal', 'ResetContainerSucceed']]);
  });

  it('skips a pod whose patch cannot be made, tells it (its condition, a Warning Event on the set naming it) and updates the others', async () => {
    const ns = 'one-bad-pod';
    await createNamespace(cp(), ns);
    const merging = rolloutSet({ strategy: { type: 'RollingUpdate', maxUnavailable: 3 } });
    merging.metadata = { ...merging.metadata, resourceVersion: '1' };
    merging.spec = { ...merging.spec!, namespace: ns, patchPodMetadata: [{ annotations: { 'example.com/config': '{"log":"json"}' }, patchPolicy: 'MergePatchJson' }] };
    for (const [name, config] of [['b-0', 'not json'], ['b-1', '{}'], ['b-2', '{}']] as const) {
      const fixture = rolloutPod(merging, { name, namespace: ns });
      const { status, ...object } = fixture;
      object.metadata = { ...object.metadata, resourceVersion: undefined, annotations: { ...object.metadata?.annotations, 'example.com/config': config } };
      await createPod(cp(), JSON.parse(JSON.stringify(object)) as Pod);
      const res = await cp().request('admin', 'PATCH', `${podPath(ns, name)}/status`, { status }, 'application/strategic-merge-patch+json');
      expect(res.status).toBe(200);
    }
    // b-2 changes right after the list: a conflict, decided again next reconcile, not recorded.
    const { deps } = realDeps(merging, { namespace: ns, name: 'b-2' }, { setEvents: true });
    const result = await reconcileSet(merging, deps, { writeConcurrency: 1 });
    expect(result).toMatchObject({ podsUpdated: 1, podsFailed: 1, conflicts: 1 });

    const [b0, b1] = await Promise.all(['b-0', 'b-1'].map((name) => readPod(cp(), ns, name)));
    const image = (pod: Pod | undefined) => pod?.spec?.containers.find((c) => c.name === 'sidecar1')?.image;
    expect([image(b0), image(b1)]).toEqual([OLD_IMAGE, NEW_IMAGE]);
    const condition = b0?.status?.conditions?.find((c) => c.type === 'SidecarSetUpgradable');
    expect(condition).toMatchObject({ status: 'False', reason: 'PodUpdateFailed' });
    expect(condition?.message).toMatch(/^\{"test-sidecarset":"update failed: its patch cannot be made: .*example\.com\/config/);
    const list = await cp().request('admin', 'GET', '/api/v1/namespaces/default/events');
    const told = (JSON.parse(list.body) as { items: { reason: string; type: string; message: string; involvedObject: { kind: string; name: string } }[] }).items.filter((e) => e.reason === 'PodUpdateFailed');
    expect(told.map((e) => [e.involvedObject.kind, e.involvedObject.name, e.type])).toEqual([['SidecarSet', 'test-sidecarset', 'Warning']]);
    expect(told[0]?.message).toMatch(/^pod one-bad-pod\/b-0 skipped: its patch cannot be made: .*example\.com\/config/);
  });
});
