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
import type { PodNews } from '../ports.ts';
import { hasReadyCondition } from '../sidecarset/pod-state.ts';
import type { ControllerRevision } from '../sidecarset/revisions.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import type { PassError } from './errors.ts';
import { DEFAULT_STALL_MS } from './rollout-state.ts';
import { setPodView, type ListReason, type PodViewCounts, type SetPodView } from './pod-view.ts';
import { addUp, runSetPass, type SetPassDeps, type SetPassResult } from './set-pass.ts';
import { trailingWrites, type TrailingWrites } from './trailing-writes.ts';
import type { AdmittedQueue } from './admitted-queue.ts';
import { visibleSet } from './visible-set.ts';

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
  /**
   * How long an admitted change may take to become visible; also the most
   * time all admitted changes together spend waiting in one call. Default 10 s.
   */
  visibleTimeoutMs?: number;
  /** How long after its arrival a CREATE is first read. Default CREATE_SETTLE_MS (visible-set.ts). */
  createSettleMs?: number;
  /**
   * Ends the following at the next pass boundary: no new pass or wait
   * starts after it, and a running pass finishes its writes (bounded by the
   * call's signal), instead of being cut mid-round with its writes reported as errors.
   */
  budget?: AbortSignal;
  /**
   * How long a pass waits for the view of the set's pods to show the loop's
   * own writes before it lists them instead (pod-view.ts). Default 2 s.
   */
  catchUpMs?: number;
}

export const DEFAULT_PACE = { intervalMs: 5_000, settleMs: 50, stallMs: DEFAULT_STALL_MS, visibleTimeoutMs: 10_000 } as const;

export interface PaceDeps extends SetPassDeps {
  /** Monotonic milliseconds. Default performance.now. */
  nowMs?: () => number;
  /** Told after every set pass (the metrics: follow-up passes count as the full pass's do). */
  onSetPass?: (result: SetPassResult) => void;
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
  /** How the passes got their pods: from the views (pod-view.ts), or listed and why. */
  podReads?: PodViewCounts;
}

/** The views' counts added up. */
function podSourceCounts(views: readonly SetPodView[]): PodViewCounts {
  const total: PodViewCounts = { fromView: 0, listed: {} };
  for (const view of views) {
    const counts = view.counts();
    total.fromView += counts.fromView;
    for (const [reason, n] of Object.entries(counts.listed) as [ListReason, number][]) total.listed[reason] = (total.listed[reason] ?? 0) + n;
  }
  return total;
}

interface Tracked {
  watch?: SetPassResult['watch'];
  /** The set's pods as a watch shows them, which its passes plan from (pod-view.ts); none when the pod source cannot watch. */
  view?: SetPodView;
  progress: string;
  progressAt: number;
  /** This loop wrote pods of the set: its last batch is followed until ready, for the status to show it. */
  wrote?: boolean;
  /** The last pass left pods to a later one because their trailing writes were pending: the queue draining is news. */
  deferred?: boolean;
}

/** A set's reads for its pass; the set's failure is kept, not thrown, until the pass reads it. */
interface SetReads {
  set: Promise<{ value: SidecarSet | undefined } | { error: unknown }>;
  revisions: Promise<readonly ControllerRevision[] | undefined>;
}

/**
 * How long after a settle ends the reads started during it still serve a
 * pass: with several sets followed, a later set's pass waits for the earlier
 * ones', and past this reads again rather than decide from an older set.
 */
