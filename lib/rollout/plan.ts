/**
 * One SidecarSet's rollout decision for one reconcile (rollout.md §0 steps 7-10,
 * §1.2-§1.4, §1.6) and its status counts (§1.9), from fresh lists only.
 */
import type { JsonPatchOperation } from '../admission/json-patch.ts';
import { errorMessage } from '../errors.ts';
import { objectOf } from '../kube/json.ts';
import type { Container, Pod } from '../kube/types.ts';
import { sidecarSetName, type NamespaceLabels } from '../sidecarset/match.ts';
import { podCounts, type StatusCounts } from '../sidecarset/status.ts';
import { ANNOTATION_HASH, type SidecarContainer, type SidecarSet } from '../sidecarset/types.ts';
import { unavailableTally, type UnavailablePods } from '../sidecarset/unavailable-pods.ts';
import { batchSize, maxUnavailableCount, partitionCount, type Batch } from './batch-size.ts';
import { changedFieldNames } from './changed-fields.ts';
import { matchedList, podStanding } from './candidates.ts';
import { swappingContainers, type HotFlip } from '../sidecarset/hot-swapping.ts';
import { dueFlips, hotUpgradeChanges, type HotUpgradeChange } from './hot-swap.ts';
import { UpdateOrder } from './order.ts';
import {
  isHotUpgrade,
  isPodReady,
  isPodStateConsistent,
  podContainers,
  podKey,
  podNativeSidecars,
  RecordedEntriesMemo,
  recordedUpdateTime,
  setContainers,
  setHash,
  setHashWithoutImage,
  setNativeSidecars,
  sidecarContainerNames,
  unavailableReason,
} from '../sidecarset/pod-state.ts';

/** One pod to update, with the images its containers get (only those that change). */
export interface PlannedUpdate {
  pod: Pod;
  images: Record<string, string>;
  /** Its update patch, when the plan was asked to make it ({@link PlanOptions.patchFor}). */
  patch?: JsonPatchOperation[];
}

/** A pod of the batch whose update cannot be made: set aside, its place taken by the next pod. */
export interface SetAsidePod {
  pod: Pod;
  why: string;
}

/** One pod whose hot sidecars finished their swap: the old containers go back to the empty image (rollout.md §3.4). */
export interface PlannedFlip {
  pod: Pod;
  flips: readonly HotFlip[];
}

/** Pods named per reason in a line: enough to start looking, short enough for an Event. */
export { SAMPLE_PODS, type UnavailablePods } from '../sidecarset/unavailable-pods.ts';

/** Why a set updates nothing (more) this reconcile. */
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
   * This reconcile flips `pods` finished hot upgrades and updates no pod: Kruise
   * 1.9's Reconcile returns after flipping (1.8 went on to update the next batch),
   * so the next batch is decided by a later reconcile from the pods as flipped.
   */
  | { kind: 'flipping'; pods: number }
  /**
   * partition or maxUnavailable is not an int or percent (validation refuses
   * that; a set stored before may carry it). Kruise ignores the parse error
   * and uses 0; updating nothing and saying why is the safer reading.
   */
  | { kind: 'invalid-strategy'; message: string }
  /** Ready pods would exceed maxUnavailable: `unavailable` updated pods are not yet consistent and ready (`stuck` says why). */
  | { kind: 'max-unavailable'; unavailable: number; maxUnavailable: number; stuck?: UnavailablePods }
  /**
   * Every pod is updated (Kruise's Reconcile stops here), but `stuck` of them are
   * not yet consistent and ready: the rollout is not finished until they are.
   */
  | { kind: 'updated-not-ready'; stuck: UnavailablePods }
  /** Every waiting pod is held back by partition. */
  | { kind: 'partition'; held: number }
  /** Nothing waits: the rest are not upgradable, outside the selector or still restarting. */
  | { kind: 'nothing-waiting'; notUpgradable: number; notSelected: number; inFlight: number; changed?: string[] };

/** The pod counts of a set's status (§1.9), as lib/sidecarset/status.ts counts them. */
export type RolloutCounts = StatusCounts;

