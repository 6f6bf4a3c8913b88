/**
 * The rollout's pace (sidecarset.md §7 "Pace"): after a pass, the sets with
 * work in flight get their own pass again as soon as their pods change (a
 * watch on the set's pods, ignoring this process's own writes) and at the
 * latest every `intervalMs`, until nothing is in flight, their progress
 * stalls, or the time budget ends. A SidecarSet change the webhooks admitted
 * joins them at once, after waiting (bounded) until the change is visible in
 * the API server: admission is not yet the write.
 *
 * It is run by one controller in client-go's shape (controller.ts): every
 * source adds a set's name to one keyed queue, and one Reconcile per set
 * (reconcile.ts) answers requeue-after, done or stalled.
 */
import type { AdmittedQueue } from './admitted-queue.ts';
import { SetController } from './controller.ts';
import type { PaceDeps, PaceOptions, PaceSummary } from './pace-options.ts';

export { rolloutPredicate } from './rollout-predicate.ts';
export { DEFAULT_PACE, type PaceDeps, type PaceOptions, type PaceSummary } from './pace-options.ts';

/**
 * Follows `names` (and admitted changes from `queue`) until none is in
 * flight or `signal` ends. Never throws: failures are in the summary.
 */
export async function followSets(names: Iterable<string>, deps: PaceDeps, options: PaceOptions = {}, signal?: AbortSignal, queue?: AdmittedQueue): Promise<PaceSummary> {
  return new SetController(deps, options, signal, queue).run(names);
}
