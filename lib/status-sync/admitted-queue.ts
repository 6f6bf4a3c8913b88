/**
 * The queue of SidecarSet changes the webhooks admitted, handed to a running
 * controller (the local server's; on AWS each invocation starts with its
 * own): a set's changes coalesce into one entry, so one read and one reconcile
 * serve a burst of them, and the queue is bounded.
 */
import type { AdmittedSidecarSet } from '../ports.ts';

/** An admitted change as queued: when it arrived (performance.now()), for the wait a CREATE is given. */
export interface QueuedChange extends AdmittedSidecarSet {
  queuedAtMs: number;
}

/** Admitted changes handed to a running loop (the local server's); the loop drains it each iteration. */
export interface AdmittedQueue {
  take(): QueuedChange[];
  /** Resolves when a change arrives (or at once when one is queued). */
  arrival(): Promise<void>;
}

/** A queue of admitted changes: `push` hands one over, `size` says how many wait, `dropped` how many were refused at the cap. */
export interface AdmittedChanges extends AdmittedQueue {
  push(change: AdmittedSidecarSet): void;
  size(): number;
  dropped(): number;
}

/**
 * The most sets with a change waiting. A trigger only makes a set's reconcile
 * come sooner (every set gets one at each scheduled reconcile), so past the cap
 * a trigger is dropped and counted rather than queued without bound.
 */
export const MAX_QUEUED_CHANGES = 64;

/**
 * The admitted changes not yet taken (starting with `initial`), and a promise
 * for the next one. Changes of the same set coalesce: the latest replaces
 * the one waiting (one read and one reconcile serve both), except that a pod
 * change (`PODS`) never replaces a change of the set; an initial change may
 * say when it arrived (`queuedAtMs`, performance.now()), for its debounce.
 */
export function admittedQueue(initial: readonly (AdmittedSidecarSet & { queuedAtMs?: number })[] = [], max: number = MAX_QUEUED_CHANGES): AdmittedChanges {
  const queue = new AdmittedChangeQueue(max);
  for (const change of initial) queue.add(change);
  return queue;
}

class AdmittedChangeQueue implements AdmittedChanges {
  private changes = new Map<string, QueuedChange>();
  private refused = 0;
  private wake: (() => void) | undefined;
  private readonly max: number;

  constructor(max: number) {
    this.max = max;
  }

  add(change: AdmittedSidecarSet & { queuedAtMs?: number }): void {
    const waiting = this.changes.get(change.sidecarSet);
    if (waiting === undefined && this.changes.size >= this.max) {
      this.refused++;
      return;
    }
    // A pod change never replaces a change of the set itself: that one's wait for visibility serves both. Over a
    // pod change it does replace, its later arrival restarts the debounce, so the reconcile reads after the latest pod's
    // write; the wait stays bounded, since the loop takes the whole queue at each iteration.
    if (waiting !== undefined && waiting.operation !== 'PODS' && change.operation === 'PODS') return;
    // Deleted first, so the set takes its place at the end: the order of arrival is kept.
    this.changes.delete(change.sidecarSet);
    this.changes.set(change.sidecarSet, { ...change, queuedAtMs: change.queuedAtMs ?? performance.now() });
  }

  push(change: AdmittedSidecarSet): void {
    this.add(change);
    this.wake?.();
    this.wake = undefined;
  }

  take(): QueuedChange[] {
    const taken = [...this.changes.values()];
    this.changes = new Map();
    return taken;
  }

  arrival(): Promise<void> {
    if (this.changes.size > 0) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.wake;
      this.wake = () => {
        previous?.();
        resolve();
      };
    });
  }

  size(): number {
    return this.changes.size;
  }

  dropped(): number {
    return this.refused;
  }
}
