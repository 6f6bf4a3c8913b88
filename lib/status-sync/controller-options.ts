/**
 * The controller's options and ports (controller.ts), and what it reports.
 */
import type { ReconcileError } from './errors.ts';
import type { PodViewCounts } from './pod-view.ts';
import { DEFAULT_STALL_MS } from './rollout-state.ts';
import type { ReconcileDeps, ReconcileResult } from './set-reconcile.ts';

export interface ControllerOptions {
  /** The longest wait between two reconciles of a set in flight. Default 5 s. */
  intervalMs?: number;
  /**
   * After a watched change, how long to let related changes land before the
   * reconcile (its reads start meanwhile). Default 50 ms: every ms of it delays
   * reusing a slot a pod just freed; less makes more reconciles for the same rollout.
   */
  debounceMs?: number;
  /**
   * A backstop: a set whose counts have not moved for this long leaves the
   * loop (the schedule keeps an eye on it). Default 60 s. A rollout whose
   * updated pods stay unavailable leaves earlier, at the reconcile that finds it
   * stalled by the pods' own update times (rollout-state.ts), which also
   * tells it; this one leaves silently.
   */
  stallMs?: number;
  /**
   * How long an admitted change may take to become visible; also the most
   * time all admitted changes together spend waiting in one call. Default 10 s.
   */
  visibleTimeoutMs?: number;
  /** How long after its arrival a CREATE is first read. Default CREATE_DEBOUNCE_MS (visible-set.ts). */
  createDebounceMs?: number;
  /**
   * Stops the controller at the next reconcile boundary: no new reconcile or wait
   * starts after it, and a running reconcile finishes its writes (bounded by the
   * call's signal), instead of being cut mid-batch with its writes reported as errors.
   */
  budget?: AbortSignal;
  /**
   * How long a reconcile waits for the view of the set's pods to show the loop's
   * own writes before it lists them instead (pod-view.ts). Default 2 s.
   */
  catchUpMs?: number;
  /** Sets reconciled at once (each by one worker at a time). Default 1. */
  workers?: number;
}

export const DEFAULT_CONTROLLER_OPTIONS = { intervalMs: 5_000, debounceMs: 50, stallMs: DEFAULT_STALL_MS, visibleTimeoutMs: 10_000 } as const;

export interface ControllerDeps extends ReconcileDeps {
  /** Monotonic milliseconds. Default performance.now. */
  nowMs?: () => number;
  /** Told after every reconcile (the metrics: requeued reconciles count as the resync's do). */
  onReconcile?: (result: ReconcileResult) => void;
}

/** What the controller did, for the invocation's log line. */
export interface ControllerSummary {
  reconciles: number;
  podsUpdated: number;
  podsFlipped: number;
  conflicts: number;
  /** Sets that left because their progress stalled. */
  stalled: string[];
  /** Sets still in flight when the budget ended. */
  unfinished: string[];
  states: Record<string, string>;
  errors: ReconcileError[];
  /** How the reconciles got their pods: from the views (pod-view.ts), or listed and why. */
  podReads?: PodViewCounts;
}

