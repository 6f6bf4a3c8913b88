/**
 * The offline plan (`invoke rollout`): every set's rollout decision for one
 * reconcile over given lists, as plain JSON, nothing written. Sets are taken by
 * name; within a set, updates keep the reconcile's write order, and flips and
 * not-upgradable pods the list order (namespace/name).
 */
import { stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { sidecarSetName, UnknownNamespaceError, type NamespaceLabels } from '../sidecarset/match.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { planRollout, type WaitingReason } from './plan.ts';
import { waitingMessage } from './batch.ts';

export interface OfflinePodRef {
  sidecarSet: string;
  namespace: string;
  name: string;
}

export interface OfflineUpdate extends OfflinePodRef {
  /** Container name -> the image it gets (only the sidecars whose image changes). */
  images: Record<string, string>;
}

/** A hot sidecar container the reconcile resets to the empty image, its new twin now serving (one entry per container). */
export interface OfflineFlip extends OfflinePodRef {
  container: string;
}

export interface OfflineWaiting {
  sidecarSet: string;
  /** The plan's reason kind: not-update, finished, hot-swapping, paused, invalid-strategy, max-unavailable, partition, nothing-waiting. */
  reason: WaitingReason['kind'];
  /** The line the reconcile logs for it. */
  message: string;
}

export interface OfflinePlan {
  /** Written first in a reconcile, even when the set is paused or NotUpdate. */
  flips: OfflineFlip[];
  updates: OfflineUpdate[];
  notUpgradable: OfflinePodRef[];
  waiting: OfflineWaiting[];
}

/** A set whose decision needs something the lists do not hold (a Namespace its namespaceSelector reads). */
export interface UndecidedSet {
  sidecarSet: string;
  message: string;
}

function podRef(sidecarSet: string, pod: Pod): OfflinePodRef {
  return { sidecarSet, namespace: stringOf(pod.metadata?.namespace) ?? '', name: stringOf(pod.metadata?.name) ?? '' };
}

function byName(a: SidecarSet, b: SidecarSet): number {
  const x = sidecarSetName(a);
  const y = sidecarSetName(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Plans every set over `pods`. A set that cannot be decided is left out of
 * the plan and named in `undecided`; the others are planned regardless.
 */
export function offlinePlan(sets: readonly SidecarSet[], pods: readonly Pod[], namespaceLabels: NamespaceLabels): { plan: OfflinePlan; undecided: UndecidedSet[] } {
  const plan: OfflinePlan = { flips: [], updates: [], notUpgradable: [], waiting: [] };
  const undecided: UndecidedSet[] = [];
  for (const set of [...sets].sort(byName)) {
    const name = sidecarSetName(set);
    let setPlan;
    try {
      setPlan = planRollout(set, pods, namespaceLabels);
    } catch (error) {
      if (!(error instanceof UnknownNamespaceError)) throw error;
      undecided.push({ sidecarSet: name, message: error.message });
      continue;
    }
    for (const { pod, flips } of setPlan.flips) for (const flip of flips) plan.flips.push({ ...podRef(name, pod), container: flip.container });
    for (const { pod, images } of setPlan.updates) plan.updates.push({ ...podRef(name, pod), images });
    for (const pod of setPlan.notUpgradable) plan.notUpgradable.push(podRef(name, pod));
    if (setPlan.waiting !== undefined) plan.waiting.push({ sidecarSet: name, reason: setPlan.waiting.kind, message: waitingMessage(setPlan.waiting) });
  }
  return { plan, undecided };
}
