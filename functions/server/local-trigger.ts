/**
 * The rollout trigger of the local server (`npm start`): the validating
 * webhook hands an admitted SidecarSet change straight to the status loop
 * running in the same process (a direct call, no network), which starts
 * that set's reconcile instead of waiting for its next interval. On AWS the same
 * port sends the sets to status-sync's SQS queue (lib/adapters/queue-rollout-trigger.ts).
 */
import type { AdmittedSidecarSet, RolloutTrigger } from '../../lib/ports.ts';

/** What the server needs of the status loop: to be told about an admitted change, nothing else. */
export interface AdmittedListener {
  admitted(change: AdmittedSidecarSet): void;
}

/** A trigger that tells `listener`; the hand-over is a call, so it resolves at once. */
export function localRolloutTrigger(listener: AdmittedListener): RolloutTrigger {
  return {
    admitted(changes) {
      try {
        for (const change of changes) listener.admitted(change);
        return Promise.resolve();
      } catch (error) {
        // A throwing listener is reported like a failed invoke: a warning, the answer unchanged.
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },
  };
}

/**
 * The status loop as a listener: its `admitted(change)` method, when it has
 * one. Checked rather than assumed, so the server depends on that one method
 * of the loop and on nothing else; a loop without it is not told, and its
 * next interval runs the resync.
 */
export function admittedListenerOf(loop: object | undefined): AdmittedListener | undefined {
  if (loop === undefined || !('admitted' in loop) || typeof loop.admitted !== 'function') return undefined;
  const admitted = loop.admitted as AdmittedListener['admitted'];
  return {
    admitted: (change) => {
      admitted.call(loop, change);
    },
  };
}

/** The trigger that tells the status loop, or none when no loop runs (or it cannot be told). */
export function statusLoopTrigger(loop: object | undefined): RolloutTrigger | undefined {
  const listener = admittedListenerOf(loop);
  return listener === undefined ? undefined : localRolloutTrigger(listener);
}
