/**
 * Which hot sidecars are mid-swap on a pod (rollout.md §3.4): their
 * non-working container does not hold `hotUpgradeEmptyImage`. A fact of the
 * pod that the status counts (such a pod is not updated yet) and the
 * rollout acts on (lib/rollout/hot-swap.ts decides when the flip is due).
 */
import type { Pod } from '../kube/types.ts';
import { hotUpgradeEmptyImage } from './hot-upgrade.ts';
import { hotContainersOf, isHotUpgrade, podContainers, setContainers, workingHotUpgradeContainers } from './pod-state.ts';
import type { SidecarContainer, SidecarSet } from './types.ts';

/** One container to reset to the empty image, now that its partner serves the new version. */
export interface HotFlip {
  sidecar: string;
  /** The container to reset (the one the working map does not name). */
  container: string;
  /** Its partner, the working container. */
  working: string;
  emptyImage: string;
}

/**
 * The hot sidecars whose non-working container does not hold the empty image
 * (isPodSidecarInHotUpgrading). `hot` is the set's HotUpgrade containers, when
 * the caller has them for every pod.
 */
export function swappingContainers(pod: Pod, set: SidecarSet, hot: readonly SidecarContainer[] = setContainers(set).filter(isHotUpgrade)): HotFlip[] {
  if (hot.length === 0) return [];
  const working = workingHotUpgradeContainers(pod);
  const images = new Map(podContainers(pod).map((c) => [c.name, c.image ?? '']));
  const out: HotFlip[] = [];
  for (const sidecar of hot) {
    const pair = hotContainersOf(pod, sidecar.name, working);
    const emptyImage = hotUpgradeEmptyImage(sidecar);
    // A container missing from the pod reads as image "" (Go's zero value), as in Kruise.
    if ((images.get(pair.other) ?? '') !== emptyImage) out.push({ sidecar: sidecar.name, container: pair.other, working: pair.working, emptyImage });
  }
  return out;
}
