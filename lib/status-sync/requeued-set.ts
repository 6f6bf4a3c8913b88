/**
 * One set the controller requeues (run-controller.ts): what its last reconcile left, and the
 * rule for whether it stays in the loop after a reconcile.
 */
import type { SetPodSource } from '../ports.ts';
import type { SetPodView } from './pod-view.ts';
import { rolloutPredicate } from './rollout-predicate.ts';
import type { ReconcileResult } from './set-reconcile.ts';

/** After a reconcile: the set is requeued again, left because its progress stalled, or left because nothing is in flight (or it is gone). */
export type AfterReconcile = 'requeue' | 'stalled' | 'done';

export class RequeuedSet {
  /** Where a watch from the last reconcile's own list starts, when the set has no view. */
  private watch: ReconcileResult['watch'];
  private progress = '';
  private progressAt: number;
  /** This loop wrote pods of the set (a set handed over by the reconcile that rolled it, too): its last batch is requeued until ready, for the status to show it. */
  private wrote: boolean;
  /** The set's pods as a watch shows them, which its reconciles plan from (pod-view.ts); none until its first reconcile, or when the pod source cannot watch. */
  view: SetPodView | undefined;
  /** The last reconcile left pods to a later one because their deferred writes were pending: the queue draining is new. */
  deferred = false;

  constructor(nowMs: number, wrote: boolean, view?: SetPodView) {
    this.progressAt = nowMs;
    this.wrote = wrote;
    this.view = view;
  }

  /** Whether the set stays in the loop after `result`; `nowMs` is read only when its progress decides. */
  afterReconcile(result: ReconcileResult, nowMs: () => number, stallMs: number): AfterReconcile {
    const wrote = result.podsUpdated > 0 || result.podsFlipped > 0;
    if (wrote) this.wrote = true;
    this.deferred = (result.deferred ?? 0) > 0;
    // Told by its reconcile (RolloutStalled): the schedule looks at it again, without spending this budget on it.
    if (result.state?.reason === 'RolloutStalled') return 'stalled';
    // Pods unready for reasons of their own (an app that never starts) are not the rollout's: only a batch this loop wrote is waited for.
    if (!result.inFlight && !(result.restarting && this.wrote)) return 'done';
    const progress = JSON.stringify([result.counts, result.podsUpdated, result.podsFlipped]);
    const now = nowMs();
    if (progress !== this.progress || wrote) {
      this.progress = progress;
      this.progressAt = now;
    } else if (now - this.progressAt >= stallMs) return 'stalled';
    this.watch = result.watch;
    return 'requeue';
  }

  /**
   * Until the set's pods change in a way worth a reconcile ({@link rolloutPredicate}), from its view when
   * it watches them, else by a watch from its last reconcile's list; none when it has neither.
   */
  nextChange(setPods: SetPodSource, timeoutMs: number, signal: AbortSignal): Promise<'changed' | 'timeout' | 'error'> | undefined {
    if (this.view?.watching() === true) return this.view.changed(timeoutMs, signal);
    const { watch } = this;
    return watch === undefined ? undefined : setPods.changed(watch.scope, watch.resourceVersion, watch.own, timeoutMs, signal, rolloutPredicate);
  }

  /** The set leaves the loop: its watch stops (the view's counts stay with the loop's views). */
  close(): void {
    this.view?.close();
  }
}
