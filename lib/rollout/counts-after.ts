/**
 * A set's counts as the reconcile leaves it: the plan counts the pods as listed,
 * before the batch writes; a pod the batch updated in place now records the
 * set's current hash (updated) and runs the old image until its kubelet
 * restarts the sidecar (not consistent, so not ready, rollout.md §1.9). What
 * the rollout state tells (the RolloutProgressing Event, the view after a
 * reconcile) is taken from these, so it never says "0 of 12 pod(s) updated"
 * while the reconcile has just updated some.
 */
import type { Pod } from '../kube/types.ts';
import { isHotUpgrade, isPodReady, isPodStateConsistent, setContainers, sidecarContainerNames } from '../sidecarset/pod-state.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import type { RolloutCounts } from './plan.ts';

/** `before` with `updated` (pods the batch updated in place, as listed before their write) counted as written. */
export function countsAfterUpdates(before: RolloutCounts, set: SidecarSet, updated: readonly Pod[]): RolloutCounts {
  if (updated.length === 0) return before;
  const hot = setContainers(set).filter(isHotUpgrade);
  const names = sidecarContainerNames(set);
  // Each was counted not updated (only such pods are updated); the ready ones stop being ready.
  const wereReady = updated.filter((pod) => isPodStateConsistent(pod, set, names) && isPodReady(pod, set, hot)).length;
  return {
    matchedPods: before.matchedPods,
    updatedPods: Math.min(before.matchedPods, before.updatedPods + updated.length),
    readyPods: Math.max(0, before.readyPods - wereReady),
    updatedReadyPods: before.updatedReadyPods,
  };
}
