/**
 * One set's whole reconcile against the rollout's ports in memory: what it
 * writes, in which order, and what it leaves alone when a pod, the set or a
 * revision write gets in the way.
 */
import { describe, expect, it } from '@jest/globals';
import { memoryNamespaceSource } from '../../lib/adapters/memory.ts';
import type { memoryPods } from '../../lib/adapters/memory-rollout.ts';
import { memoryEventSink } from '../../lib/adapters/memory-status-sync.ts';
import { currentRevisionName, newRevision } from '../../lib/sidecarset/revisions.ts';
import type { Pod } from '../../lib/kube/types.ts';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { reconcileSet, type ReconcileOptions } from '../../lib/status-sync/set-reconcile.ts';
import { NEW_IMAGE, OLD_IMAGE, podsOf, rolloutPod } from '../rollout/fixtures.ts';
import { storedRolloutSet, world } from './rollout-world.ts';

const ONE_AT_A_TIME: ReconcileOptions = { writeConcurrency: 1 };
const imageOf = (cluster: ReturnType<typeof memoryPods>, name: string) => cluster.pods().find((p) => p.metadata?.name === name)?.spec?.containers.find((c) => c.name === 'sidecar1')?.image;

describe('reconcileSet', () => {
  it('writes the status first, then every image patch of the batch, then their conditions, then the rollout state', async () => {
    const set = storedRolloutSet();
    const { deps, log, statuses, cluster, events } = world(set, podsOf(set, 5, 0, 0));
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    // A pod restarts as soon as its own patch lands: no patch waits behind another pod's condition, which only reports.
    expect(log).toEqual(['status test-sidecarset', 'patch p-00000', 'patch p-00001', 'condition p-00000 True', 'condition p-00001 True', 'event RolloutProgressing']);
    expect(statuses.writes).toEqual([
      { name: 'test-sidecarset', status: { observedGeneration: 2, matchedPods: 5, updatedPods: 0, readyPods: 5, updatedReadyPods: 0, latestRevision: currentRevisionName(set), collisionCount: 0 } },
    ]);
    expect(['p-00000', 'p-00001', 'p-00002'].map((name) => imageOf(cluster, name))).toEqual([NEW_IMAGE, NEW_IMAGE, OLD_IMAGE]);
    expect(result).toMatchObject({ sidecarSet: 'test-sidecarset', status: 'written', podsUpdated: 2, conflicts: 0, revisionWrites: 1, inFlight: true, errors: [] });
    expect(result.stateChange).toMatch(/^rolling out, at most 2 unavailable at a time \(maxUnavailable\): 2 pod\(s\) updated in this reconcile/);
    expect(events.events.at(-1)).toMatchObject({ sidecarSet: { name: 'test-sidecarset', uid: 'uid-1' }, reason: 'RolloutProgressing' });
  });

  it('tells the rollout with the counts the reconcile leaves: the pods it just updated are updated and no longer ready, the stored status keeps what it listed', async () => {
    const set = storedRolloutSet({ type: 'RollingUpdate', maxUnavailable: 3 });
    const { deps, events, statuses } = world(set, podsOf(set, 12, 0, 0));
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result.podsUpdated).toBe(3);
    expect(events.events.at(-1)?.message).toMatch(/: 3 pod\(s\) updated in this reconcile; 3 of 12 pod\(s\) updated, 0 updated and ready$/);
    expect(result.state?.progress).toBe(JSON.stringify({ matchedPods: 12, updatedPods: 3, readyPods: 9, updatedReadyPods: 0 }));
    expect(statuses.writes[0]?.status).toMatchObject({ matchedPods: 12, updatedPods: 0, readyPods: 12 });
  });

  it("hands the controller the scope, the list's resourceVersion and the versions it wrote", async () => {
    const set = storedRolloutSet();
    const { deps, cluster } = world(set, podsOf(set, 5, 0, 0));
    const listed = cluster.resourceVersion();
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    const written = cluster.pods().filter((p) => imageOf(cluster, p.metadata?.name ?? '') === NEW_IMAGE).map((p) => p.metadata?.resourceVersion);
    expect(result.watch).toEqual({ scope: { labelSelector: 'app=web' }, resourceVersion: listed, own: expect.any(Set) });
    // Each pod's patch and its condition: the condition's version is the pod's last.
    expect(result.watch?.own.size).toBe(4);
    for (const version of written) expect(result.watch?.own.has(version ?? '')).toBe(true);
  });

  it('skips a pod that changed since the list (its test fails), counts it and updates the rest', async () => {
    const set = storedRolloutSet();
    const pods = podsOf(set, 5, 0, 0);
    const { deps, cluster } = world(set, pods, {
      setPods: {
        list: async (scope) => {
          const listed = await cluster.source.list(scope);
          cluster.update('default', 'p-00000', (pod) => {
            pod.metadata = { ...pod.metadata, labels: { ...pod.metadata?.labels, touched: 'yes' } };
          });
          return listed;
        },
      },
    });
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result).toMatchObject({ podsUpdated: 1, conflicts: 1, inFlight: true, errors: [] });
    expect(['p-00000', 'p-00001'].map((name) => imageOf(cluster, name))).toEqual([OLD_IMAGE, NEW_IMAGE]);
  });

  it('passes over a pod deleted since the list: not updated, not an error', async () => {
    const set = storedRolloutSet();
    const { deps, cluster, log } = world(set, podsOf(set, 5, 0, 0));
    deps.rollout.setPods = {
      ...deps.rollout.setPods,
      list: async (scope) => {
        const listed = await cluster.source.list(scope);
        cluster.remove('default', 'p-00000');
        return listed;
      },
    };
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result).toMatchObject({ podsUpdated: 1, conflicts: 0, errors: [] });
    expect(log).not.toContain('condition p-00000 True');
  });

  it('passes over a pod whose deletion began since the list (Kruise 1.9 #2472: 1.8 panicked, 1.9 stops the reconcile): the others are updated, it is matched no more', async () => {
    const set = storedRolloutSet();
    const { deps, cluster } = world(set, podsOf(set, 5, 0, 0));
    deps.rollout.setPods = {
      ...deps.rollout.setPods,
      list: async (scope) => {
        const listed = await cluster.source.list(scope);
        cluster.update('default', 'p-00000', (pod) => {
          pod.metadata = { ...pod.metadata, deletionTimestamp: '2026-12-01T00:00:00Z' };
        });
        return listed;
      },
    };
    const result = await reconcileSet(set, deps, { writeConcurrency: 1 });
    expect(result).toMatchObject({ podsUpdated: 1, conflicts: 1, errors: [] });
    expect(imageOf(cluster, 'p-00000')).toBe(OLD_IMAGE);
    deps.rollout.setPods = { ...deps.rollout.setPods, list: (scope) => cluster.source.list(scope) };
    const next = await reconcileSet(set, deps, { writeConcurrency: 1 });
    expect(next.counts?.matchedPods).toBe(4);
    expect(imageOf(cluster, 'p-00000')).toBe(OLD_IMAGE);
  });

  it('stops the set at a status conflict: no pod is written and the set is decided again next reconcile', async () => {
    const set = storedRolloutSet();
    const stale = { ...set, metadata: { ...set.metadata, resourceVersion: '0' } };
    const { deps, log, cluster } = world(set, podsOf(set, 5, 0, 0));
    const result = await reconcileSet(stale, deps, ONE_AT_A_TIME);
    expect(result).toMatchObject({ status: 'not-written', podsUpdated: 0, inFlight: true, errors: [{ sidecarSet: 'test-sidecarset', operation: 'patch status', message: 'the SidecarSet changed during the reconcile; it is decided again next reconcile' }] });
    expect(log).toEqual([]);
    expect(cluster.writes).toEqual([]);
  });

  it('writes no status and no pod when the revision cannot be registered, and tells it by an Event', async () => {
    const set = storedRolloutSet();
    const { deps, log, revisions } = world(set, podsOf(set, 5, 0, 0));
    deps.rollout.revisions = { ...revisions, create: () => Promise.reject(new Error('the API server answered 403: forbidden')) };
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result).toMatchObject({ status: 'not-written', podsUpdated: 0, errors: [{ operation: 'register the revision', message: `ControllerRevision kruise-system/${currentRevisionName(set)} could not be created: the API server answered 403: forbidden` }] });
    expect(log).toEqual(['event RevisionWriteFailed']);
  });

  it('lists the set\'s pods while its revision is registered, not after: the list is the read a freed slot waits for', async () => {
    const set = storedRolloutSet();
    const { deps, log, revisions, cluster } = world(set, podsOf(set, 5, 0, 0));
    const order: string[] = [];
    let release: () => void = () => undefined;
    // Released by the pods' list, or after 200 ms when nothing lists them meanwhile.
    const held = new Promise<void>((resolve) => {
      release = resolve;
      setTimeout(resolve, 200);
    });
    deps.rollout.revisions = {
      ...revisions,
      async list(name, labels, signal) {
        order.push('revisions asked');
        await held;
        order.push('revisions answered');
        return revisions.list(name, labels, signal);
      },
    };
    deps.rollout.setPods = {
      ...deps.rollout.setPods,
      async list(scope, signal) {
        order.push('pods asked');
        release();
        return cluster.source.list(scope, signal);
      },
    };
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(order).toEqual(['pods asked', 'revisions asked', 'revisions answered']);
    // The same reconcile as ever: status, the batch, their conditions, the state.
    expect(log).toEqual(['status test-sidecarset', 'patch p-00000', 'patch p-00001', 'condition p-00000 True', 'condition p-00001 True', 'event RolloutProgressing']);
    expect(result).toMatchObject({ podsUpdated: 2, errors: [] });
  });

  it('calls off the pods\' list when the revision cannot be registered', async () => {
    const set = storedRolloutSet();
    const { deps, revisions, cluster } = world(set, podsOf(set, 5, 0, 0));
    let listSignal: AbortSignal | undefined;
    deps.rollout.revisions = { ...revisions, create: () => Promise.reject(new Error('the API server answered 403: forbidden')) };
    deps.rollout.setPods = {
      ...deps.rollout.setPods,
      list(scope, signal) {
        listSignal = signal;
        return cluster.source.list(scope, signal);
      },
    };
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result.errors.map((e) => e.operation)).toEqual(['register the revision']);
    expect(listSignal?.aborted).toBe(true);
  });

  it('writes no status and no pod when the pods cannot be listed, and comes back soon', async () => {
    const set = storedRolloutSet();
    const { deps, log } = world(set, podsOf(set, 5, 0, 0), { setPods: { list: () => Promise.reject(new Error('the API server answered 500')) } });
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result).toMatchObject({ status: 'not-written', inFlight: true, errors: [{ operation: 'list pods', message: 'the API server answered 500' }] });
    expect(log).toEqual([]);
  });

  it("rolls only pods in namespaces its namespaceSelector picks, reading those namespaces' labels", async () => {
    const set = storedRolloutSet(undefined, (s) => {
      s.spec = { ...s.spec!, namespaceSelector: { matchLabels: { team: 'a' } } };
    });
    const pods = [rolloutPod(set, { name: 'a-0', namespace: 'team-a' }), rolloutPod(set, { name: 'b-0', namespace: 'team-b' })];
    const { deps, cluster } = world(set, pods);
    deps.namespaces = memoryNamespaceSource([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { team: 'a' } } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b', labels: { team: 'b' } } },
    ]);
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result).toMatchObject({ podsUpdated: 1, counts: { matchedPods: 1 }, errors: [] });
    expect(cluster.writes.filter((x) => x.kind === 'patch')).toEqual([{ kind: 'patch', target: 'team-a/a-0' }]);
  });

  it('writes nothing when the namespace labels its namespaceSelector needs cannot be read', async () => {
    const set = storedRolloutSet(undefined, (s) => {
      s.spec = { ...s.spec!, namespaceSelector: { matchLabels: { team: 'a' } } };
    });
    const { deps, log } = world(set, podsOf(set, 2, 0, 0));
    deps.namespaces = { labels: () => Promise.reject(new Error('the API server answered 403')) };
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result).toMatchObject({ status: 'not-written', inFlight: true, errors: [{ operation: 'list pods', message: 'the API server answered 403' }] });
    expect(log).toEqual([]);
  });

  it('lists no pod for a selector that selects none (malformed), and writes the zero counts', async () => {
    const set = storedRolloutSet(undefined, (s) => {
      s.spec = { ...s.spec!, selector: { matchExpressions: [{ key: 'app', operator: 'Equals', values: ['web'] }] } };
    });
    const { deps, log } = world(set, podsOf(set, 2, 0, 0));
    deps.rollout.setPods = { ...deps.rollout.setPods, list: () => Promise.reject(new Error('listed although nothing is selected')) };
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result).toMatchObject({ status: 'written', podsUpdated: 0, counts: { matchedPods: 0 }, inFlight: false, errors: [] });
    expect(result.watch).toBeUndefined();
    expect(log[0]).toBe('status test-sidecarset');
  });

  it.each<[string, SidecarSetUpdateStrategy, number, string | undefined]>([
    ['NotUpdate', { type: 'NotUpdate' }, 0, 'RolloutNotUpdate'],
    ['paused', { type: 'RollingUpdate', paused: true, maxUnavailable: 2 }, 0, 'RolloutPaused'],
    // A resting state at first sight is nothing new (every cold start would post one per set).
    ['finished', { type: 'RollingUpdate', maxUnavailable: 2 }, 5, undefined],
    ['NotUpdate with every pod updated', { type: 'NotUpdate' }, 5, undefined],
  ])('%s: writes the status and the state, and no pod', async (_, strategy, updated, reason) => {
    const set = storedRolloutSet(strategy);
    const { deps, log, cluster } = world(set, podsOf(set, 5, updated, updated));
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(log).toEqual(['status test-sidecarset', ...(reason === undefined ? [] : [`event ${reason}`])]);
    expect(cluster.writes).toEqual([]);
    expect(result).toMatchObject({ podsUpdated: 0, inFlight: false, errors: [] });
  });

  it.each<[string, SidecarSetUpdateStrategy]>([
    ['NotUpdate', { type: 'NotUpdate' }],
    ['paused', { type: 'RollingUpdate', paused: true }],
  ])('%s: marks no pod not upgradable and records no NotUpgradablePods Event (no batch runs)', async (_, strategy) => {
    const set = storedRolloutSet(strategy);
    const { deps, log, cluster } = world(set, [rolloutPod(set, { name: 'p-00000', otherFields: true }), ...podsOf(set, 3, 0, 0).slice(1)]);
    await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(log).not.toContain('event NotUpgradablePods');
    expect(cluster.writes).toEqual([]);
  });

  it('marks pods whose sidecars changed in more than the image not upgradable, records the Event, then updates the others', async () => {
    const set = storedRolloutSet();
    const pods = [rolloutPod(set, { name: 'p-00000', otherFields: true }), ...podsOf(set, 3, 0, 0).slice(1)];
    const { deps, log, cluster, events } = world(set, pods);
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(log).toEqual(['status test-sidecarset', 'condition p-00000 False', 'event NotUpgradablePods', 'patch p-00001', 'patch p-00002', 'condition p-00001 True', 'condition p-00002 True', 'event RolloutProgressing']);
    expect(events.events.find((e) => e.reason === 'NotUpgradablePods')).toMatchObject({ sidecarSet: { name: 'test-sidecarset', uid: 'uid-1' }, type: 'Normal' });
    const condition = cluster.pods()[0]?.status?.conditions?.find((c) => c.type === 'SidecarSetUpgradable');
    expect(condition).toMatchObject({ status: 'False', reason: 'UpdateImmutableField', message: expect.stringMatching(/^\{"test-sidecarset":"not upgradable in place: .* of sidecar1 changed \(recreate the pod\)"\}$/) });
    expect(imageOf(cluster, 'p-00000')).toBe(OLD_IMAGE);
    expect(result.podsUpdated).toBe(2);
  });

  it('reports the rollout state once per change across reconciles', async () => {
    const set = storedRolloutSet();
    const { deps, statuses, events } = world(set, podsOf(set, 5, 0, 0));
    const states: (string | undefined)[] = [];
    for (let i = 0; i < 3; i++) {
      const current = (await statuses.get('test-sidecarset')) as SidecarSet;
      const result = await reconcileSet(current, deps, ONE_AT_A_TIME);
      states.push(result.stateChange === undefined ? undefined : result.stateChange.split(':')[0]);
    }
    // The updated pods have not restarted (no kubelet): the next reconciles wait on maxUnavailable, which is the same
    // progressing state, so nothing new is said.
    expect(states).toEqual(['rolling out, at most 2 unavailable at a time (maxUnavailable)', undefined, undefined]);
    expect(events.events.map((e) => e.reason)).toEqual(['RolloutProgressing']);
  });

  it('reports a state Event that failed again next reconcile, and the failure as an error', async () => {
    const set = storedRolloutSet({ type: 'NotUpdate' });
    let fail = true;
    const { deps, events, statuses } = world(set, podsOf(set, 2, 0, 0), {
      events: {
        record: (event) => {
          if (fail) return Promise.reject(new Error('the API server answered 403'));
          return memoryEventSink().record(event);
        },
      },
    });
    const first = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(first.errors).toEqual([{ sidecarSet: 'test-sidecarset', operation: 'record event', message: 'the API server answered 403' }]);
    fail = false;
    const second = await reconcileSet((await statuses.get('test-sidecarset')) as SidecarSet, deps, ONE_AT_A_TIME);
    expect(second).toMatchObject({ stateChange: expect.stringMatching(/NotUpdate/), errors: [] });
    const third = await reconcileSet((await statuses.get('test-sidecarset')) as SidecarSet, deps, ONE_AT_A_TIME);
    expect(third.stateChange).toBeUndefined();
    // The sink the world logs through is the override: the memory sink saw nothing.
    expect(events.events).toEqual([]);
  });

  it('reports a failed pod write as an error naming the pod, and carries on with the others', async () => {
    const set = storedRolloutSet();
    const { deps, cluster } = world(set, podsOf(set, 5, 0, 0));
    const pods = deps.rollout.pods;
    deps.rollout.pods = { ...pods, patch: (ns, name, ops) => (name === 'p-00000' ? Promise.reject(new Error('the API server answered 500')) : pods.patch(ns, name, ops)) };
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result).toMatchObject({ podsUpdated: 1, conflicts: 0, errors: [{ sidecarSet: 'test-sidecarset', operation: 'update pod default/p-00000', message: 'the API server answered 500' }] });
    expect(imageOf(cluster, 'p-00001')).toBe(NEW_IMAGE);
  });

  /** A set whose patchPodMetadata merges JSON into `example.com/config`, and pods carrying it. */
  function mergingSet(): SidecarSet {
    return storedRolloutSet({ type: 'RollingUpdate', maxUnavailable: 3 }, (s) => {
      s.spec = { ...s.spec!, patchPodMetadata: [{ annotations: { 'example.com/config': '{"log":"json"}' }, patchPolicy: 'MergePatchJson' }] };
    });
  }
  const withAnnotation = (pod: Pod, value: string): Pod => ({ ...pod, metadata: { ...pod.metadata, annotations: { ...pod.metadata?.annotations, 'example.com/config': value } } });

  it('skips a pod whose patch cannot be made (its MergePatchJson annotation is not JSON), tells it on the pod and the set, and updates every other pod', async () => {
    const set = mergingSet();
    const pods = podsOf(set, 4, 0, 0).map((p, i) => withAnnotation(p, i === 0 ? 'not json' : '{}'));
    const { deps, cluster, events, log } = world(set, pods);
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    // maxUnavailable 3: the broken pod gives its place in the batch to the next one.
    expect(result).toMatchObject({ podsUpdated: 3, podsFailed: 1, conflicts: 0 });
    expect(['p-00000', 'p-00001', 'p-00002', 'p-00003'].map((name) => imageOf(cluster, name))).toEqual([OLD_IMAGE, NEW_IMAGE, NEW_IMAGE, NEW_IMAGE]);
    expect(result.errors).toEqual([{ sidecarSet: 'test-sidecarset', operation: 'plan the update of pod default/p-00000', message: expect.stringMatching(/example\.com\/config/) }]);
    const condition = cluster.pods()[0]?.status?.conditions?.find((c) => c.type === 'SidecarSetUpgradable');
    expect(condition).toMatchObject({ status: 'False', reason: 'PodUpdateFailed', message: expect.stringMatching(/^\{"test-sidecarset":"update failed: its patch cannot be made: .*example\.com\/config/) });
    const told = events.events.filter((e) => e.reason === 'PodUpdateFailed');
    expect(told).toEqual([{ sidecarSet: { name: 'test-sidecarset', uid: 'uid-1' }, type: 'Warning', reason: 'PodUpdateFailed', message: expect.stringMatching(/^pod default\/p-00000 skipped: its patch cannot be made: .*example\.com\/config/) }]);
    expect(log).toContain('condition p-00000 False');
  });

  it('lets the next pod take the place of a broken one first in the order, so one pod never holds maxUnavailable for the set', async () => {
    const set = storedRolloutSet({ type: 'RollingUpdate', maxUnavailable: 1 }, (s) => {
      s.spec = { ...s.spec!, patchPodMetadata: [{ annotations: { 'example.com/config': '{"log":"json"}' }, patchPolicy: 'MergePatchJson' }] };
    });
    const pods = podsOf(set, 3, 0, 0).map((p, i) => withAnnotation(p, i === 0 ? 'not json' : '{}'));
    const { deps, cluster } = world(set, pods);
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result).toMatchObject({ podsUpdated: 1, podsFailed: 1 });
    expect(['p-00000', 'p-00001', 'p-00002'].map((name) => imageOf(cluster, name))).toEqual([OLD_IMAGE, NEW_IMAGE, OLD_IMAGE]);
    expect(result.errors.map((e) => e.operation)).toEqual(['plan the update of pod default/p-00000']);
  });

  it('tells a pod failing the same way once, not every reconcile', async () => {
    const set = mergingSet();
    const { deps, events, statuses } = world(set, podsOf(set, 2, 0, 0).map((p) => withAnnotation(p, 'not json')));
    await reconcileSet(set, deps, ONE_AT_A_TIME);
    await reconcileSet((await statuses.get('test-sidecarset')) as SidecarSet, deps, ONE_AT_A_TIME);
    expect(events.events.filter((e) => e.reason === 'PodUpdateFailed').map((e) => e.message.slice(0, 20))).toEqual(['pod default/p-00000 ', 'pod default/p-00001 ']);
  });

  it('tells at most five failing pods a reconcile one by one, then one Event for the rest', async () => {
    const set = storedRolloutSet({ type: 'RollingUpdate', maxUnavailable: 10 });
    const { deps, events } = world(set, podsOf(set, 8, 0, 0));
    const pods = deps.rollout.pods;
    deps.rollout.pods = { ...pods, patch: () => Promise.reject(new Error('the API server answered 422: admission webhook "policy.example.com" denied the request')) };
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result).toMatchObject({ podsUpdated: 0, podsFailed: 8 });
    const told = events.events.filter((e) => e.reason === 'PodUpdateFailed').map((e) => e.message);
    expect(told).toHaveLength(6);
    expect(told[0]).toBe('pod default/p-00000 skipped: the API server answered 422: admission webhook "policy.example.com" denied the request; the other pods go on, this one is tried again next reconcile');
    expect(told[5]).toBe('3 more pod(s) skipped this reconcile (default/p-00005, default/p-00006, default/p-00007): see their SidecarSetUpgradable condition');
  });

  it('flips the hot pods and updates the others even when one pod cannot be patched', async () => {
    // The flip half of this is in set-reconcile-hot.test.ts; here: the failing pod is the first in write order.
    const set = mergingSet();
    const pods = podsOf(set, 3, 0, 0).map((p, i) => withAnnotation(p, i === 0 ? '{' : '{}'));
    const { deps } = world(set, pods);
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result).toMatchObject({ podsUpdated: 2, podsFailed: 1, inFlight: true });
    expect(result.state?.reason).toBe('RolloutProgressing');
  });

  it('trims the history past revisionHistoryLimit after the batch, keeping the revision pods record', async () => {
    const old = storedRolloutSet(undefined, (s) => {
      s.spec = { ...s.spec!, containers: (s.spec!.containers ?? []).map((c) => ({ ...c, image: 'centos:6.5' })) };
    });
    const set = storedRolloutSet(undefined, (s) => {
      s.spec = { ...s.spec!, revisionHistoryLimit: 1 };
    });
    const { deps, revisions } = world(set, podsOf(set, 5, 0, 0));
    const seeded = await revisions.create(newRevision(old, 'kruise-system', 1, 0));
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result.revisionWrites).toBe(2);
    expect(revisions.revisions().map((r) => r.metadata?.name)).toEqual([currentRevisionName(set)]);
    expect(revisions.writes.at(-1)).toEqual({ kind: 'delete', target: seeded.metadata?.name });
  });

  it('reports a failed revision delete as an error and finishes the reconcile', async () => {
    const old = storedRolloutSet(undefined, (s) => {
      s.spec = { ...s.spec!, containers: (s.spec!.containers ?? []).map((c) => ({ ...c, image: 'centos:6.5' })) };
    });
    const set = storedRolloutSet(undefined, (s) => {
      s.spec = { ...s.spec!, revisionHistoryLimit: 1 };
    });
    const { deps, revisions } = world(set, podsOf(set, 5, 0, 0));
    await revisions.create(newRevision(old, 'kruise-system', 1, 0));
    deps.rollout.revisions = { ...revisions, delete: () => Promise.reject(new Error('the API server answered 500')) };
    const result = await reconcileSet(set, deps, ONE_AT_A_TIME);
    expect(result.errors).toEqual([{ sidecarSet: 'test-sidecarset', operation: 'trim revision history', message: expect.stringMatching(/^delete ControllerRevision .*: the API server answered 500$/) }]);
    expect(result.podsUpdated).toBe(2);
  });
});
