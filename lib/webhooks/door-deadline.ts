/**
 * The door's deadline: the work gets a signal that aborts at the request's
 * `?timeout=` deadline, and a backstop answers for it a little later if it
 * ignores its signal, so the API server never waits past its timeout. Any
 * review (admission or conversion) runs inside it.
 */
import { deadlineFromTimeout } from './timeout.ts';

/**
 * How long the door waits past the handler's deadline before answering 503
 * itself: long enough for a handler that honours its signal to answer (a
 * stale cached list is still a decision), well inside the deadline margin.
 */
export const HANDLER_GRACE_MS = 200;

/** What the door says instead of the work's result. */
export interface DeadlineFallbacks<T> {
  /** The work gave no result within the deadline and its grace. */
  overran(deadlineMs: number): T;
  /** The work threw (it should not: the last line of defence against a crash). */
  crashed(error: unknown): T;
}

/** `work`'s result, given the deadline `timeout` asks for, or a fallback's. Never throws; leaves no timer behind. */
export async function withinDeadline<T>(timeout: string | undefined, work: (signal: AbortSignal) => Promise<T>, fallbacks: DeadlineFallbacks<T>): Promise<T> {
  const deadline = deadlineFromTimeout(timeout);
  // The handler's own deadline: sources stop waiting (or serve a stale cache)
  // when it aborts. Not AbortSignal.timeout(): its timer and signal would
  // live on for the whole deadline after the answer, so a warm function
  // would hold seconds' worth of them (measured: ~850 bytes per call).
  const controller = new AbortController();
  const deadlineTimer = setTimeout(() => {
    controller.abort(new DOMException(`the ${deadline} ms deadline passed`, 'TimeoutError'));
  }, deadline);
  // The door's: a handler that ignores its signal must still not make the
  // API server wait past its timeout, so the door answers itself.
  let backstopTimer: ReturnType<typeof setTimeout> | undefined;
  const backstop = new Promise<T>((resolve) => {
    backstopTimer = setTimeout(() => {
      resolve(fallbacks.overran(deadline));
    }, deadline + HANDLER_GRACE_MS);
  });
  try {
    return await Promise.race([work(controller.signal), backstop]);
  } catch (error) {
    return fallbacks.crashed(error);
  } finally {
    clearTimeout(deadlineTimer);
    clearTimeout(backstopTimer);
  }
}
