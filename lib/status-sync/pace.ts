/**
 * The rollout's pace without a controller (sidecarset.md §7 "Pace"): after a
 * pass, the sets with work in flight get their own pass again as soon as
 * their pods change (a watch on the set's pods, ignoring this process's own
 * writes) and at the latest every `intervalMs`, until nothing is in flight,
 * their progress stalls, or the time budget ends. A SidecarSet change the
 * webhooks admitted joins them at once, after waiting (bounded) until the
 * change is visible in the API server: admission is not yet the write.
 *
 * One set's passes never overlap, and all run in this one loop, so two
 * passes can never decide from views that together exceed maxUnavailable.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '../errors.ts';
import { stringOf } from '../kube/json.ts';
import type { AdmittedSidecarSet } from '../ports.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import type { PassError } from './pass.ts';
import { DEFAULT_STALL_MS } from './rollout-state.ts';
import { runSetPass, type SetPassDeps, type SetPassResult } from './set-pass.ts';

export interface PaceOptions {
  /** The longest wait between two passes of a set in flight. Default 5 s. */
  intervalMs?: number;
  /**
   * After a watched change, how long to let related changes land before the
   * pass. Default 50 ms: every ms of it delays reusing a slot a pod just
   * freed (250 ms made a 1,000-pod, 10% rollout 1.43 times its ideal, 50 ms
   * 1.26 times at the median of three runs, for about twice the passes;
   * docs/BENCHMARKS.md).
   */
  settleMs?: number;
  /**
   * A backstop: a set whose counts have not moved for this long leaves the
   * loop (the schedule keeps an eye on it). Default 60 s. A rollout whose
   * updated pods stay unavailable leaves earlier, at the pass that finds it
   * stalled by the pods' own update times (rollout-state.ts), which also
   * tells it; this one leaves silently.
   */
  stallMs?: number;
  /** How long an admitted change may take to become visible. Default 10 s. */
  visibleTimeoutMs?: number;
}

export const DEFAULT_PACE = { intervalMs: 5_000, settleMs: 50, stallMs: DEFAULT_STALL_MS, visibleTimeoutMs: 10_000 } as const;

export interface PaceDeps extends SetPassDeps {
  /** Monotonic milliseconds. Default performance.now. */
  nowMs?: () => number;
  /** Told after every set pass (the metrics: follow-up passes count as the full pass's do). */
  onSetPass?: (result: SetPassResult) => void;
}

/** Admitted changes handed to a running loop (the local server's); the loop drains it each round. */
export interface AdmittedQueue {
  take(): AdmittedSidecarSet[];
  /** Resolves when a change arrives (or at once when one is queued). */
  arrival(): Promise<void>;
}

/** A queue of admitted changes: `push` hands one over, `size` says how many wait. */
export interface AdmittedChanges extends AdmittedQueue {
  push(change: AdmittedSidecarSet): void;
  size(): number;
}

/** The admitted changes not yet taken (starting with `initial`), and a promise for the next one. */
export function admittedQueue(initial: readonly AdmittedSidecarSet[] = []): AdmittedChanges {
  let changes: AdmittedSidecarSet[] = [...initial];
  let wake: (() => void) | undefined;
  return {
    push(change) {
      changes.push(change);
      wake?.();
      wake = undefined;
    },
    take() {
      const taken = changes;
      changes = [];
      return taken;
    },
    arrival() {
      if (changes.length > 0) return Promise.resolve();
      return new Promise((resolve) => {
        const previous = wake;
        wake = () => {
          previous?.();
          resolve();
        };
      });
    },
    size: () => changes.length,
  };
}

/** What the following did, for the invocation's log line. */
export interface PaceSummary {
  passes: number;
  podsUpdated: number;
  podsFlipped: number;
  conflicts: number;
  /** Sets that left because their progress stalled. */
  stalled: string[];
  /** Sets still in flight when the budget ended. */
  unfinished: string[];
  states: Record<string, string>;
  errors: PassError[];
}

interface Tracked {
  watch?: SetPassResult['watch'];
  progress: string;
  progressAt: number;
  /** This loop wrote pods of the set: its last batch is followed until ready, for the status to show it. */
  wrote?: boolean;
}

/** An admitted change is visible once the stored set is the admitted object or newer. */
function isVisible(set: SidecarSet, change: AdmittedSidecarSet): boolean {
  const uid = stringOf(set.metadata?.uid) ?? '';
  if (change.uid !== '' && uid !== change.uid) return false;
  if (change.operation === 'CREATE') return true;
  return (stringOf(set.metadata?.resourceVersion) ?? '') !== change.resourceVersion;
}

/**
 * Waits until the admitted change is stored, polling; the set as stored then,
 * or as stored when `timeoutMs` passed (a change another webhook denied never
 * shows; the pass then runs on what is there), or undefined when it does not exist.
 */
export async function visibleSet(change: AdmittedSidecarSet, deps: Pick<SetPassDeps, 'statuses'>, timeoutMs: number, signal?: AbortSignal): Promise<SidecarSet | undefined> {
  const deadline = performance.now() + timeoutMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
    const set = await deps.statuses.get(change.sidecarSet, signal);
    if (set !== undefined && isVisible(set, change)) return set;
    // The last wait is cut to the deadline, so the change gets its whole timeout.
    const left = deadline - performance.now();
    if (left <= 0) return set;
    await sleep(Math.min(delay, left), undefined, signal === undefined ? {} : { signal });
  }
}

/**
 * Follows `names` (and admitted changes from `queue`) until none is in
 * flight or `signal` ends. Never throws: failures are in the summary.
 */
