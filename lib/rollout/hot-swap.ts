/**
 * The HotUpgrade swap (rollout.md §3.3, §3.4): which of a hot sidecar's two
 * containers receives a new image, and when the old one is flipped to the
 * empty image. Each hot sidecar `x` runs as `x-1` and `x-2`; the pod's
 * working-container map names the one serving, the other holds
 * `hotUpgradeEmptyImage` except while a swap is under way.
 */
import { objectOf, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { swappingContainers, type HotFlip } from '../sidecarset/hot-swapping.ts';
import { hotUpgradeContainerNames, hotUpgradeEmptyImage } from '../sidecarset/hot-upgrade.ts';
import type { SidecarContainer, SidecarSet } from '../sidecarset/types.ts';
import {
  hotContainersOf,
  isContainerReady,
  isHotUpgrade,
  isPodStateConsistent,
  isRunningAndReady,
  podContainers,
  setContainers,
  sidecarContainerNames,
  workingHotUpgradeContainers,
} from '../sidecarset/pod-state.ts';

/** One hot sidecar's upgrade on a pod: `container` gets `image`; `other` keeps serving until the flip. */
export interface HotUpgradeChange {
  sidecar: string;
  container: string;
  other: string;
  image: string;
}

/**
 * Which container of `sidecar` takes the set's image (findContainerToHotUpgrade):
 * the one holding the empty image (`x-1` first); else, after an upgrade that
 * did not finish, the not-ready one when exactly one is ready (ready and
 * consistent); else the one not working. Undefined when the image the
 * other container runs is already the set's (nothing to do).
 */
export function hotUpgradeChange(pod: Pod, set: SidecarSet, sidecar: SidecarContainer, images: ReadonlyMap<string, string>): HotUpgradeChange | undefined {
  const [one, two] = hotUpgradeContainerNames(sidecar.name);
  const empty = hotUpgradeEmptyImage(sidecar);
  let target: { container: string; other: string };
  if ((images.get(one) ?? '') === empty) target = { container: one, other: two };
  else if ((images.get(two) ?? '') === empty) target = { container: two, other: one };
  else {
    const ready = (name: string) => isContainerReady(pod, name) && isPodStateConsistent(pod, set, new Set([name]));
    const oneReady = ready(one);
    const twoReady = ready(two);
    if (oneReady && !twoReady) target = { container: two, other: one };
    else if (!oneReady && twoReady) target = { container: one, other: two };
    else {
      const { working, other } = hotContainersOf(pod, sidecar.name);
      target = { container: other, other: working };
    }
  }
  const image = sidecar.image ?? '';
  // Kruise compares with the partner's image: the container already serving that image needs no twin.
  if (image === (images.get(target.other) ?? '')) return undefined;
  return { sidecar: sidecar.name, ...target, image };
}

/** Every hot sidecar's upgrade on the pod, in the set's container order. */
export function hotUpgradeChanges(pod: Pod, set: SidecarSet): HotUpgradeChange[] {
  const hot = setContainers(set).filter(isHotUpgrade);
  if (hot.length === 0) return [];
  const images = new Map(podContainers(pod).map((c) => [c.name, c.image ?? '']));
  return hot.flatMap((sidecar) => {
    const change = hotUpgradeChange(pod, set, sidecar, images);
    return change === undefined ? [] : [change];
  });
}

/**
 * The flips due on a pod (rollout.md §0 step 6, §3.4 pass N+k): some hot
 * sidecar's non-working container does not hold the empty image (the pod is
 * mid-swap: `swapping`, from swappingContainers in
 * lib/sidecarset/hot-swapping.ts), every other sidecar container of the set
 * is consistent with its spec (the new one has restarted), and the pod is
 * Running and Ready or every container but the non-working ones is ready. Empty when none is due.
 */
export function dueFlips(pod: Pod, set: SidecarSet, swapping: readonly HotFlip[] = swappingContainers(pod, set)): readonly HotFlip[] {
  if (swapping.length === 0) return [];
  const working = workingHotUpgradeContainers(pod);
  const others = new Set(setContainers(set).filter(isHotUpgrade).map((c) => hotContainersOf(pod, c.name, working).other));
  const names = sidecarContainerNames(set);
  for (const name of others) names.delete(name);
  if (!isPodStateConsistent(pod, set, names) || !isHotUpgradingReady(pod, others)) return [];
  return swapping;
}

/** isHotUpgradingReady: Running, Ready and not being deleted, or every container status but `others` ready. */
function isHotUpgradingReady(pod: Pod, others: ReadonlySet<string>): boolean {
  if (isRunningAndReady(pod)) return true;
  const statuses = objectOf(pod.status)?.containerStatuses;
  if (!Array.isArray(statuses)) return true;
  return statuses.every((s) => {
    const status = objectOf(s);
    return status === undefined || others.has(stringOf(status.name) ?? '') || status.ready === true;
  });
}
