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

/** A review in flight: when its next step is due (abort, then answer for it), and the step. */
interface InFlight {
  dueAt: number;
  step(): void;
}

/**
 * One timer for every review in flight, instead of two per review (two
 * setTimeouts and their clearing were a few per cent of a warm review): armed
 * for the earliest step due, and, while nothing is in flight, unreferenced
 * rather than cleared, so that it neither keeps the process alive nor costs
 * the next review a new timer. Reviews end long before their deadline, so it
 * rarely fires; when it does, it takes the due steps and re-arms for the
 * next (a walk of the reviews in flight, a handful).
 */
class DeadlineTimer {
  readonly #inFlight = new Set<InFlight>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #armedFor = Infinity;

  add(review: InFlight): void {
    this.#inFlight.add(review);
    if (review.dueAt < this.#armedFor) this.#arm(review.dueAt);
    else if (this.#inFlight.size === 1) this.#timer?.ref();
  }

  delete(review: InFlight): void {
    this.#inFlight.delete(review);
    if (this.#inFlight.size === 0) this.#timer?.unref();
  }

  /** A review's next step is later than the one it was added with. */
  moved(review: InFlight): void {
    if (review.dueAt < this.#armedFor) this.#arm(review.dueAt);
  }

  #arm(dueAt: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#armedFor = dueAt;
    this.#timer = setTimeout(() => {
      this.#fire();
    }, Math.max(1, Math.ceil(dueAt - performance.now())));
  }

  #fire(): void {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    const now = performance.now();
    for (const review of [...this.#inFlight]) if (review.dueAt <= now) review.step();
    let next = Infinity;
    for (const review of this.#inFlight) next = Math.min(next, review.dueAt);
    if (next !== Infinity) this.#arm(next);
  }
}

const timer = new DeadlineTimer();

/** The last `?timeout=` read and its deadline: the API server sends the same one with every request of a webhook. */
let lastTimeout: { text: string | undefined; deadline: number } | undefined;

function deadlineOf(timeout: string | undefined): number {
  if (lastTimeout === undefined || lastTimeout.text !== timeout) lastTimeout = { text: timeout, deadline: deadlineFromTimeout(timeout) };
  return lastTimeout.deadline;
}

/** `work`'s result, given the deadline `timeout` asks for, or a fallback's. Never throws; leaves no timer referenced behind. */
export async function withinDeadline<T>(timeout: string | undefined, work: (signal: AbortSignal) => Promise<T>, fallbacks: DeadlineFallbacks<T>): Promise<T> {
  const deadline = deadlineOf(timeout);
  // The handler's own deadline: sources stop waiting (or serve a stale cache)
  // when it aborts. Not AbortSignal.timeout(): its timer and signal would
  // live on for the whole deadline after the answer, so a warm function
  // would hold seconds' worth of them (measured: ~850 bytes per call).
  const controller = new AbortController();
  let review: InFlight | undefined;
  try {
    return await new Promise<T>((resolve, reject) => {
      const inFlight: InFlight = {
        dueAt: performance.now() + deadline,
        step() {
          // First the signal; then, a grace later, the door's own answer:
          // a handler that ignores its signal must still not make the API
          // server wait past its timeout.
          if (!controller.signal.aborted) {
            controller.abort(new DOMException(`the ${deadline} ms deadline passed`, 'TimeoutError'));
            inFlight.dueAt += HANDLER_GRACE_MS;
            timer.moved(inFlight);
          } else {
            timer.delete(inFlight);
            resolve(fallbacks.overran(deadline));
          }
        },
      };
      review = inFlight;
      timer.add(inFlight);
      work(controller.signal).then(resolve, reject);
    });
  } catch (error) {
    return fallbacks.crashed(error);
  } finally {
    if (review !== undefined) timer.delete(review);
  }
}
