/**
 * The resync with the rollout: idle sets get their revision registered
 * and their status from the streamed counts; sets with rollout work get
 * their own reconcile; a revision list that fails keeps the counts flowing and
 * rolls nothing; sets with work in flight are named for the controller.
 */
import { describe, expect, it } from '@jest/globals';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { memoryPods, memoryRevisionStore } from '../../lib/adapters/memory-rollout.ts';
import { memoryEventSink, memoryPodEventSink, memoryPodPages, memoryStatusWriter } from '../../lib/adapters/memory-status-sync.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { currentRevisionName } from '../../lib/sidecarset/revisions.ts';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { notInjectedEvents } from '../../lib/status-sync/not-injected.ts';
import { runResync, type ResyncDeps } from '../../lib/status-sync/resync.ts';
import { rolloutStateEvents } from '../../lib/status-sync/rollout-state.ts';
import { reconcileSet } from '../../lib/status-sync/set-reconcile.ts';
import { applyPatch } from '../../lib/admission/json-patch-apply.ts';
import { podUpdatePatch } from '../../lib/rollout/pod-patch.ts';
import { observedStates } from '../../lib/status-sync/observed-states.ts';
import { podsOf, rolloutPod, rolloutSet } from '../rollout/fixtures.ts';
import { EMPTY, hotSet, injected, kubelet } from '../rollout/hot-fixtures.ts';
import { NOW } from './rollout-world.ts';

/** A stored set selecting `app=<app>`. */
function set(name: string, app: string, strategy: SidecarSetUpdateStrategy = { type: 'RollingUpdate' }): SidecarSet {
  const s = rolloutSet({ name, strategy });
  s.metadata = { ...s.metadata, uid: `uid-${name}`, resourceVersion: '1' };
  s.spec = { ...s.spec!, selector: { matchLabels: { app } } };
  return s;
}

function resyncWorld(sets: SidecarSet[], pods: Pod[]) {
  const statuses = memoryStatusWriter(sets);
  const events = memoryEventSink();
  const cluster = memoryPods(pods);
  const revisions = memoryRevisionStore();
  const deps: ResyncDeps & { rollout: NonNullable<ResyncDeps['rollout']> } = {
    sidecarSets: memorySidecarSetSource(sets),
    pods: memoryPodPages(pods, 2),
    namespaces: memoryNamespaceSource([]),
    statuses,
    events,
    notices: notInjectedEvents(),
    rollout: { revisions, setPods: cluster.source, pods: cluster.writer, podEvents: memoryPodEventSink(), clock: { now: () => NOW }, states: rolloutStateEvents() },
  };
  return { deps, statuses, events, cluster, revisions };
}

const ROLLING = set('rolling', 'web');
const IDLE = set('idle', 'db');
const rollingPods = podsOf(ROLLING, 3, 0, 0);
const idlePods = podsOf(IDLE, 2, 2, 2, { labels: { app: 'db' } }).map((p) => ({ ...p, metadata: { ...p.metadata, name: `db-${p.metadata?.name ?? ''}` } }));

