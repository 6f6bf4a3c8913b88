/**
 * A ControllerRevision write that fails is recorded: the reconcile error carries the
 * whole reason, and one Warning Event (RevisionWriteFailed) on the SidecarSet
 * names the revision and keeps the reason's end within the Event's 1 kB,
 * once per failure in a process, on the resync (idle sets) and on one
 * set's reconcile (rolling sets) alike.
 */
import { describe, expect, it } from '@jest/globals';
import { memoryPods, memoryRevisionStore } from '../../lib/adapters/memory-rollout.ts';
import { memoryEventSink, memoryPodEventSink, memoryStatusWriter } from '../../lib/adapters/memory-status-sync.ts';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { memoryPodPages } from '../../lib/adapters/memory-status-sync.ts';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import type { RevisionStore } from '../../lib/ports.ts';
import { currentRevisionName, newRevision } from '../../lib/sidecarset/revisions.ts';
import { notInjectedEvents } from '../../lib/status-sync/not-injected.ts';
import { runResync } from '../../lib/status-sync/resync.ts';
import { RevisionWriteError } from '../../lib/status-sync/errors.ts';
import { EVENT_MESSAGE_LIMIT, failedRevisionOf, keepEnds, REVISION_WRITE_FAILED } from '../../lib/status-sync/revision-failure.ts';
import { registerRevision } from '../../lib/status-sync/revision-register.ts';
import { rolloutStateEvents } from '../../lib/status-sync/rollout-state.ts';
import { reconcileSet, type ReconcileDeps } from '../../lib/status-sync/set-reconcile.ts';
import { OLD_IMAGE, rolloutPod, rolloutSet } from '../rollout/fixtures.ts';

const NS = 'kruise-system';
/** What the API server answers a renumbering of data it stored unescaped: the refused value echoed whole, the reason last. */
const DUMP = `{"spec":{"$patch":"replace","containers":[{"command":["sh","-c","echo a \\u0026\\u0026 ${'x'.repeat(3000)}"]}]}}`;
const REFUSAL = `the API server answered 422: ControllerRevision.apps "test-sidecarset-abc" is invalid: data: Invalid value: ${DUMP}: field is immutable`;

/** A store whose every write fails as the API server refused it. */
function refusingStore(initial = memoryRevisionStore()): RevisionStore {
  const refuse = () => Promise.reject(new KubeApiError('write ControllerRevision', REFUSAL, 422));
  return { ...initial, create: refuse, setNumber: refuse, patchLabels: refuse };
}

