/**
 * Each SidecarSet's rollout state, for metrics. The reconciles ask their
 * RolloutStateEvents about every set's state each time (whether or not it
 * is new worth an Event), so a wrapper that watches those questions knows
 * the state of every set, the same one its Events show, without the reconciles
 * reporting it twice.
 */
import type { RolloutState, RolloutStateName, RolloutStateEvents } from './rollout-state.ts';

export interface ObservedStates extends RolloutStateEvents {
  /** The state each set was last seen in. */
  current(): ReadonlyMap<string, RolloutStateName>;
}

/** The state's name without the Events' "Rollout" prefix: RolloutStalled is Stalled. */
export function rolloutStateName(state: Pick<RolloutState, 'reason'>): RolloutStateName {
  return state.reason.slice('Rollout'.length) as RolloutStateName;
}

export function observedStates(inner: RolloutStateEvents): ObservedStates {
  const seen = new Map<string, RolloutStateName>();
  return {
    due(set, state) {
      const event = inner.due(set, state);
      // A state that is nothing new is the one already seen: a stalled rollout
      // reconciled again unmoved stays Stalled, as its Events say. A set seen for
      // the first time is in whatever state it is (a resting one is nothing new).
      if (event !== undefined || !seen.has(set.name)) seen.set(set.name, rolloutStateName(state));
      return event;
    },
    reported: (set, state) => {
      inner.reported(set, state);
    },
    recordedBefore: (set, state, signal) => inner.recordedBefore(set, state, signal),
    aheadSince: (set, ahead, nowMs) => inner.aheadSince(set, ahead, nowMs),
    keepOnly(present) {
      for (const name of seen.keys()) if (!present.has(name)) seen.delete(name);
      inner.keepOnly(present);
    },
    current: () => seen,
  };
}
