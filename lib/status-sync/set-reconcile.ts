/**
 * One SidecarSet's reconcile, the one route every set takes, idle or rolling
 * (rollout.md §0), in the steps of Kruise's sidecarset_processor.go, each a
 * method of `SetReconcile`:
 *
 * 1. route: a set its counts decide (the stop rule: NotUpdate, finished,
 *    paused, nothing mid hot upgrade) is planned from the resync's streamed
 *    counts; any other set from its own pod list, which starts now.
 * 2. register the latest revision (when the revisions are known).
 * 3. plan, from the counts or the set's own pods (a set with streamed counts
 *    whose revision could not be registered falls back to its counts).
 * 4. trim the history past its limit (as Kruise does while registering, so a
 *    status naming the new revision never comes with more than the limit).
 * 5. status: written when it differs, conditional on the resourceVersion read.
 * 6. batch: the flips, conditions and guarded pod patches of the plan's batch.
 * 7. state: the rollout's state, reported when it changed (rollout-state.ts),
 *    and whether the set is in flight.
 *
 * The resync (resync.ts) sends every counted set down this route; the controller
 * loop (run-controller.ts) sends the sets with work in flight again.
 *
 * Safety: every decision comes from the list this reconcile made, and every pod
 * write is a JSON Patch guarded by a `test` of the resourceVersion that list
 * showed. A pod that changed since is skipped (decided again next reconcile), so
 * two reconciles, a restart mid-reconcile or a concurrent writer can never update a
 * pod from a stale view, and maxUnavailable holds at every stored moment.
 */
