/**
 * The per-pod view (`npm run -s status -- --pods SET`): one row per pod the
 * SidecarSet matches, saying where the reconciler stands with it, in
 * the reconcile's own decisions (lib/rollout): which pods are matched
 * (candidates.ts matchedPods), updated, ready and consistent (plan.ts
 * podFacts, the facts its counts are made of), the standing of a pod not
 * updated yet (candidates.ts podStanding), which pods the next reconcile updates
 * or flips (plan.ts planRollout) and why the others wait (batch.ts
 * waitingMessage); plus what the kubelet says of the set's sidecar
 * containers (their waiting reason: ErrImagePull, ImagePullBackOff,
 * CrashLoopBackOff, …) and, for HotUpgrade sidecars, which container works.
 * Pure: the caller lists the set's pods (its scope) and the namespace labels.
 */
import { errorMessage } from '../errors.ts';
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { matchedPods, podStanding } from '../rollout/candidates.ts';
import { swappingContainers } from '../sidecarset/hot-swapping.ts';
import { planRollout, podFacts, type RolloutPlan } from '../rollout/plan.ts';
import { hasContainerStatuses, hotContainersOf, isHotUpgrade, podKey, setContainers, setHashWithoutImage, sidecarContainerNames, workingHotUpgradeContainers } from '../sidecarset/pod-state.ts';
import { waitingMessage } from '../rollout/batch.ts';
import { sidecarSetName, type NamespaceLabels } from '../sidecarset/match.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { viewRow, type ViewRow } from './rows.ts';
import type { StallClock } from '../status-sync/rollout-state.ts';

/** Where the reconciler stands with one pod. */
export type PodState =
  /** Updated, consistent and ready: done. */
  | 'Updated'
  /** Updated, but its sidecars have not restarted on the new image yet (the update is in flight). */
  | 'Updating'
  /** No kubelet has reported its containers: not scheduled to a node, or not started yet (nothing restarts). */
  | 'Pending'
  /** Updated and restarted, not ready (yet). */
  | 'NotReady'
  /** HotUpgrade: the new container is being started beside the old one. */
  | 'Swapping'
  /** HotUpgrade: the new container serves; the next reconcile resets the old one to the empty image. */
  | 'FlipDue'
  /** The next reconcile updates it. */
  | 'Due'
  /** It waits for its turn (partition, maxUnavailable, paused, NotUpdate). */
  | 'Waiting'
  /** A ready sidecar still runs an earlier in-place update. */
  | 'InFlight'
  /** Fields other than the image changed since its injection: never updated in place. */
  | 'NotUpgradable'
  /** `updateStrategy.selector` leaves it out. */
  | 'NotSelected';

export interface PodRow {
  /** `namespace/name`. */
  pod: string;
  /** Its recorded hash is the set's (what UPDATED counts). */
  updated: boolean;
  /** Consistent and ready, as READY counts it. */
  ready: boolean;
  state: PodState;
  /** The kubelet's waiting reasons of the set's sidecar containers, `container: Reason`; empty when none waits. */
  waiting: string[];
  /** Per HotUpgrade sidecar, its working container (`agent: agent-2`); empty for a set without one. */
  working: string[];
  /** Why, in words; '' when the state says it all. */
  why: string;
}

/** What the per-pod view shows of one set: its summary (the set's row) and its matched pods, in list order. */
export interface PodView {
  set: string;
  /** The set's line of the rollout view; undefined when the set is not there. */
  summary?: ViewRow;
  rows: PodRow[];
  /** The set has HotUpgrade sidecars: the table has a WORKING column. */
  hot: boolean;
  /** Why the pods cannot be decided (the summary says Unknown then); undefined when they were. */
  problem?: string;
}

/** A kubelet reason is one CamelCase word; anything else (a value a pod writer set) is not shown as one. */
const REASON = /^[A-Za-z][A-Za-z0-9]{0,63}$/;

/** The waiting reasons the kubelet reports for the containers `names`, in the pod's status order. */
export function sidecarWaitingReasons(pod: Pod, names: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const status of arrayOf(objectOf(pod.status)?.containerStatuses).filter(isObject)) {
    const name = stringOf(status.name) ?? '';
    if (!names.has(name)) continue;
    const reason = stringOf(objectOf(objectOf(status.state)?.waiting)?.reason);
    if (reason !== undefined && REASON.test(reason)) out.push(`${name}: ${reason}`);
  }
  return out;
}

