/**
 * One SidecarSet's rollout decision for one pass (rollout.md §0 steps 7-10,
 * §1.2-§1.4, §1.6) and its status counts (§1.9), from fresh lists only.
 */
import { objectOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import type { NamespaceLabels } from '../sidecarset/match.ts';
import type { SidecarSet, SidecarSetStatus } from '../sidecarset/types.ts';
import { batchSize, maxUnavailableCount, partitionCount } from './batch-size.ts';
import { changedFieldNames } from './changed-fields.ts';
import { matchedPods, podStanding } from './candidates.ts';
import { swappingContainers, type HotFlip } from '../sidecarset/hot-swapping.ts';
import { dueFlips, hotUpgradeChanges, type HotUpgradeChange } from './hot-swap.ts';
import { scatterSort, scatterTerms, sortActive, sortByPriority } from './order.ts';
import {
  isHotUpgrade,
  isPodReady,
  isPodSidecarUpdated,
  isPodStateConsistent,
  podContainers,
  podKey,
  recordedUpdateTime,
  setContainers,
  setHash,
  setHashWithoutImage,
  sidecarContainerNames,
  unavailableReason,
} from '../sidecarset/pod-state.ts';

/** One pod to update, with the images its containers get (only those that change). */
export interface PlannedUpdate {
  pod: Pod;
  images: Record<string, string>;
}

/** One pod whose hot sidecars finished their swap: the old containers go back to the empty image (rollout.md §3.4). */
export interface PlannedFlip {
  pod: Pod;
  flips: readonly HotFlip[];
}

/** Pods named per reason in a line: enough to start looking, short enough for an Event. */
export const SAMPLE_PODS = 3;

/**
 * The updated pods that are not available (not consistent or not ready), by
 * the reason the kubelet gives (rollout.md "Stalled"), most pods first.
 */
export interface UnavailablePods {
  count: number;
  reasons: { reason: string; count: number; pods: string[] }[];
  /** The latest time one of them was updated (its hash annotation's updateTimestamp), ms; 0 when none is readable. */
  lastUpdateMs: number;
}

/** Why a set updates nothing (more) this pass. */
export type WaitingReason =
  | { kind: 'not-update' }
  | { kind: 'finished' }
  | { kind: 'paused' }
  /**
   * Every pod is updated, but `pods` are still mid hot upgrade: their old
   * containers are reset to the empty image once the new ones run ready.
   */
  | { kind: 'hot-swapping'; pods: number }
  /**
   * partition or maxUnavailable is not an int or percent (validation refuses
   * that; a set stored before may carry it). Kruise ignores the parse error
   * and uses 0; updating nothing and saying why is the safer reading.
   */
  | { kind: 'invalid-strategy'; message: string }
  /** Ready pods would exceed maxUnavailable: `unavailable` updated pods are not yet consistent and ready (`stuck` says why). */
  | { kind: 'max-unavailable'; unavailable: number; maxUnavailable: number; stuck?: UnavailablePods }
  /**
   * Every pod is updated (Kruise's pass stops here), but `stuck` of them are
   * not yet consistent and ready: the rollout is not finished until they are.
   */
  | { kind: 'updated-not-ready'; stuck: UnavailablePods }
  /** Every waiting pod is held back by partition. */
  | { kind: 'partition'; held: number }
  /** Nothing waits: the rest are not upgradable, outside the selector or still restarting. */
  | { kind: 'nothing-waiting'; notUpgradable: number; notSelected: number; inFlight: number; changed?: string[] };

/** The pod counts of a set's status (§1.9). */
export type RolloutCounts = Required<Pick<SidecarSetStatus, 'matchedPods' | 'updatedPods' | 'readyPods' | 'updatedReadyPods'>>;

export interface RolloutPlan {
  status: RolloutCounts;
  /** Pods to patch, in write order. */
  updates: PlannedUpdate[];
  /** Pods whose sidecars changed in more than the image (§1.6); reported only when the round runs. */
  notUpgradable: Pod[];
  /**
   * Pods whose hot upgrade is done (new container consistent and ready): the
   * flip, written before anything else and even when the set is paused or
   * NotUpdate (§0 step 6).
   */
  flips: PlannedFlip[];
  /** Matched pods mid hot upgrade (flippable now or not yet). */
  swapping: number;
  /** Set when this pass updates nothing (further); absent while pods are being updated without a limit reached. */
  waiting?: WaitingReason;
  /** The updated pods not available, and why; absent when there is none. */
  unavailable?: UnavailablePods;
}

/** What the plan reads from each matched pod, computed once per pod. */
export interface PodFacts {
  /** The recorded hash is the set's (IsPodSidecarUpdated). */
  updated: boolean;
  /** Kruise's IsPodReady. */
  ready: boolean;
  /** IsPodStateConsistent over all of the set's sidecars. */
  consistent: boolean;
}

/** The facts of each of the set's matched pods, in their order (the per-pod view shows them as the counts use them). */
export function podFacts(set: SidecarSet, matched: readonly Pod[]): PodFacts[] {
  // Per-set inputs once, not per pod.
  const hash = setHash(set);
  const hot = setContainers(set).filter(isHotUpgrade);
  const names = sidecarContainerNames(set);
  return matched.map((pod) => ({
    updated: isPodSidecarUpdated(pod, set, hash),
    ready: isPodReady(pod, set, hot),
    consistent: isPodStateConsistent(pod, set, names),
  }));
}

function countsOf(facts: readonly PodFacts[]): RolloutCounts {
  let updated = 0;
  let ready = 0;
  let updatedReady = 0;
  for (const f of facts) {
    const r = f.consistent && f.ready;
    if (f.updated) updated++;
    if (r) ready++;
    if (f.updated && r) updatedReady++;
  }
  return { matchedPods: facts.length, updatedPods: updated, readyPods: ready, updatedReadyPods: updatedReady };
}

/** The updated pods that are not consistent and ready, grouped by why. */
function unavailableOf(set: SidecarSet, matched: readonly Pod[], facts: readonly PodFacts[]): UnavailablePods | undefined {
  let names: Set<string> | undefined;
  const byReason = new Map<string, { reason: string; count: number; pods: string[] }>();
  let count = 0;
  let lastUpdateMs = 0;
  matched.forEach((pod, i) => {
    const f = facts[i] as PodFacts;
    if (!f.updated || (f.consistent && f.ready)) return;
    names ??= sidecarContainerNames(set);
    count++;
    lastUpdateMs = Math.max(lastUpdateMs, recordedUpdateTime(pod, set));
    const reason = unavailableReason(pod, names, f.consistent);
    const entry = byReason.get(reason) ?? { reason, count: 0, pods: [] };
    entry.count++;
    if (entry.pods.length < SAMPLE_PODS) entry.pods.push(podKey(pod));
    byReason.set(reason, entry);
  });
  if (count === 0) return undefined;
  const reasons = [...byReason.values()].sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0));
  return { count, reasons, lastUpdateMs };
}

