/**
 * A HotUpgrade set's reconciles against the rollout's ports in memory: upgrade,
 * flip once the new container runs ready, each guarded, each flip recorded on its
 * pod, and a pod never upgraded in the reconcile that flipped it.
 */
import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import { WriteConflictError } from '../../lib/ports/errors.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { reconcileSet, type ReconcileDeps, type ReconcileOptions } from '../../lib/status-sync/set-reconcile.ts';
import { EMPTY, hotSet, injected, kubelet } from '../rollout/hot-fixtures.ts';
import { world } from './rollout-world.ts';

type Cluster = ReturnType<typeof world>['cluster'];

const images = (cluster: Cluster, name: string) =>
  Object.fromEntries((cluster.pods().find((p) => p.metadata?.name === name)?.spec?.containers ?? []).filter((c) => c.name.startsWith('mesh')).map((c) => [c.name, c.image]));

/** One reconcile over the set as stored now (each status write changes its resourceVersion, as on an API server). */
async function reconcile(deps: ReconcileDeps, options: ReconcileOptions = {}) {
  return reconcileSet((await deps.statuses.get('hot-set')) as SidecarSet, deps, options);
}

/** The kubelet restarts what changed on every pod (a bad image never becomes ready). */
function restartAll(cluster: Cluster, failing: readonly string[] = []): void {
  for (const pod of cluster.pods()) {
    cluster.update(pod.metadata!.namespace!, pod.metadata!.name!, (p: Pod) => {
      p.status = kubelet(p, failing).status;
    });
  }
}

