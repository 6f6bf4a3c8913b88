/**
 * Which pods a SidecarSet's rollout considers (rollout.md §1.1) and how each
 * one stands this round (§1.2, §1.6).
 */
import { selectorMatches } from '../kube/label-selector.ts';
import { objectOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { isActivePod, sidecarSetSelectsPod, type NamespaceLabels } from '../sidecarset/match.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import {
  isContainerReady,
  isInjectedBy,
  isPodSidecarUpdated,
  isPodStateConsistent,
  podHasSetContainers,
  podKey,
  podLabels,
  recordedHashWithoutImage,
  setHashWithoutImage,
  sidecarContainerNames,
} from '../sidecarset/pod-state.ts';

/**
 * The set's matched pods (rollout.md §1.1): active, selected by the set
 * (namespace, namespaceSelector, selector), naming it in the injected list
 * and carrying its sidecars (HotUpgrade: `x-1`, `x-2` and a working-container
 * entry). Returned in the API server's list order, namespace/name ascending,
 * which Kruise's tie rules refer to (§1.8a).
 * @throws UnknownNamespaceError when a namespaceSelector needs a namespace missing from `namespaceLabels`.
 */
export function matchedPods(set: SidecarSet, pods: readonly Pod[], namespaceLabels: NamespaceLabels): Pod[] {
  const out: { key: string; pod: Pod }[] = [];
  for (const pod of pods) {
    if (!isActivePod(pod) || !isInjectedBy(pod, set) || !podHasSetContainers(pod, set)) continue;
    const namespace = objectOf(pod.metadata)?.namespace;
    if (!sidecarSetSelectsPod(set, podLabels(pod), typeof namespace === 'string' ? namespace : '', namespaceLabels)) continue;
    out.push({ key: podKey(pod), pod });
  }
  out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return out.map((e) => e.pod);
}

/** How one matched pod stands in this round (rollout.md §1.2). */
export type Standing =
  /** Its recorded hash is the set's. */
  | 'updated'
  /** `updateStrategy.selector` leaves it out. */
  | 'not-selected'
  /** Fields other than images changed since its injection (§1.6). */
  | 'not-upgradable'
  /** A ready sidecar still runs an earlier in-place update (not yet consistent). */
  | 'in-flight'
  /** Waits for its update. */
  | 'waiting';

/**
 * The standing of a matched pod (rollout.md §1.2): Kruise's
 * GetNextUpgradePods filter with IsSidecarSetUpgradable. An invalid
 * `updateStrategy.selector` selects nothing.
 */
export function podStanding(
  pod: Pod,
  set: SidecarSet,
  withoutImageHash = setHashWithoutImage(set),
  updated = isPodSidecarUpdated(pod, set),
  names: ReadonlySet<string> = sidecarContainerNames(set),
): Standing {
  if (updated) return 'updated';
  const selector = objectOf(set.spec?.updateStrategy)?.selector;
  if (selector !== undefined && selector !== null && !selectorMatches(selector, podLabels(pod))) return 'not-selected';
  if (recordedHashWithoutImage(pod, set) !== withoutImageHash) return 'not-upgradable';
  for (const name of names) {
    if (isContainerReady(pod, name) && !isPodStateConsistent(pod, set, new Set([name]))) return 'in-flight';
  }
  return 'waiting';
}