const MAX_EARLY_READ_AGE_MS = 250;

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
  const views: SetPodView[] = [];
  // One queue for every followed set: a pod two sets select is left alone by both while a write to it trails.
  const trailing = trailingWrites((error) => summary.errors.push(error));
  // A set that leaves the loop stops its watch; the counts of every view it had are kept for the summary.
  const untrack = (name: string) => {
    tracked.get(name)?.view?.close();
    tracked.delete(name);
  };
  // Sets handed over are in flight by a pass that rolled them: their last batch is followed until ready.
  for (const name of names) if (!tracked.has(name)) tracked.set(name, { progress: '', progressAt: nowMs(), wrote: true });
  // Sets just passed (the full pass) are passed again at once: that pass gives the watch's starting point.
  const fresh = new Map<string, SidecarSet>();

  // The set and its revisions, read at once: neither read needs the other, and both stand between a freed
  // slot and its next write. Only this loop writes the revisions meanwhile (its passes do not overlap).
  const readsFor = (name: string, known?: SidecarSet): SetReads => ({
    set:
      known === undefined
        ? deps.statuses.get(name, signal).then(
            (value) => ({ value }),
            (error: unknown) => ({ error }),
          )
        : Promise.resolve({ value: known }),
    // A list that failed is made again by the pass, which reports its failure as registering's.
    revisions: deps.rollout.revisions.list(name, {}, signal).catch(() => undefined),
  });
  /** Reads started while the loop let a change settle, for each set's next pass, and until when a pass may use them. */
  const early = new Map<string, SetReads>();
  let earlyUntil = 0;

  const pass = async (name: string, state: Tracked) => {
    // A set just read (the full pass, an admitted change) is not read again.
    const known = fresh.get(name);
    fresh.delete(name);
    const started = early.get(name);
    early.delete(name);
    // Past the bound (other sets' passes ran since the settle) they are made again: the pass decides from a recent set.
    const reads = known === undefined && started !== undefined && performance.now() <= earlyUntil ? started : readsFor(name, known);
    const read = await reads.set;
    if ('error' in read) {
      summary.errors.push({ sidecarSet: name, operation: 'get SidecarSet', message: errorMessage(read.error) });
      return;
    }
    const set = read.value;
    if (set === undefined) {
      untrack(name);
      return;
    }
    if (state.view === undefined && deps.rollout.setPods.watch !== undefined) {
      state.view = setPodView(deps.rollout.setPods, deps.rollout.pods, { news: rolloutNews, ...(options.catchUpMs === undefined ? {} : { catchUpMs: options.catchUpMs }) });
      views.push(state.view);
    }
    const { view } = state;
    // Only passes planned from a view hand writes over: the view waits for their outcome before it serves again.
    const passDeps = view === undefined ? deps : { ...deps, rollout: { ...deps.rollout, setPods: view.source, pods: view.writer, trailing } };
    const result = await runSetPass(set, passDeps, signal === undefined ? {} : { signal }, await reads.revisions);
    try {
      deps.onSetPass?.(result);
    } catch (error) {
      summary.errors.push({ sidecarSet: name, operation: 'record metrics', message: errorMessage(error) });
    }
    summary.passes++;
    addUp(result, summary, summary.errors);
    if (result.podsUpdated > 0 || result.podsFlipped > 0) state.wrote = true;
    state.deferred = (result.deferred ?? 0) > 0;
    // Told by its pass (RolloutStalled): the schedule looks at it again, without spending this budget on it.
    if (result.state?.reason === 'RolloutStalled') {
      untrack(name);
      summary.stalled.push(name);
      return;
    }
    // Pods unready for reasons of their own (an app that never starts) are not the rollout's: only a batch this loop wrote is waited for.
    if (!result.inFlight && !(result.restarting && state.wrote === true)) {
      untrack(name);
      return;
    }
    const progress = JSON.stringify([result.counts, result.podsUpdated, result.podsFlipped]);
    const now = nowMs();
    if (progress !== state.progress || result.podsUpdated > 0 || result.podsFlipped > 0) {
      state.progress = progress;
      state.progressAt = now;
    } else if (now - state.progressAt >= stallMs) {
      untrack(name);
      summary.stalled.push(name);
      return;
    }
    state.watch = result.watch;
  };

  // The time admitted changes may spend waiting to be stored, for this whole call: a stream of changes that
  // never show (refused by a later webhook, forged) cannot hold the loop, which is the only one (concurrency 1).
  let visibleBudgetMs = visibleTimeoutMs;
  const admit = async () => {
    for (const change of queue?.take() ?? []) {
      // A followed set's pods are watched already: a pod trigger would only cost a read and reset its stall clock.
      if (change.operation === 'PODS' && tracked.has(change.sidecarSet)) continue;
      const began = performance.now();
      try {
        const set = await visibleSet(change, deps, Math.max(0, Math.min(visibleTimeoutMs, visibleBudgetMs)), signal, options.createSettleMs);
        if (set === undefined) continue;
        fresh.set(change.sidecarSet, set);
        // A re-admitted set starts over: its progress clock too (its view of the pods goes on).
        const view = tracked.get(change.sidecarSet)?.view;
        tracked.set(change.sidecarSet, { progress: '', progressAt: nowMs(), ...(view === undefined ? {} : { view }) });
      } catch (error) {
        if (signal?.aborted === true) return;
        summary.errors.push({ sidecarSet: change.sidecarSet, operation: 'wait for the admitted change', message: errorMessage(error) });
      } finally {
        visibleBudgetMs -= performance.now() - began;
      }
    }
  };

  // A function, not the property: the compiler would keep its narrowing across the awaits.
  const stopped = () => signal?.aborted === true || options.budget?.aborted === true;
  const waitSignal = options.budget === undefined ? signal : signal === undefined ? options.budget : AbortSignal.any([signal, options.budget]);
  let first = true;
  try {
    while (!stopped()) {
      await admit();
      if (tracked.size === 0) break;
      if (!first && fresh.size === 0 && (await waitForChange(tracked, deps, intervalMs, waitSignal, queue, trailing)) === 'changed' && !stopped()) {
        // The reads of the next passes start now, while related changes land: the settle hides their time.
        for (const name of tracked.keys()) early.set(name, readsFor(name));
        await sleep(settleMs, undefined, waitSignal === undefined ? {} : { signal: waitSignal }).catch(() => undefined);
        earlyUntil = performance.now() + MAX_EARLY_READ_AGE_MS;
      }
      first = false;
      if (stopped()) break;
      await admit();
      for (const [name, state] of [...tracked]) {
        if (stopped()) break;
        await pass(name, state);
      }
      early.clear();
    }
  } finally {
    // Writes handed over are sent before the call ends (bounded by the call's signal, which they carry).
    await trailing.drained();
    summary.unfinished = [...tracked.keys()];
    for (const view of views) view.close();
  }
  summary.podReads = podSourceCounts(views);
  return summary;
}

