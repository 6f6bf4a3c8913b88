/**
 * A review's deadline (k8s.io/apiserver's WithTimeout filter, per request):
 * the work's signal aborts at the `?timeout=` deadline, and a backstop answers
 * a grace later if the work ignores it, so the API server never waits past its timeout.
 */
import { deadlineFromTimeout } from './timeout.ts';

/**
 * How long past the handler's deadline before answering 503 for it: enough for
 * a handler that honours its signal to answer (a stale cached list is still a
 * decision), well inside the deadline margin.
 */
export const HANDLER_GRACE_MS = 200;

/** What is answered instead of the work's result. */
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
 * One timer for every review in flight (two timers per review cost a warm review
 * measurably): armed for the earliest step due, and unreferenced rather than
 * cleared while idle, so it neither keeps the process alive nor costs the next
 * review a new timer.
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
  // Not AbortSignal.timeout(): its timer and signal outlive the answer by the
  // whole deadline, so a warm function would hold seconds' worth of them.
  const controller = new AbortController();
  let review: InFlight | undefined;
  try {
    return await new Promise<T>((resolve, reject) => {
      const inFlight: InFlight = {
        dueAt: performance.now() + deadline,
        step() {
          // First the signal; a grace later, the fallback answer: a handler
          // that ignores its signal must not hold the API server past its timeout.
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