describe('reconcileSet with HotUpgrade sidecars', () => {
  it('upgrades, flips once ready (telling the pod), then takes the next pod; the rollout ends finished', async () => {
    const set = hotSet('mesh:v2', '999', { type: 'RollingUpdate', maxUnavailable: 1 });
    const { deps, cluster, podEvents, log } = world(set, [injected('mesh:v1', 'a'), injected('mesh:v1', 'b')]);

    const first = await reconcile(deps, { writeConcurrency: 1 });
    expect(first).toMatchObject({ podsUpdated: 1, podsFlipped: 0, inFlight: true, errors: [] });
    expect(images(cluster, 'a')).toEqual({ 'mesh-1': 'mesh:v1', 'mesh-2': 'mesh:v2' });

    // Not restarted yet: no flip, and b waits (a holds the one unavailable slot).
    const waiting = await reconcile(deps, { writeConcurrency: 1 });
    expect(waiting).toMatchObject({ podsUpdated: 0, podsFlipped: 0, inFlight: true });

    restartAll(cluster);
    log.length = 0;
    const flip = await reconcile(deps, { writeConcurrency: 1 });
    expect(flip).toMatchObject({ podsUpdated: 0, podsFlipped: 1, inFlight: true, errors: [] });
    expect(log[0]).toBe('patch a');
    expect(images(cluster, 'a')).toEqual({ 'mesh-1': EMPTY, 'mesh-2': 'mesh:v2' });
    expect(podEvents.events).toEqual([
      { pod: { namespace: 'default', name: 'a', uid: 'uid-a' }, type: 'Normal', reason: 'ResetContainerSucceed', message: 'reset sidecar container image empty successfully' },
    ]);

    restartAll(cluster);
    expect(await reconcile(deps, { writeConcurrency: 1 })).toMatchObject({ podsUpdated: 1, podsFlipped: 0 });
    restartAll(cluster);
    expect(await reconcile(deps, { writeConcurrency: 1 })).toMatchObject({ podsUpdated: 0, podsFlipped: 1 });
    restartAll(cluster);
    const last = await reconcile(deps, { writeConcurrency: 1 });
    expect(last).toMatchObject({ podsUpdated: 0, podsFlipped: 0, inFlight: false, counts: { matchedPods: 2, updatedPods: 2, readyPods: 2, updatedReadyPods: 2 } });
    expect(last.stateChange).toMatch(/^finished/);
    expect(images(cluster, 'b')).toEqual({ 'mesh-1': EMPTY, 'mesh-2': 'mesh:v2' });
  });

  it('one pod whose patch cannot be made costs the others nothing: their updates and flips go on', async () => {
    const set = hotSet('mesh:v2', '999', { type: 'RollingUpdate', maxUnavailable: 2 });
    set.spec = { ...set.spec!, patchPodMetadata: [{ annotations: { 'example.com/config': '{"a":1}' }, patchPolicy: 'MergePatchJson' }] };
    const broken = injected('mesh:v1', 'b');
    broken.metadata = { ...broken.metadata, annotations: { ...broken.metadata?.annotations, 'example.com/config': 'not json' } };
    const { deps, cluster, podEvents, events } = world(set, [injected('mesh:v1', 'a'), broken]);
    const first = await reconcile(deps, { writeConcurrency: 1 });
    expect(first).toMatchObject({ podsUpdated: 1, podsFailed: 1 });
    expect(images(cluster, 'a')).toEqual({ 'mesh-1': 'mesh:v1', 'mesh-2': 'mesh:v2' });
    restartAll(cluster);
    // The reconcile that flips a updates no pod (Kruise 1.9 returns after flipping), so b is not tried in it...
    const second = await reconcile(deps, { writeConcurrency: 1 });
    expect(second).toMatchObject({ podsFlipped: 1, podsFailed: 0, inFlight: true });
    // Kruise requeues after 1 s until its cache shows the flipped pod; here the requeue waits for a change of the
    // set's pods other than the version this reconcile wrote (the kubelet resetting the old container).
    expect(second.watch?.own.size).toBe(1);
    // ...but in the next one, which skips it again and still ends the rollout of the others.
    restartAll(cluster);
    expect(await reconcile(deps, { writeConcurrency: 1 })).toMatchObject({ podsFlipped: 0, podsFailed: 1 });
    expect(images(cluster, 'a')).toEqual({ 'mesh-1': EMPTY, 'mesh-2': 'mesh:v2' });
    expect(images(cluster, 'b')).toEqual({ 'mesh-1': 'mesh:v1', 'mesh-2': EMPTY });
    expect(podEvents.events.map((e) => e.reason)).toEqual(['ResetContainerSucceed']);
    // (This fixture kubelet drops the pod's other conditions, so b is recorded in both reconciles; set-reconcile.test.ts shows it recorded once.)
    expect(events.events.filter((e) => e.reason === 'PodUpdateFailed').map((e) => e.message)[0]).toMatch(/^pod default\/b skipped: its patch cannot be made: .*example\.com\/config/);
  });

  it('the last pods finishing their swap keep the set in flight, reported as progressing rather than finished', async () => {
    const set = hotSet('mesh:v2');
    const { deps, cluster } = world(set, [injected('mesh:v1', 'a')]);
    expect((await reconcile(deps)).stateChange).toMatch(/^rolling out/);
    const swapping = await reconcile(deps);
    expect(swapping).toMatchObject({ inFlight: true, counts: { matchedPods: 1, updatedPods: 1, updatedReadyPods: 0 } });
    // Still the same progressing state (no Finished Event while the old container still runs).
    expect(swapping.stateChange).toBeUndefined();
    restartAll(cluster);
    expect(await reconcile(deps)).toMatchObject({ podsFlipped: 1, inFlight: true });
  });

  it('a conflict on the flip skips the pod without an event; the next reconcile flips it', async () => {
    const set = hotSet('mesh:v2');
    let refuse = true;
    const w = world(set, [injected('mesh:v1', 'a')], {
      writer: {
        patch: (namespace, name, ops, signal) => {
          const flipping = ops.some((op) => op.path.endsWith('/image') && (op as { value?: unknown }).value === EMPTY);
          if (flipping && refuse) {
            refuse = false;
            return Promise.reject(new WriteConflictError(`pod ${namespace}/${name} changed`));
          }
          return w.cluster.writer.patch(namespace, name, ops, signal);
        },
      },
    });
    await reconcile(w.deps);
    restartAll(w.cluster);
    expect(await reconcile(w.deps)).toMatchObject({ podsFlipped: 0, conflicts: 1, inFlight: true, errors: [] });
    expect(w.podEvents.events).toEqual([]);
    // The working container never held the empty image meanwhile.
    expect(images(w.cluster, 'a')).toEqual({ 'mesh-1': 'mesh:v1', 'mesh-2': 'mesh:v2' });
    expect(await reconcile(w.deps)).toMatchObject({ podsFlipped: 1, conflicts: 0 });
    expect(images(w.cluster, 'a')).toEqual({ 'mesh-1': EMPTY, 'mesh-2': 'mesh:v2' });
  });

  it('a failed flip is an error naming the pod and a Warning ResetContainerFailed on it', async () => {
    const set = hotSet('mesh:v2');
    const w = world(set, [injected('mesh:v1', 'a')]);
    await reconcile(w.deps);
    restartAll(w.cluster);
    w.deps.rollout.pods = { ...w.deps.rollout.pods, patch: () => Promise.reject(new Error('connection reset')) };
    const result = await reconcile(w.deps);
    expect(result.errors).toEqual([{ sidecarSet: 'hot-set', operation: 'flip hot sidecars of pod default/a', message: 'connection reset' }]);
    expect(w.podEvents.events).toEqual([
      { pod: { namespace: 'default', name: 'a', uid: 'uid-a' }, type: 'Warning', reason: 'ResetContainerFailed', message: 'reset sidecar container image empty failed: connection reset' },
    ]);
  });

  it('a pod flipped in a reconcile is not also upgraded in it: its new image waits for the next list', async () => {
    const v2 = hotSet('mesh:v2', '999', { type: 'RollingUpdate', maxUnavailable: 1 });
    const { deps, cluster } = world(v2, [injected('mesh:v1', 'a')]);
    await reconcile(deps);
    restartAll(cluster);
    // The set moves on to v3 before the flip: the pod is due a flip and is a candidate for v3.
    const v3 = hotSet('mesh:v3', '1000', { type: 'RollingUpdate', maxUnavailable: 1 });
    const later = world(v3, cluster.pods());
    const both = await reconcile(later.deps);
    expect(both).toMatchObject({ podsFlipped: 1, podsUpdated: 0, conflicts: 0, errors: [] });
    expect(images(later.cluster, 'a')).toEqual({ 'mesh-1': EMPTY, 'mesh-2': 'mesh:v2' });
    restartAll(later.cluster);
    expect(await reconcile(later.deps)).toMatchObject({ podsUpdated: 1 });
    expect(images(later.cluster, 'a')).toEqual({ 'mesh-1': 'mesh:v3', 'mesh-2': 'mesh:v2' });
  });

  it('a new image that never becomes ready holds its pod mid-swap: no flip, and the set stays in flight for the stall watch', async () => {
    const set = hotSet('mesh:bad', '999');
    const { deps, cluster } = world(set, [injected('mesh:v1', 'a')]);
    await reconcile(deps);
    restartAll(cluster, ['mesh:bad']);
    const result = await reconcile(deps);
    expect(result).toMatchObject({ podsFlipped: 0, inFlight: true, counts: { updatedPods: 1, readyPods: 0 } });
    // The old version keeps serving.
    expect(images(cluster, 'a')).toEqual({ 'mesh-1': 'mesh:v1', 'mesh-2': 'mesh:bad' });
  });
});