export interface RolloutPlan {
  status: RolloutCounts;
  /** Pods to patch, in write order. */
  updates: PlannedUpdate[];
  /** Pods whose sidecars changed in more than the image (§1.6); reported only when the batch runs. */
  notUpgradable: Pod[];
  /**
   * Pods whose hot upgrade is done (new container consistent and ready): the
   * flip. Kruise 1.9's order: none when the set is NotUpdate or paused (1.8
   * flipped those too); when there is any, the reconcile updates no pod.
   */
  flips: PlannedFlip[];
  /** Matched pods mid hot upgrade (flippable now or not yet) that the reconcile follows: none for a NotUpdate or paused set. */
  swapping: number;
  /** Set when this reconcile updates nothing (further); absent while pods are being updated without a limit reached. */
  waiting?: WaitingReason;
  /** The updated pods not available, and why; absent when there is none. */
  unavailable?: UnavailablePods;
  /** Pods the batch reached whose update could not be made, in order; absent when none was (see {@link PlanOptions.patchFor}). */
  setAside?: SetAsidePod[];
  /** Which waiting pods the batch left, and what held each; present when asked ({@link PlanOptions.holds}) and a batch was counted. */
  holds?: BatchHolds;
}

/**
 * The waiting pods a batch did not take, by what held them (rollout.md
 * §1.4): the last `partition` pods of the update order, and those after the
 * first ready pod that did not fit in maxUnavailable. Each in update order.
 */
export interface BatchHolds {
  partition: Pod[];
  maxUnavailable: Pod[];
}

