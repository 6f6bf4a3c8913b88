/** The rollout state each set is in, as its Events tell it, kept for metrics. */
import { describe, expect, it } from '@jest/globals';
import { observedStates, rolloutStateName } from '../../lib/status-sync/observed-states.ts';
import { rolloutState, rolloutStateEvents } from '../../lib/status-sync/rollout-state.ts';

const counts = { matchedPods: 4, updatedPods: 2, readyPods: 3, updatedReadyPods: 1 };
const web = { name: 'web', uid: 'uid-web' };
const stuck = { count: 1, reasons: [{ reason: 'CrashLoopBackOff', count: 1, pods: ['default/a'] }], lastUpdateMs: 0 };
const stalledState = (_ms: number, c: typeof counts) => rolloutState(c, 0, { kind: 'max-unavailable', unavailable: 1, maxUnavailable: 1, stuck }, { nowMs: 60_000, stallMs: 60_000 });

describe('observedStates', () => {
  it('names each state without the Events\' Rollout prefix', () => {
    expect(rolloutStateName(stalledState(60_000, counts))).toBe('Stalled');
    expect(rolloutStateName(rolloutState(counts, 1, undefined))).toBe('Progressing');
    expect(rolloutStateName(rolloutState({ ...counts, updatedPods: 4 }, 0, { kind: 'finished' }))).toBe('Finished');
  });

  it('knows a resting state at first sight, though it is nothing new for an Event', () => {
    const states = observedStates(rolloutStateEvents());
    expect(states.due(web, rolloutState({ ...counts, updatedPods: 4 }, 0, { kind: 'finished' }))).toBeUndefined();
    expect(states.current().get('web')).toBe('Finished');
  });

  it('keeps a stalled rollout Stalled when the schedule finds it unmoved, and follows it once it moves', () => {
    const states = observedStates(rolloutStateEvents());
    const progressing = rolloutState(counts, 0, { kind: 'max-unavailable', unavailable: 1, maxUnavailable: 1 });
    const event = states.due(web, progressing);
    expect(event?.reason).toBe('RolloutProgressing');
    states.reported('web', progressing);
    const stalled = stalledState(60_000, counts);
    expect(states.due(web, stalled)?.reason).toBe('RolloutStalled');
    states.reported('web', stalled);
    expect(states.current().get('web')).toBe('Stalled');
    // The next scheduled reconcile computes "progressing" with the same counts: still stalled.
    expect(states.due(web, progressing)).toBeUndefined();
    expect(states.current().get('web')).toBe('Stalled');
    // One more pod ready: it moves again.
    const moved = rolloutState({ ...counts, updatedReadyPods: 2 }, 0, { kind: 'max-unavailable', unavailable: 1, maxUnavailable: 1 });
    expect(states.due(web, moved)?.reason).toBe('RolloutProgressing');
    expect(states.current().get('web')).toBe('Progressing');
  });

  it('forgets sets no longer present', () => {
    const states = observedStates(rolloutStateEvents());
    states.due(web, rolloutState(counts, 1, undefined));
    states.keepOnly(new Set());
    expect(states.current().size).toBe(0);
  });
});
