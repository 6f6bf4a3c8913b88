/**
 * Runs the controller (controller.ts) on the sets a reconcile left in flight: each
 * is reconciled again when its pods change (a watch ignoring this process's own
 * writes) and requeued after `intervalMs` at the latest, until nothing is in
 * flight, its progress stalls, or the budget ends. An admitted SidecarSet change
 * joins once the API server shows it (sidecarset.md §7).
 */
import type { AdmittedQueue } from './admitted-queue.ts';
import { SetController } from './controller.ts';
import type { ControllerDeps, ControllerOptions, ControllerSummary } from './controller-options.ts';

export { rolloutPredicate } from './rollout-predicate.ts';
export { DEFAULT_CONTROLLER_OPTIONS, type ControllerDeps, type ControllerOptions, type ControllerSummary } from './controller-options.ts';

/**
 * Reconciles `names` (and admitted changes from `queue`) until none is in
 * flight or `signal` ends. Never throws: failures are in the summary.
 */
export async function runController(names: Iterable<string>, deps: ControllerDeps, options: ControllerOptions = {}, signal?: AbortSignal, queue?: AdmittedQueue): Promise<ControllerSummary> {
  return new SetController(deps, options, signal, queue).run(names);
}
