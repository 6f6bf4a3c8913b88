/**
 * The controller's view of a requeued set's pods (lib/status-sync/pod-view.ts)
 * on a real kube-apiserver with the test kubelet, as the functions identity:
 * the watch reaches the API server through a fault proxy, so that it can lag
 * behind the writes (every chunk held back) or be cut (connections reset).
 *
 * - A rollout requeued from the view, its watch lagging: every stored
 *   version of every pod is checked (rollout-recorder.ts): never more
 *   updated pods unavailable than maxUnavailable, each pod written once; the
 *   pods are listed once, and the stored status ends {N, N, N, N}.
 * - The view catches up on its own writes: right after a write, the view
 *   hands out the pod at the written version, never the one before.
 * - A watch cut mid-follow: the view says so, and the next read lists.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { kubeEventSink, kubePodEventSink } from '../../lib/adapters/kube-events.ts';
import { kubeNamespaceSnapshot } from '../../lib/adapters/kube-namespaces.ts';
import { kubePodWriter, kubeSetPods } from '../../lib/adapters/kube-pods.ts';
import { kubeRevisionStore } from '../../lib/adapters/kube-revisions.ts';
import { kubeStatusWriter } from '../../lib/adapters/kube-sidecarsets.ts';
import { discoveredSidecarSetVersion } from '../../lib/adapters/kube-sidecarsets-version.ts';
import { kubeConfigClient, parseKubeConfig } from '../../lib/adapters/kubeconfig.ts';
import type { KubeClient } from '../../lib/adapters/kube-request.ts';
import { podScope } from '../../lib/rollout/pod-scope.ts';
import { runController, rolloutPredicate } from '../../lib/status-sync/run-controller.ts';
import { setPodView } from '../../lib/status-sync/pod-view.ts';
import { rolloutStateEvents } from '../../lib/status-sync/rollout-state.ts';
import type { ReconcileDeps } from '../../lib/status-sync/set-reconcile.ts';
import type { SetPodSource } from '../../lib/ports.ts';
import { budgetOf } from '../../testkit/faults/rollout-faults.ts';
import { startFaultProxy, type FaultProxy } from '../../testkit/faults/fault-proxy.ts';
import { deleteSet, NEW_IMAGE, readSet, SIDECAR, seedRollout, startRolloutCluster, updateSidecarImage, type RolloutCluster } from '../../testkit/faults/rollout-fixture.ts';
import { recordRollout } from '../../testkit/faults/rollout-recorder.ts';

const TIMEOUT_MS = 300_000;

let cluster: RolloutCluster | undefined;
let proxy: FaultProxy | undefined;
const clients: KubeClient[] = [];

function theCluster(): RolloutCluster {
  if (cluster === undefined) throw new Error('the cluster did not start');
  return cluster;
}

function theProxy(): FaultProxy {
  if (proxy === undefined) throw new Error('the proxy did not start');
  return proxy;
}

/** A client as the functions identity, straight to the API server or through the fault proxy. */
function functionsClient(through: 'direct' | 'proxy'): KubeClient {
  const { cp } = theCluster();
  const kubeconfig = through === 'direct' ? cp.kubeconfig('functions') : cp.kubeconfig('functions').replace(cp.url, `https://127.0.0.1:${theProxy().port}`);
  const client = kubeConfigClient(parseKubeConfig(kubeconfig, 'test'));
  clients.push(client);
  return client;
}

/** The set's pods: listed and written straight to the API server, watched through the proxy; lists counted. */
function podSource(): { source: SetPodSource; lists: () => number } {
  const direct = kubeSetPods(functionsClient('direct'));
  const watched = kubeSetPods(functionsClient('proxy'));
  let lists = 0;
  return {
    source: {
      list: (scope, signal) => {
        lists++;
        return direct.list(scope, signal);
      },
      changed: (...args) => direct.changed(...args),
      watch: (scope, resourceVersion, sink, signal) => watched.watch!(scope, resourceVersion, sink, signal),
    },
    lists: () => lists,
  };
}

