/**
 * The reconcile's repair step (docs/SIDECARSET.md "Repairing pods the webhook
 * missed"): for each set annotated `serverless-sidecarset/repair-missing:
 * Evict` that the reconcile found uninjected pods for, its own pod list, the
 * decision (repair-missing.ts), the evictions and an Event on each pod.
 *
 * - At most `maxPerResync` eviction attempts per resync over every set.
 * - A 429 (a PodDisruptionBudget allows no disruption now) ends the set's
 *   evictions for this reconcile: the budget is spent, a later reconcile tries again.
 *   It is recorded on the pod, not counted as an error.
 * - A pod without a controller is recorded on the pod and never evicted.
 * - Sets go by name, so which set's pods go first is the same every reconcile.
 *
 * What is recorded on a pod that stays (refused, no controller) is recorded once per
 * process while it stays the same, as not-injected.ts does for its notices:
 * a pod refused reconcile after reconcile is not an Event every reconcile.
 */
import { errorMessage } from '../errors.ts';
import type { Pod } from '../kube/types.ts';
import type { EvictionOutcome, NamespaceSource, PodEvent, PodEventSink, PodEvictor, PodWebhookSelectors, PodWebhookSource, SetPodSource } from '../ports.ts';
import { podScope } from '../rollout/pod-scope.ts';
import { sidecarSetName, sortByName } from '../sidecarset/match.ts';
import { controllerOf, podRef } from '../sidecarset/pod-state.ts';
import { repairModeOf } from '../sidecarset/repair-missing-mode.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import type { ReconcileError } from './errors.ts';
import { planRepair, type RepairPlan } from './repair-missing.ts';

/** Reason of the Normal Event on a pod evicted so that its controller recreates it injected. */
export const REASON_EVICTED = 'EvictedToInject';
/** Reason of the Warning Event on a pod whose eviction was refused (a PodDisruptionBudget): tried again later. */
export const REASON_EVICTION_REFUSED = 'EvictionToInjectRefused';
/** Reason of the Warning Event on an uninjected pod with no controller: never evicted, only told. */
export const REASON_NO_CONTROLLER = 'NotInjectedNoController';

/** The variable setting how many pods a resync may try to evict, over every set. */
export const ENV_REPAIR_MAX_EVICTIONS = 'REPAIR_MAX_EVICTIONS_PER_RESYNC';
/** Its name until this release, still read (docs/UPGRADING.md). */
export const ENV_REPAIR_MAX_EVICTIONS_DEPRECATED = 'REPAIR_MAX_EVICTIONS_PER_PASS';
/** Few, so that even a set with a lax maxUnavailable and no PodDisruptionBudget is repaired gradually. */
export const DEFAULT_REPAIR_MAX_EVICTIONS = 5;

/** What the repair step needs; present only where the reconciler may evict (not the offline invoke). */
export interface RepairDeps {
  evictions: PodEvictor;
  /** The pod webhook's selectors, read once per resync that repairs. */
  podWebhook: PodWebhookSource;
  setPods: SetPodSource;
  podEvents: PodEventSink;
  /** Eviction attempts per resync, over every set ({@link ENV_REPAIR_MAX_EVICTIONS}). */
  maxPerResync: number;
  /** What was recorded on pods that stay; lives as long as the process ({@link repairMemory}). */
  memory: RepairMemory;
}

/** What the repair step did in one reconcile. */
export interface RepairSummary {
  /** Sets that asked for repair and had uninjected pods. */
  sets: number;
  evicted: number;
  /** Evictions a PodDisruptionBudget refused this reconcile (tried again later). */
  refused: number;
  /** Uninjected pods that have no controller: reported, not evicted. */
  ownerless: number;
  /** Evictable pods left for a later reconcile by maxUnavailable or the reconcile's limit. */
  held: number;
}

/** The Events already recorded on pods that stay, by pod uid. */
export interface RepairMemory {
  /** Whether this Event is new for the pod (not recorded before with the same reason and message). */
  isNew(uid: string, event: PodEvent): boolean;
  recorded(uid: string, event: PodEvent): void;
  /** Forgets the pods not seen in this reconcile's lists. */
  keepOnly(uids: ReadonlySet<string>): void;
}

/** Starts with nothing recorded; make one per process and keep it across resyncs. */
export function repairMemory(): RepairMemory {
  const recorded = new Map<string, string>();
  const keyOf = (event: PodEvent) => `${event.reason}\n${event.message}`;
  return {
    isNew: (uid, event) => recorded.get(uid) !== keyOf(event),
    recorded: (uid, event) => recorded.set(uid, keyOf(event)),
    keepOnly(uids) {
      for (const uid of recorded.keys()) if (!uids.has(uid)) recorded.delete(uid);
    },
  };
}

function owner(pod: Pod): string {
  const c = controllerOf(pod);
  return c === undefined ? 'controller' : `${c.kind} ${c.name}`;
}

const WHY = 'created without its sidecars (the pod-inject webhook did not inject it)';

/** One reconcile's repair step: what it needs, what it did so far and what it may still do. */
interface RepairRun {
  readonly deps: RepairDeps & { namespaces: NamespaceSource };
  readonly errors: ReconcileError[];
  readonly signal: AbortSignal | undefined;
  readonly summary: RepairSummary;
  /** The uids of the pods recorded on this reconcile: what the memory keeps. */
  readonly seen: Set<string>;
  /** Eviction attempts left this reconcile, over every set. */
  evictionBudget: number;
}

/**
 * Runs the repair step for the sets that ask for it. Never throws: what
 * fails is pushed to `errors`.
 * @param notInjected the reconcile's uninjected pod counts per set: a set with none is not listed.
 */
