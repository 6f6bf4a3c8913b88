/**
 * "Why is it waiting?": each rollout state in words, and reported once per
 * change of its kind or lasting figures, never per moving count.
 */
import { describe, expect, it } from '@jest/globals';
import type { RolloutCounts, WaitingReason } from '../../lib/rollout/plan.ts';
import type { UnavailablePods } from '../../lib/rollout/plan.ts';
import { memoryEventSink, memoryRecordedStalls } from '../../lib/adapters/memory-status-sync.ts';
import { rolloutState, rolloutStateEvents, type RolloutState, type RolloutStateEvents, type StallClock } from '../../lib/status-sync/rollout-state.ts';

const counts = (updatedPods: number, updatedReadyPods = updatedPods, matchedPods = 10): RolloutCounts => ({ matchedPods, updatedPods, readyPods: matchedPods, updatedReadyPods });
const SET = { name: 'agent', uid: 'uid-agent' };
/** Two updated pods that cannot pull their sidecar's image, the last updated at t = 0. */
const PULLING: UnavailablePods = { count: 2, reasons: [{ reason: 'ImagePullBackOff', count: 2, pods: ['default/a', 'default/b'] }], lastUpdateMs: 0 };
const AT = (seconds: number): StallClock => ({ nowMs: seconds * 1000, stallMs: 60_000 });
/** A rollout stalled under maxUnavailable: two updated pods unavailable for a minute. */
const stalled = (c: RolloutCounts) => rolloutState(c, 0, { kind: 'max-unavailable', unavailable: 2, maxUnavailable: 2, stuck: PULLING }, AT(60));

describe('rolloutState', () => {
  it.each<[string, RolloutCounts, number, WaitingReason | undefined, { reason: string; type: string; key: string; message: RegExp }]>([
    ['pods written and no limit reached', counts(3, 1), 2, undefined, { reason: 'RolloutProgressing', type: 'Normal', key: 'progressing', message: /^rolling out: 2 pod\(s\) updated in this reconcile; 3 of 10 pod\(s\) updated, 1 updated and ready$/ }],
    ['pods written up to maxUnavailable', counts(3, 1), 2, { kind: 'max-unavailable', unavailable: 0, maxUnavailable: 2 }, { reason: 'RolloutProgressing', type: 'Normal', key: 'progressing', message: /^rolling out, at most 2 unavailable at a time \(maxUnavailable\): 2 pod/ }],
    // Waiting for a batch under maxUnavailable is the rollout's normal progress: the same state, not an Event per batch.
    ['maxUnavailable reached, nothing written', counts(3, 1), 0, { kind: 'max-unavailable', unavailable: 2, maxUnavailable: 2 }, { reason: 'RolloutProgressing', type: 'Normal', key: 'progressing', message: /^rolling out, at most 2 unavailable at a time \(maxUnavailable\): 0 pod\(s\) updated in this reconcile; 3 of 10 pod\(s\) updated/ }],
    ['every pod updated and ready', counts(10), 0, { kind: 'finished' }, { reason: 'RolloutFinished', type: 'Normal', key: 'finished', message: /^finished: every matched pod runs the current sidecars; 10 of 10/ }],
    // Finished means updated and ready: the last pods restarting are the rollout still moving.
    ['every pod updated, some not ready', counts(10, 8), 0, { kind: 'updated-not-ready', stuck: PULLING }, { reason: 'RolloutProgressing', type: 'Normal', key: 'progressing', message: /^rolling out: 0 pod\(s\) updated in this reconcile; 10 of 10 pod\(s\) updated, 8 updated and ready; every pod is updated; 2 not ready yet: ImagePullBackOff: 2 pod\(s\) \(default\/a, default\/b\)$/ }],
    ['paused', counts(2), 0, { kind: 'paused' }, { reason: 'RolloutPaused', type: 'Normal', key: 'paused', message: /^paused \(updateStrategy\.paused\); 2 of 10/ }],
    ['NotUpdate', counts(0), 0, { kind: 'not-update' }, { reason: 'RolloutNotUpdate', type: 'Normal', key: 'not-update', message: /^updateStrategy\.type is NotUpdate/ }],
    ['held by partition', counts(4), 0, { kind: 'partition', held: 6 }, { reason: 'RolloutWaiting', type: 'Normal', key: 'partition:6', message: /^6 pod\(s\) held back by partition; 4 of 10/ }],
    ['pods not upgradable', counts(8), 0, { kind: 'nothing-waiting', notUpgradable: 2, notSelected: 0, inFlight: 0 }, { reason: 'RolloutBlocked', type: 'Warning', key: 'blocked:2:0', message: /^2 pod\(s\) not upgradable because fields other than the image changed/ }],
    ['pods not upgradable, the fields named', counts(8), 0, { kind: 'nothing-waiting', notUpgradable: 2, notSelected: 0, inFlight: 0, changed: ['env', 'volumeMounts'] }, { reason: 'RolloutBlocked', type: 'Warning', key: 'blocked:2:0', message: /^2 pod\(s\) not upgradable because fields other than the image changed \(env, volumeMounts\): recreate them/ }],
    ['pods outside updateStrategy.selector', counts(8), 0, { kind: 'nothing-waiting', notUpgradable: 0, notSelected: 2, inFlight: 0 }, { reason: 'RolloutWaiting', type: 'Normal', key: 'nothing-waiting:2:false', message: /^2 pod\(s\) outside updateStrategy\.selector/ }],
    ['only pods still restarting', counts(8, 6), 0, { kind: 'nothing-waiting', notUpgradable: 0, notSelected: 0, inFlight: 2 }, { reason: 'RolloutWaiting', type: 'Normal', key: 'nothing-waiting:0:true', message: /^2 pod\(s\) still restarting/ }],
    ['an invalid strategy', counts(0), 0, { kind: 'invalid-strategy', message: 'partition "x" is not an int or percent' }, { reason: 'RolloutBlocked', type: 'Warning', key: 'blocked:invalid-strategy', message: /^cannot roll: partition "x"/ }],
    // The last flips are the rollout still moving: the same state as its batches, so no Event until it finishes.
    ['every pod updated, two finishing a hot upgrade', counts(10, 8), 0, { kind: 'hot-swapping', pods: 2 }, { reason: 'RolloutProgressing', type: 'Normal', key: 'progressing', message: /^rolling out: 0 pod\(s\) updated in this reconcile; 10 of 10 pod\(s\) updated, 8 updated and ready; 2 pod\(s\) finishing a hot upgrade$/ }],
  ])('%s', (_, c, updated, waiting, expected) => {
    const state = rolloutState(c, updated, waiting);
    expect({ ...state, progress: undefined, resting: undefined }).toEqual({ reason: expected.reason, type: expected.type, key: expected.key, message: expect.stringMatching(expected.message), progress: undefined, resting: undefined });
  });
});

