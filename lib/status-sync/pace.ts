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
 *
 * The parts are client-go's controller's: the followed sets are a queue of
 * keys (follow-queue.ts, followed-set.ts), each set's pods a view kept by a
 * watch with its expectations (set-pod-views.ts, pod-view.ts), and each set's
 * pass one reconcile (set-pass.ts). {@link FollowLoop} is the worker that
 * takes the sets round after round.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '../errors.ts';
import type { AdmittedQueue } from './admitted-queue.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import type { PassError } from './errors.ts';
import { FollowQueue } from './follow-queue.ts';
import type { FollowedSet } from './followed-set.ts';
import type { PodViewCounts } from './pod-view.ts';
import { rolloutNews } from './rollout-news.ts';
import { DEFAULT_STALL_MS } from './rollout-state.ts';
import { EarlyReads, readSet, type SetReads } from './set-reads.ts';
import { SetPodViews } from './set-pod-views.ts';
import { addUp, runSetPass, type SetPassDeps, type SetPassResult } from './set-pass.ts';
import { trailingWrites, type TrailingWrites } from './trailing-writes.ts';
import { visibleSet } from './visible-set.ts';

export { rolloutNews } from './rollout-news.ts';

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

/**
 * Follows `names` (and admitted changes from `queue`) until none is in
 * flight or `signal` ends. Never throws: failures are in the summary.
 */
export async function followSets(names: Iterable<string>, deps: PaceDeps, options: PaceOptions = {}, signal?: AbortSignal, queue?: AdmittedQueue): Promise<PaceSummary> {
  return new FollowLoop(deps, options, signal, queue).run(names);
}

/** The pace loop's worker: rounds of one pass per followed set, each round after news (see the file's comment). */
class FollowLoop {
  private readonly summary: PaceSummary = { passes: 0, podsUpdated: 0, podsFlipped: 0, conflicts: 0, stalled: [], unfinished: [], states: {}, errors: [] };
  private readonly nowMs: () => number;
  private readonly sets: FollowQueue;
  private readonly views: SetPodViews;
  // One queue for every followed set: a pod two sets select is left alone by both while a write to it trails.
  private readonly trailing: TrailingWrites;
  private readonly early = new EarlyReads();
  /**
   * The time admitted changes may spend waiting to be stored, for this whole call: a stream of changes that
   * never show (refused by a later webhook, forged) cannot hold the loop, which is the only one (concurrency 1).
   */
  private visibleBudgetMs: number;
  /** What the waits end with: the call's signal or the budget. */
  private readonly waitSignal: AbortSignal | undefined;

  private readonly deps: PaceDeps;
  private readonly options: PaceOptions;
  private readonly signal: AbortSignal | undefined;
  private readonly admitted: AdmittedQueue | undefined;

  constructor(deps: PaceDeps, options: PaceOptions, signal: AbortSignal | undefined, admitted: AdmittedQueue | undefined) {
    this.deps = deps;
    this.options = options;
    this.signal = signal;
    this.admitted = admitted;
    this.nowMs = deps.nowMs ?? (() => performance.now());
    this.sets = new FollowQueue(this.nowMs);
    this.views = new SetPodViews(deps.rollout, { news: rolloutNews, ...(options.catchUpMs === undefined ? {} : { catchUpMs: options.catchUpMs }) });
    this.trailing = trailingWrites((error) => this.summary.errors.push(error));
    this.visibleBudgetMs = this.visibleTimeoutMs;
    const { budget } = options;
    this.waitSignal = budget === undefined ? signal : signal === undefined ? budget : AbortSignal.any([signal, budget]);
  }

  private get visibleTimeoutMs(): number {
    return this.options.visibleTimeoutMs ?? DEFAULT_PACE.visibleTimeoutMs;
  }

  /** A method, not a property: the compiler would keep its narrowing across the awaits. */
  private stopped(): boolean {
    return this.signal?.aborted === true || this.options.budget?.aborted === true;
  }