export interface PlanOptions {
  /**
   * Makes a batch pod's update patch as the batch is taken; one that throws
   * (a `MergePatchJson` annotation that is not JSON, say) is set aside with
   * why and the next pod in the order takes its place: otherwise a broken
   * pod first in the order would hold maxUnavailable's slot reconcile after reconcile.
   * Absent, every pod is taken and no patch is made.
   */
  patchFor?: (pod: Pod) => JsonPatchOperation[];
  /** Also tell which waiting pods the batch held back and why ({@link RolloutPlan.holds}): for an explanation of one pod. */
  holds?: boolean;
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

/** {@link PodFacts} as bits of one byte per pod: a plan over 100,000 pods makes no object per pod for them. */
const UPDATED = 1;
const READY = 2;
const CONSISTENT = 4;

/** What one walk over the matched pods gathers (see {@link walkPods}). */
interface PodWalk {
  /** Each pod's {@link UPDATED}, {@link READY} and {@link CONSISTENT} bits. */
  flags: Uint8Array;
  status: RolloutCounts;
  /** The updated pods not available, and why. */
  unavailable: UnavailablePods | undefined;
  /** How many updated pods are not consistent and ready. */
  unavailableCount: number;
  /** The pods not updated, by standing: present when the walk was asked to decide. */
  standings?: Standings;
}

/** The matched pods not updated yet, by standing (rollout.md §1.2). */
interface Standings {
  /** The waiting pods, read for their update order. */
  order: UpdateOrder;
  waiting: number;
  notUpgradable: Pod[];
  notSelected: number;
  inFlight: number;
}

/** Where the walk reads the matched pods from: `matched` itself, or the same pods as listed, with where each stands in `matched`. */
interface WalkOrder {
  listed: readonly Pod[];
  position: Int32Array | undefined;
}

/** An updated pod that is not available, kept until the walk can tally it in the matched order. */
interface Unavailable {
  at: number;
  key: string;
  reason: string;
  updateMs: number;
}

/**
 * Reads every matched pod once: its recorded hash (one parse of the
 * annotation), readiness and consistency for the counts and the
 * unavailable tally, and, when `decide`, its standing and what its place in
 * the update order needs. One walk rather than one per concern: over
 * 100,000 pods, reading a pod's objects again from memory costs more than
 * the work done on them, and nothing parsed outlives its pod's turn. For
 * the same reason the walk goes through the pods in the order they were
 * listed (`from`), the order a parsed list lies in memory, and files what
 * it reads under each pod's index in `matched`; what depends on that order
 * (the pods named per reason, the not-upgradable list) is put in it at the end.
 */
function walkPods(set: SidecarSet, matched: readonly Pod[], decide: boolean, from: WalkOrder = { listed: matched, position: undefined }): PodWalk {
  // Per-set inputs once, not per pod.
  const name = sidecarSetName(set);
  const hash = setHash(set);
  const hot = setContainers(set).filter(isHotUpgrade);
  const names = sidecarContainerNames(set);
  const withoutImage = setHashWithoutImage(set);
  const flags = new Uint8Array(matched.length);
  const counts = podCounts();
  const tally = unavailableTally();
  let unavailableCount = 0;
  const memo = new RecordedEntriesMemo();
  const standings: Standings | undefined = decide ? { order: new UpdateOrder(matched, set.spec?.updateStrategy), waiting: 0, notUpgradable: [], notSelected: 0, inFlight: 0 } : undefined;
  const { listed, position } = from;
  // Out of matched order: kept, then put in that order.
  const unavailable: Unavailable[] = [];
  const notUpgradableAt: number[] = [];
  for (let j = 0; j < listed.length; j++) {
    const pod = listed[j] as Pod;
    const i = position === undefined ? j : (position[j] as number);
    const entries = memo.of(pod, ANNOTATION_HASH);
    const podHash = entries.hash(name);
    // IsPodSidecarUpdated, from the parse the counts use.
    const updated = podHash !== undefined && podHash === hash;
    const ready = isPodReady(pod, set, hot);
    const consistent = isPodStateConsistent(pod, set, names);
    flags[i] = (updated ? UPDATED : 0) | (ready ? READY : 0) | (consistent ? CONSISTENT : 0);
    counts.count({ hash: podHash, ready: consistent && ready });
    if (updated && !(consistent && ready)) {
      unavailableCount++;
      const reason = unavailableReason(pod, names, consistent);
      const updateMs = recordedUpdateTime(pod, set, entries);
      if (position === undefined) tally.add(podKey(pod), reason, updateMs);
      else unavailable.push({ at: i, key: podKey(pod), reason, updateMs });
    }
    if (standings === undefined) continue;
    const standing = updated ? 'updated' : podStanding(pod, set, withoutImage, false, names, { consistent, withoutImage: memo });
    standings.order.add(i, standing === 'waiting', pod);
    if (standing === 'waiting') standings.waiting++;
    else if (standing === 'not-upgradable') {
      if (position === undefined) standings.notUpgradable.push(pod);
      else notUpgradableAt.push(i);
    } else if (standing === 'not-selected') standings.notSelected++;
    else if (standing === 'in-flight') standings.inFlight++;
  }
  if (unavailable.length > 0) for (const u of unavailable.sort((a, b) => a.at - b.at)) tally.add(u.key, u.reason, u.updateMs);
  if (standings !== undefined && notUpgradableAt.length > 0) standings.notUpgradable = notUpgradableAt.sort((a, b) => a - b).map((i) => matched[i] as Pod);
  return { flags, status: counts.of(set), unavailable: tally.result(), unavailableCount, ...(standings === undefined ? {} : { standings }) };
}

/** The facts of each of the set's matched pods, in their order (the per-pod view shows them as the counts use them). */
export function podFacts(set: SidecarSet, matched: readonly Pod[]): PodFacts[] {
  return Array.from(walkPods(set, matched, false).flags, (f) => ({ updated: (f & UPDATED) !== 0, ready: (f & READY) !== 0, consistent: (f & CONSISTENT) !== 0 }));
}

/**
 * The status counts of §1.9 over the set's matched pods: matched; updated
 * (hash equality); ready (consistent and Kruise's IsPodReady); updated and ready.
 */
export function rolloutStatus(set: SidecarSet, matched: readonly Pod[]): RolloutCounts {
  return walkPods(set, matched, false).status;
}

/**
 * The images a pod's sidecars get (§1.5 step 1): a cold sidecar the set's
 * image where it differs from the pod's; a hot one's image goes into the
 * container §3.3 picks, unless its partner already runs it. A rolled native
 * sidecar (setNativeSidecars) is a cold one among the pod's native
 * sidecars: the kubelet restarts it in place (sidecarset.md "Native
 * sidecars rolled in place"). Container and init container names are unique
 * within a pod, so one map holds both.
 */
export function imageChanges(pod: Pod, set: SidecarSet, hot: readonly HotUpgradeChange[] = hotUpgradeChanges(pod, set)): Record<string, string> {
  const out: Record<string, string> = {};
  coldImageChanges(podContainers(pod), setContainers(set), out);
  const natives = setNativeSidecars(set);
  if (natives.length > 0) coldImageChanges(podNativeSidecars(pod), natives, out);
  for (const change of hot) out[change.container] = change.image;
  return out;
}

/** Into `out`, the set's image of each cold sidecar of `sidecars` that runs another among `containers`. */
function coldImageChanges(containers: readonly Container[], sidecars: readonly SidecarContainer[], out: Record<string, string>): void {
  const current = new Map(containers.map((c) => [c.name, c.image ?? '']));
  for (const c of sidecars) {
    if (isHotUpgrade(c)) continue;
    const image = c.image ?? '';
    if (current.has(c.name) && current.get(c.name) !== image) out[c.name] = image;
  }
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
 * The pods of `waiting` (in update order) that the batch left, by what held
 * them: batchSize stopped its walk at the first ready pod that did not fit
 * (after the `count` pods it took and those it set aside), and never
 * reached the last `partition`.
 */
function batchHolds(waiting: readonly Pod[], partition: number, batch: Batch): BatchHolds {
  const eligible = Math.max(waiting.length - partition, 0);
  const stoppedAt = batch.blockedByMaxUnavailable ? batch.count + batch.setAside : eligible;
  return { partition: waiting.slice(eligible), maxUnavailable: waiting.slice(stoppedAt, eligible) };
}

/** Why a set updates no pod this reconcile whatever its pods (Kruise 1.9's order: NotUpdate, paused, every pod updated). */
export type Stop = 'not-update' | 'paused' | 'hot-swapping' | 'updated-not-ready' | 'finished';

/**
 * The stop rule, the one place it is written, in Kruise 1.9's order
 * (kruise-1.9.md, "The controller pass"): NotUpdate; paused; then (after the
 * flips, which end the reconcile when there are any: see planRollout) every
 * matched pod updated: pods mid hot upgrade, or updated pods not yet ready,
 * keep the rollout going, else it is finished. Undefined when the set rolls
 * on. Kruise 1.8 checked NotUpdate, then every pod updated, then paused, all
 * after flipping.
 */
export function stopOf(set: SidecarSet, counts: RolloutCounts, swapping: number): Stop | undefined {
  const strategy = objectOf(set.spec?.updateStrategy) ?? {};
  if (strategy.type === 'NotUpdate') return 'not-update';
  if (strategy.paused === true) return 'paused';
  if (counts.updatedPods >= counts.matchedPods) {
    if (swapping > 0) return 'hot-swapping';
    // Kruise stops here; the rollout's end is its last pods running the new sidecars ready.
    return counts.updatedReadyPods < counts.updatedPods ? 'updated-not-ready' : 'finished';
  }
  return undefined;
}

/**
 * The waiting reason of a set its counts alone decide, with no pod looked
 * at: NotUpdate or paused (which flip nothing, Kruise 1.9), finished with
 * nothing mid hot upgrade, or every pod updated with some not ready, when
 * `unavailable` names them (tallied while counting, as the plan names them
 * from the set's own list). Undefined when the set's own pods must be
 * listed and planned.
 */
export function decidedByCounts(set: SidecarSet, counts: RolloutCounts, swapping: number, unavailable?: UnavailablePods): WaitingReason | undefined {
  const stop = stopOf(set, counts, swapping);
  if (stop === 'not-update' || stop === 'paused') return { kind: stop };
  if (swapping > 0) return undefined;
  if (stop === 'updated-not-ready') return unavailable === undefined ? undefined : { kind: stop, stuck: unavailable };
  return stop === 'finished' ? { kind: stop } : undefined;
}

/** Why a reconcile updates no pod whatever its batch: flips due, or the stop rule; undefined when the set rolls on. */
function stoppedReason(set: SidecarSet, status: RolloutCounts, flips: readonly PlannedFlip[], swapping: number, unavailablePods: UnavailablePods | undefined): WaitingReason | undefined {
  // A reconcile that flips returns there (Kruise 1.9, #2156): the next batch is decided from the pods as flipped.
  if (flips.length > 0) return { kind: 'flipping', pods: flips.length };
  switch (stopOf(set, status, swapping)) {
    case 'not-update':
      return { kind: 'not-update' };
    case 'hot-swapping':
      return { kind: 'hot-swapping', pods: swapping };
    case 'updated-not-ready':
    case 'finished':
      return unavailablePods === undefined ? { kind: 'finished' } : { kind: 'updated-not-ready', stuck: unavailablePods };
    case 'paused':
      return { kind: 'paused' };
    case undefined:
      return undefined;
  }
}

/** The batch's `take`: each pod the walk reaches is planned once, in order; one whose patch cannot be made is set aside and gives its place to the next. */
function batchTaker(set: SidecarSet, matched: readonly Pod[], order: readonly number[], patchFor: PlanOptions['patchFor'], updates: PlannedUpdate[], setAside: SetAsidePod[]): (at: number) => boolean {
  return (at) => {
    const pod = matched[order[at] as number] as Pod;
    if (patchFor === undefined) {
      updates.push({ pod, images: imageChanges(pod, set) });
      return true;
    }
    let patch: JsonPatchOperation[];
    try {
      patch = patchFor(pod);
    } catch (error) {
      setAside.push({ pod, why: errorMessage(error) });
      return false;
    }
    updates.push({ pod, images: imageChanges(pod, set), patch });
    return true;
  };
}

/** Why the batch left waiting pods, if it did; a pod set aside counts as one the batch does not select. */
function batchWaiting(set: SidecarSet, batch: Batch, standings: Standings, unavailable: number, maxUnavailable: number, unavailablePods: UnavailablePods | undefined): WaitingReason | undefined {
  if (batch.blockedByMaxUnavailable) return { kind: 'max-unavailable', unavailable, maxUnavailable, ...(unavailablePods === undefined ? {} : { stuck: unavailablePods }) };
  const stillWaiting = standings.waiting - batch.setAside;
  const { notUpgradable, inFlight } = standings;
  if (stillWaiting === 0) {
    const notSelected = standings.notSelected + batch.setAside;
    return { kind: 'nothing-waiting', notUpgradable: notUpgradable.length, notSelected, inFlight, ...(notUpgradable.length > 0 ? { changed: changedFieldNames(notUpgradable, set) } : {}) };
  }
  if (batch.count === 0 || batch.heldByPartition > 0) return { kind: 'partition', held: Math.min(batch.heldByPartition, stillWaiting) };
  return undefined;
}

/**
 * The reconcile's decision for one set (kruise-1.9.md's Reconcile: NotUpdate, paused,
 * flips, finished, the batch). `pods` is every pod
 * listed for the set, in any order; `namespaceLabels` the labels of the
 * namespaces its namespaceSelector needs.
 * @throws UnknownNamespaceError when a namespaceSelector needs a namespace missing from `namespaceLabels`.
 */
export function planRollout(set: SidecarSet, pods: readonly Pod[], namespaceLabels: NamespaceLabels, options: PlanOptions = {}): RolloutPlan {
  const { sorted: matched, listed, position } = matchedList(set, pods, namespaceLabels);
  const strategy = objectOf(set.spec?.updateStrategy) ?? {};
  // Kruise 1.9 returns for NotUpdate and paused before flipping (1.8 flipped first): such a set flips nothing.
  const held = strategy.type === 'NotUpdate' || strategy.paused === true;
  const walk = walkPods(set, matched, !held, { listed, position });
  const { flags, status, unavailable: unavailablePods } = walk;
  const { flips, swapping } = held ? { flips: [], swapping: 0 } : hotSwaps(set, matched);
  const unavailableOf = unavailablePods === undefined ? {} : { unavailable: unavailablePods };
  const done = (waiting: WaitingReason, notUpgradable: Pod[] = []): RolloutPlan => ({ status, updates: [], notUpgradable, flips, swapping, waiting, ...unavailableOf });
  const stopped = stoppedReason(set, status, flips, swapping, unavailablePods);
  if (stopped !== undefined) return done(stopped);
  // Not held (stopOf answers for NotUpdate and paused), so the walk decided.
  const standings = walk.standings as Standings;
  let partition: number;
  let maxUnavailable: number;
  try {
    partition = partitionCount(set.spec?.updateStrategy?.partition, matched.length);
    maxUnavailable = maxUnavailableCount(set.spec?.updateStrategy?.maxUnavailable, matched.length);
  } catch (e) {
    return done({ kind: 'invalid-strategy', message: (e as Error).message }, standings.notUpgradable);
  }
  const order = standings.order.order();
  const updates: PlannedUpdate[] = [];
  const setAside: SetAsidePod[] = [];
  const waitingReady = order.map((i) => ((flags[i] as number) & READY) !== 0);
  const batch = batchSize({ waitingReady, total: matched.length, unavailable: walk.unavailableCount, partition, maxUnavailable, take: batchTaker(set, matched, order, options.patchFor, updates, setAside) });
  const plan: RolloutPlan = { status, updates, notUpgradable: standings.notUpgradable, flips, swapping, ...unavailableOf, ...(setAside.length > 0 ? { setAside } : {}) };
  if (options.holds === true) plan.holds = batchHolds(order.map((i) => matched[i] as Pod), partition, batch);
  const waiting = batchWaiting(set, batch, standings, walk.unavailableCount, maxUnavailable, unavailablePods);
  if (waiting !== undefined) plan.waiting = waiting;
  return plan;
}
