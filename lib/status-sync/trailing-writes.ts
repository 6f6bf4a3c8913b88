/**
 * Writes a followed set's pass hands over instead of waiting for them: the
 * SidecarSetUpgradable condition of each pod it updated and the Event of
 * each HotUpgrade flip. Neither frees nor takes a slot, yet a pass that
 * waited for them held every slot freed meanwhile until they were done
 * (a pass of 100 updates sent 100 conditions after its 100 image patches):
 * the pace loop (pace.ts) starts its next pass as soon as a pass's pod
 * patches are answered, and these follow.
 *
 * Safety is kept by two rules:
 * - a pod with a write queued or running here is left alone by the passes
 *   (`busy`): a pass plans it again after that write, so a guarded patch
 *   never races a condition of the same pod (it would conflict on the
 *   resourceVersion the condition moves);
 * - a pass's own pod patches go first (`hold`): nothing queued here starts
 *   while a pass is writing pods, so these never delay the writes that free
 *   or take a slot.
 *
 * The queue lives as long as the loop that made it; the loop waits for it to
 * drain before it returns, so an invocation never ends with writes half sent.
 */
import { errorMessage } from '../errors.ts';
import type { PassError } from './errors.ts';

/** One write to send after the pass that made it. */
export interface TrailingWrite {
  /** The pod it changes (`namespace/name`), which the passes leave alone until it is done; none for a write that changes no pod (an Event). */
  pod?: string;
  /** For the error, if it fails. */
  sidecarSet: string;
  operation: string;
  /** Sends the write; a throw is reported, never rethrown. */
  run: () => Promise<void>;
}

export interface TrailingWrites {
  /** Queues a write; it starts when no pass holds the queue and fewer than the limit run. */
  add(write: TrailingWrite): void;
  /** Whether a write to this pod waits or runs. */
  busy(pod: string): boolean;
  /** Holds back new starts until the returned function is called (a pass's pod patches). Holds nest. */
  hold(): () => void;
  /** Resolves once nothing waits or runs (at once when nothing does). */
  drained(): Promise<void>;
  /** Writes waiting or running. */
  pending(): number;
}

/** The most trailing writes running at once (the pass's own pod writes run 8 at a time, too). */
export const DEFAULT_TRAILING_CONCURRENCY = 8;

/**
 * A queue of trailing writes, at most `concurrency` at once. A failed write
 * goes to `onError`; the queue goes on.
 */
export function trailingWrites(onError: (error: PassError) => void, concurrency: number = DEFAULT_TRAILING_CONCURRENCY): TrailingWrites {
  const limit = Math.max(1, concurrency);
  const queue: TrailingWrite[] = [];
  // A plain index into the queue, trimmed when it empties: no shift() per write.
  let head = 0;
  let running = 0;
  let holds = 0;
  const busyPods = new Map<string, number>();
  let waiters: (() => void)[] = [];

  const pending = () => queue.length - head + running;
  const settle = () => {
    if (pending() > 0) return;
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  };
  const release = (pod: string | undefined) => {
    if (pod === undefined) return;
    const left = (busyPods.get(pod) ?? 1) - 1;
    if (left > 0) busyPods.set(pod, left);
    else busyPods.delete(pod);
  };
  const pump = () => {
    while (holds === 0 && running < limit && head < queue.length) {
      const write = queue[head++] as TrailingWrite;
      if (head === queue.length) {
        queue.length = 0;
        head = 0;
      }
      running++;
      void write
        .run()
        .catch((error: unknown) => {
          try {
            onError({ sidecarSet: write.sidecarSet, operation: write.operation, message: errorMessage(error) });
          } catch {
            // A failing reporter must not stop the queue.
          }
        })
        .finally(() => {
          running--;
          release(write.pod);
          pump();
          settle();
        });
    }
  };

  return {
    add(write) {
      if (write.pod !== undefined) busyPods.set(write.pod, (busyPods.get(write.pod) ?? 0) + 1);
      queue.push(write);
      pump();
    },
    busy: (pod) => busyPods.has(pod),
    hold() {
      holds++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        holds--;
        pump();
      };
    },
    drained() {
      if (pending() === 0) return Promise.resolve();
      return new Promise((resolve) => {
        waiters.push(resolve);
      });
    },
    pending,
  };
}