/**
 * The status counts of §1.9 over the set's matched pods: matched; updated
 * (hash equality); ready (consistent and Kruise's IsPodReady); updated and ready.
 */
export function rolloutStatus(set: SidecarSet, matched: readonly Pod[]): RolloutCounts {
  return countsOf(podFacts(set, matched));
}

/**
 * The images a pod's sidecars get (§1.5 step 1): a cold sidecar the set's
 * image where it differs from the pod's; a hot one's image goes into the
 * container §3.3 picks, unless its partner already runs it.
 */
export function imageChanges(pod: Pod, set: SidecarSet, hot: readonly HotUpgradeChange[] = hotUpgradeChanges(pod, set)): Record<string, string> {
  const current = new Map(podContainers(pod).map((c) => [c.name, c.image ?? '']));
  const out: Record<string, string> = {};
  for (const c of setContainers(set)) {
    if (isHotUpgrade(c)) continue;
    const image = c.image ?? '';
    if (current.has(c.name) && current.get(c.name) !== image) out[c.name] = image;
  }
  for (const change of hot) out[change.container] = change.image;
  return out;
}

/** The flips due on the matched pods, and how many pods are mid hot upgrade. */
function hotSwaps(set: SidecarSet, matched: readonly Pod[]): { flips: PlannedFlip[]; swapping: number } {
  const flips: PlannedFlip[] = [];
  let swapping = 0;
  const hot = setContainers(set).filter(isHotUpgrade);
  if (hot.length === 0) return { flips, swapping };
  for (const pod of matched) {
    const mid = swappingContainers(pod, set, hot);
    if (mid.length === 0) continue;
    swapping++;
    const due = dueFlips(pod, set, mid);
    if (due.length > 0) flips.push({ pod, flips: due });
  }
  return { flips, swapping };
}

