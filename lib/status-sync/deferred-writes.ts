/**
 * Writes a requeued set's reconcile hands over instead of waiting for them: the
 * SidecarSetUpgradable condition of each pod it updated and the Event of
 * each HotUpgrade flip. Neither frees nor takes a slot, yet a reconcile that
 * waited for them held every slot freed meanwhile until they were done
 * (a reconcile of 100 updates sent 100 conditions after its 100 image patches):
 * the controller (run-controller.ts) starts its next reconcile as soon as a reconcile's pod
 * patches are answered, and these follow.
 *
 * Safety is kept by two rules:
 * - a pod with a write queued or running here is left alone by the reconciles
 *   (`busy`): a reconcile plans it again after that write, so a guarded patch
 *   never races a condition of the same pod (it would conflict on the
 *   resourceVersion the condition moves);
 * - a reconcile's own pod patches go first (`hold`): nothing queued here starts
 *   while a reconcile is writing pods, so these never delay the writes that free
 *   or take a slot.
 *
 * The queue lives as long as the loop that made it; the loop waits for it to
 * drain before it returns, so an invocation never ends with writes half sent.
 */
import { errorMessage } from '../errors.ts';
import type { ReconcileError } from './errors.ts';

/** One write to send after the reconcile that made it. */
export interface DeferredWrite {
  /** The pod it changes (`namespace/name`), which the reconciles leave alone until it is done; none for a write that changes no pod (an Event). */
  pod?: string;
  /** For the error, if it fails. */
  sidecarSet: string;
  operation: string;
  /** Sends the write; a throw is reported, never rethrown. */
  run: () => Promise<void>;
}

export interface DeferredWrites {
  /** Queues a write; it starts when no reconcile holds the queue and fewer than the limit run. */
  add(write: DeferredWrite): void;
  /** Whether a write to this pod waits or runs. */
  busy(pod: string): boolean;
  /** Holds back new starts until the returned function is called (a reconcile's pod patches). Holds nest. */
  hold(): () => void;
  /** Resolves once nothing waits or runs (at once when nothing does). */
  drained(): Promise<void>;
  /** Writes waiting or running. */
  pending(): number;
}

/** The most deferred writes running at once (the reconcile's own pod writes run 8 at a time, too). */
export const DEFAULT_DEFERRED_CONCURRENCY = 8;

/**
 * A queue of deferred writes, at most `concurrency` at once. A failed write
 * goes to `onError`; the queue goes on.
 */
export function deferredWriteQueue(onError: (error: ReconcileError) => void, concurrency: number = DEFAULT_DEFERRED_CONCURRENCY): DeferredWrites {
  return new DeferredWriteQueue(onError, Math.max(1, concurrency));
}

class DeferredWriteQueue implements DeferredWrites {
  private readonly queue: DeferredWrite[] = [];
  // A plain index into the queue, trimmed when it empties: no shift() per write.
  private head = 0;
  private running = 0;
  private holds = 0;
  private readonly busyPods = new Map<string, number>();
  private waiters: (() => void)[] = [];

  private readonly onError: (error: ReconcileError) => void;
  private readonly limit: number;

  constructor(onError: (error: ReconcileError) => void, limit: number) {
    this.onError = onError;
    this.limit = limit;
  }

  add(write: DeferredWrite): void {
    if (write.pod !== undefined) this.busyPods.set(write.pod, (this.busyPods.get(write.pod) ?? 0) + 1);
    this.queue.push(write);
    this.pump();
  }

  busy(pod: string): boolean {
    return this.busyPods.has(pod);
  }

  hold(): () => void {
    this.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      this.pump();
    };
  }

  drained(): Promise<void> {
    if (this.pending() === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push(resolve);
    });
  }

  pending(): number {
    return this.queue.length - this.head + this.running;
  }

  private pump(): void {
    while (this.holds === 0 && this.running < this.limit && this.head < this.queue.length) {
      const write = this.queue[this.head++] as DeferredWrite;
      if (this.head === this.queue.length) {
        this.queue.length = 0;
        this.head = 0;
      }
      this.running++;
      void this.send(write);
    }
  }

  private async send(write: DeferredWrite): Promise<void> {
    try {
      await write.run();
    } catch (error) {
      this.report(write, error);
    } finally {
      this.running--;
      this.release(write.pod);
      this.pump();
      this.wakeIfDrained();
    }
  }

  private report(write: DeferredWrite, error: unknown): void {
    try {
      this.onError({ sidecarSet: write.sidecarSet, operation: write.operation, message: errorMessage(error) });
    } catch {
      // A failing reporter must not stop the queue.
    }
  }

  private release(pod: string | undefined): void {
    if (pod === undefined) return;
    const left = (this.busyPods.get(pod) ?? 1) - 1;
    if (left > 0) this.busyPods.set(pod, left);
    else this.busyPods.delete(pod);
  }

  private wakeIfDrained(): void {
    if (this.pending() > 0) return;
    const woken = this.waiters;
    this.waiters = [];
    for (const wake of woken) wake();
  }
}