/**
 * Which changes of a followed set's pods wake the loop: a pod added or gone,
 * or a pod that is Ready after the change. A pod that is not Ready (the
 * kubelet restarting a container this loop just updated: a hundred such
 * changes follow each batch) frees no slot and finishes nothing: a pass for
 * it would only find maxUnavailable still taken, and the pass it would be
 * running when the first pod of the batch becomes ready again delays the
 * next batch by the rest of it. Waking only for a Ready pod starts the pass
 * that writes the next batch as soon as a slot frees. No decision comes
 * from the change itself (every pass lists the set's pods afresh), so a
 * change let pass here is seen by the next pass, at the latest after
 * `intervalMs`.
 */
export const rolloutNews: PodNews = (type, pod) => type !== 'MODIFIED' || hasReadyCondition(pod);

/**
 * Until a tracked set's pods change in a way worth a pass ({@link rolloutNews}: 'changed', which the caller lets
 * settle), a change is admitted, pods a pass left are free, or `intervalMs` passes.
 */
async function waitForChange(
  tracked: ReadonlyMap<string, Tracked>,
  deps: PaceDeps,
  intervalMs: number,
  signal: AbortSignal | undefined,
  queue: AdmittedQueue | undefined,
  trailing: TrailingWrites,
): Promise<string> {
  const stop = new AbortController();
  const bounded = signal === undefined ? stop.signal : AbortSignal.any([signal, stop.signal]);
  const timer = sleep(intervalMs, 'timeout' as const, { signal: bounded }).catch(() => 'stopped' as const);
  // A watch that failed ('error', e.g. refused at once) says nothing: wait out the interval instead of passing again at once.
  // A set whose view follows its pods waits on the view's news; otherwise a watch from the last pass's pods does.
  const watches = [...tracked.values()].flatMap((t) => {
    const waited = t.view?.following() === true ? t.view.changed(intervalMs, bounded) : t.watch === undefined ? undefined : deps.rollout.setPods.changed(t.watch.scope, t.watch.resourceVersion, t.watch.own, intervalMs, bounded, rolloutNews);
    return waited === undefined ? [] : [waited.then((r) => (r === 'error' ? timer : r))];
  });
  const arrival = queue === undefined ? [] : [queue.arrival().then(() => 'admitted' as const)];
  // Pods a pass left because a write to them trailed are free once the queue drains: no pod change would tell.
  const freed = [...tracked.values()].some((t) => t.deferred === true) ? [trailing.drained().then(() => 'freed' as const)] : [];
  const first = await Promise.race([timer, ...watches, ...arrival, ...freed]);
  stop.abort();
  return first;
}