  async run(names: Iterable<string>): Promise<PaceSummary> {
    this.sets.handOver(names);
    let first = true;
    try {
      while (!this.stopped()) {
        await this.admit();
        if (this.sets.size === 0) break;
        // The first round passes the sets handed over at once; a set just read, too.
        if (!first && !this.sets.hasFresh()) await this.waitForNews();
        first = false;
        if (this.stopped()) break;
        await this.admit();
        await this.round();
      }
    } finally {
      // Writes handed over are sent before the call ends (bounded by the call's signal, which they carry).
      await this.trailing.drained();
      this.summary.unfinished = this.sets.names();
      this.views.closeAll();
    }
    this.summary.podReads = this.views.counts();
    return this.summary;
  }

  /** Until news, then, when it is about pods, let related changes land while the next passes' reads start: the settle hides their time. */
  private async waitForNews(): Promise<void> {
    const wake = await this.sets.next(this.deps.rollout.setPods, this.options.intervalMs ?? DEFAULT_PACE.intervalMs, this.waitSignal, this.admitted, this.trailing);
    if (wake !== 'changed' || this.stopped()) return;
    this.early.start(this.sets.names(), (name) => this.read(name));
    await sleep(this.options.settleMs ?? DEFAULT_PACE.settleMs, undefined, this.waitSignal === undefined ? {} : { signal: this.waitSignal }).catch(() => undefined);
    this.early.settled();
  }

  /** One pass of every followed set, one after another. */
  private async round(): Promise<void> {
    for (const [name, followed] of this.sets.list()) {
      if (this.stopped()) break;
      await this.reconcile(name, followed);
    }
    this.early.clear();
  }

  private read(name: string, known?: SidecarSet): SetReads {
    return readSet(name, this.deps, this.signal, known);
  }

  /** Admitted changes join once visible (visible-set.ts), within the call's budget for them. */
  private async admit(): Promise<void> {
    for (const change of this.admitted?.take() ?? []) {
      // A followed set's pods are watched already: a pod trigger would only cost a read and reset its stall clock.
      if (change.operation === 'PODS' && this.sets.has(change.sidecarSet)) continue;
      const began = performance.now();
      try {
        const set = await visibleSet(change, this.deps, Math.max(0, Math.min(this.visibleTimeoutMs, this.visibleBudgetMs)), this.signal, this.options.createSettleMs);
        if (set !== undefined) this.sets.readmit(change.sidecarSet, set);
      } catch (error) {
        if (this.signal?.aborted === true) return;
        this.summary.errors.push({ sidecarSet: change.sidecarSet, operation: 'wait for the admitted change', message: errorMessage(error) });
      } finally {
        this.visibleBudgetMs -= performance.now() - began;
      }
    }
  }

  /** One set's pass, from its reads and its view of the pods; then whether it stays followed. */
  private async reconcile(name: string, followed: FollowedSet): Promise<void> {
    // A set just read (the full pass, an admitted change) is not read again; reads started during the settle
    // serve while recent (other sets' passes may have run since: the pass decides from a recent set).
    const known = this.sets.takeFresh(name);
    const early = this.early.take(name);
    const reads = known === undefined && early !== undefined ? early : this.read(name, known);
    const read = await reads.set;
    if ('error' in read) {
      this.summary.errors.push({ sidecarSet: name, operation: 'get SidecarSet', message: errorMessage(read.error) });
      return;
    }
    if (read.value === undefined) {
      this.sets.forget(name);
      return;
    }
    const view = this.views.of(followed);
    // Only passes planned from a view hand writes over: the view waits for their outcome before it serves again.
    const { deps } = this;
    const passDeps = view === undefined ? deps : { ...deps, rollout: { ...deps.rollout, setPods: view.source, pods: view.writer, trailing: this.trailing } };
    const result = await runSetPass(read.value, passDeps, this.signal === undefined ? {} : { signal: this.signal }, await reads.revisions);
    this.record(name, result);
    const after = followed.afterPass(result, this.nowMs, this.options.stallMs ?? DEFAULT_PACE.stallMs);
    if (after === 'follow') return;
    this.sets.forget(name);
    if (after === 'stalled') this.summary.stalled.push(name);
  }

  /** A pass into the summary, and to the metrics. */
  private record(name: string, result: SetPassResult): void {
    try {
      this.deps.onSetPass?.(result);
    } catch (error) {
      this.summary.errors.push({ sidecarSet: name, operation: 'record metrics', message: errorMessage(error) });
    }
    this.summary.passes++;
    addUp(result, this.summary, this.summary.errors);
  }
}
