/**
 * The facts metrics are made of, as the code that knows them hands them
 * over (the HTTP handler for a review, the reconciler for a pass), and the
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

/** One SidecarSet's figures after a full pass. */
export interface SetFigures {
  matchedPods: number;
  updatedPods: number;
  readyPods: number;
  updatedReadyPods: number;
  notInjectedPods: number;
  /** Its rollout state, when the pass ran the rollout. */
  state?: RolloutStateName;
  /** Updated pods not available, by the kubelet's reason (rollout.md "Stalled"), when the set's own pass ran. */
  unavailable?: Readonly<Record<string, number>>;
}

/** One set's pass that followed a rollout (the pace loop): what it wrote, and the set's figures after it. */
export interface SetPassFact {
  sidecarSet: string;
  podsUpdated: number;
  podsFlipped: number;
  figures: SetFigures;
}

/** One full reconciler pass. */
export interface PassFact {
  durationMs: number;
  apiRequests: number;
  statusesWritten: number;
  podsUpdated: number;
  podsFlipped: number;
  /** Uninjected pods the pass's repair evicted. */
  podsEvicted: number;
  podsNotInjected: number;
  errors: number;
  /** Webhooks the pass's rotation step repointed from a stale secret. */
  webhooksRepointed: number;
  /** Webhooks the pass's rotation step refused: pointing at a URL the deployment did not make. */
  webhooksRefused: number;
  sets: Readonly<Record<string, SetFigures>>;
}

export interface StatusSyncMetrics {
  pass(fact: PassFact): void;
  /** A follow-up pass of one set: counted as the full pass's pods are, its set's figures replaced. */
  setPass(fact: SetPassFact): void;
}

/** Where a process's metrics go: per admission function, and the reconciler's. */
export interface MetricsRecorder {
  admission(fn: string): AdmissionMetrics;
  statusSync(): StatusSyncMetrics;
}

/**
 * The pass's figures: `result` as runResync returned it, the API
 * requests it made, and each set's rollout state as last seen (sets the
 * pass did not count are left out).
 */
export function passFactOf(result: ResyncResult, apiRequests: number, states: ReadonlyMap<string, RolloutStateName>): PassFact {
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
 * A follow-up pass's figures: `result` as reconcileSet returned it (the same
 * decision its Events came from), the set's not-injected count as the last
 * full pass found it, and its state as last seen.
 */
export function setPassFactOf(result: ReconcileResult, state: RolloutStateName | undefined, notInjectedPods = 0): SetPassFact | undefined {
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
  statusSync: () => ({ pass: () => undefined, setPass: () => undefined }),
};
