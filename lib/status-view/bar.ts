/**
 * A rollout's progress bar, in ASCII so that it reads the same in any
 * terminal, log file or CI output: `#` a pod updated and ready, `+` updated
 * but not ready yet (restarting), `.` not updated; then the share updated
 * and ready.
 *
 *   [######++............]  30%
 */
import type { RolloutCounts } from '../rollout/plan.ts';

/** The characters a bar of `width` cells adds around its cells: `[`, `]` and ` 100%`. */
export const BAR_DECORATION = 7;

/**
 * Cells for `count` of `total`: none only for none, all only for all, so a
 * single pod updated out of thousands still shows and a bar looks full only
 * when the rollout is.
 */
function cells(count: number, total: number, width: number): number {
  if (count <= 0 || total <= 0) return 0;
  if (count >= total) return width;
  return Math.min(width - 1, Math.max(1, Math.floor((count * width) / total)));
}

/** The bar for `counts` with `width` cells (at least 2), {@link BAR_DECORATION} characters more in all. */
export function progressBar(counts: Pick<RolloutCounts, 'matchedPods' | 'updatedPods' | 'updatedReadyPods'>, width: number): string {
  const total = counts.matchedPods;
  const ready = cells(counts.updatedReadyPods, total, width);
  const updated = Math.max(ready, cells(counts.updatedPods, total, width));
  const percent = total <= 0 ? 100 : Math.floor((Math.min(counts.updatedReadyPods, total) * 100) / total);
  return `[${'#'.repeat(ready)}${'+'.repeat(updated - ready)}${'.'.repeat(width - updated)}] ${String(percent).padStart(3)}%`;
}
