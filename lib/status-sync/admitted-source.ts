/**
 * The admitted changes as a source of the controller (controller.ts): each
 * change the webhooks admitted (a SidecarSet's, or a pod's `PODS` trigger)
 * is waited on until it is stored (visible-set.ts), then its set's name is
 * added to the controller's queue, with the set as read.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '../errors.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import type { AdmittedQueue, QueuedChange } from './admitted-queue.ts';
import type { ReconcileError } from './errors.ts';
import type { ReconcileDeps } from './set-reconcile.ts';
import { firstReadAt, visibleSet } from './visible-set.ts';

export interface AdmittedTarget {
  /**
   * Whether the set is requeued now (its pods watched): a pod trigger then needs no read of its own, and
   * adds the name at once, since the watch ignores a pod leaving Ready (rollout-predicate.ts) and the trigger does not.
   */
  inFlight(name: string): boolean;
  /** A requeued set's pod trigger. */
  podsChanged(name: string): void;
  /** The change is stored: the set's reconcile runs from `set`. */
  visible(name: string, set: SidecarSet): void;
  error(error: ReconcileError): void;
  /** Told when the source waits for an arrival with nothing in hand (the controller may be done). */
  idle(): void;
}

export interface AdmittedSourceOptions {
  /** How long one change may take to become visible, and all of them together in one call. */
  visibleTimeoutMs: number;
  createDebounceMs: number | undefined;
}

export class AdmittedSource {
  /**
   * The time admitted changes may spend waiting to be stored, for the whole call: a stream of changes that
   * never show (refused by a later webhook, forged) cannot hold the controller.
   */
  private budgetMs: number;
  private waiting = true;
  private readonly queue: AdmittedQueue | undefined;
  private readonly deps: Pick<ReconcileDeps, 'statuses'>;
  private readonly options: AdmittedSourceOptions;
  private readonly target: AdmittedTarget;

  constructor(queue: AdmittedQueue | undefined, deps: Pick<ReconcileDeps, 'statuses'>, options: AdmittedSourceOptions, target: AdmittedTarget) {
    this.queue = queue;
    this.deps = deps;
    this.options = options;
    this.target = target;
    this.budgetMs = options.visibleTimeoutMs;
  }

  /** Whether the source has nothing in hand (no change taken and not yet added). */
  get isIdle(): boolean {
    return this.waiting;
  }

  /** Takes changes as they arrive until `stop` aborts; `signal` bounds the reads. */
  async run(stop: AbortSignal, signal: AbortSignal | undefined): Promise<void> {
    const { queue } = this;
    if (queue === undefined) return;
    const stopped = new Promise<void>((resolve) => { stop.addEventListener('abort', () => { resolve(); }, { once: true }); });
    while (!stop.aborted) {
      const changes = queue.take();
      if (changes.length === 0) {
        this.waiting = true;
        this.target.idle();
        await Promise.race([queue.arrival(), stopped]);
        continue;
      }
      this.waiting = false;
      // The controller may end while a change waits to be visible: the rest are dropped (a trigger only brings a
      // set's reconcile sooner; the schedule's resync reconciles every set).
      for (const change of changes) if (!(await this.admit(change, signal, stop))) return;
    }
  }

  /** Whether the controller goes on after this change. */
  private async admit(change: QueuedChange, signal: AbortSignal | undefined, stop: AbortSignal): Promise<boolean> {
    if (stop.aborted) return false;
    if (change.operation === 'PODS' && this.target.inFlight(change.sidecarSet)) {
      this.target.podsChanged(change.sidecarSet);
      return true;
    }
    let began: number | undefined;
    try {
      // Waiting for the first read is not waiting for a change that never shows: a burst of CREATEs would spend
      // the budget on their debounces and the last ones, read at once, would be dropped before they are stored.
      const wait = firstReadAt(change, this.options.createDebounceMs) - performance.now();
      if (wait > 0) await sleep(wait, undefined, signal === undefined ? {} : { signal });
      began = performance.now();
      const set = await visibleSet(change, this.deps, Math.max(0, Math.min(this.options.visibleTimeoutMs, this.budgetMs)), signal);
      if (set !== undefined) this.target.visible(change.sidecarSet, set);
    } catch (error) {
      if (signal?.aborted === true) return false;
      this.target.error({ sidecarSet: change.sidecarSet, operation: 'wait for the admitted change', message: errorMessage(error) });
    } finally {
      if (began !== undefined) this.budgetMs -= performance.now() - began;
    }
    return true;
  }
}
