/**
 * The views of the followed sets' pods (pod-view.ts), made as client-go's
 * informer factory makes informers: one per set, on its first pass, when
 * the pod source can watch. The factory outlives the sets: the views'
 * counts are the loop's, and every view stops when the loop ends.
 */
import type { PodWriter, SetPodSource } from '../ports.ts';
import type { FollowedSet } from './followed-set.ts';
import { setPodView, type ListReason, type PodViewCounts, type PodViewOptions } from './pod-view.ts';

export class SetPodViews {
  private readonly views: ReturnType<typeof setPodView>[] = [];

  private readonly source: SetPodSource;
  private readonly writer: PodWriter;
  private readonly options: PodViewOptions;

  constructor(source: SetPodSource, writer: PodWriter, options: PodViewOptions) {
    this.source = source;
    this.writer = writer;
    this.options = options;
  }

  /** The set's view, made on its first pass; none when the pod source cannot watch (every pass lists). */
  of(followed: FollowedSet): FollowedSet['view'] {
    if (followed.view === undefined && this.source.watch !== undefined) {
      followed.view = setPodView(this.source, this.writer, this.options);
      this.views.push(followed.view);
    }
    return followed.view;
  }

  /** How the passes got their pods, every view's counts added up. */
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