export async function followSets(names: Iterable<string>, deps: PaceDeps, options: PaceOptions = {}, signal?: AbortSignal, queue?: AdmittedQueue): Promise<PaceSummary> {
  const intervalMs = options.intervalMs ?? DEFAULT_PACE.intervalMs;
  const settleMs = options.settleMs ?? DEFAULT_PACE.settleMs;
  const stallMs = options.stallMs ?? DEFAULT_PACE.stallMs;
  const visibleTimeoutMs = options.visibleTimeoutMs ?? DEFAULT_PACE.visibleTimeoutMs;
  const nowMs = deps.nowMs ?? (() => performance.now());
  const summary: PaceSummary = { passes: 0, podsUpdated: 0, podsFlipped: 0, conflicts: 0, stalled: [], unfinished: [], states: {}, errors: [] };
  const tracked = new Map<string, Tracked>();
  // Sets handed over are in flight by a pass that rolled them: their last batch is followed until ready.
  for (const name of names) if (!tracked.has(name)) tracked.set(name, { progress: '', progressAt: nowMs(), wrote: true });
  // Sets just passed (the full pass) are passed again at once: that pass gives the watch's starting point.
  const fresh = new Map<string, SidecarSet>();

  const pass = async (name: string, state: Tracked) => {
    let set = fresh.get(name);
    fresh.delete(name);
    try {
      set ??= await deps.statuses.get(name, signal);
    } catch (error) {
      summary.errors.push({ sidecarSet: name, operation: 'get SidecarSet', message: errorMessage(error) });
      return;
    }
    if (set === undefined) {
      tracked.delete(name);
      return;
    }
    const result = await runSetPass(set, deps, signal === undefined ? {} : { signal });
    try {
      deps.onSetPass?.(result);
    } catch (error) {
      summary.errors.push({ sidecarSet: name, operation: 'record metrics', message: errorMessage(error) });
    }
    summary.passes++;
    summary.podsUpdated += result.podsUpdated;
    summary.podsFlipped += result.podsFlipped;
    summary.conflicts += result.conflicts;
    summary.errors.push(...result.errors);
    if (result.stateChange !== undefined) summary.states[name] = result.stateChange;
    if (result.podsUpdated > 0 || result.podsFlipped > 0) state.wrote = true;
    // Told by its pass (RolloutStalled): the schedule looks at it again, without spending this budget on it.
    if (result.state?.reason === 'RolloutStalled') {
      tracked.delete(name);
      summary.stalled.push(name);
      return;
    }
    // Pods unready for reasons of their own (an app that never starts) are not the rollout's: only a batch this loop wrote is waited for.
    if (!result.inFlight && !(result.restarting && state.wrote === true)) {
      tracked.delete(name);
      return;
    }
    const progress = JSON.stringify([result.counts, result.podsUpdated, result.podsFlipped]);
    const now = nowMs();
    if (progress !== state.progress || result.podsUpdated > 0 || result.podsFlipped > 0) {
      state.progress = progress;
      state.progressAt = now;
    } else if (now - state.progressAt >= stallMs) {
      tracked.delete(name);
      summary.stalled.push(name);
      return;
    }
    state.watch = result.watch;
  };

  const admit = async () => {
    for (const change of queue?.take() ?? []) {
      try {
        const set = await visibleSet(change, deps, visibleTimeoutMs, signal);
        if (set === undefined) continue;
        fresh.set(change.sidecarSet, set);
        // A re-admitted set starts over: its progress clock too.
        tracked.set(change.sidecarSet, { progress: '', progressAt: nowMs() });
      } catch (error) {
        if (signal?.aborted === true) return;
        summary.errors.push({ sidecarSet: change.sidecarSet, operation: 'wait for the admitted change', message: errorMessage(error) });
      }
    }
  };

  // A function, not the property: the compiler would keep its narrowing across the awaits.
  const stopped = () => signal?.aborted === true;
  let first = true;
  while (!stopped()) {
    await admit();
    if (tracked.size === 0) break;
    if (!first && fresh.size === 0) await waitForChange(tracked, deps, intervalMs, settleMs, signal, queue);
    first = false;
    if (stopped()) break;
    await admit();
    for (const [name, state] of [...tracked]) {
      if (stopped()) break;
      await pass(name, state);
    }
  }
  summary.unfinished = [...tracked.keys()];
  return summary;
}

/** Until a tracked set's pods change (then `settleMs` more), a change is admitted, or `intervalMs` passes. */
async function waitForChange(tracked: ReadonlyMap<string, Tracked>, deps: PaceDeps, intervalMs: number, settleMs: number, signal: AbortSignal | undefined, queue: AdmittedQueue | undefined): Promise<void> {
  const stop = new AbortController();
  const bounded = signal === undefined ? stop.signal : AbortSignal.any([signal, stop.signal]);
  const timer = sleep(intervalMs, 'timeout' as const, { signal: bounded }).catch(() => 'stopped' as const);
  // A watch that failed ('error', e.g. refused at once) says nothing: wait out the interval instead of passing again at once.
  const watches = [...tracked.values()].flatMap((t) =>
    t.watch === undefined ? [] : [deps.rollout.setPods.changed(t.watch.scope, t.watch.resourceVersion, t.watch.own, intervalMs, bounded).then((r) => (r === 'error' ? timer : r))],
  );
  const arrival = queue === undefined ? [] : [queue.arrival().then(() => 'admitted' as const)];
  const first = await Promise.race([timer, ...watches, ...arrival]);
  stop.abort();
  if (first === 'changed' && signal?.aborted !== true) await sleep(settleMs, undefined, signal === undefined ? {} : { signal }).catch(() => undefined);
}
