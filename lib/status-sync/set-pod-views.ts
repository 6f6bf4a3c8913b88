/**
 * The views of the requeued sets' pods (pod-view.ts), made as client-go's
 * informer factory makes informers: one per set, on its first reconcile, when
 * the pod source can watch. The factory outlives the sets: the views'
 * counts are the loop's, and every view stops when the loop ends.
 */
import type { RequeuedSet } from './requeued-set.ts';
import { setPodView, type ListReason, type PodViewCounts, type PodViewOptions } from './pod-view.ts';
import type { RolloutDeps } from './set-reconcile.ts';

export class SetPodViews {
  private readonly views: ReturnType<typeof setPodView>[] = [];

  /** The ports the views read and write through, as they are when a view is made. */
  private readonly rollout: Pick<RolloutDeps, 'setPods' | 'pods'>;
  private readonly options: PodViewOptions;

  constructor(rollout: Pick<RolloutDeps, 'setPods' | 'pods'>, options: PodViewOptions) {
    this.rollout = rollout;
    this.options = options;
  }

  /** The set's view, made on its first reconcile; none when the pod source cannot watch (every reconcile lists). */
  of(requeued: RequeuedSet): RequeuedSet['view'] {
    const { setPods, pods } = this.rollout;
    if (requeued.view === undefined && setPods.watch !== undefined) {
      requeued.view = setPodView(setPods, pods, this.options);
      this.views.push(requeued.view);
    }
    return requeued.view;
  }

  /** How the reconciles got their pods, every view's counts added up. */
  counts(): PodViewCounts {
    const total: PodViewCounts = { fromView: 0, listed: {} };
    for (const view of this.views) {
      const counts = view.counts();
      total.fromView += counts.fromView;
      for (const [reason, n] of Object.entries(counts.listed) as [ListReason, number][]) total.listed[reason] = (total.listed[reason] ?? 0) + n;
    }
    return total;
  }

  closeAll(): void {
    for (const view of this.views) view.close();
  }
}
