/**
 * The SidecarSet controller, in client-go's shape: sources add set names to
 * one keyed queue (work-queue.ts), workers take them, and one Reconcile per
 * name (reconcile.ts) answers requeue-after, done or stalled.
 *
 * Sources: the names handed over (the full resync's sets in flight, a
 * self-requeue's), admitted changes once stored (admitted-source.ts), the
 * watch on each requeued set's pods (an accepted change is debounced so related changes
 * land, then adds the name), the end of the deferred writes a reconcile left pods to, and
 * Reconcile's own requeue-after. A failed Reconcile is added again after
 * the queue's backoff.
 *
 * The queue hands one set to one worker at a time, so one set's reconciles never
 * overlap; a pod two sets select is left alone by both while a write to it
 * is deferred (deferred-writes.ts, one queue for every set).
 */
import { errorMessage } from '../errors.ts';
import type { AdmittedQueue } from './admitted-queue.ts';
import { AdmittedSource } from './admitted-source.ts';
import { RequeuedSet } from './requeued-set.ts';
import { DEFAULT_CONTROLLER_OPTIONS, type ControllerDeps, type ControllerOptions, type ControllerSummary } from './controller-options.ts';
import { Reconciler, type Outcome } from './reconcile.ts';
import { rolloutPredicate } from './rollout-predicate.ts';
import { readSet, EarlyReads } from './set-reads.ts';
import { SetPodViews } from './set-pod-views.ts';
import { deferredWriteQueue } from './deferred-writes.ts';
import { BackoffLimiter, DEFAULT_BACKOFF, WorkQueue } from './work-queue.ts';

export class SetController {
  readonly summary: ControllerSummary = { reconciles: 0, podsUpdated: 0, podsFlipped: 0, conflicts: 0, stalled: [], unfinished: [], states: {}, errors: [] };
  private readonly queue: WorkQueue<string>;
  private readonly inFlight = new Map<string, RequeuedSet>();
  /** Each requeued set's running watch, stopped when a newer pass starts another. */
  private readonly watching = new Map<string, AbortController>();
  private readonly early = new EarlyReads();
  /**
   * Sets being reconciled now. A read made meanwhile (an admitted change's, a debounce's early read) may predate
   * the status that reconcile writes, so it is not handed to the next reconcile, which reads the set itself.
   */
  private readonly reconciling = new Set<string>();
  private readonly views: SetPodViews;
  private readonly reconciler: Reconciler;
  private readonly admitted: AdmittedSource;
  /** Aborted when the controller ends: its signal or budget ended, or nothing is left to do. */
  private readonly ending = new AbortController();
  private readonly deps: ControllerDeps;
  private readonly options: ControllerOptions;
  private readonly signal: AbortSignal | undefined;

  constructor(deps: ControllerDeps, options: ControllerOptions, signal: AbortSignal | undefined, admitted: AdmittedQueue | undefined) {
    this.deps = deps;
    this.options = options;
    this.signal = signal;
    this.queue = new WorkQueue(new BackoffLimiter(DEFAULT_BACKOFF.baseMs, this.intervalMs));
    this.queue.onIdle = () => { this.endWhenIdle(); };
    this.views = new SetPodViews(deps.rollout, { predicate: rolloutPredicate, ...(options.catchUpMs === undefined ? {} : { catchUpMs: options.catchUpMs }) });
    const deferredWrites = deferredWriteQueue((error) => this.summary.errors.push(error));
    this.reconciler = new Reconciler(deps, options, signal, deferredWrites, this.summary);
    const visibleTimeoutMs = options.visibleTimeoutMs ?? DEFAULT_CONTROLLER_OPTIONS.visibleTimeoutMs;
    this.admitted = new AdmittedSource(admitted, deps, { visibleTimeoutMs, createDebounceMs: options.createDebounceMs }, {
      inFlight: (name) => this.inFlight.has(name),
      podsChanged: (name) => {
        this.queue.add(name);
      },
      visible: (name, set) => {
        // The set starts over (its progress clock too; its view of the pods goes on).
        this.inFlight.set(name, new RequeuedSet(this.nowMs(), false, this.inFlight.get(name)?.view));
        if (!this.reconciling.has(name)) this.reconciler.fresh(name, set);
        this.queue.add(name);
      },
      error: (error) => this.summary.errors.push(error),
      idle: () => { this.endWhenIdle(); },
    });
  }

  private get intervalMs(): number {
    return this.options.intervalMs ?? DEFAULT_CONTROLLER_OPTIONS.intervalMs;
  }

  private nowMs(): number {
    return (this.deps.nowMs ?? (() => performance.now()))();
  }