export async function repairMissingPods(
  sets: readonly SidecarSet[],
  notInjected: Readonly<Record<string, number>>,
  deps: RepairDeps & { namespaces: NamespaceSource },
  errors: ReconcileError[],
  signal?: AbortSignal,
): Promise<RepairSummary> {
  const summary: RepairSummary = { sets: 0, evicted: 0, refused: 0, ownerless: 0, held: 0 };
  const asking = sortByName(sets.filter((set) => repairModeOf(set).mode === 'Evict' && (notInjected[sidecarSetName(set)] ?? 0) > 0));
  if (asking.length === 0) return summary;
  const podWebhook = await readPodWebhook(deps.podWebhook, errors, signal);
  if (podWebhook === undefined) return summary;
  const run: RepairRun = { deps, errors, signal, summary, seen: new Set(), evictionBudget: deps.maxPerResync };
  for (const set of asking) {
    if (signal?.aborted === true) break;
    summary.sets++;
    const plan = await planSetRepair(run, set, sets, podWebhook);
    if (plan !== undefined) await repairSet(run, sidecarSetName(set), plan);
  }
  deps.memory.keepOnly(run.seen);
  return summary;
}

/** The pod webhook's selectors, or undefined (the failure pushed to `errors`): no pod is evicted without them. */
async function readPodWebhook(source: PodWebhookSource, errors: ReconcileError[], signal: AbortSignal | undefined): Promise<PodWebhookSelectors | undefined> {
  let podWebhook: PodWebhookSelectors | undefined;
  try {
    podWebhook = await source.selectors(signal);
  } catch (error) {
    errors.push({ operation: 'read the pod webhook', message: `${errorMessage(error)}; no uninjected pod is evicted this resync` });
    return undefined;
  }
  if (podWebhook === undefined) {
    // Evicting now would only have the pods recreated as uninjected as they are.
    errors.push({ operation: 'read the pod webhook', message: 'the MutatingWebhookConfiguration holds no pod-inject webhook; no uninjected pod is evicted this resync' });
  }
  return podWebhook;
}

/** The set's repair plan from its pods and their namespaces; undefined when the set selects no pods or a read failed (pushed to `errors`). */
async function planSetRepair(run: RepairRun, set: SidecarSet, clusterSets: readonly SidecarSet[], podWebhook: PodWebhookSelectors): Promise<RepairPlan | undefined> {
  try {
    const scope = podScope(set);
    if (scope === undefined) return undefined;
    const { pods } = await run.deps.setPods.list(scope, run.signal);
    const namespaces = [...new Set(pods.map((pod) => podRef(pod).namespace))];
    const namespaceLabels = await run.deps.namespaces.labels(namespaces, run.signal);
    return planRepair({ set, clusterSets, pods, namespaceLabels, podWebhook, evictionBudget: run.evictionBudget });
  } catch (error) {
    fail(run, sidecarSetName(set), 'repair uninjected pods', error);
    return undefined;
  }
}

/** Tells on the set's ownerless pods, then evicts its planned pods until one is refused. */
async function repairSet(run: RepairRun, name: string, plan: RepairPlan): Promise<void> {
  run.summary.ownerless += plan.ownerless.length;
  run.summary.held += plan.heldByMaxUnavailable + plan.heldByResyncLimit;
  for (const pod of plan.ownerless) {
    await recordOnPod(run, name, pod, { type: 'Warning', reason: REASON_NO_CONTROLLER, message: `SidecarSet ${name} applies to this pod, ${WHY}, and would evict it to have it recreated injected, but it has no controller to recreate it: recreate it yourself` }, true);
  }
  for (const [i, pod] of plan.evict.entries()) {
    run.evictionBudget--;
    let outcome: EvictionOutcome;
    try {
      outcome = await run.deps.evictions.evict(podRef(pod), run.signal);
    } catch (error) {
      fail(run, name, 'evict pod', error);
      continue;
    }
    if (outcome.outcome === 'evicted') {
      run.summary.evicted++;
      await recordOnPod(run, name, pod, { type: 'Normal', reason: REASON_EVICTED, message: `Evicted by SidecarSet ${name} so that its ${owner(pod)} recreates it with the set's sidecars: it was ${WHY}` }, false);
    } else if (outcome.outcome === 'refused') {
      run.summary.refused++;
      // The pods after it wait too: whatever budget refused this one is spent for now.
      run.summary.held += plan.evict.length - i - 1;
      run.evictionBudget += plan.evict.length - i - 1;
      await recordOnPod(run, name, pod, { type: 'Warning', reason: REASON_EVICTION_REFUSED, message: `SidecarSet ${name} could not evict this pod, ${WHY}, to have it recreated injected: ${outcome.message} A later resync tries again.` }, true);
      break;
    }
  }
}

/** Records `event` on `pod`; with `once`, only when it is new for the pod (the memory). A failure is pushed to `errors`. */
async function recordOnPod(run: RepairRun, name: string, pod: Pod, event: Omit<PodEvent, 'pod'>, once: boolean): Promise<void> {
  const ref = podRef(pod);
  const full: PodEvent = { pod: ref, ...event };
  run.seen.add(ref.uid);
  if (once && !run.deps.memory.isNew(ref.uid, full)) return;
  try {
    await run.deps.podEvents.record(full, run.signal);
    if (once) run.deps.memory.recorded(ref.uid, full);
  } catch (error) {
    fail(run, name, 'record event', `in namespace ${ref.namespace}: ${errorMessage(error)}`);
  }
}

function fail(run: RepairRun, sidecarSet: string, operation: string, error: unknown): void {
  run.errors.push({ sidecarSet, operation, message: errorMessage(error) });
}
