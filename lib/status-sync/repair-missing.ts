/**
 * Which of a SidecarSet's uninjected pods to evict this reconcile, so that their
 * controller recreates them through the pod webhook (docs/SIDECARSET.md
 * "Repairing pods the webhook missed"). Pure: the set's own pod list in, a
 * decision out; repair-step.ts does the reads, the evictions and the Events.
 *
 * A pod is evicted only when every one of these holds:
 * - the resync counts it as not injected by the set (status.ts), it carries
 *   none of the set's containers, and it was created strictly after the set
 *   by readable timestamps (a pod that predates the set was never the
 *   webhook's to inject);
 * - the pod webhook would inject it now: the set's verdict from
 *   `injectionVerdicts`, and the API server calls pod-inject for it (the
 *   webhook's namespaceSelector and objectSelector as registered). Otherwise
 *   the recreated pod would come back just as uninjected, and be evicted
 *   again every reconcile;
 * - it has a controller (an ownerReference with `controller: true`) to
 *   recreate it. One without is only reported: evicting it would delete it.
 *
 * How many: never beyond the set's maxUnavailable, counted as Kruise's
 * rollout counts (batch-size.ts) over the pods the set applies to (matched
 * and uninjected, so a set whose every pod was missed still has a budget): an
 * evictable pod that is not ready costs no slot, a ready one costs one, and
 * uninjected pods being deleted count as unavailable (a StatefulSet's
 * replacement may not exist yet). And at most `evictionBudget` (what is left
 * of the reconcile's limit).
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { batchSize, maxUnavailableCount } from '../rollout/batch-size.ts';
import { injectionVerdicts } from '../sidecarset/injecting-sets.ts';
import { sidecarSetName, sidecarSetSelectsPod, type NamespaceLabels } from '../sidecarset/match.ts';
import { controllerOf, isPodReady, podContainers, podKey, sidecarContainerNames } from '../sidecarset/pod-state.ts';
import { creationTimeMs, statusAccumulator, summarizePod, type StatusAccumulator } from '../sidecarset/status.ts';
import type { IntOrString, SidecarSet } from '../sidecarset/types.ts';
import { selectorMatches } from '../kube/label-selector.ts';
import type { PodWebhookSelectors } from '../ports.ts';

export interface RepairInput {
  set: SidecarSet;
  /** Every SidecarSet of the cluster: a canary or a paused set changes what pod-inject decides. */
  clusterSets: readonly SidecarSet[];
  /** The set's own pod list, whole (its scope: rollout/pod-scope.ts). */
  pods: readonly Pod[];
  /** Labels of the namespaces the pods are in: a namespace missing here holds no pod to evict. */
  namespaceLabels: NamespaceLabels;
  /** Which pods the API server sends to pod-inject, as registered. */
  podWebhook: PodWebhookSelectors;
  /** Evictions the reconcile may still make. */
  evictionBudget: number;
}

/** The decision for one set. */
export interface RepairPlan {
  /** Pods to evict, in order: not ready first (they cost no slot), then the oldest. */
  evict: Pod[];
  /** Evictable but for their missing controller: reported, never evicted. */
  ownerless: Pod[];
  /** Evictable pods left for a later reconcile because maxUnavailable is reached. */
  heldByMaxUnavailable: number;
  /** Evictable pods left for a later resync because the resync's limit is reached (REPAIR_MAX_EVICTIONS_PER_RESYNC). */
  heldByResyncLimit: number;
  /** The set's maxUnavailable over the pods it applies to, and how many are unavailable now. */
  maxUnavailable: number;
  unavailable: number;
  /** maxUnavailable cannot be read (validation refuses that; a stored set may carry it): nothing is evicted. */
  invalidStrategy?: string;
}


/** Whether the API server calls pod-inject for the pod (an absent selector selects everything, as in the API). */
export function webhookSeesPod(webhook: PodWebhookSelectors, namespace: string, podLabels: Readonly<Record<string, string>>, namespaceLabels: NamespaceLabels): boolean {
  const labels = namespaceLabels.get(namespace);
  // Unknown labels cannot show the namespace is not excluded.
  if (labels === undefined) return false;
  if (webhook.namespaceSelector !== undefined && !selectorMatches(webhook.namespaceSelector, labels)) return false;
  return webhook.objectSelector === undefined || selectorMatches(webhook.objectSelector, podLabels);
}

