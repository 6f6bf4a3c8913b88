/**
 * The resync's sets sent down their one route (set-reconcile.ts), each route
 * decided once, from the one pod list all sets were counted from: the sets
 * their streamed counts decide, writeConcurrency at a time; then the sets
 * that roll, from their own pod lists, one at a time.
 */
import { errorMessage } from '../errors.ts';
import { sidecarSetName } from '../sidecarset/match.ts';
import type { StatusAccumulator } from '../sidecarset/status.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { forEachLimited } from './concurrency.ts';
import { DEFAULTS, type ResyncResult, type RevisionsBySet, type ResyncDeps, type ResyncOptions } from './resync-types.ts';
import { addUp, routeOf, runSet, type Route, type ReconcileResult } from './set-reconcile.ts';

export class SetDispatch {
  /** Each set's route, by its index among the sets, once decided. */
  private readonly decided = new Map<number, Route>();
  private readonly sets: readonly SidecarSet[];
  private readonly counts: readonly StatusAccumulator[];
  private readonly revisions: RevisionsBySet | undefined;
  private readonly deps: ResyncDeps;
  private readonly options: ResyncOptions;
  private readonly result: ResyncResult;

  constructor(sets: readonly SidecarSet[], counts: readonly StatusAccumulator[], revisions: RevisionsBySet | undefined, deps: ResyncDeps, options: ResyncOptions, result: ResyncResult) {
    this.sets = sets;
    this.counts = counts;
    this.revisions = revisions;
    this.deps = deps;
    this.options = options;
    this.result = result;
  }

  /**
   * Which counted sets their streamed counts decide and which roll from their
   * own pods (only when the revisions were listed: a set cannot roll without
   * its revision registered).
   */
  routes(toWrite: readonly number[]): { counted: number[]; rolling: number[] } {
    const counted: number[] = [];
    const rolling: number[] = [];
    const rolls = this.revisions !== undefined && this.deps.rollout !== undefined;
    for (const i of toWrite) {
      const route = routeOf(this.set(i), { streamed: this.counts[i] as StatusAccumulator, stored: this.stored(i) }, rolls);
      this.decided.set(i, route);
      (route.from === 'pods' ? rolling : counted).push(i);
    }
    return { counted, rolling };
  }

  /** The sets their counts decide, writeConcurrency at a time. False when the reconcile was stopped before every one was compared. */
  async runCounted(counted: readonly number[]): Promise<boolean> {
    const { signal } = this.options;
    let outOfTime = 0;
    await forEachLimited(counted, this.options.writeConcurrency ?? DEFAULTS.writeConcurrency, async (i) => {
      // Once the deadline passed, one error says so rather than one per set.
      if (signal?.aborted === true) {
        outOfTime++;
        return;
      }
      const options = { ...(signal === undefined ? {} : { signal }), maxWriteAttempts: this.options.maxWriteAttempts ?? DEFAULTS.maxWriteAttempts };
      this.add(await runSet(this.set(i), this.deps, options, { streamed: this.counts[i] as StatusAccumulator, stored: this.stored(i) }, this.decided.get(i)));
    });
    if (outOfTime > 0) {
      this.result.errors.push({ operation: 'patch status', message: `the resync was stopped (${errorMessage(signal?.reason)}) before ${outOfTime} statuses were compared and written` });
      return false;
    }
    return true;
  }

  /** The sets that roll, from their own pod lists, one set at a time. */
  async runRolling(rolling: readonly number[]): Promise<void> {
    const { signal } = this.options;
    const summary = this.result.rollout;
    if (summary === undefined) return;
    if (this.options.handOff !== undefined) {
      await this.handOff(rolling.map((i) => sidecarSetName(this.set(i))), summary.inFlight);
      return;
    }
    for (const i of rolling) {
      if (signal?.aborted === true) {
        this.result.errors.push({ operation: 'roll out', message: `the resync was stopped (${errorMessage(signal.reason)}) before every set rolled` });
        return;
      }
      summary.setsRolled++;
      this.add(await runSet(this.set(i), this.deps, signal === undefined ? {} : { signal }, { stored: this.stored(i) ?? [] }, this.decided.get(i)));
    }
  }

  /** The rolling sets' names handed over, in flight once they are; a failed hand-over is one error for them all. */
  private async handOff(names: string[], inFlight: string[]): Promise<void> {
    if (names.length === 0 || this.options.handOff === undefined) return;
    try {
      await this.options.handOff(names, this.options.signal);
      inFlight.push(...names);
    } catch (error) {
      this.result.errors.push({ operation: 'hand over the rolling sets', message: `${names.join(', ')}: ${errorMessage(error)}; the next resync hands them again` });
    }
  }

  private set(i: number): SidecarSet {
    return this.sets[i] as SidecarSet;
  }

  /** The set's revisions; undefined when they could not be listed. */
  private stored(i: number) {
    return this.revisions === undefined ? undefined : (this.revisions.get(sidecarSetName(this.set(i))) ?? []);
  }

  /** Adds one set's route to the reconcile's result (set-reconcile.ts `addUp` for what the controller adds up too). */
  private add(setResult: ReconcileResult): void {
    const { result } = this;
    const summary = result.rollout;
    if (summary !== undefined) {
      summary.podsFailed = (summary.podsFailed ?? 0) + setResult.podsFailed;
      summary.revisionWrites += setResult.revisionWrites;
      if (setResult.inFlight) summary.inFlight.push(setResult.sidecarSet);
      addUp(setResult, summary, result.errors);
    } else result.errors.push(...setResult.errors);
    if (setResult.unavailable !== undefined) (result.unavailable ??= {})[setResult.sidecarSet] = setResult.unavailable;
    if (setResult.status === 'written') result.statusesWritten++;
    else if (setResult.status === 'unchanged') result.statusesUnchanged++;
    // A rolled set's own list is newer than the streamed one.
    if (setResult.counts !== undefined && result.sets !== undefined) result.sets[setResult.sidecarSet] = { ...setResult.counts };
  }
}
