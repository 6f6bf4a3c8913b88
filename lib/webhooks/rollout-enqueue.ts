/**
 * Enqueueing an admitted change for the reconciler (its RolloutTrigger), bounded:
 * awaited before answering because on Lambda nothing runs after the answer, so
 * cut off at `boundMs` or the review's deadline. A failure is a warning and never
 * changes the answer: the schedule is the safety net.
 */
import { errorMessage } from '../errors.ts';
import type { AdmittedSidecarSet } from '../ports.ts';
import type { HandlerDeps } from './handler.ts';

/**
 * How long a pod's write waits, at most, for the enqueue. Far under the
 * webhook's 1 s timeout: a kubelet's status write must never wait for the
 * reconciler (an invoke answers in tens of milliseconds).
 */
export const POD_ENQUEUE_TIMEOUT_MS = 300;

/**
 * Enqueues `changes` to deps.rollout in one send, waiting `boundMs` at
 * most; logs `warning` with the sets and the error when it fails.
 */
export async function enqueueAdmitted(changes: readonly AdmittedSidecarSet[], deps: Pick<HandlerDeps, 'rollout' | 'logger' | 'signal'>, boundMs: number, warning: string): Promise<void> {
  const { rollout } = deps;
  if (rollout === undefined || changes.length === 0) return;
  const bound = new AbortController();
  const timer = setTimeout(() => {
    bound.abort(new DOMException(`no answer within ${boundMs} ms`, 'TimeoutError'));
  }, boundMs);
  const signal = deps.signal === undefined ? bound.signal : AbortSignal.any([deps.signal, bound.signal]);
  // A trigger that ignores its signal must not hold the answer either.
  const cutOff = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    signal.addEventListener(
      'abort',
      () => {
        reject(signal.reason as Error);
      },
      { once: true },
    );
  });
  try {
    await Promise.race([rollout.admitted(changes, signal), cutOff]);
  } catch (error) {
    const sets = changes.map((change) => change.sidecarSet);
    deps.logger?.warn(warning, { ...(sets.length === 1 ? { sidecarSet: sets[0] } : { sidecarSets: sets }), operation: changes[0]?.operation, error: errorMessage(error) });
  } finally {
    clearTimeout(timer);
    // A cut-off that lost the race is read here: an unread rejection would be reported as unhandled.
    cutOff.catch(() => undefined);
  }
}