describeWithControlPlane('the view of a requeued set’s pods, on a real kube-apiserver', () => {
  beforeAll(async () => {
    await ensureControlPlaneBinaries();
    cluster = await startRolloutCluster({ readyDelayMs: 300 });
    proxy = await startFaultProxy({ targetPort: Number(new URL(cluster.cp.url).port) });
  }, 10 * 60_000);

  afterAll(async () => {
    for (const client of clients) client.close();
    await proxy?.close();
    await cluster?.stop();
  }, 60_000);

  it('rolls out from the view while its watch lags behind the writes: maxUnavailable held at every stored version, each pod written once, the pods listed once', async () => {
    const { cp } = theCluster();
    const name = 'view-lagging';
    const pods = 24;
    const seeded = await seedRollout(theCluster(), { name, pods, maxUnavailable: '25%' });
    // Every chunk of the watch held back: the view is always behind the reconcile's own writes.
    theProxy().slow({ perChunkMs: 150 });
    const client = functionsClient('direct');
    const versions = discoveredSidecarSetVersion(client);
    const { source, lists } = podSource();
    const deps: ReconcileDeps = {
      statuses: kubeStatusWriter(client, versions),
      events: kubeEventSink(client, { versions }),
      namespaces: kubeNamespaceSnapshot(client),
      rollout: { revisions: kubeRevisionStore(client, 'kruise-system', { versions }), setPods: source, pods: kubePodWriter(client), podEvents: kubePodEventSink(client), clock: { now: () => new Date() }, states: rolloutStateEvents() },
    };
    const target = await updateSidecarImage(cp, seeded.set, NEW_IMAGE);
    const recorder = await recordRollout(cp, seeded.namespace, target, budgetOf('25%', pods), SIDECAR);
    try {
      const summary = await runController([name], deps, { intervalMs: 2_000, catchUpMs: 10_000 }, AbortSignal.timeout(240_000));
      await recorder.caughtUp();
      expect({ violations: recorder.violations, gaps: recorder.gaps }).toEqual({ violations: [], gaps: [] });
      expect(recorder.imageChanges()).toEqual({ pods, repeated: 0 });
      expect(summary).toMatchObject({ podsUpdated: pods, stalled: [], unfinished: [], errors: [] });
      // One list (the first reconcile); every later reconcile planned from the view, which waited for the writes.
      expect(lists()).toBe(1);
      expect(summary.podReads).toEqual({ fromView: summary.reconciles - 1, listed: { first: 1 } });
      expect(summary.reconciles).toBeGreaterThanOrEqual(4);
      const status = (await readSet(cp, name)).status;
      expect(status).toMatchObject({ matchedPods: pods, updatedPods: pods, readyPods: pods, updatedReadyPods: pods });
    } finally {
      theProxy().passThrough();
      await recorder.stop();
      await deleteSet(cp, name);
    }
  }, TIMEOUT_MS);

  it('hands out a pod it just wrote at the written version or later, waiting for its lagging watch to show it', async () => {
    const name = 'view-own-writes';
    const seeded = await seedRollout(theCluster(), { name, pods: 3, maxUnavailable: 1 });
    theProxy().slow({ perChunkMs: 400 });
    try {
      const { source, lists } = podSource();
      const view = setPodView(source, kubePodWriter(functionsClient('direct')), { predicate: rolloutPredicate, catchUpMs: 20_000 });
      const scope = podScope(seeded.set)!;
      const first = await view.source.list(scope);
      const pod = first.pods.find((p) => p.metadata?.name === 'pod-00001')!;
      const written = await view.writer.patch(seeded.namespace, 'pod-00001', [
        { op: 'test', path: '/metadata/resourceVersion', value: pod.metadata?.resourceVersion },
        // A bookkeeping key: the pod policy lets the reconciler's group write no key the pod's fence does not list.
        { op: 'add', path: '/metadata/annotations/kruise.io~1sidecarset-view-test', value: 'yes' },
      ]);
      if (written.outcome !== 'written') throw new Error('the pod is gone');
      const read = await view.source.list(scope);
      const after = read.pods.find((p) => p.metadata?.name === 'pod-00001')!;
      expect(BigInt(after.metadata?.resourceVersion ?? '0') >= BigInt(written.resourceVersion)).toBe(true);
      expect(after.metadata?.annotations?.['kruise.io/sidecarset-view-test']).toBe('yes');
      expect(BigInt(read.resourceVersion) >= BigInt(written.resourceVersion)).toBe(true);
      // From the view, not a second list.
      expect(lists()).toBe(1);
      expect(view.counts()).toEqual({ fromView: 1, listed: { first: 1 } });
      view.close();
    } finally {
      theProxy().passThrough();
      await deleteSet(theCluster().cp, name);
    }
  }, TIMEOUT_MS);

  it('says when its watch is cut, and lists the pods for the next read', async () => {
    const { cp } = theCluster();
    const name = 'view-cut';
    const seeded = await seedRollout(theCluster(), { name, pods: 3, maxUnavailable: 1 });
    try {
      const { source, lists } = podSource();
      const view = setPodView(source, kubePodWriter(functionsClient('direct')), { predicate: rolloutPredicate });
      const scope = podScope(seeded.set)!;
      await view.source.list(scope);
      expect(view.watching()).toBe(true);
      const waiting = view.changed(60_000);
      theProxy().reset();
      expect(await waiting).toBe('error');
      expect(view.watching()).toBe(false);
      theProxy().passThrough();
      // Changed meanwhile, unseen by any watch: the list shows it.
      const res = await cp.request('admin', 'PATCH', `/api/v1/namespaces/${seeded.namespace}/pods/pod-00002`, { metadata: { annotations: { 'view.test/unseen': 'yes' } } }, 'application/merge-patch+json');
      expect(res.status).toBe(200);
      const read = await view.source.list(scope);
      expect(read.pods.find((p) => p.metadata?.name === 'pod-00002')?.metadata?.annotations?.['view.test/unseen']).toBe('yes');
      expect(lists()).toBe(2);
      expect(view.counts()).toEqual({ fromView: 0, listed: { first: 1, error: 1 } });
      expect(view.watching()).toBe(true);
      view.close();
    } finally {
      theProxy().passThrough();
      await deleteSet(cp, name);
    }
  }, TIMEOUT_MS);
});