/** Every container name the set's injection adds: a pod holding one already carries one of its sidecars. */
function injectedNames(set: SidecarSet): Set<string> {
  const names = sidecarContainerNames(set);
  for (const c of arrayOf(objectOf(set.spec)?.containers)) if (isObject(c) && typeof c.name === 'string') names.add(c.name);
  for (const c of arrayOf(objectOf(set.spec)?.initContainers)) if (isObject(c) && typeof c.name === 'string') names.add(c.name);
  return names;
}

function carriesAny(pod: Pod, names: ReadonlySet<string>): boolean {
  const init = arrayOf(objectOf(pod.spec)?.initContainers).filter(isObject);
  return [...podContainers(pod), ...init].some((c) => names.has(stringOf(c.name) ?? ''));
}

function isTerminating(pod: Pod): boolean {
  const phase = stringOf(objectOf(pod.status)?.phase);
  const deletion: unknown = objectOf(pod.metadata)?.deletionTimestamp;
  return deletion !== undefined && deletion !== null && phase !== 'Succeeded' && phase !== 'Failed';
}

/** An uninjected pod the set may evict, with what orders the evictions. */
interface Evictable {
  pod: Pod;
  ready: boolean;
  createdAtMs: number;
}

/**
 * The set's pods sorted for the repair: counted for its status (what is
 * unavailable), evictable, ownerless, or an uninjected pod already being
 * deleted (`inFlight`).
 */
function repairCandidates(input: RepairInput): { counted: StatusAccumulator; evictable: Evictable[]; ownerless: Pod[]; inFlight: number } {
  const { set, clusterSets, namespaceLabels } = input;
  const name = sidecarSetName(set);
  const setCreatedAtMs = creationTimeMs(set.metadata);
  const names = injectedNames(set);
  const counted = statusAccumulator(set, clusterSets);
  const evictable: Evictable[] = [];
  const ownerless: Pod[] = [];
  let inFlight = 0;
  for (const pod of input.pods) {
    const summary = summarizePod(pod);
    const outcome = counted.add(summary, namespaceLabels);
    if (outcome !== 'not-injected') {
      if (isTerminating(pod) && !summary.injectedSets.has(name) && sidecarSetSelectsPod(set, summary.labels, summary.namespace, namespaceLabels)) inFlight++;
      continue;
    }
    const createdAtMs = summary.createdAtMs;
    if (setCreatedAtMs === undefined || createdAtMs === undefined || createdAtMs <= setCreatedAtMs) continue;
    if (carriesAny(pod, names) || !webhookSeesPod(input.podWebhook, summary.namespace, summary.labels, namespaceLabels)) continue;
    const verdict = injectionVerdicts(clusterSets, { labels: summary.labels, namespace: summary.namespace, namespaceLabels }).find((v) => v.set === name);
    if (verdict?.injects !== true) continue;
    if (controllerOf(pod) === undefined) {
      ownerless.push(pod);
      continue;
    }
    evictable.push({ pod, ready: isPodReady(summary.slim, set, []), createdAtMs });
  }
  return { counted, evictable, ownerless, inFlight };
}

/**
 * The set's repair decision for this reconcile.
 * @throws UnknownNamespaceError when the set's namespaceSelector needs labels of a namespace missing from `namespaceLabels`.
 */
export function planRepair(input: RepairInput): RepairPlan {
  const { set } = input;
  const { counted, evictable, ownerless, inFlight } = repairCandidates(input);
  const unavailable = (counted.unavailablePods()?.count ?? 0) + inFlight;
  const total = counted.counts().matchedPods + counted.notInjectedPods;
  const none = { evict: [], ownerless, heldByResyncLimit: 0, unavailable };
  let maxUnavailable: number;
  try {
    maxUnavailable = maxUnavailableCount(objectOf(objectOf(set.spec)?.updateStrategy)?.maxUnavailable as IntOrString | undefined, total);
  } catch (error) {
    return { ...none, heldByMaxUnavailable: evictable.length, maxUnavailable: 0, invalidStrategy: (error as Error).message };
  }
  evictable.sort((a, b) => Number(a.ready) - Number(b.ready) || a.createdAtMs - b.createdAtMs || (podKey(a.pod) < podKey(b.pod) ? -1 : 1));
  const batch = batchSize({ waitingReady: evictable.map((e) => e.ready), total, unavailable, partition: 0, maxUnavailable });
  const count = Math.min(batch.count, Math.max(input.evictionBudget, 0));
  return {
    ...none,
    evict: evictable.slice(0, count).map((e) => e.pod),
    heldByMaxUnavailable: evictable.length - batch.count,
    heldByResyncLimit: batch.count - count,
    maxUnavailable,
  };
}