const NOT_UPGRADABLE_WHY = 'fields other than the image changed since its injection: recreate the pod to apply them';

/** The state and why of a pod not updated yet, from its standing and the plan. */
function pendingState(pod: Pod, set: SidecarSet, plan: RolloutPlan, due: ReadonlySet<Pod>, withoutImage: string): { state: PodState; why: string } {
  switch (podStanding(pod, set, withoutImage, false)) {
    case 'not-selected':
      return { state: 'NotSelected', why: 'updateStrategy.selector leaves it out' };
    case 'not-upgradable':
      return { state: 'NotUpgradable', why: NOT_UPGRADABLE_WHY };
    case 'in-flight':
      return { state: 'InFlight', why: 'a ready sidecar still runs an earlier in-place update' };
    default:
      if (due.has(pod)) return { state: 'Due', why: 'the next reconcile updates it' };
      return { state: 'Waiting', why: plan.waiting === undefined ? 'waits for a later batch' : waitingMessage(plan.waiting) };
  }
}

/** Why a pod no kubelet has reported is not running: not bound to a node, or its node's kubelet has not started it. */
function notStartedWhy(pod: Pod): string {
  const node = stringOf(objectOf(pod.spec)?.nodeName);
  return node === undefined || node === ''
    ? 'Pending: not scheduled to a node, so no kubelet runs it (no container has started; on npm start\'s cluster, --test-kubelet runs pods)'
    : `Pending: the kubelet of node ${node} has not reported its containers yet`;
}

/**
 * The per-pod view of `set` over `pods` (at least every pod of its scope;
 * others are ignored, as the reconcile ignores them).
 */
export function podView(set: SidecarSet, pods: readonly Pod[], namespaceLabels: NamespaceLabels, stall?: StallClock): PodView {
  const name = sidecarSetName(set);
  const hotSidecars = setContainers(set).filter(isHotUpgrade);
  const summary = viewRow(set, pods, namespaceLabels, stall);
  const hot = hotSidecars.length > 0;
  let plan: RolloutPlan;
  let matched: Pod[];
  try {
    plan = planRollout(set, pods, namespaceLabels);
    matched = matchedPods(set, pods, namespaceLabels);
  } catch (error) {
    return { set: name, summary, rows: [], hot, problem: `cannot decide: ${errorMessage(error)}` };
  }
  const facts = podFacts(set, matched);
  const due = new Set(plan.updates.map((u) => u.pod));
  const flipDue = new Set(plan.flips.map((f) => f.pod));
  const names = sidecarContainerNames(set);
  const withoutImage = setHashWithoutImage(set);
  const rows = matched.map((pod, i): PodRow => {
    const f = facts[i] ?? { updated: false, ready: false, consistent: false };
    const ready = f.consistent && f.ready;
    let state: { state: PodState; why: string };
    if (!f.updated) state = pendingState(pod, set, plan, due, withoutImage);
    else if (flipDue.has(pod)) state = { state: 'FlipDue', why: 'the new container serves: the next reconcile resets the old one to the empty image' };
    else if (swappingContainers(pod, set, hotSidecars).length > 0) state = { state: 'Swapping', why: 'the new container is starting beside the old one' };
    else if (!hasContainerStatuses(pod)) state = { state: 'Pending', why: notStartedWhy(pod) };
    else if (!f.consistent) state = { state: 'Updating', why: 'its sidecars have not restarted on the new image yet' };
    else if (!f.ready) state = { state: 'NotReady', why: 'updated, not ready yet' };
    else state = { state: 'Updated', why: '' };
    const working = workingHotUpgradeContainers(pod);
    return {
      pod: podKey(pod),
      updated: f.updated,
      ready,
      ...state,
      waiting: sidecarWaitingReasons(pod, names),
      working: hotSidecars.map((c) => `${c.name}: ${hotContainersOf(pod, c.name, working).working}`),
    };
  });
  return { set: name, summary, rows, hot };
}
