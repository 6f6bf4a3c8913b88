/**
 * The resync's ports, options and result (resync.ts), apart from it so the
 * sets' dispatch (set-dispatch.ts) shares them without an arrow back.
 */
import type { RotationResult } from '../auth/rotation.ts';
import type { NamespaceSource, PodPages, SidecarSetEventSink, SidecarSetSource, SidecarSetStatusWriter } from '../ports.ts';
import type { RolloutCounts } from '../rollout/plan.ts';
import type { ControllerRevision } from '../sidecarset/revisions.ts';
import type { ReconcileError } from './errors.ts';
import type { CanaryEvents } from './canary-events.ts';
import type { NotInjectedEvents } from './not-injected.ts';
import type { RepairDeps, RepairSummary } from './repair-step.ts';
import type { RolloutDeps } from './set-reconcile.ts';

export const DEFAULTS = { maxListAttempts: 3, maxWriteAttempts: 4, writeConcurrency: 4, samplePods: 5 };

/** Every ControllerRevision, by the name of the set its label names; undefined when they cannot be listed. */
export type RevisionsBySet = ReadonlyMap<string, ControllerRevision[]>;

export interface ResyncDeps {
  sidecarSets: SidecarSetSource;
  pods: PodPages;
  /** Labels of the namespaces pods are in; asked only when a set has a namespaceSelector. */
  namespaces: NamespaceSource;
  statuses: SidecarSetStatusWriter;
  events: SidecarSetEventSink;
  /** What was already reported about uninjected pods; lives as long as the process. */
  notices: NotInjectedEvents;
  /** The Events already recorded about canaries taking sets' pods (canary-events.ts); lives as long as the process. Absent, none is recorded. */
  canaries?: CanaryEvents;
  /** Monotonic milliseconds, for durationMs. Default performance.now. */
  nowMs?: () => number;
  /**
   * Revisions and the in-place rollout (rollout.md §0). Absent, the resync
   * computes and writes statuses only (the offline `invoke status-sync`).
   */
  rollout?: RolloutDeps;
  /** Evicting the uninjected pods of sets that ask for it (repair-step.ts). Absent, they are only reported. */
  repair?: RepairDeps;
}

export interface ResyncOptions {
  /** Stops the resync (the pod list, pending writes) when aborted, e.g. near the Lambda deadline. */
  signal?: AbortSignal;
  /** How many times the pod list is started when its continue token keeps expiring. Default 3. */
  maxListAttempts?: number;
  /** Writes of one status, the first included, before a conflict counts as an error. Default 4. */
  maxWriteAttempts?: number;
  /** Status writes in flight at once. Default 4. */
  writeConcurrency?: number;
  /** Uninjected pods named per namespace in events. Default 5. */
  samplePods?: number;
  /**
   * Where the sets that roll from their own pods are handed instead of rolled
   * here (on AWS with the queue: their names go to it, so only the queue's
   * consumers, one per set at a time, roll a set). They count as in flight.
   */
  handOff?: (names: readonly string[], signal?: AbortSignal) => Promise<void>;
}

/** What a resync did: returned, and logged as one JSON line. */
export interface ResyncResult {
  setsSeen: number;
  /** Pods in the (last) pod list. */
  podsSeen: number;
  statusesWritten: number;
  /** Sets whose stored status was already right. */
  statusesUnchanged: number;
  /** Times the pod list was started (more than 1 after expired continue tokens). */
  podListAttempts: number;
  errors: ReconcileError[];
  durationMs: number;
  /** Uninjected pods per set, for sets that have any. */
  notInjected: Record<string, number>;
  /**
   * Each counted set's pod counts, as its status shows them after this resync
   * (for metrics; the resync's log line leaves them out).
   */
  sets?: Record<string, RolloutCounts>;
  /** Per set whose own reconcile ran, its updated pods not available by the kubelet's reason (for metrics). */
  unavailable?: Record<string, Record<string, number>>;
  /** The webhook secret rotation's step, when the resync rotates it (functions/status-sync/compose.ts). */
  secretRotation?: RotationResult;
  /** What the rollout did, when the resync runs it. */
  rollout?: RolloutSummary;
  /** What the repair of uninjected pods did, when the resync runs it. */
  repair?: RepairSummary;
}

/** The rollout's part of a resync. */
export interface RolloutSummary {
  /** Sets whose pods were listed for a rollout batch. */
  setsRolled: number;
  podsUpdated: number;
  /** Pods whose finished hot upgrade was flipped. */
  podsFlipped: number;
  /** Pods skipped because they changed since their list (decided again next resync). */
  conflicts: number;
  /** Pods skipped because their write could not be made or was refused (recorded on the pod and the set). */
  podsFailed?: number;
  /** ControllerRevisions created, renumbered, labelled or deleted. */
  revisionWrites: number;
  /** Sets whose rollout state changed, with the new state in words. */
  states: Record<string, string>;
  /** Sets with work in flight: the controller runs their resync again soon. */
  inFlight: string[];
}