describe('rolloutStateEvents', () => {
  it('reports a state once, and again only when its kind or lasting figures change', () => {
    const notices = rolloutStateEvents();
    const report = (c: RolloutCounts, updated: number, waiting: WaitingReason | undefined) => {
      const state = rolloutState(c, updated, waiting);
      const event = notices.due(SET, state);
      if (event !== undefined) notices.reported(SET.name, state);
      return event?.reason;
    };
    const limit = { kind: 'max-unavailable', unavailable: 2, maxUnavailable: 2 } as const;
    expect([
      report(counts(2, 0), 2, limit),
      report(counts(4, 2), 2, limit),
      report(counts(4, 2), 0, limit),
      report(counts(4, 3), 0, { ...limit, unavailable: 1 }),
      report(counts(6, 4), 0, { ...limit, maxUnavailable: 3 }),
      report(counts(10), 0, { kind: 'finished' }),
      report(counts(10), 0, { kind: 'finished' }),
    ]).toEqual(['RolloutProgressing', undefined, undefined, undefined, undefined, 'RolloutFinished', undefined]);
  });

  it('reports a stalled rollout once, and not again while a reconcile finds it unmoved', () => {
    const notices = rolloutStateEvents();
    const limit = { kind: 'max-unavailable', unavailable: 2, maxUnavailable: 2 } as const;
    const seen = (state: ReturnType<typeof rolloutState>) => {
      const event = notices.due(SET, state);
      if (event !== undefined) notices.reported(SET.name, state);
      return event?.reason;
    };
    expect(seen(rolloutState(counts(2, 0), 2, limit))).toBe('RolloutProgressing');
    expect(seen(stalled(counts(2, 0)))).toBe('RolloutStalled');
    expect(notices.due(SET, stalled(counts(2, 0)))).toBeUndefined();
    // The schedule's next reconcile finds the same counts: still stalled, no Event.
    expect(seen(rolloutState(counts(2, 0), 0, limit))).toBeUndefined();
    // Once a pod becomes ready and the rollout moves, it is progressing again.
    expect(seen(rolloutState(counts(2, 1), 0, limit))).toBe('RolloutProgressing');
  });

  it('says in a stalled state how many updated pods are not ready, what the kubelet says of them, and which', () => {
    expect(stalled(counts(5, 3))).toMatchObject({
      reason: 'RolloutStalled',
      type: 'Warning',
      message: 'stalled: 2 updated pod(s) not ready, the last updated 60 s ago: ImagePullBackOff: 2 pod(s) (default/a, default/b); the next pods wait under maxUnavailable 2 (check the sidecar image and logs); 5 of 10 pod(s) updated, 3 updated and ready',
    });
  });

  it.each<[string, WaitingReason, number, StallClock | undefined, string]>([
    ['unavailable for less than the threshold', { kind: 'max-unavailable', unavailable: 2, maxUnavailable: 2, stuck: PULLING }, 0, AT(59), 'RolloutProgressing'],
    ['unavailable for the threshold', { kind: 'max-unavailable', unavailable: 2, maxUnavailable: 2, stuck: PULLING }, 0, AT(60), 'RolloutStalled'],
    ['every pod updated, the last ones unavailable for the threshold', { kind: 'updated-not-ready', stuck: PULLING }, 0, AT(600), 'RolloutStalled'],
    ['pods written this reconcile', { kind: 'max-unavailable', unavailable: 2, maxUnavailable: 3, stuck: PULLING }, 1, AT(600), 'RolloutProgressing'],
    // The status view has no clock: it names the reasons, never a stall.
    ['no clock', { kind: 'updated-not-ready', stuck: PULLING }, 0, undefined, 'RolloutProgressing'],
  ])('stalled or not: %s', (_, waiting, updated, clock, reason) => {
    expect(rolloutState(counts(4, 2), updated, waiting, clock).reason).toBe(reason);
  });

  it('says nothing of a resting state at first sight, and reports it as the end of a state it saw', () => {
    const notices = rolloutStateEvents();
    const finished = rolloutState(counts(10), 0, { kind: 'finished' });
    expect(finished.resting).toBe(true);
    expect(notices.due(SET, finished)).toBeUndefined();
    expect(rolloutState(counts(0), 0, { kind: 'not-update' }).resting).toBeUndefined();
    expect(rolloutState(counts(10), 0, { kind: 'not-update' }).resting).toBe(true);
    const progressing = rolloutState(counts(3, 1), 2, undefined);
    notices.reported(SET.name, progressing);
    expect(notices.due(SET, finished)?.reason).toBe('RolloutFinished');
  });

  it('carries the set, the type, the reason and the message in the Event', () => {
    const state = rolloutState(counts(8), 0, { kind: 'nothing-waiting', notUpgradable: 2, notSelected: 0, inFlight: 0 });
    expect(rolloutStateEvents().due(SET, state)).toEqual({ sidecarSet: SET, type: 'Warning', reason: 'RolloutBlocked', message: state.message });
  });

  it('keeps a state due until it is reported (a failed Event is recorded again)', () => {
    const notices = rolloutStateEvents();
    const state = rolloutState(counts(0), 0, { kind: 'paused' });
    expect(notices.due(SET, state)).toBeDefined();
    expect(notices.due(SET, state)).toBeDefined();
    notices.reported(SET.name, state);
    expect(notices.due(SET, state)).toBeUndefined();
  });

  it('forgets sets no longer present, so a set of the same name is reported afresh', () => {
    const notices = rolloutStateEvents();
    const state = rolloutState(counts(0), 0, { kind: 'paused' });
    const other = { name: 'other', uid: 'uid-other' };
    notices.reported(SET.name, state);
    notices.reported(other.name, state);
    notices.keepOnly(new Set(['other']));
    expect(notices.due(SET, state)).toBeDefined();
    expect(notices.due(other, state)).toBeUndefined();
  });

  describe('across processes (each cold start a new process, the Events stored)', () => {
    const stuck = (over: Partial<UnavailablePods> = {}): UnavailablePods => ({ ...PULLING, ...over });
    const stalledBy = (pods: UnavailablePods, seconds = 120) => rolloutState(counts(2, 0), 0, { kind: 'max-unavailable', unavailable: pods.count, maxUnavailable: 2, stuck: pods }, AT(seconds));
    /** What one process tells of `state`, as set-reconcile.ts reportState asks: due, then not recorded before. */
    const tell = async (notices: RolloutStateEvents, sink: ReturnType<typeof memoryEventSink>, state: RolloutState) => {
      const event = notices.due(SET, state);
      if (event === undefined || (await notices.recordedBefore(SET, state))) return undefined;
      await sink.record(event);
      notices.reported(SET.name, state);
      return event.reason;
    };

    it('tells a stall once, whatever number of new processes find it', async () => {
      const sink = memoryEventSink();
      const told = memoryRecordedStalls(sink);
      const seen: (string | undefined)[] = [];
      for (const seconds of [60, 120, 600]) seen.push(await tell(rolloutStateEvents(told), sink, stalledBy(stuck(), seconds)));
      expect(seen).toEqual(['RolloutStalled', undefined, undefined]);
      expect(sink.events).toHaveLength(1);
    });

    it('tells it again in a new process when it changed: other pods held (a later update), more pods, another kind of reason', async () => {
      const sink = memoryEventSink();
      const told = memoryRecordedStalls(sink);
      const fresh = (state: RolloutState) => tell(rolloutStateEvents(told), sink, state);
      expect(await fresh(stalledBy(stuck()))).toBe('RolloutStalled');
      // The kubelet alternating ErrImagePull and ImagePullBackOff is the same stall.
      expect(await fresh(stalledBy(stuck({ reasons: [{ reason: 'ErrImagePull', count: 2, pods: ['default/a', 'default/b'] }] })))).toBeUndefined();
      expect(await fresh(stalledBy(stuck({ lastUpdateMs: 5_000 })))).toBe('RolloutStalled');
      expect(await fresh(stalledBy(stuck({ count: 3, lastUpdateMs: 5_000 })))).toBe('RolloutStalled');
      expect(await fresh(stalledBy(stuck({ count: 3, lastUpdateMs: 5_000, reasons: [{ reason: 'CrashLoopBackOff', count: 3, pods: ['default/a'] }] })))).toBe('RolloutStalled');
      expect(await fresh(stalledBy(stuck({ count: 3, lastUpdateMs: 5_000, reasons: [{ reason: 'Error', count: 3, pods: ['default/a'] }] })))).toBeUndefined();
    });

    it('tells a stall of a set of the same name but another uid (deleted and created again)', async () => {
      const sink = memoryEventSink();
      const told = memoryRecordedStalls(sink);
      expect(await tell(rolloutStateEvents(told), sink, stalledBy(stuck()))).toBe('RolloutStalled');
      const notices = rolloutStateEvents(told);
      const state = stalledBy(stuck());
      const other = { ...SET, uid: 'uid-agent-2' };
      expect(notices.due(other, state)).toBeDefined();
      expect(await notices.recordedBefore(other, state)).toBe(false);
    });

    it('tells the stall when the stored Events cannot be read, and reads them again at the next stall', async () => {
      const sink = memoryEventSink();
      await tell(rolloutStateEvents(memoryRecordedStalls(sink)), sink, stalledBy(stuck()));
      let reads = 0;
      const flaky = async () => {
        reads++;
        if (reads === 1) throw new Error('the API server answered 503');
        return memoryRecordedStalls(sink)();
      };
      const notices = rolloutStateEvents(flaky);
      expect(await notices.recordedBefore(SET, stalledBy(stuck()))).toBe(false);
      expect(await notices.recordedBefore(SET, stalledBy(stuck()))).toBe(true);
      expect(await notices.recordedBefore({ name: 'other', uid: 'uid-other' }, stalledBy(stuck()))).toBe(false);
      expect(reads).toBe(2);
    });

    it('asks the stored Events about stalls only, and only of sets this process told nothing of', async () => {
      const sink = memoryEventSink();
      await tell(rolloutStateEvents(memoryRecordedStalls(sink)), sink, stalledBy(stuck()));
      let reads = 0;
      const notices = rolloutStateEvents(() => {
        reads++;
        return memoryRecordedStalls(sink)();
      });
      expect(await notices.recordedBefore(SET, rolloutState(counts(0), 0, { kind: 'paused' }))).toBe(false);
      notices.reported(SET.name, rolloutState(counts(0), 0, { kind: 'paused' }));
      // Paused, then stalled in this process's own sight: new, whatever was stored.
      expect(await notices.recordedBefore(SET, stalledBy(stuck()))).toBe(false);
      expect(reads).toBe(0);
    });
  });
});