import { errorMessage } from '../errors.ts';
import { jsonEqual, objectOf, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import type { PodScope, SetPodSource } from '../ports.ts';
import { StatusConflictError } from '../ports/errors.ts';
import { countsAfterUpdates } from '../rollout/counts-after.ts';
import { decidedByCounts, planRollout, type RolloutCounts, type RolloutPlan } from '../rollout/plan.ts';
import { backfillInjectedList, podUpdatePatch } from '../rollout/pod-patch.ts';
import { podScope } from '../rollout/pod-scope.ts';
import { activeRevisions } from '../rollout/revision-history.ts';
import { rolloutStatusFields, batchWrites, type BatchWrites } from '../rollout/batch.ts';
import { hasNamespaceSelector, sidecarSetName, type NamespaceLabels } from '../sidecarset/match.ts';
import type { ControllerRevision } from '../sidecarset/revisions.ts';
import { podRef } from '../sidecarset/pod-state.ts';
import { statusInputsKey, type StatusAccumulator } from '../sidecarset/status.ts';
import type { SidecarSet, SidecarSetStatus } from '../sidecarset/types.ts';
import { StatusNotWrittenError, type ReconcileError } from './errors.ts';
import { recordRevisionFailure } from './revision-failure.ts';
import { registerRevision, trimHistory, type Registration } from './revision-register.ts';
import { DEFAULT_STALL_MS, rolloutState, stuckPods, type RolloutState } from './rollout-state.ts';
import type { RolloutDeps, ReconcileDeps, ReconcileOptions, ReconcileResult, SetRouteDeps, SetSource, SetTally } from './set-reconcile-types.ts';
import { sendBatch, recordFailures, withoutBusyPods } from './set-batch.ts';

export type { RolloutDeps, ReconcileDeps, ReconcileOptions, ReconcileResult, SetRouteDeps, SetSource, SetTally } from './set-reconcile-types.ts';
export { MAX_POD_FAILURE_EVENTS } from './set-batch.ts';

/** Adds one set's reconcile to a summary, the one place it is done; its errors go to `errors`. */
export function addUp(result: ReconcileResult, tally: SetTally, errors: ReconcileError[]): void {
  tally.podsUpdated += result.podsUpdated;
  tally.podsFlipped += result.podsFlipped;
  tally.conflicts += result.conflicts;
  if (result.stateChange !== undefined) tally.states[result.sidecarSet] = result.stateChange;
  errors.push(...result.errors);
}

const DEFAULT_MAX_WRITE_ATTEMPTS = 4;

/**
 * Runs the reconcile for `set` (as just read from the API server) from its own pod list.
 * @param stored the set's ControllerRevisions when the caller already listed them (the resync lists all at once).
 */
export async function reconcileSet(set: SidecarSet, deps: ReconcileDeps, options: ReconcileOptions = {}, stored?: readonly ControllerRevision[]): Promise<ReconcileResult> {
  return runSet(set, deps, options, stored === undefined ? {} : { stored });
}

/** What the plan step saw: the plan (none when only counts could be had), the counts for a version of the set, the revisions in use, the list it came from. */
interface Seen {
  plan: RolloutPlan | undefined;
  countsFor: (current: SidecarSet) => RolloutCounts;
  inUse: () => Iterable<string>;
  list?: { pods: readonly Pod[]; resourceVersion: string; scope: PodScope | undefined };
}

/** The plan of a set its streamed counts decide: nothing to update, flip or report but its waiting reason. */
function countedPlan(set: SidecarSet, counts: StatusAccumulator): RolloutPlan | undefined {
  const status = counts.counts();
  const unavailable = counts.unavailablePods();
  const waiting = decidedByCounts(set, status, counts.hotSwappingPods, unavailable);
  if (waiting === undefined) return undefined;
  // The updated pods it waits for are named as the plan from the set's own list names them (stalled, metrics).
  return { status, updates: [], notUpgradable: [], flips: [], swapping: 0, waiting, ...(waiting.kind === 'updated-not-ready' ? { unavailable: waiting.stuck } : {}) };
}

/** Where a set's plan comes from, decided once, before the reconcile reads anything. */
export interface Route {
  /** 'counts': the resync's streamed counts (they decide the set, or are all there is); 'pods': the set's own pod list. */
  from: 'counts' | 'pods';
  /** The plan the streamed counts give, when they decide the set. */
  counted: RolloutPlan | undefined;
  /** Whether the latest revision is registered: only with the rollout's ports and the revisions known (listed by the resync, or by this reconcile). */
  registers: boolean;
}

/** The set's route: `rolls` when the rollout's ports are there (the resync sends a set whose route is 'pods' with its own list). */
export function routeOf(set: SidecarSet, source: SetSource, rolls: boolean): Route {
  const { streamed } = source;
  const counted = streamed === undefined ? undefined : countedPlan(set, streamed);
  const registers = rolls && (streamed === undefined || source.stored !== undefined);
  return { from: streamed === undefined || (counted === undefined && registers) ? 'pods' : 'counts', counted, registers };
}

/**
 * The one route (see the file's comment), its steps in order, as Kruise's
 * sidecarset_processor.go numbers them. Never throws: what fails is in the
 * result's errors.
 */
export async function runSet(set: SidecarSet, deps: SetRouteDeps, options: ReconcileOptions, source: SetSource, route: Route = routeOf(set, source, deps.rollout !== undefined)): Promise<ReconcileResult> {
  const reconcile = new SetReconcile(set, deps, options, source, route);
  if (source.streamed === undefined && deps.rollout === undefined) return reconcile.fail('list pods', new Error('a set planned from its own pods needs the rollout ports'));
  // 1. Route: from the counts, or from the set's own pods, listed while 2 runs (the list is the reconcile's longest read).
  reconcile.startList();
  // 2. Register the latest revision.
  if (!(await reconcile.register())) return reconcile.result;
  // 3. Plan.
  const seen = await reconcile.plan();
  if (seen === undefined) return reconcile.result;
  reconcile.result.counts = seen.countsFor(set);
  // 4. Trim the history past its limit.
  await reconcile.trim(seen);
  // 5. Status.
  if (!(await reconcile.status(seen))) return reconcile.result;
  // 6. Batch: only a set with a plan, the rollout's ports and its revision registered rolls.
  const { plan } = seen;
  const { rollout } = deps;
  if (plan === undefined || rollout === undefined || reconcile.unregistered) return reconcile.result;
  const batch = await reconcile.batch(plan, rollout);
  if (batch === undefined) return reconcile.result;
  // 7. State, and whether the set is in flight (the controller requeues it).
  await reconcile.state(seen, plan, rollout, batch);
  return reconcile.result;
}

/** One set's reconcile: each step of the route a method, and what each leaves for the next. */
class SetReconcile {
  readonly result: ReconcileResult;
  private readonly set: SidecarSet;
  private readonly name: string;
  private readonly deps: SetRouteDeps;
  private readonly options: ReconcileOptions;
  private readonly source: SetSource;
  private readonly route: Route;
  private readonly scope: PodScope | undefined;
  private listing: { result: () => ReturnType<SetPodSource['list']>; cancel: () => void } | undefined;
  private registration: Registration | undefined;
  /** Registering the revision failed: nothing rolls (Kruise writes no status and rolls nothing). */
  unregistered = false;

  constructor(set: SidecarSet, deps: SetRouteDeps, options: ReconcileOptions, source: SetSource, route: Route) {
    this.set = set;
    this.name = sidecarSetName(set);
    this.deps = deps;
    this.options = options;
    this.source = source;
    this.route = route;
    this.scope = podScope(set);
    this.result = { sidecarSet: this.name, status: 'not-written', podsUpdated: 0, podsFlipped: 0, conflicts: 0, podsFailed: 0, revisionWrites: 0, inFlight: false, restarting: false, errors: [] };
  }

  fail(operation: string, error: unknown): ReconcileResult {
    this.result.errors.push({ sidecarSet: this.name, operation, message: errorMessage(error) });
    return this.result;
  }

  startList(): void {
    const { rollout } = this.deps;
    if (this.route.from === 'pods' && rollout !== undefined && this.scope !== undefined) this.listing = startList(rollout.setPods, this.scope, this.options.signal);
  }

  /** Whether the reconcile goes on. */
  async register(): Promise<boolean> {
    const { rollout } = this.deps;
    if (!this.route.registers || rollout === undefined) return true;
    const { set, options: { signal } } = this;
    try {
      this.registration = await registerRevision(set, this.source.stored ?? (await rollout.revisions.list(this.name, {}, signal)), rollout.revisions, signal, rollout.revisionFacts);
      this.result.revisionWrites += this.registration.writes;
      return true;
    } catch (error) {
      this.unregistered = true;
      await recordRevisionFailure(set, error, { events: this.deps.events, states: rollout.states }, this.result.errors, signal);
      this.fail('register the revision', error);
      // Kruise writes no status when the revision cannot be registered (the status names it) and rolls nothing;
      // counts the set's own pods were not listed for do not depend on it and are still written.
      if (this.source.streamed !== undefined) return true;
      this.listing?.cancel();
      return false;
    }
  }

  /** From the counts when the route says so, or when registering failed and they are there; else from the set's own pods. */
  async plan(): Promise<Seen | undefined> {
    const { streamed } = this.source;
    if (streamed === undefined || (this.route.from === 'pods' && !this.unregistered)) return this.planFromPods();
    this.listing?.cancel();
    return { plan: this.route.counted, countsFor: (current) => streamed.counts(current), inUse: () => streamed.revisionsInUse };
  }

  private async planFromPods(): Promise<Seen | undefined> {
    const { set, deps, listing } = this;
    let pods: readonly Pod[] = [];
    let resourceVersion = '';
    let labels: NamespaceLabels = new Map();
    let plan: RolloutPlan;
    const now = deps.rollout?.clock.now() ?? new Date();
    const latestRevision = this.registration?.latestRevision ?? '';
    try {
      if (listing !== undefined) ({ pods, resourceVersion } = await listing.result());
      labels = hasNamespaceSelector(set) ? await deps.namespaces.labels([...new Set(pods.map((p) => podRef(p).namespace))], this.options.signal) : new Map<string, Record<string, string>>();
      // Matched pods carry the injected list; the backfill is only Kruise's guard for ones that lost it.
      plan = planRollout(set, pods, labels, { patchFor: (pod) => podUpdatePatch({ pod, set, latestRevision, injectedList: backfillInjectedList([set]), now }) });
    } catch (error) {
      this.result.inFlight = true;
      this.fail('list pods', error);
      return undefined;
    }
    const history = this.registration?.history ?? [];
    return { plan, countsFor: () => plan.status, inUse: () => [...activeRevisions(set, pods, history)], list: { pods, resourceVersion, scope: this.scope } };
  }

  async trim(seen: Seen): Promise<void> {
    const { registration } = this;
    const { rollout } = this.deps;
    if (registration === undefined || rollout === undefined) return;
    const trimmed = await trimHistory(this.set, registration.history, seen.inUse(), rollout.revisions, this.options.signal);
    this.result.revisionWrites += trimmed.deleted;
    if (trimmed.problem?.startsWith('delete') === true) this.result.errors.push({ sidecarSet: this.name, operation: 'trim revision history', message: trimmed.problem });
  }

  /** Whether the reconcile goes on. */
  async status(seen: Seen): Promise<boolean> {
    const { registration } = this;
    const statusFor = (current: SidecarSet): SidecarSetStatus => ({ ...objectOf(current.status), ...rolloutStatusFields(current, seen.countsFor(current), registration) });
    try {
      const written = await writeStatus(this.set, statusFor, this.deps, this.options, seen.list === undefined);
      if (written === 'gone') return false;
      this.result.status = written;
    } catch (error) {
      this.fail('patch status', error);
      // A batch planned from the version read is decided again next reconcile; a set its counts decide still tells its state.
      if (seen.list !== undefined) {
        this.result.inFlight = true;
        return false;
      }
    }
    return true;
  }

  /** The batch's writes sent; the pods updated and the versions the writes made, or undefined when the writes could not be planned. */
  async batch(plan: RolloutPlan, rollout: RolloutDeps): Promise<{ updated: Pod[]; own: Set<string> } | undefined> {
    const { set, result } = this;
    let writes: BatchWrites;
    try {
      writes = batchWrites(set, plan, this.registration?.latestRevision ?? '', () => backfillInjectedList([set]), rollout.clock.now());
    } catch (error) {
      this.fail('plan pod writes', error);
      return undefined;
    }
    if (rollout.deferredWrites !== undefined) writes = withoutBusyPods(writes, rollout.deferredWrites, result);
    const own = new Set<string>();
    const updated: Pod[] = [];
    const deps = { ...this.deps, rollout };
    const failures = await sendBatch(writes, { name: this.name, uid: stringOf(set.metadata?.uid) ?? '' }, deps, this.options, result, own, updated);
    await recordFailures(failures, set, deps, result, own, this.options.signal);
    return { updated, own };
  }

  /** The rollout's state, reported when it is new; then whether the set is in flight, and where its pods' watch starts. */
  async state(seen: Seen, plan: RolloutPlan, rollout: RolloutDeps, batch: { updated: Pod[]; own: Set<string> }): Promise<void> {
    const { name, result } = this;
    const nowMs = rollout.clock.now().getTime();
    const aheadSinceMs = rollout.states.aheadSince(name, (stuckPods(plan.waiting)?.lastUpdateMs ?? 0) > nowMs, nowMs);
    // Told with the counts the reconcile leaves, not those it found: the pods it just updated are updated.
    const state = rolloutState(countsAfterUpdates(plan.status, this.set, batch.updated), result.podsUpdated, plan.waiting, { nowMs, stallMs: rollout.stallMs ?? DEFAULT_STALL_MS, ...(aheadSinceMs === undefined ? {} : { aheadSinceMs }) });
    result.state = state;
    if (plan.unavailable !== undefined) result.unavailable = Object.fromEntries(plan.unavailable.reasons.map((r) => [r.reason, r.count]));
    await reportState(this.set, state, { ...this.deps, rollout }, result, this.options.signal);
    // A stalled rollout is left to the schedule: requeuing it would spend every controller budget on a wait.
    const waitsOnPods = plan.waiting?.kind === 'max-unavailable' || plan.waiting?.kind === 'updated-not-ready';
    result.inFlight = result.podsUpdated > 0 || result.podsFlipped > 0 || result.conflicts > 0 || (result.deferred ?? 0) > 0 || (waitsOnPods && state.reason !== 'RolloutStalled') || plan.swapping > 0;
    result.restarting = plan.status.updatedReadyPods < plan.status.updatedPods && state.reason !== 'RolloutStalled';
    if (seen.list?.scope !== undefined) result.watch = { scope: seen.list.scope, resourceVersion: seen.list.resourceVersion, own: batch.own };
  }
}

/** A set's pod list started ahead of its use: its failure is kept for the reader, and it can be called off. */
function startList(source: SetPodSource, scope: PodScope, signal: AbortSignal | undefined): { result: () => ReturnType<SetPodSource['list']>; cancel: () => void } {
  const own = new AbortController();
  const listed = source.list(scope, signal === undefined ? own.signal : AbortSignal.any([signal, own.signal]));
  // Read later (or never, when registering fails): a rejection before then is not unhandled.
  listed.catch(() => undefined);
  return { result: () => listed, cancel: () => {
      own.abort();
    } };
}

/**
 * Writes the set's status when it differs from the stored one, conditional
 * on the resourceVersion read. On a conflict, counts streamed for the whole
 * cluster serve any version of the set that selects the same pods
 * (statusInputsKey): the set is read again and the write tried again, up to
 * maxWriteAttempts. A status from the set's own list is not: the set is
 * decided again next reconcile.
 * @returns 'gone' when the set no longer exists.
 * @throws when the status cannot be written (the message says why).
 */
async function writeStatus(
  set: SidecarSet,
  statusFor: (current: SidecarSet) => SidecarSetStatus,
  deps: Pick<ReconcileDeps, 'statuses'>,
  options: ReconcileOptions,
  reread: boolean,
): Promise<'written' | 'unchanged' | 'gone'> {
  const { signal } = options;
  const maxWriteAttempts = options.maxWriteAttempts ?? DEFAULT_MAX_WRITE_ATTEMPTS;
  const name = sidecarSetName(set);
  const inputs = statusInputsKey(set);
  let current = set;
  for (let attempt = 1; ; attempt++) {
    const status = statusFor(current);
    if (jsonEqual(objectOf(current.status) ?? {}, status)) return 'unchanged';
    try {
      return (await deps.statuses.patchStatus(name, stringOf(current.metadata?.resourceVersion), status, signal)) === 'written' ? 'written' : 'gone';
    } catch (error) {
      if (!(error instanceof StatusConflictError)) throw error;
      if (!reread) throw new Error('the SidecarSet changed during the reconcile; it is decided again next reconcile');
      if (attempt >= maxWriteAttempts) throw new StatusNotWrittenError(name, `the SidecarSet kept changing: ${maxWriteAttempts} writes conflicted`, { cause: error });
    }
    const fresh = await deps.statuses.get(name, signal);
    if (fresh === undefined) return 'gone';
    if (statusInputsKey(fresh) !== inputs) {
      throw new StatusNotWrittenError(name, 'the SidecarSet changed which pods it selects during the reconcile; its status is computed again next reconcile');
    }
    current = fresh;
  }
}


/** Reports the set's rollout state when it is new (rollout-state.ts). */
async function reportState(set: SidecarSet, state: RolloutState, deps: ReconcileDeps, result: ReconcileResult, signal: AbortSignal | undefined): Promise<void> {
  const ref = { name: result.sidecarSet, uid: stringOf(set.metadata?.uid) ?? '' };
  const event = deps.rollout.states.due(ref, state);
  // A stall an earlier process told (a cold start's first sight of it) is nothing new.
  if (event === undefined || (await deps.rollout.states.recordedBefore(ref, state, signal))) return;
  result.stateChange = state.message;
  try {
    await deps.events.record(event, signal);
    deps.rollout.states.reported(ref.name, state);
  } catch (error) {
    result.errors.push({ sidecarSet: ref.name, operation: 'record event', message: errorMessage(error) });
  }
}