  /** Reconciles `names` and the admitted changes until nothing is left or the signal or budget ends. */
  async run(names: Iterable<string>): Promise<ControllerSummary> {
    const stops = [this.signal, this.options.budget].filter((s) => s !== undefined);
    const stop = () => { this.ending.abort(); };
    for (const s of stops) s.addEventListener('abort', stop, { once: true });
    this.ending.signal.addEventListener('abort', () => { this.queue.shutDown(); }, { once: true });
    if (stops.some((s) => s.aborted)) stop();
    // Handed over by a reconcile that rolled them: their last batch is requeued until ready.
    for (const name of names) {
      if (this.inFlight.has(name)) continue;
      this.inFlight.set(name, new RequeuedSet(this.nowMs(), true));
      this.queue.add(name);
    }
    try {
      const sources = this.admitted.run(this.ending.signal, this.signal);
      this.endWhenIdle();
      const workers = Array.from({ length: Math.max(1, this.options.workers ?? 1) }, () => this.work());
      await Promise.all([sources, ...workers]);
    } finally {
      for (const s of stops) s.removeEventListener('abort', stop);
      this.ending.abort();
      // Writes handed over are sent before the call ends (bounded by the call's signal, which they carry).
      await this.reconciler.deferredWrites.drained();
      this.summary.unfinished = [...this.inFlight.keys()];
      this.views.closeAll();
    }
    this.summary.podReads = this.views.counts();
    return this.summary;
  }

  /** Nothing requeued, nothing queued or processing, no admitted change in hand: the controller ends. */
  private endWhenIdle(): void {
    if (this.inFlight.size === 0 && this.queue.quiet() && this.admitted.isIdle) this.ending.abort();
  }

  /** One worker: takes a name, reconciles it, queues it again as Reconcile says. */
  private async work(): Promise<void> {
    for (;;) {
      const name = await this.queue.get();
      if (name === undefined) return;
      this.reconciling.add(name);
      try {
        const requeued = this.inFlight.get(name);
        // A name whose set left since it was queued (a late requeue) has nothing to do.
        if (requeued !== undefined) this.requeue(name, requeued, await this.reconcileOne(name, requeued));
      } finally {
        this.reconciling.delete(name);
        this.queue.done(name);
      }
    }
  }

  private async reconcileOne(name: string, requeued: RequeuedSet): Promise<Outcome> {
    try {
      return await this.reconciler.reconcile(name, requeued, this.views.of(requeued), this.early.take(name));
    } catch (error) {
      // Reconcile reports its failures; a throw is a bug, recorded and retried after the backoff.
      this.summary.errors.push({ sidecarSet: name, operation: 'reconcile', message: errorMessage(error) });
      return { kind: 'error' };
    }
  }

  /** What Reconcile's answer means for the queue, the watch and the set's place among the requeued. */
  private requeue(name: string, requeued: RequeuedSet, outcome: Outcome): void {
    // An admitted change during the reconcile started the set over (with this view): its own reconcile is queued already.
    if (this.inFlight.get(name) !== requeued) return;
    if (outcome.kind === 'done' || outcome.kind === 'stalled') {
      this.watching.get(name)?.abort();
      this.watching.delete(name);
      requeued.close();
      this.inFlight.delete(name);
      this.queue.forget(name);
      if (outcome.kind === 'stalled') this.summary.stalled.push(name);
      return;
    }
    if (outcome.kind === 'error') {
      this.queue.addRateLimited(name);
      return;
    }
    this.queue.forget(name);
    this.queue.addAfter(name, outcome.afterMs);
    this.watch(name, requeued);
    // Pods a reconcile left because a write to them was deferred are free once the writes drain: no pod change would tell.
    if (requeued.deferred) void this.reconciler.deferredWrites.drained().then(() => { this.queue.add(name); });
  }

  /** The watch source: a change of the set's pods the predicate accepts lets related changes land, while the reconcile's reads start, then adds the name. */
  private watch(name: string, requeued: RequeuedSet): void {
    this.watching.get(name)?.abort();
    const own = new AbortController();
    const change = requeued.nextChange(this.deps.rollout.setPods, this.intervalMs, AbortSignal.any([this.ending.signal, own.signal]));
    if (change === undefined) return;
    this.watching.set(name, own);
    void change.then((seen) => {
      if (this.watching.get(name) === own) this.watching.delete(name);
      // A watch that failed ('error', e.g. refused at once) says nothing: the requeue-after stands.
      if (seen !== 'changed' || own.signal.aborted || this.ending.signal.aborted || this.inFlight.get(name) !== requeued) return;
      const debounceMs = this.options.debounceMs ?? DEFAULT_CONTROLLER_OPTIONS.debounceMs;
      if (!this.reconciling.has(name)) this.early.start(name, readSet(name, this.deps, this.signal), debounceMs);
      this.queue.addAfter(name, debounceMs);
    });
  }
}