describe('a revision write that fails', () => {
  it('fails registration with a RevisionWriteError naming the revision and the whole reason, for a create and a renumbering', async () => {
    const set = rolloutSet();
    const created = registerRevision(set, [], refusingStore());
    await expect(created).rejects.toBeInstanceOf(RevisionWriteError);
    await expect(created).rejects.toMatchObject({ write: 'create', revision: `${NS}/${currentRevisionName(set)}`, reason: REFUSAL });
    // A rollback: the set's spec is the older revision's, which must be renumbered.
    const history = [newRevision(set, NS, 1, 0), newRevision(rolloutSet({ image: OLD_IMAGE }), NS, 2, 0)];
    const store = memoryRevisionStore(history);
    const renumbered = registerRevision(set, await store.list('test-sidecarset'), refusingStore(store));
    await expect(renumbered).rejects.toMatchObject({ write: 'renumber', revision: `${NS}/${currentRevisionName(set)}`, message: expect.stringContaining(': field is immutable') });
  });

  it('keeps the beginning and the end of a long reason within the limit, saying how much of the middle was left out', () => {
    expect(keepEnds('short', 10)).toBe('short');
    const kept = keepEnds(REFUSAL, 600);
    expect(kept.length).toBeLessThanOrEqual(600);
    expect(kept.startsWith('the API server answered 422: ControllerRevision.apps "test-sidecarset-abc" is invalid')).toBe(true);
    expect(kept.endsWith(`"]}]}}: field is immutable`)).toBe(true);
    expect(kept).toMatch(/…\[\d+ characters left out\]…/);
  });

  describe('on one set’s reconcile (a set with pods to roll)', () => {
    function deps(revisions: RevisionStore) {
      const set = rolloutSet();
      const events = memoryEventSink();
      const statuses = memoryStatusWriter([set]);
      const pods = memoryPods([rolloutPod(set, { name: 'p-0' }), rolloutPod(set, { name: 'p-1' })]);
      const setDeps: ReconcileDeps = {
        statuses,
        events,
        namespaces: memoryNamespaceSource([]),
        rollout: {
          revisions,
          setPods: pods.source,
          pods: pods.writer,
          podEvents: memoryPodEventSink(),
          clock: { now: () => new Date('2026-12-01T00:00:00Z') },
          states: rolloutStateEvents(),
        },
      };
      return { set, events, statuses, setDeps };
    }

    it('records one Warning Event naming the revision with the reason’s end, logs the whole reason, writes no status and updates no pod', async () => {
      const { set, events, statuses, setDeps } = deps(refusingStore());
      const result = await reconcileSet(set, setDeps);
      expect(result).toMatchObject({ status: 'not-written', podsUpdated: 0 });
      expect(result.errors).toEqual([{ sidecarSet: 'test-sidecarset', operation: 'register the revision', message: expect.stringContaining(REFUSAL) }]);
      expect(statuses.writes).toEqual([]);
      expect(events.events).toHaveLength(1);
      const event = events.events[0];
      expect(event).toMatchObject({ sidecarSet: { name: 'test-sidecarset', uid: 'uid-1' }, type: 'Warning', reason: REVISION_WRITE_FAILED });
      expect(event?.message.length).toBeLessThanOrEqual(EVENT_MESSAGE_LIMIT);
      expect(event?.message).toMatch(new RegExp(`^ControllerRevision ${NS}/${currentRevisionName(set)} could not be created, so SidecarSet test-sidecarset updates no pod`));
      expect(event?.message.endsWith(': field is immutable')).toBe(true);
      expect(failedRevisionOf(event?.message ?? '')).toBe(`${NS}/${currentRevisionName(set)}`);
    });

    it('tells the same failure once per process, a different reason again, and the recovery after it as new', async () => {
      const { set, events, setDeps } = deps(refusingStore());
      await reconcileSet(set, setDeps);
      await reconcileSet(set, setDeps);
      expect(events.events.map((e) => e.reason)).toEqual([REVISION_WRITE_FAILED]);
      const timingOut = (): Promise<never> => Promise.reject(new KubeApiError('create', 'the request failed: The operation was aborted due to timeout'));
      await reconcileSet(set, { ...setDeps, rollout: { ...setDeps.rollout, revisions: { ...memoryRevisionStore(), create: timingOut } } });
      expect(events.events.map((e) => e.reason)).toEqual([REVISION_WRITE_FAILED, REVISION_WRITE_FAILED]);
      expect(events.events[1]?.message).toMatch(/aborted due to timeout$/);
      await reconcileSet(set, { ...setDeps, rollout: { ...setDeps.rollout, revisions: memoryRevisionStore() } });
      expect(events.events.map((e) => e.reason)).toEqual([REVISION_WRITE_FAILED, REVISION_WRITE_FAILED, 'RolloutProgressing']);
    });

    it('says so in the reconcile errors when the Event cannot be recorded either', async () => {
      const { set, setDeps } = deps(refusingStore());
      const result = await reconcileSet(set, { ...setDeps, events: { record: () => Promise.reject(new Error('events are forbidden')) } });
      expect(result.errors.map((e) => e.operation)).toEqual(['record event', 'register the revision']);
    });
  });

  it('on a resync, an idle set (nothing to roll) is recorded once, and its resting state is not reported over it resync after resync', async () => {
    const set = rolloutSet();
    const pods = memoryPods([]);
    const events = memoryEventSink();
    const states = rolloutStateEvents();
    const resync = () =>
      runResync({
        sidecarSets: memorySidecarSetSource([set]),
        pods: memoryPodPages([]),
        namespaces: memoryNamespaceSource([]),
        statuses: memoryStatusWriter([set]),
        events,
        notices: notInjectedEvents(),
        rollout: {
          revisions: refusingStore(),
          setPods: pods.source,
          pods: pods.writer,
          podEvents: memoryPodEventSink(),
          clock: { now: () => new Date('2026-12-01T00:00:00Z') },
          states,
        },
      });
    const first = await resync();
    await resync();
    await resync();
    expect(first.errors).toEqual([expect.objectContaining({ sidecarSet: 'test-sidecarset', operation: 'register the revision', message: expect.stringContaining(REFUSAL) })]);
    expect(events.events.map((e) => `${e.type} ${e.reason}`)).toEqual([`Warning ${REVISION_WRITE_FAILED}`]);
  });
});
