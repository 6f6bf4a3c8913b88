/**
 * Reconcile(set) for the controller (controller.ts): read the set (or take
 * the read its watch event or admission started), run its one route from its pods'
 * view (set-reconcile.ts), and answer as controller-runtime's Result does:
 * requeue after the controller's interval, done (nothing in flight, or gone), or
 * stalled; an error is retried after the queue's backoff.
 */
import { errorMessage } from '../errors.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import type { RequeuedSet } from './requeued-set.ts';
import { DEFAULT_CONTROLLER_OPTIONS, type ControllerDeps, type ControllerOptions, type ControllerSummary } from './controller-options.ts';
import type { SetPodView } from './pod-view.ts';
import { readSet, type SetReads } from './set-reads.ts';
import { addUp, reconcileSet, type ReconcileDeps, type ReconcileResult } from './set-reconcile.ts';
import type { DeferredWrites } from './deferred-writes.ts';

/** What Reconcile answers: when to look at the set again, if ever. */
export type Outcome = { kind: 'requeue-after'; afterMs: number } | { kind: 'done' } | { kind: 'stalled' } | { kind: 'error' };

export class Reconciler {
  readonly deferredWrites: DeferredWrites;
  /** Sets read just now (an admitted change made visible), passed from that read once. */
  private readonly known = new Map<string, SidecarSet>();
  /** Each view's pass ports, made once per view: its pods are read and written through it. */
  private readonly viewDeps = new WeakMap<SetPodView, ReconcileDeps>();
  private readonly deps: ControllerDeps;
  private readonly options: ControllerOptions;
  private readonly signal: AbortSignal | undefined;
  private readonly summary: ControllerSummary;

  constructor(deps: ControllerDeps, options: ControllerOptions, signal: AbortSignal | undefined, deferredWrites: DeferredWrites, summary: ControllerSummary) {
    this.deps = deps;
    this.options = options;
    this.signal = signal;
    this.deferredWrites = deferredWrites;
    this.summary = summary;
  }

  /** The set as just read: its next reconcile starts from it. */
  fresh(name: string, set: SidecarSet): void {
    this.known.set(name, set);
  }

  async reconcile(name: string, requeued: RequeuedSet, view: SetPodView | undefined, early: SetReads | undefined): Promise<Outcome> {
    const known = this.known.get(name);
    this.known.delete(name);
    const reads = known === undefined && early !== undefined ? early : readSet(name, this.deps, this.signal, known);
    const read = await reads.set;
    if ('error' in read) {
      this.summary.errors.push({ sidecarSet: name, operation: 'get SidecarSet', message: errorMessage(read.error) });
      return { kind: 'error' };
    }
    if (read.value === undefined) return { kind: 'done' };
    const result = await reconcileSet(read.value, this.passDeps(view), this.signal === undefined ? {} : { signal: this.signal }, await reads.revisions);
    this.record(name, result);
    const after = requeued.afterReconcile(result, () => (this.deps.nowMs ?? (() => performance.now()))(), this.options.stallMs ?? DEFAULT_CONTROLLER_OPTIONS.stallMs);
    if (after === 'requeue') return { kind: 'requeue-after', afterMs: this.options.intervalMs ?? DEFAULT_CONTROLLER_OPTIONS.intervalMs };
    return { kind: after };
  }

  /** Only passes planned from a view hand writes over: the view waits for their outcome before it serves again. */
  private passDeps(view: SetPodView | undefined): ReconcileDeps {
    if (view === undefined) return this.deps;
    let deps = this.viewDeps.get(view);
    if (deps === undefined) {
      deps = { ...this.deps, rollout: { ...this.deps.rollout, setPods: view.source, pods: view.writer, deferredWrites: this.deferredWrites } };
      this.viewDeps.set(view, deps);
    }
    return deps;
  }

  /** A reconcile into the summary, and to the metrics. */
  private record(name: string, result: ReconcileResult): void {
    try {
      this.deps.onReconcile?.(result);
    } catch (error) {
      this.summary.errors.push({ sidecarSet: name, operation: 'record metrics', message: errorMessage(error) });
    }
    this.summary.reconciles++;
    addUp(result, this.summary, this.summary.errors);
  }
}