/**
 * The pass's decision for one set (§0 steps 7-10). `pods` is every pod
 * listed for the set, in any order; `namespaceLabels` the labels of the
 * namespaces its namespaceSelector needs.
 * @throws UnknownNamespaceError when a namespaceSelector needs a namespace missing from `namespaceLabels`.
 */
export function planRollout(set: SidecarSet, pods: readonly Pod[], namespaceLabels: NamespaceLabels, skip?: ReadonlySet<Pod>): RolloutPlan {
  const matched = matchedPods(set, pods, namespaceLabels);
  const facts = podFacts(set, matched);
  const status = countsOf(facts);
  const { flips, swapping } = hotSwaps(set, matched);
  const unavailablePods = unavailableOf(set, matched, facts);
  const done = (waiting: WaitingReason, notUpgradable: Pod[] = []): RolloutPlan => ({ status, updates: [], notUpgradable, flips, swapping, waiting, ...(unavailablePods === undefined ? {} : { unavailable: unavailablePods }) });
  const strategy = objectOf(set.spec?.updateStrategy) ?? {};
  if (strategy.type === 'NotUpdate') return done({ kind: 'not-update' });
  if (status.updatedPods >= status.matchedPods) {
    if (swapping > 0) return done({ kind: 'hot-swapping', pods: swapping });
    // Kruise stops here; the rollout's end is its last pods running the new sidecars ready.
    return done(unavailablePods === undefined ? { kind: 'finished' } : { kind: 'updated-not-ready', stuck: unavailablePods });
  }
  if (strategy.paused === true) return done({ kind: 'paused' });

  const withoutImage = setHashWithoutImage(set);
  const waiting: number[] = [];
  const notUpgradable: Pod[] = [];
  let notSelected = 0;
  let inFlight = 0;
  matched.forEach((pod, i) => {
    const standing = podStanding(pod, set, withoutImage, (facts[i] as PodFacts).updated);
    // A pod whose update cannot be made (the pass found it so) is not a candidate: the next one takes its place.
    if (standing === 'waiting') {
      if (skip?.has(pod) === true) notSelected++;
      else waiting.push(i);
    }
    else if (standing === 'not-upgradable') notUpgradable.push(pod);
    else if (standing === 'not-selected') notSelected++;
    else if (standing === 'in-flight') inFlight++;
  });
  let partition: number;
  let maxUnavailable: number;
  try {
    partition = partitionCount(set.spec?.updateStrategy?.partition, matched.length);
    maxUnavailable = maxUnavailableCount(set.spec?.updateStrategy?.maxUnavailable, matched.length);
  } catch (e) {
    return done({ kind: 'invalid-strategy', message: (e as Error).message }, notUpgradable);
  }

  let order = sortActive(matched, waiting);
  if (set.spec?.updateStrategy?.priorityStrategy) order = sortByPriority(matched, order, set.spec.updateStrategy.priorityStrategy);
  if (set.spec?.updateStrategy?.scatterStrategy) order = scatterSort(matched, order, scatterTerms(set.spec.updateStrategy.scatterStrategy, matched));

  let unavailable = 0;
  for (const f of facts) if (f.updated && (!f.consistent || !f.ready)) unavailable++;
  const batch = batchSize({
    waitingReady: order.map((i) => (facts[i] as PodFacts).ready),
    total: matched.length,
    unavailable,
    partition,
    maxUnavailable,
  });
  const updates = order.slice(0, batch.count).map((i) => ({ pod: matched[i] as Pod, images: imageChanges(matched[i] as Pod, set) }));
  const plan: RolloutPlan = { status, updates, notUpgradable, flips, swapping, ...(unavailablePods === undefined ? {} : { unavailable: unavailablePods }) };
  if (batch.blockedByMaxUnavailable) plan.waiting = { kind: 'max-unavailable', unavailable, maxUnavailable, ...(unavailablePods === undefined ? {} : { stuck: unavailablePods }) };
  else if (waiting.length === 0) {
    plan.waiting = { kind: 'nothing-waiting', notUpgradable: notUpgradable.length, notSelected, inFlight, ...(notUpgradable.length > 0 ? { changed: changedFieldNames(notUpgradable, set) } : {}) };
  }
  else if (batch.count === 0 || batch.heldByPartition > 0) plan.waiting = { kind: 'partition', held: Math.min(batch.heldByPartition, waiting.length) };
  return plan;
}
