/**
 * The full pass with the rollout: idle sets get their revision registered
 * and their status from the streamed counts; sets with rollout work get
 * their own pass; a revision list that fails keeps the counts flowing and
 * rolls nothing; sets with work in flight are named for the pace loop.
 */
import { describe, expect, it } from '@jest/globals';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { memoryPods, memoryRevisionStore } from '../../lib/adapters/memory-rollout.ts';
import { memoryEventSink, memoryPodEventSink, memoryPodPages, memoryStatusWriter } from '../../lib/adapters/memory-status-sync.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { currentRevisionName } from '../../lib/rollout/revisions.ts';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { notInjectedNotices } from '../../lib/status-sync/not-injected.ts';
import { runStatusPass, type StatusPassDeps } from '../../lib/status-sync/pass.ts';
import { rolloutStateNotices } from '../../lib/status-sync/rollout-state.ts';
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

function passWorld(sets: SidecarSet[], pods: Pod[]) {
  const statuses = memoryStatusWriter(sets);
  const events = memoryEventSink();
  const cluster = memoryPods(pods);
  const revisions = memoryRevisionStore();
  const deps: StatusPassDeps & { rollout: NonNullable<StatusPassDeps['rollout']> } = {
    sidecarSets: memorySidecarSetSource(sets),
    pods: memoryPodPages(pods, 2),
    namespaces: memoryNamespaceSource([]),
    statuses,
    events,
    notices: notInjectedNotices(),
    rollout: { revisions, setPods: cluster.source, pods: cluster.writer, podEvents: memoryPodEventSink(), clock: { now: () => NOW }, states: rolloutStateNotices() },
  };
  return { deps, statuses, events, cluster, revisions };
}

const ROLLING = set('rolling', 'web');
const IDLE = set('idle', 'db');
const rollingPods = podsOf(ROLLING, 3, 0, 0);
const idlePods = podsOf(IDLE, 2, 2, 2, { labels: { app: 'db' } }).map((p) => ({ ...p, metadata: { ...p.metadata, name: `db-${p.metadata?.name ?? ''}` } }));

