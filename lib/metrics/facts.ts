/**
 * The facts metrics are made of, as the code that knows them hands them
 * over (the HTTP handler for a review, the reconciler for a resync or a reconcile), and the
 * recorders that turn them into EMF lines (Lambda) or registry counts (the
 * local server). A recorder never throws into its caller: metrics must not
 * change an answer.
 */
import type { ResyncResult } from '../status-sync/resync.ts';
import type { ReconcileResult } from '../status-sync/set-reconcile.ts';
import type { RolloutStateName } from '../status-sync/rollout-state.ts';
import type { ReviewOutcome } from './catalogue.ts';

/** One admission request's answer. */
export interface ReviewFact {
  outcome: ReviewOutcome;
  /** From the request to the answer; absent for a refused caller (a stranger's timing is noise). */
  latencyMs?: number;
  /** Time spent listing SidecarSets, when the review read them. */
  listMs?: number;
}

/** What one admission function reports. */
export interface AdmissionMetrics {
  review(fact: ReviewFact): void;
  /** A cached SidecarSet (or Namespace) read served because a fresh one failed, and its age. */
  staleServed(ageMs: number): void;
}

/** One SidecarSet's figures after a resync. */
export interface SetFigures {
  matchedPods: number;
  updatedPods: number;
  readyPods: number;
  updatedReadyPods: number;
  notInjectedPods: number;
  /** Its rollout state, when the resync ran the rollout. */
  state?: RolloutStateName;
  /** Updated pods not available, by the kubelet's reason (rollout.md "Stalled"), when the set's own reconcile ran. */
  unavailable?: Readonly<Record<string, number>>;
}

/** One requeued reconcile of a set (the controller's): what it wrote, and the set's figures after it. */
export interface SetReconcileFact {
  sidecarSet: string;
  podsUpdated: number;
  podsFlipped: number;
  figures: SetFigures;
}

/** One resync. */
export interface ResyncFact {
  durationMs: number;
  apiRequests: number;
  statusesWritten: number;
  podsUpdated: number;
  podsFlipped: number;
  /** Uninjected pods the resync's repair evicted. */
  podsEvicted: number;
  podsNotInjected: number;
  errors: number;
  /** Webhooks the resync's rotation step repointed from a stale secret. */
  webhooksRepointed: number;
  /** Webhooks the resync's rotation step refused: pointing at a URL the deployment did not make. */
  webhooksRefused: number;
  sets: Readonly<Record<string, SetFigures>>;
}

export interface StatusSyncMetrics {
  resync(fact: ResyncFact): void;
  /** A requeued reconcile of one set: its pods counted as a resync's are, its set's figures replaced. */
  setReconcile(fact: SetReconcileFact): void;
}

/** Where a process's metrics go: per admission function, and the reconciler's. */
export interface MetricsRecorder {
  admission(fn: string): AdmissionMetrics;
  statusSync(): StatusSyncMetrics;
}

/**
 * The resync's figures: `result` as runResync returned it, the API
 * requests it made, and each set's rollout state as last seen (sets the
 * resync did not count are left out).
 */
export function resyncFactOf(result: ResyncResult, apiRequests: number, states: ReadonlyMap<string, RolloutStateName>): ResyncFact {
  const sets: Record<string, SetFigures> = {};
  for (const [name, counts] of Object.entries(result.sets ?? {})) {
    const state = states.get(name);
    const unavailable = result.unavailable?.[name];
    sets[name] = { ...counts, notInjectedPods: result.notInjected[name] ?? 0, ...(state !== undefined ? { state } : {}), ...(unavailable !== undefined ? { unavailable } : {}) };
  }
  return {
    durationMs: result.durationMs,
    apiRequests,
    statusesWritten: result.statusesWritten,
    podsUpdated: result.rollout?.podsUpdated ?? 0,
    podsFlipped: result.rollout?.podsFlipped ?? 0,
    podsEvicted: result.repair?.evicted ?? 0,
    podsNotInjected: Object.values(result.notInjected).reduce((sum, n) => sum + n, 0),
    errors: result.errors.length,
    webhooksRepointed: result.secretRotation?.repaired?.length ?? 0,
    webhooksRefused: result.secretRotation?.refused?.length ?? 0,
    sets,
  };
}

/**
 * A requeued reconcile's figures: `result` as reconcileSet returned it (the same
 * decision its Events came from), the set's not-injected count as the last
 * resync found it, and its state as last seen.
 */
export function setReconcileFactOf(result: ReconcileResult, state: RolloutStateName | undefined, notInjectedPods = 0): SetReconcileFact | undefined {
  if (result.counts === undefined) return undefined;
  return {
    sidecarSet: result.sidecarSet,
    podsUpdated: result.podsUpdated,
    podsFlipped: result.podsFlipped,
    figures: { ...result.counts, notInjectedPods, ...(state !== undefined ? { state } : {}), ...(result.unavailable !== undefined ? { unavailable: result.unavailable } : {}) },
  };
}

/** A recorder that records nothing (the invoke command, tests that do not look). */
export const NO_METRICS: MetricsRecorder = {
  admission: () => ({ review: () => undefined, staleServed: () => undefined }),
  statusSync: () => ({ resync: () => undefined, setReconcile: () => undefined }),
};
