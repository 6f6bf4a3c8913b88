/**
 * The ports and options of a set's reconcile (set-reconcile.ts), and what it returns;
 * re-exported by set-reconcile.ts, which the rest of the code imports them from.
 */
import type { Clock, NamespaceSource, PodEventSink, PodScope, PodWriter, RevisionStore, SetPodSource, SidecarSetEventSink, SidecarSetStatusWriter } from '../ports.ts';
import type { RolloutPlan } from '../rollout/plan.ts';
import type { ControllerRevision } from '../sidecarset/revisions.ts';
import type { StatusAccumulator } from '../sidecarset/status.ts';
import type { ReconcileError } from './errors.ts';
import type { RevisionFactsOf } from './revision-register.ts';
import type { RolloutState, RolloutStateEvents } from './rollout-state.ts';
import type { DeferredWrites } from './deferred-writes.ts';

/** What the rollout needs besides the resync's ports. */
export interface RolloutDeps {
  revisions: RevisionStore;
  setPods: SetPodSource;
  pods: PodWriter;
  /** Where a HotUpgrade flip's outcome is recorded, on the pod. */
  podEvents: PodEventSink;
  /** The time written into pod annotations and conditions. */
  clock: Clock;
  /** What was last reported of each set's rollout state; lives as long as the process. */
  states: RolloutStateEvents;
  /**
   * How long updated pods may stay unavailable, since the last of them was
   * updated, before the rollout is stalled (ROLLOUT_STALL_MS). Default 60 s.
   */
  stallMs?: number;
  /** What registering derives from a stored set; kept per stored version when it lives as long as the process (revision-register.ts). */
  revisionFacts?: RevisionFactsOf;
  /**
   * Where the reconcile hands the writes that neither free nor take a slot (the
   * updated pods' conditions, the flips' Events) instead of waiting for them
   * (deferred-writes.ts); pods with such a write pending are left to a later
   * reconcile. None: the reconcile sends them itself before it ends.
   */
  deferredWrites?: DeferredWrites;
}

export interface ReconcileDeps {
  statuses: SidecarSetStatusWriter;
  events: SidecarSetEventSink;
  namespaces: NamespaceSource;
  rollout: RolloutDeps;
}

/** The route's ports when a set is planned from streamed counts: without the rollout's (the offline invoke), statuses only. */
export type SetRouteDeps = Omit<ReconcileDeps, 'rollout'> & { rollout?: RolloutDeps };

export interface ReconcileOptions {
  signal?: AbortSignal;
  /** Pod writes in flight at once. Default 8. */
  writeConcurrency?: number;
  /** Writes of a status planned from streamed counts, the first included, before a conflict counts as an error. Default 4. */
  maxWriteAttempts?: number;
}

/**
 * Where a set's reconcile finds its pods: its own list (`stored`: its revisions
 * when the caller already listed them), or the resync's streamed counts
 * (`stored` undefined when the revisions could not be listed: nothing is
 * registered and the status keeps its revision fields).
 */
export type SetSource = { streamed?: undefined; stored?: readonly ControllerRevision[] } | { streamed: StatusAccumulator; stored: readonly ControllerRevision[] | undefined };

/** What one set's reconcile did. */
export interface ReconcileResult {
  sidecarSet: string;
  /** Whether the status was written, already right, or not written (see errors). */
  status: 'written' | 'unchanged' | 'not-written';
  podsUpdated: number;
  /** Pods whose finished hot upgrade was flipped (old containers back to the empty image). */
  podsFlipped: number;
  /** Pods skipped because they changed since the list (decided again next reconcile). */
  conflicts: number;
  /** Pods the plan would have written but left to a later reconcile: a deferred write of theirs was still pending. */
  deferred?: number;
  /** ControllerRevisions created, renumbered, labelled or deleted. */
  revisionWrites: number;
  /** The rollout state, when it changed since last reported (the reconcile logs it). */
  stateChange?: string;
  /** The rollout state this reconcile decided (whether or not it was new), for metrics. */
  state?: RolloutState;
  /** The updated pods not available, by the kubelet's reason, for metrics. */
  unavailable?: Record<string, number>;
  /** Pods skipped because their write failed (recorded on the pod and the set; tried again next reconcile). */
  podsFailed: number;
  /** The counts the reconcile saw, for telling progress from a stall. */
  counts?: RolloutPlan['status'];
  /**
   * Work in flight: pods written or skipped on a conflict this reconcile, the
   * next batch waiting for updated pods to become ready (maxUnavailable), or
   * pods mid hot upgrade waiting for their flip; the controller comes back soon.
   */
  inFlight: boolean;
  /** Updated pods not ready yet (the last batch restarting, or pods unready for reasons of their own). */
  restarting: boolean;
  /** For waiting on the set's pods: the scope and the list's resourceVersion, and the versions this reconcile wrote. */
  watch?: { scope: PodScope; resourceVersion: string; own: Set<string> };
  errors: ReconcileError[];
}

/** What a set's reconciles add to a summary: the reconcile's rollout part and the controller's both have these. */
export interface SetTally {
  podsUpdated: number;
  podsFlipped: number;
  conflicts: number;
  states: Record<string, string>;
}