describe('a status pass with the rollout', () => {
  it('flips pods mid hot upgrade even when every pod is updated and the set is paused (its only work is the flip)', async () => {
    const hot = hotSet('mesh:v2', '999', { type: 'RollingUpdate', paused: true });
    const upgraded = kubelet(applyPatch(injected('mesh:v1', 'a'), podUpdatePatch({ pod: injected('mesh:v1', 'a'), set: hot, latestRevision: 'r', injectedList: 'hot-set', now: NOW })) as Pod);
    const w = passWorld([hot], [upgraded]);
    const result = await runStatusPass(w.deps);
    expect(result.rollout).toMatchObject({ setsRolled: 1, podsFlipped: 1, podsUpdated: 0, inFlight: ['hot-set'] });
    expect(w.cluster.pods()[0]?.spec?.containers.find((c) => c.name === 'mesh-1')?.image).toBe(EMPTY);
  });

  it('registers and writes idle sets from the counts and runs the whole pass of sets with rollout work', async () => {
    const w = passWorld([ROLLING, IDLE], [...rollingPods, ...idlePods]);
    const result = await runStatusPass(w.deps);
    expect(result).toMatchObject({ setsSeen: 2, statusesWritten: 2, errors: [] });
    expect(result.rollout).toEqual({ setsRolled: 1, podsUpdated: 1, podsFlipped: 0, conflicts: 0, revisionWrites: 2, states: { rolling: expect.stringMatching(/^rolling out/) }, inFlight: ['rolling'] });
    const stored = new Map(w.statuses.sets().map((s) => [s.metadata?.name, s.status]));
    expect(stored.get('idle')).toMatchObject({ matchedPods: 2, updatedPods: 2, latestRevision: currentRevisionName(IDLE), collisionCount: 0 });
    expect(stored.get('rolling')).toMatchObject({ matchedPods: 3, updatedPods: 0, latestRevision: currentRevisionName(ROLLING) });
    // Only the rolling set's pods are written (maxUnavailable 1).
    expect(w.cluster.writes.filter((x) => x.kind === 'patch').map((x) => x.target)).toEqual(['default/p-00000']);
    expect(w.revisions.revisions().map((r) => r.metadata?.name).sort()).toEqual([currentRevisionName(IDLE), currentRevisionName(ROLLING)].sort());
  });

  it("reports each set's counts, a rolled set's from its own list, and the state each set was seen in", async () => {
    const w = passWorld([ROLLING, IDLE], [...rollingPods, ...idlePods]);
    const states = observedStates(rolloutStateNotices());
    w.deps.rollout.states = states;
    const result = await runStatusPass(w.deps);
    expect(result.sets).toEqual({
      idle: { matchedPods: 2, updatedPods: 2, readyPods: 2, updatedReadyPods: 2 },
      rolling: { matchedPods: 3, updatedPods: 0, readyPods: 3, updatedReadyPods: 0 },
    });
    expect(states.current()).toEqual(new Map([['idle', 'Finished'], ['rolling', 'Progressing']]));
    states.keepOnly(new Set(['rolling']));
    expect([...states.current().keys()]).toEqual(['rolling']);
  });

  it('keeps writing the counts but rolls nothing when the revisions cannot be listed', async () => {
    const w = passWorld([ROLLING, IDLE], [...rollingPods, ...idlePods]);
    w.deps.rollout.revisions = { ...w.revisions, listAll: () => Promise.reject(new Error('the API server answered 403: forbidden')) };
    const result = await runStatusPass(w.deps);
    expect(result.errors).toEqual([{ operation: 'list ControllerRevisions', message: 'the API server answered 403: forbidden; no set rolls this pass' }]);
    expect(result.statusesWritten).toBe(2);
    expect(result.rollout).toMatchObject({ setsRolled: 0, podsUpdated: 0, revisionWrites: 0, inFlight: [] });
    expect(w.cluster.writes).toEqual([]);
    expect(w.revisions.writes).toEqual([]);
    // The stored revision fields stay as they were (none): the counts do not depend on them.
    expect(w.statuses.sets().map((s) => s.status?.latestRevision)).toEqual([undefined, undefined]);
  });

  it('does not follow idle sets whose updated pods are not ready (nothing of theirs was rolled by this pass), and reports their states', async () => {
    const restarting = set('restarting', 'api');
    const frozen = set('frozen', 'queue', { type: 'NotUpdate' });
    const pods = [
      rolloutPod(restarting, { name: 'api-0', updated: true, ready: false, labels: { app: 'api' } }),
      rolloutPod(frozen, { name: 'queue-0', updated: true, ready: false, labels: { app: 'queue' } }),
    ];
    const w = passWorld([restarting, frozen], pods);
    const result = await runStatusPass(w.deps);
    expect(result.rollout).toMatchObject({ setsRolled: 0, inFlight: [] });
    // Both sets' pods are all updated: resting states, no news at first sight, whatever the pods' readiness.
    expect(result.rollout?.states).toEqual({});
  });

  it('writes no revision fields for an idle set whose revision cannot be registered, and says so', async () => {
    const w = passWorld([IDLE], idlePods);
    w.deps.rollout.revisions = { ...w.revisions, create: () => Promise.reject(new Error('the API server answered 500')) };
    const result = await runStatusPass(w.deps);
    expect(result.errors).toEqual([{ sidecarSet: 'idle', operation: 'register the revision', message: 'ControllerRevision kruise-system/idle-78bb8d68cc could not be created: the API server answered 500' }]);
    expect(w.statuses.sets()[0]?.status).toMatchObject({ matchedPods: 2, updatedPods: 2 });
    expect(w.statuses.sets()[0]?.status?.latestRevision).toBeUndefined();
  });

  it('runs no rollout without its ports (the offline invoke): statuses only', async () => {
    const w = passWorld([ROLLING], rollingPods);
    const statusOnly: StatusPassDeps = { ...w.deps };
    delete statusOnly.rollout;
    const result = await runStatusPass(statusOnly);
    expect(result.rollout).toBeUndefined();
    expect(result.statusesWritten).toBe(1);
    expect(w.cluster.writes).toEqual([]);
  });
});
