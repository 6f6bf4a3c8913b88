/**
 * A stuck rollout on a real kube-apiserver with the test kubelet: the new
 * sidecar image cannot be pulled (ErrImagePull, then ImagePullBackOff), and
 * a later reconcile, in a process that never saw the first one (a new
 * invocation), finds the rollout stalled by the pod's own update time and
 * says why: a RolloutStalled Warning naming ImagePullBackOff and the pod,
 * and the set left to the schedule. Told once: reconciles in further new
 * processes find the stall among the API server's Events and tell it no more.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { startTestKubelet, type TestKubelet } from '../../control-plane/test-kubelet.ts';
import { memoryNamespaceSource } from '../../lib/adapters/memory.ts';
import { memoryEventSink, memoryPodEventSink, memoryStatusWriter } from '../../lib/adapters/memory-status-sync.ts';
import { kubePodWriter, kubeSetPods } from '../../lib/adapters/kube-pods.ts';
import { EVENT_NAMESPACE, kubeEventSink, kubeRecordedStalls } from '../../lib/adapters/kube-events.ts';
import { kubeRevisionStore } from '../../lib/adapters/kube-revisions.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { systemClock } from '../../lib/ports.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { rolloutStateEvents } from '../../lib/status-sync/rollout-state.ts';
import { reconcileSet, type ReconcileDeps } from '../../lib/status-sync/set-reconcile.ts';
import { createNamespace, createPod, readPod } from '../../testkit/cluster-pods.ts';
import { rolloutPod, rolloutSet } from '../rollout/fixtures.ts';

const NS = 'stuck';
const BAD = 'centos:bad-tag';

describeWithControlPlane('a stalled rollout on a real kube-apiserver with the test kubelet', () => {
  let controlPlane: ControlPlane | undefined;
  let kubelet: TestKubelet | undefined;
  const cp = (): ControlPlane => {
    if (controlPlane === undefined) throw new Error('the control plane did not start');
    return controlPlane;
  };

  beforeAll(async () => {
    controlPlane = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
    kubelet = startTestKubelet(controlPlane, { namespaces: [NS], readyDelayMs: 200 });
    await createNamespace(controlPlane, NS);
  }, 30 * 60_000);

  afterAll(async () => {
    await kubelet?.stop();
    await controlPlane?.stop();
  });

  /** A new process's ports (no memory of earlier reconciles), the set's status and Events in memory. */
  function freshDeps(set: SidecarSet, stallMs: number): { deps: ReconcileDeps; events: ReturnType<typeof memoryEventSink> } {
    const kc = kubeConfigClient(parseKubeConfig(cp().kubeconfig('functions'), 'test'));
    const events = memoryEventSink();
    const deps: ReconcileDeps = {
      statuses: memoryStatusWriter([set]),
      events,
      namespaces: memoryNamespaceSource([]),
      rollout: { revisions: kubeRevisionStore(kc, 'kruise-system'), setPods: kubeSetPods(kc), pods: kubePodWriter(kc), podEvents: memoryPodEventSink(), clock: systemClock, states: rolloutStateEvents(), stallMs },
    };
    return { deps, events };
  }

  it('names ImagePullBackOff and the pod in a RolloutStalled Warning once the pod has been unavailable for the threshold, and stops following it', async () => {
    const set = rolloutSet({ image: BAD, strategy: { type: 'RollingUpdate', maxUnavailable: 1 } });
    set.metadata = { ...set.metadata, resourceVersion: '1' };
    set.spec = { ...set.spec!, namespace: NS };
    for (const name of ['s-0', 's-1']) {
      const object = rolloutPod(set, { name, namespace: NS });
      delete object.status;
      object.metadata = { ...object.metadata, resourceVersion: undefined };
      await createPod(cp(), JSON.parse(JSON.stringify(object)) as Pod);
    }
    // The test kubelet starts both pods on the old image.
    for (const deadline = Date.now() + 20_000; ; ) {
      const pods = await Promise.all(['s-0', 's-1'].map((name) => readPod(cp(), NS, name)));
      if (pods.every((p) => p?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))) break;
      if (Date.now() > deadline) throw new Error('the test kubelet did not start the pods');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const first = await reconcileSet(set, freshDeps(set, 1_500).deps);
    expect(first).toMatchObject({ podsUpdated: 1, inFlight: true, errors: [] });
    // The kubelet cannot pull the image: ErrImagePull, then ImagePullBackOff.
    for (const deadline = Date.now() + 20_000; ; ) {
      const pod = await readPod(cp(), NS, 's-0');
      const state = pod?.status?.containerStatuses?.find((s) => s.name === 'sidecar1')?.state as { waiting?: { reason?: string } } | undefined;
      const waiting = state?.waiting?.reason;
      if (waiting === 'ImagePullBackOff') break;
      if (Date.now() > deadline) throw new Error(`the sidecar waits in ${String(waiting)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The hash annotation's updateTimestamp has second precision: wait out the threshold from it.
    await new Promise((resolve) => setTimeout(resolve, 2_600));

    const { deps, events } = freshDeps(set, 1_500);
    const later = await reconcileSet(set, deps);
    expect(later).toMatchObject({ podsUpdated: 0, inFlight: false, restarting: false, unavailable: { ImagePullBackOff: 1 } });
    expect(events.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'RolloutStalled']]);
    expect(events.events[0]?.message).toMatch(/^stalled: 1 updated pod\(s\) not ready, the last updated \d+ s ago: ImagePullBackOff: 1 pod\(s\) \(stuck\/s-0\); the next pods wait under maxUnavailable 1/);

    // Each cold start is a new process; the Events are the API server's, written and read as the reconciler (its RBAC).
    const kc = kubeConfigClient(parseKubeConfig(cp().kubeconfig('status-sync'), 'test'));
    const stalledEvents = async () => {
      const res = await cp().request('admin', 'GET', `/api/v1/namespaces/${EVENT_NAMESPACE}/events?fieldSelector=${encodeURIComponent(`involvedObject.kind=SidecarSet,involvedObject.uid=${set.metadata?.uid ?? ''},reason=RolloutStalled`)}`);
      return (JSON.parse(res.body) as { items: { message: string }[] }).items;
    };
    const reconciles: Awaited<ReturnType<typeof reconcileSet>>[] = [];
    for (let n = 0; n < 3; n++) {
      const cold = freshDeps(set, 1_500).deps;
      cold.events = kubeEventSink(kc);
      cold.rollout.states = rolloutStateEvents(kubeRecordedStalls(kc));
      reconciles.push(await reconcileSet(set, cold));
    }
    expect(reconciles.map((p) => [p.errors, p.stateChange?.slice(0, 'stalled:'.length), p.inFlight])).toEqual([
      [[], 'stalled:', false],
      [[], undefined, false],
      [[], undefined, false],
    ]);
    expect((await stalledEvents()).map((e) => e.message.slice(0, 'stalled: 1 updated pod(s)'.length))).toEqual(['stalled: 1 updated pod(s)']);
  });
});