describe('a resync with the rollout', () => {
  it('flips pods mid hot upgrade once every pod is updated (its only work is the flip), but not while the set is paused (Kruise 1.9)', async () => {
    const paused = hotSet('mesh:v2', '999', { type: 'RollingUpdate', paused: true });
    const upgraded = kubelet(applyPatch(injected('mesh:v1', 'a'), podUpdatePatch({ pod: injected('mesh:v1', 'a'), set: paused, latestRevision: 'r', injectedList: 'hot-set', now: NOW })) as Pod);
    const held = resyncWorld([paused], [upgraded]);
    expect((await runResync(held.deps)).rollout).toMatchObject({ setsRolled: 0, podsFlipped: 0, podsUpdated: 0, inFlight: [] });
    expect(held.cluster.pods()[0]?.spec?.containers.find((c) => c.name === 'mesh-1')?.image).toBe('mesh:v1');
    const hot = hotSet('mesh:v2', '999', { type: 'RollingUpdate' });
    const w = resyncWorld([hot], [upgraded]);
    const result = await runResync(w.deps);
    expect(result.rollout).toMatchObject({ setsRolled: 1, podsFlipped: 1, podsUpdated: 0, inFlight: ['hot-set'] });
    expect(w.cluster.pods()[0]?.spec?.containers.find((c) => c.name === 'mesh-1')?.image).toBe(EMPTY);
  });

  it('registers and writes idle sets from the counts and runs the whole reconcile of sets with rollout work', async () => {
    const w = resyncWorld([ROLLING, IDLE], [...rollingPods, ...idlePods]);
    const result = await runResync(w.deps);
    expect(result).toMatchObject({ setsSeen: 2, statusesWritten: 2, errors: [] });
    expect(result.rollout).toEqual({ setsRolled: 1, podsUpdated: 1, podsFlipped: 0, conflicts: 0, podsFailed: 0, revisionWrites: 2, states: { rolling: expect.stringMatching(/^rolling out/) }, inFlight: ['rolling'] });
    const stored = new Map(w.statuses.sets().map((s) => [s.metadata?.name, s.status]));
    expect(stored.get('idle')).toMatchObject({ matchedPods: 2, updatedPods: 2, latestRevision: currentRevisionName(IDLE), collisionCount: 0 });
    expect(stored.get('rolling')).toMatchObject({ matchedPods: 3, updatedPods: 0, latestRevision: currentRevisionName(ROLLING) });
    // Only the rolling set's pods are written (maxUnavailable 1).
    expect(w.cluster.writes.filter((x) => x.kind === 'patch').map((x) => x.target)).toEqual(['default/p-00000']);
    expect(w.revisions.revisions().map((r) => r.metadata?.name).sort()).toEqual([currentRevisionName(IDLE), currentRevisionName(ROLLING)].sort());
  });

  it("reports each set's counts, a rolled set's from its own list, and the state each set was seen in", async () => {
    const w = resyncWorld([ROLLING, IDLE], [...rollingPods, ...idlePods]);
    const states = observedStates(rolloutStateEvents());
    w.deps.rollout.states = states;
    const result = await runResync(w.deps);
    expect(result.sets).toEqual({
      idle: { matchedPods: 2, updatedPods: 2, readyPods: 2, updatedReadyPods: 2 },
      rolling: { matchedPods: 3, updatedPods: 0, readyPods: 3, updatedReadyPods: 0 },
    });
    expect(states.current()).toEqual(new Map([['idle', 'Finished'], ['rolling', 'Progressing']]));
    states.keepOnly(new Set(['rolling']));
    expect([...states.current().keys()]).toEqual(['rolling']);
  });

  it('lists the revisions while the pods are read, not after', async () => {
    const w = resyncWorld([ROLLING, IDLE], [...rollingPods, ...idlePods]);
    const order: string[] = [];
    const pages = w.deps.pods;
    w.deps.pods = {
      async *pages(signal) {
        for await (const page of pages.pages(signal)) {
          order.push('pod page');
          // The pod list is slow: the revisions have time to be asked for meanwhile.
          await new Promise((resolve) => setTimeout(resolve, 5));
          yield page;
        }
        order.push('pods done');
      },
    };
    w.deps.rollout.revisions = {
      ...w.revisions,
      listAll: (signal) => {
        order.push('list revisions');
        return w.revisions.listAll(signal);
      },
    };
    const result = await runResync(w.deps);
    expect(result).toMatchObject({ statusesWritten: 2, errors: [] });
    expect(order.indexOf('list revisions')).toBeLessThan(order.indexOf('pods done'));
    expect(order.filter((o) => o === 'list revisions')).toHaveLength(1);
  });

  it('calls the revision list off when the pod list fails: no set rolls, no status is written', async () => {
    const w = resyncWorld([ROLLING, IDLE], [...rollingPods, ...idlePods]);
    let aborted: unknown;
    w.deps.pods = {
      // eslint-disable-next-line require-yield
      async *pages() {
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw new Error('the API server answered 403: pods is forbidden');
      },
    };
    w.deps.rollout.revisions = {
      ...w.revisions,
      listAll: (signal) =>
        new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => {
            aborted = signal.reason;
            reject(new Error('abandoned'));
          });
        }),
    };
    const result = await runResync(w.deps);
    expect(result.errors).toEqual([{ operation: 'list pods', message: 'the API server answered 403: pods is forbidden; no status is written this resync' }]);
    expect(aborted).toBeInstanceOf(Error);
    expect(w.statuses.sets().map((s) => s.status?.matchedPods)).toEqual([undefined, undefined]);
  });

  it('keeps writing the counts but rolls nothing when the revisions cannot be listed', async () => {
    const w = resyncWorld([ROLLING, IDLE], [...rollingPods, ...idlePods]);
    w.deps.rollout.revisions = { ...w.revisions, listAll: () => Promise.reject(new Error('the API server answered 403: forbidden')) };
    const result = await runResync(w.deps);
    expect(result.errors).toEqual([{ operation: 'list ControllerRevisions', message: 'the API server answered 403: forbidden; no set rolls this resync' }]);
    expect(result.statusesWritten).toBe(2);
    expect(result.rollout).toMatchObject({ setsRolled: 0, podsUpdated: 0, revisionWrites: 0, inFlight: [] });
    expect(w.cluster.writes).toEqual([]);
    expect(w.revisions.writes).toEqual([]);
    // The stored revision fields stay as they were (none): the counts do not depend on them.
    expect(w.statuses.sets().map((s) => s.status?.latestRevision)).toEqual([undefined, undefined]);
    // The set with pods to roll is recorded in no state this resync (it is not paused); the idle one's, finished, is nothing new at first sight.
    expect(result.rollout?.states).toEqual({});
    expect(w.events.events).toEqual([]);
  });

  it('decides a paused set whose every pod is updated, one not ready, as its own reconcile does: paused (Kruise 1.9 checks paused first), not followed', async () => {
    const paused = set('paused', 'api', { type: 'RollingUpdate', paused: true });
    const pods = [updatedNotReady(paused, 'api-0', 'api', 10), rolloutPod(paused, { name: 'api-1', updated: true, labels: { app: 'api' } })];
    const full = await runResync(resyncWorld([paused], pods).deps);
    expect(full.rollout).toMatchObject({ setsRolled: 0, inFlight: [] });
    expect(full.rollout?.states).toEqual({ paused: expect.stringMatching(/^paused \(updateStrategy\.paused\)/) });
    const own = resyncWorld([paused], pods);
    const alone = await reconcileSet(paused, { statuses: own.deps.statuses, events: own.deps.events, namespaces: own.deps.namespaces, rollout: own.deps.rollout });
    expect(alone.stateChange).toBe(full.rollout?.states.paused);
  });

  /** A pod updated in place `secondsAgo` before NOW whose sidecar is not ready (the kubelet's `reason`, if any). */
  function updatedNotReady(owner: SidecarSet, name: string, app: string, secondsAgo: number, reason?: string): Pod {
    const pod = rolloutPod(owner, { name, updated: true, ready: false, labels: { app } });
    const at = new Date(NOW.getTime() - secondsAgo * 1000).toISOString().replace('.000', '');
    const annotations = pod.metadata!.annotations!;
    annotations['kruise.io/sidecarset-hash'] = annotations['kruise.io/sidecarset-hash']!.replace('2025-01-01T00:00:00Z', at);
    if (reason !== undefined) pod.status!.containerStatuses![0] = { ...pod.status!.containerStatuses![0]!, ready: false, state: { waiting: { reason } } };
    return pod;
  }

  it('follows a set whose last updated pods are still becoming ready (its status then shows each as it does), and leaves NotUpdate sets alone', async () => {
    const restarting = set('restarting', 'api');
    const frozen = set('frozen', 'queue', { type: 'NotUpdate' });
    const w = resyncWorld([restarting, frozen], [updatedNotReady(restarting, 'api-0', 'api', 10), rolloutPod(frozen, { name: 'queue-0', updated: true, ready: false, labels: { app: 'queue' } })]);
    const states = observedStates(rolloutStateEvents());
    w.deps.rollout.states = states;
    const result = await runResync(w.deps);
    // Decided from the resync's counts (every pod updated): no list of its own, yet requeued.
    expect(result.rollout).toMatchObject({ setsRolled: 0, inFlight: ['restarting'] });
    expect(result.unavailable).toEqual({ restarting: { Restarting: 1 } });
    // Every pod updated is not finished while one is not ready: the rollout is still progressing, though at
    // first sight, with nothing updated by this reconcile, that is nothing new (the reconcile that updated the pods told it).
    expect(states.current().get('restarting')).toBe('Progressing');
    expect(result.rollout?.states).toEqual({});
  });

  it('reports a set whose updated pods stayed unavailable past the stall threshold as stalled, naming why and which pods, and leaves it to the schedule', async () => {
    const stuck = set('stuck', 'api', { type: 'RollingUpdate', maxUnavailable: 1 });
    const pods = [updatedNotReady(stuck, 'api-0', 'api', 90, 'ImagePullBackOff'), rolloutPod(stuck, { name: 'api-1', labels: { app: 'api' } })];
    const w = resyncWorld([stuck], pods);
    const result = await runResync(w.deps);
    expect(result.rollout).toMatchObject({ setsRolled: 1, podsUpdated: 0, inFlight: [] });
    expect(w.events.events.filter((e) => e.reason === 'RolloutStalled')).toEqual([
      {
        sidecarSet: { name: 'stuck', uid: 'uid-stuck' },
        type: 'Warning',
        reason: 'RolloutStalled',
        message: expect.stringContaining('ImagePullBackOff: 1 pod(s) (default/api-0)'),
        // The stall's key (one pod, its update time, an image pull), which a later process finds among the Events.
        annotations: { 'serverless-sidecarset/stall': expect.stringMatching(/^stalled:1:\d+:image$/) },
      },
    ]);
    expect(result.unavailable).toEqual({ stuck: { ImagePullBackOff: 1 } });
    // A threshold of its own: the same pods, 2 minutes allowed, are still progressing.
    const patient = resyncWorld([stuck], pods);
    patient.deps.rollout.stallMs = 120_000;
    expect((await runResync(patient.deps)).rollout).toMatchObject({ inFlight: ['stuck'] });
  });

  it('reports a stall 60 s after first sight when the stuck pod claims an update time in 2099, not never (a creator can write its annotation)', async () => {
    const stuck = set('forged', 'api', { type: 'RollingUpdate', maxUnavailable: 1 });
    const forged = updatedNotReady(stuck, 'api-0', 'api', 0, 'ImagePullBackOff');
    const annotations = forged.metadata!.annotations!;
    annotations['kruise.io/sidecarset-hash'] = annotations['kruise.io/sidecarset-hash']!.replace(NOW.toISOString().replace('.000', ''), '2099-01-01T00:00:00Z');
    expect(annotations['kruise.io/sidecarset-hash']).toContain('2099-01-01T00:00:00Z');
    // A resync per scheduled invocation of one warm process: its memory (the notices) is all the resyncs share.
    const states = rolloutStateEvents();
    let now = NOW.getTime();
    const resync = async () => {
      const w = resyncWorld([stuck], [forged, rolloutPod(stuck, { name: 'api-1', labels: { app: 'api' } })]);
      w.deps.rollout.clock = { now: () => new Date(now) };
      w.deps.rollout.states = states;
      const result = await runResync(w.deps);
      return { result, stalls: w.events.events.filter((e) => e.reason === 'RolloutStalled') };
    };
    expect((await resync()).stalls).toEqual([]);
    now += 59_000;
    expect((await resync()).stalls).toEqual([]);
    now += 2_000;
    const { result, stalls } = await resync();
    expect(stalls).toEqual([expect.objectContaining({ message: expect.stringContaining('the last updated 61 s ago: ImagePullBackOff: 1 pod(s) (default/api-0)') })]);
    expect(result.rollout).toMatchObject({ inFlight: [] });
  });

  it('writes no revision fields for an idle set whose revision cannot be registered, and says so', async () => {
    const w = resyncWorld([IDLE], idlePods);
    w.deps.rollout.revisions = { ...w.revisions, create: () => Promise.reject(new Error('the API server answered 500')) };
    const result = await runResync(w.deps);
    expect(result.errors).toEqual([{ sidecarSet: 'idle', operation: 'register the revision', message: 'ControllerRevision kruise-system/idle-78bb8d68cc could not be created: the API server answered 500' }]);
    expect(w.statuses.sets()[0]?.status).toMatchObject({ matchedPods: 2, updatedPods: 2 });
    expect(w.statuses.sets()[0]?.status?.latestRevision).toBeUndefined();
  });

  it('runs no rollout without its ports (the offline invoke): statuses only', async () => {
    const w = resyncWorld([ROLLING], rollingPods);
    const statusOnly: ResyncDeps = { ...w.deps };
    delete statusOnly.rollout;
    const result = await runResync(statusOnly);
    expect(result.rollout).toBeUndefined();
    expect(result.statusesWritten).toBe(1);
    expect(w.cluster.writes).toEqual([]);
  });
});
