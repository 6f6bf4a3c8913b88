/**
 * One SidecarSet's pass, the one route every set takes, idle or rolling
 * (rollout.md §0): plan, register, status, round, state.
 *
 * - plan: a set its counts decide (the stop rule: NotUpdate, finished,
 *   paused, with nothing mid hot upgrade) is planned from the full pass's
 *   streamed counts; any other set from its own pod list, after its revision
 *   is registered.
 * - register the latest revision; trim the history past its limit (Kruise
 *   does it while registering, so a status naming the new revision never
 *   comes with more revisions than the limit).
 * - status: written when it differs, conditional on the resourceVersion read.
 * - round: the flips, conditions and guarded pod patches of the plan's batch
 *   (none for a set that stops).
 * - state: the rollout's state, reported when it changed (rollout-state.ts).
 *
 * The full pass (pass.ts) sends every counted set down this route; the pace
 * loop (pace.ts) sends the sets with work in flight again, from their own lists.
 *
 * Safety: every decision comes from the list this pass made, and every pod
 * write is a JSON Patch guarded by a `test` of the resourceVersion that list
 * showed. A pod that changed since is skipped (decided again next pass), so
 * two passes, a restart mid-pass or a concurrent writer can never update a
 * pod from a stale view, and maxUnavailable holds at every stored moment.
 */
import { errorMessage } from '../errors.ts';
import { jsonEqual, objectOf, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import type { Clock, NamespaceSource, PodEvent, PodEventSink, PodScope, PodWriter, RevisionStore, SetPodSource, SidecarSetEventSink, SidecarSetStatusWriter } from '../ports.ts';
import { decidedByCounts, planRollout, type RolloutCounts, type RolloutPlan } from '../rollout/plan.ts';
import { podScope } from '../rollout/pod-scope.ts';
import { backfillInjectedList, podUpdatePatch } from '../rollout/pod-patch.ts';
import { activeRevisions } from '../rollout/revision-history.ts';
import type { ControllerRevision } from '../sidecarset/revisions.ts';
import { podKey } from '../sidecarset/pod-state.ts';
import { FLIP_EVENT, POD_UPDATE_FAILED_REASON, podUpdateFailedMessage, podUpdateFailedNote, rolloutStatusFields, roundWrites, type RoundWrites } from '../rollout/round.ts';
import { upgradableConditionPatch } from '../rollout/upgradable-condition.ts';
import { hasNamespaceSelector, sidecarSetName, type NamespaceLabels } from '../sidecarset/match.ts';
import { statusInputsKey, type StatusAccumulator } from '../sidecarset/status.ts';
import type { SidecarSet, SidecarSetStatus } from '../sidecarset/types.ts';
import { forEachLimited } from './concurrency.ts';
import { StatusConflictError, WriteConflictError } from '../ports/errors.ts';
import { StatusNotWrittenError, type PassError } from './errors.ts';
import { tellRevisionFailure } from './revision-failure.ts';
import { registerRevision, trimHistory, type Registration, type RevisionFactsOf } from './revision-register.ts';
import type { TrailingWrites } from './trailing-writes.ts';
import { countsAfterUpdates } from '../rollout/counts-after.ts';
import { DEFAULT_STALL_MS, rolloutState, stuckPods, type RolloutState, type RolloutStateNotices } from './rollout-state.ts';

/** What the rollout needs besides the status pass's ports. */
export interface RolloutDeps {
  revisions: RevisionStore;
  setPods: SetPodSource;
  pods: PodWriter;
  /** Where a HotUpgrade flip's outcome is told, on the pod. */
  podEvents: PodEventSink;
  /** The time written into pod annotations and conditions. */
  clock: Clock;
  /** What was last reported of each set's rollout state; lives as long as the process. */
  states: RolloutStateNotices;
  /**
   * How long updated pods may stay unavailable, since the last of them was
   * updated, before the rollout is stalled (ROLLOUT_STALL_MS). Default 60 s.
   */
  stallMs?: number;
  /** What registering derives from a stored set; kept per stored version when it lives as long as the process (revision-register.ts). */
  revisionFacts?: RevisionFactsOf;
  /**
   * Where the pass hands the writes that neither free nor take a slot (the
   * updated pods' conditions, the flips' Events) instead of waiting for them
   * (trailing-writes.ts); pods with such a write pending are left to a later
   * pass. None: the pass sends them itself before it ends.
   */
  trailing?: TrailingWrites;
}

export interface SetPassDeps {
  statuses: SidecarSetStatusWriter;
  events: SidecarSetEventSink;
  namespaces: NamespaceSource;
  rollout: RolloutDeps;
}

/** The route's ports when a set is planned from streamed counts: without the rollout's (the offline invoke), statuses only. */
export type SetRouteDeps = Omit<SetPassDeps, 'rollout'> & { rollout?: RolloutDeps };

export interface SetPassOptions {
  signal?: AbortSignal;
  /** Pod writes in flight at once. Default 8. */
  writeConcurrency?: number;
  /** Writes of a status planned from streamed counts, the first included, before a conflict counts as an error. Default 4. */
  maxWriteAttempts?: number;
}

/**
 * Where a set's pass finds its pods: its own list (`stored`: its revisions
 * when the caller already listed them), or the full pass's streamed counts
 * (`stored` undefined when the revisions could not be listed: nothing is
 * registered and the status keeps its revision fields).
 */
export type SetSource = { streamed?: undefined; stored?: readonly ControllerRevision[] } | { streamed: StatusAccumulator; stored: readonly ControllerRevision[] | undefined };

/** What one set's pass did. */
export interface SetPassResult {
  sidecarSet: string;
  /** Whether the status was written, already right, or not written (see errors). */
  status: 'written' | 'unchanged' | 'not-written';
  podsUpdated: number;
  /** Pods whose finished hot upgrade was flipped (old containers back to the empty image). */
  podsFlipped: number;
  /** Pods skipped because they changed since the list (decided again next pass). */
  conflicts: number;
  /** Pods the plan would have written but left to a later pass: a trailing write of theirs was still pending. */
  deferred?: number;
  /** ControllerRevisions created, renumbered, labelled or deleted. */
  revisionWrites: number;
  /** The rollout state, when it changed since last reported (the pass logs it). */
  stateChange?: string;
  /** The rollout state this pass decided (whether or not it was news), for metrics. */
  state?: RolloutState;
  /** The updated pods not available, by the kubelet's reason, for metrics. */
  unavailable?: Record<string, number>;
  /** Pods skipped because their write failed (told on the pod and the set; tried again next pass). */
  podsFailed: number;
  /** The counts the pass saw, for telling progress from a stall. */
  counts?: RolloutPlan['status'];
  /**
   * Work in flight: pods written or skipped on a conflict this pass, the
   * next batch waiting for updated pods to become ready (maxUnavailable), or
   * pods mid hot upgrade waiting for their flip; the pace loop comes back soon.
   */
  inFlight: boolean;
  /** Updated pods not ready yet (the last batch restarting, or pods unready for reasons of their own). */
  restarting: boolean;
  /** For waiting on the set's pods: the scope and the list's resourceVersion, and the versions this pass wrote. */
  watch?: { scope: PodScope; resourceVersion: string; own: Set<string> };
  errors: PassError[];
}

/** What a set's passes add to a summary: the pass's rollout part and the pace loop's both have these. */
export interface SetTally {
  podsUpdated: number;
  podsFlipped: number;
  conflicts: number;
  states: Record<string, string>;
}

/** Adds one set's pass to a summary, the one place it is done; its errors go to `errors`. */
export function addUp(result: SetPassResult, tally: SetTally, errors: PassError[]): void {
  tally.podsUpdated += result.podsUpdated;
  tally.podsFlipped += result.podsFlipped;
  tally.conflicts += result.conflicts;
  if (result.stateChange !== undefined) tally.states[result.sidecarSet] = result.stateChange;
  errors.push(...result.errors);
}

const DEFAULT_WRITE_CONCURRENCY = 8;
const DEFAULT_MAX_WRITE_ATTEMPTS = 4;

function podRef(pod: Pod): { namespace: string; name: string } {
  return { namespace: stringOf(pod.metadata?.namespace) ?? '', name: stringOf(pod.metadata?.name) ?? '' };
}

/**
 * Runs the pass for `set` (as just read from the API server) from its own pod list.
 * @param stored the set's ControllerRevisions when the caller already listed them (the full pass lists all at once).
 */
export async function runSetPass(set: SidecarSet, deps: SetPassDeps, options: SetPassOptions = {}, stored?: readonly ControllerRevision[]): Promise<SetPassResult> {
  return runSet(set, deps, options, stored === undefined ? {} : { stored });
}

/** Whether the full pass's streamed counts decide `set` (no list of its own, no round): the route's plan step decides the same way. */
export function isDecidedByCounts(set: SidecarSet, counts: StatusAccumulator): boolean {
  return countedPlan(set, counts) !== undefined;
}

/** What the plan step saw: the plan (none when only counts could be had), the counts for a version of the set, the revisions in use. */
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

/**
 * The one route (see the file's comment). Never throws: what fails is in the result's errors.
 */
export async function runSet(set: SidecarSet, deps: SetRouteDeps, options: SetPassOptions, source: SetSource): Promise<SetPassResult> {
  const { signal } = options;
  const { rollout } = deps;
  const name = sidecarSetName(set);
  const result: SetPassResult = { sidecarSet: name, status: 'not-written', podsUpdated: 0, podsFlipped: 0, conflicts: 0, podsFailed: 0, revisionWrites: 0, inFlight: false, restarting: false, errors: [] };
  const fail = (operation: string, error: unknown) => {
    result.errors.push({ sidecarSet: name, operation, message: errorMessage(error) });
    return result;
  };
  const { streamed } = source;
  if (streamed === undefined && rollout === undefined) return fail('list pods', new Error('a set planned from its own pods needs the rollout ports'));
  // Plan, from the counts when they decide the set.
  const counted = streamed === undefined ? undefined : countedPlan(set, streamed);
  // Without the revisions (not listed, or no rollout ports) nothing is registered.
  const revisionsKnown = rollout !== undefined && (streamed === undefined || source.stored !== undefined);

  // The set's own pods, when it is planned from them, are listed while its revision is registered: neither
  // needs the other, and the list is the pass's longest read, which a slot a pod just freed waits for.
  const scope = podScope(set);
  const listing = rollout !== undefined && scope !== undefined && (streamed === undefined || (counted === undefined && revisionsKnown)) ? startList(rollout.setPods, scope, signal) : undefined;

  // Register.
  let registration: Registration | undefined;
  let registered = true;
  if (revisionsKnown) {
    try {
      registration = await registerRevision(set, source.stored ?? (await rollout.revisions.list(name, {}, signal)), rollout.revisions, signal, rollout.revisionFacts);
      result.revisionWrites += registration.writes;
    } catch (error) {
      registered = false;
      await tellRevisionFailure(set, error, { events: deps.events, states: rollout.states }, result.errors, signal);
      fail('register the revision', error);
      // Kruise writes no status when the revision cannot be registered (the status names it) and rolls nothing;
      // counts the set's own pods were not listed for do not depend on it and are still written.
      if (streamed === undefined) {
        listing?.cancel();
        return result;
      }
    }
  }

  // Plan, from the set's own pods when the counts do not decide it.
  let seen: Seen;
  if (streamed !== undefined && (counted !== undefined || !revisionsKnown || !registered)) {
    listing?.cancel();
    seen = { plan: counted, countsFor: (current) => streamed.counts(current), inUse: () => streamed.revisionsInUse };
  } else {
    let pods: readonly Pod[] = [];
    let resourceVersion = '';
    let labels: NamespaceLabels = new Map();
    let plan: RolloutPlan;
    const now = rollout?.clock.now() ?? new Date();
    const latestRevision = registration?.latestRevision ?? '';
    try {
      if (listing !== undefined) ({ pods, resourceVersion } = await listing.result());
      labels = hasNamespaceSelector(set) ? await deps.namespaces.labels([...new Set(pods.map((p) => podRef(p).namespace))], signal) : new Map<string, Record<string, string>>();
      // Matched pods carry the injected list; the backfill is only Kruise's guard for ones that lost it.
      plan = planRollout(set, pods, labels, { patchFor: (pod) => podUpdatePatch({ pod, set, latestRevision, injectedList: backfillInjectedList([set]), now }) });
    } catch (error) {
      result.inFlight = true;
      return fail('list pods', error);
    }
    const history = registration?.history ?? [];
    seen = { plan, countsFor: () => plan.status, inUse: () => [...activeRevisions(set, pods, history)], list: { pods, resourceVersion, scope } };
  }
  const { plan } = seen;
  result.counts = seen.countsFor(set);

  if (registration !== undefined && rollout !== undefined) {
    const trimmed = await trimHistory(set, registration.history, seen.inUse(), rollout.revisions, signal);
    result.revisionWrites += trimmed.deleted;
    if (trimmed.problem?.startsWith('delete') === true) result.errors.push({ sidecarSet: name, operation: 'trim revision history', message: trimmed.problem });
  }

  // Status.
  const statusFor = (current: SidecarSet): SidecarSetStatus => ({ ...objectOf(current.status), ...rolloutStatusFields(current, seen.countsFor(current), registration) });
  try {
    const written = await writeStatus(set, statusFor, deps, options, seen.list === undefined);
    if (written === 'gone') return result;
    result.status = written;
  } catch (error) {
    fail('patch status', error);
    // A round planned from the version read is decided again next pass; a set its counts decide still tells its state.
    if (seen.list !== undefined) {
      result.inFlight = true;
      return result;
    }
  }
  if (plan === undefined || rollout === undefined || !registered) return result;

  // Round.
  const own = new Set<string>();
  let writes: RoundWrites;
  try {
    writes = roundWrites(set, plan, registration?.latestRevision ?? '', () => backfillInjectedList([set]), rollout.clock.now());
  } catch (error) {
    return fail('plan pod writes', error);
  }
  if (rollout.trailing !== undefined) writes = withoutBusyPods(writes, rollout.trailing, result);
  const updated: Pod[] = [];
  const failures = await sendRound(writes, { name, uid: stringOf(set.metadata?.uid) ?? '' }, { ...deps, rollout }, options, result, own, updated);
  await tellFailures(failures, set, { ...deps, rollout }, result, own, signal);

  // State.
  const nowMs = rollout.clock.now().getTime();
  const aheadSinceMs = rollout.states.aheadSince(name, (stuckPods(plan.waiting)?.lastUpdateMs ?? 0) > nowMs, nowMs);
  // Told with the counts the pass leaves, not those it found: the pods it just updated are updated.
  const state = rolloutState(countsAfterUpdates(plan.status, set, updated), result.podsUpdated, plan.waiting, { nowMs, stallMs: rollout.stallMs ?? DEFAULT_STALL_MS, ...(aheadSinceMs === undefined ? {} : { aheadSinceMs }) });
  result.state = state;
  if (plan.unavailable !== undefined) result.unavailable = Object.fromEntries(plan.unavailable.reasons.map((r) => [r.reason, r.count]));
  await reportState(set, state, { ...deps, rollout }, result, signal);
  // A stalled rollout is left to the schedule: following it would spend every follow-up budget on a wait.
  const waitsOnPods = plan.waiting?.kind === 'max-unavailable' || plan.waiting?.kind === 'updated-not-ready';
  result.inFlight = result.podsUpdated > 0 || result.podsFlipped > 0 || result.conflicts > 0 || (result.deferred ?? 0) > 0 || (waitsOnPods && state.reason !== 'RolloutStalled') || plan.swapping > 0;
  result.restarting = plan.status.updatedReadyPods < plan.status.updatedPods && state.reason !== 'RolloutStalled';
  if (seen.list?.scope !== undefined) result.watch = { scope: seen.list.scope, resourceVersion: seen.list.resourceVersion, own };
  return result;
}

/**
 * The round without the pods a trailing write of an earlier pass still
 * changes: their writes would be guarded by a version that write is about to
 * move past. They are decided again by a later pass (counted in `deferred`).
 */
function withoutBusyPods(writes: RoundWrites, trailing: TrailingWrites, result: SetPassResult): RoundWrites {
  const free = <T extends { pod: Pod }>(items: readonly T[]) => items.filter((item) => !trailing.busy(podKey(item.pod)));
  const updates = free(writes.updates);
  const flips = free(writes.flips);
  const notUpgradable = free(writes.notUpgradable);
  const deferred = writes.updates.length - updates.length + writes.flips.length - flips.length + writes.notUpgradable.length - notUpgradable.length;
  if (deferred === 0) return writes;
  result.deferred = deferred;
  return { ...writes, updates, flips, notUpgradable };
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
 * decided again next pass.
 * @returns 'gone' when the set no longer exists.
 * @throws when the status cannot be written (the message says why).
 */
async function writeStatus(
  set: SidecarSet,
  statusFor: (current: SidecarSet) => SidecarSetStatus,
  deps: Pick<SetPassDeps, 'statuses'>,
  options: SetPassOptions,
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
      if (!reread) throw new Error('the SidecarSet changed during the pass; it is decided again next pass');
      if (attempt >= maxWriteAttempts) throw new StatusNotWrittenError(name, `the SidecarSet kept changing: ${maxWriteAttempts} writes conflicted`, { cause: error });
    }
    const fresh = await deps.statuses.get(name, signal);
    if (fresh === undefined) return 'gone';
    if (statusInputsKey(fresh) !== inputs) {
      throw new StatusNotWrittenError(name, 'the SidecarSet changed which pods it selects during the pass; its status is computed again next pass');
    }
    current = fresh;
  }
}

/** A pod the round skipped because its write could not be planned or was refused. */
interface PodFailure {
  pod: Pod;
  why: string;
}

/**
 * Sends a round's writes in Kruise's order: the flips (each told on its pod
 * by an Event), the not-upgradable conditions, their Event, then each pod's
 * patch and condition. A plan with flips has no updates (Kruise 1.9 returns
 * after flipping): the next batch is decided from the pods as flipped, by
 * the follow-up pass the flips put in flight. A pod whose update fails (other than a
 * conflict, decided again next pass) is skipped and returned, to be told;
 * Kruise stops the whole pass there instead. With a trailing queue, the
 * updated pods' conditions and the flips' Events are queued there, not
 * waited for, and nothing queued starts while this round writes pods.
 * Each pod updated is added to `updated`, as listed (for the counts the pass leaves).
 */
async function sendRound(writes: RoundWrites, set: { name: string; uid: string }, deps: SetPassDeps, options: SetPassOptions, result: SetPassResult, own: Set<string>, updated: Pod[]): Promise<PodFailure[]> {
  const failures: PodFailure[] = writes.unplanned.map(({ pod, why }) => ({ pod, why: `its patch cannot be made: ${why}` }));
  for (const { pod, why } of writes.unplanned) result.errors.push({ sidecarSet: result.sidecarSet, operation: `plan the update of pod ${podKey(pod)}`, message: why });
  const record = (write: { outcome: string; resourceVersion?: string }) => {
    if (write.resourceVersion !== undefined) own.add(write.resourceVersion);
  };
  // The writes that free or take a slot go first: nothing trailing starts while they are sent.
  const { trailing } = deps.rollout;
  const release = trailing?.hold();
  try {
    await sendPodWrites(writes, set, deps, options, result, record, failures, updated);
  } finally {
    release?.();
  }
  return failures;
}

/** The round's writes in order (see sendRound); conditions after updates go to the trailing queue when there is one. */
async function sendPodWrites(
  writes: RoundWrites,
  set: { name: string; uid: string },
  deps: SetPassDeps,
  options: SetPassOptions,
  result: SetPassResult,
  record: (write: { outcome: string; resourceVersion?: string }) => void,
  failures: PodFailure[],
  updated: Pod[],
): Promise<void> {
  const { signal } = options;
  const { pods, trailing } = deps.rollout;
  const concurrency = options.writeConcurrency ?? DEFAULT_WRITE_CONCURRENCY;
  await forEachLimited(writes.flips, concurrency, async ({ pod, patch }) => {
    const ref = { ...podRef(pod), uid: stringOf(pod.metadata?.uid) ?? '' };
    if (signal?.aborted === true) return;
    let event: PodEvent;
    try {
      const write = await pods.patch(ref.namespace, ref.name, patch, signal);
      if (write.outcome === 'gone') return;
      record(write);
      result.podsFlipped++;
      event = { pod: ref, ...FLIP_EVENT.succeeded };
    } catch (error) {
      // A pod changed since the list is decided again next pass: no failure to tell.
      if (error instanceof WriteConflictError) {
        result.conflicts++;
        return;
      }
      result.errors.push({ sidecarSet: result.sidecarSet, operation: `flip hot sidecars of pod ${ref.namespace}/${ref.name}`, message: errorMessage(error) });
      event = { pod: ref, type: FLIP_EVENT.failed.type, reason: FLIP_EVENT.failed.reason, message: FLIP_EVENT.failed.message(errorMessage(error)) };
    }
    const operation = `record event on pod ${ref.namespace}/${ref.name}`;
    if (trailing !== undefined) {
      trailing.add({ sidecarSet: result.sidecarSet, operation, run: () => deps.rollout.podEvents.record(event, signal) });
      return;
    }
    try {
      await deps.rollout.podEvents.record(event, signal);
    } catch (error) {
      result.errors.push({ sidecarSet: result.sidecarSet, operation, message: errorMessage(error) });
    }
  });
  await forEachLimited(writes.notUpgradable, concurrency, async ({ pod, condition }) => {
    const { namespace, name } = podRef(pod);
    try {
      record(await pods.patchStatus(namespace, name, condition, signal));
    } catch (error) {
      result.errors.push({ sidecarSet: result.sidecarSet, operation: `mark pod ${namespace}/${name} not upgradable`, message: errorMessage(error) });
    }
  });
  const told = [...(writes.event === undefined ? [] : [{ type: 'Normal' as const, ...writes.event }]), ...(writes.held === undefined ? [] : [{ type: 'Warning' as const, ...writes.held }])];
  for (const event of told) {
    try {
      await deps.events.record({ sidecarSet: set, ...event }, signal);
    } catch (error) {
      result.errors.push({ sidecarSet: result.sidecarSet, operation: 'record event', message: errorMessage(error) });
    }
  }
  // Every pod's image first, then the conditions of those written: a pod's restart (and so the rollout) waits
  // for its image patch alone, not for the condition patches of the pods before it.
  const written: { pod: Pod; condition: NonNullable<RoundWrites['updates'][number]['condition']> }[] = [];
  await forEachLimited(writes.updates, concurrency, async ({ pod, patch, condition }) => {
    const { namespace, name } = podRef(pod);
    if (signal?.aborted === true) return;
    try {
      const write = await pods.patch(namespace, name, patch, signal);
      if (write.outcome === 'gone') return;
      record(write);
      result.podsUpdated++;
      updated.push(pod);
    } catch (error) {
      if (error instanceof WriteConflictError) result.conflicts++;
      else {
        result.errors.push({ sidecarSet: result.sidecarSet, operation: `update pod ${namespace}/${name}`, message: errorMessage(error) });
        failures.push({ pod, why: errorMessage(error) });
      }
      return;
    }
    if (condition === undefined) return;
    if (trailing === undefined) written.push({ pod, condition });
    else {
      const run = async () => {
        record(await pods.patchStatus(namespace, name, condition, signal));
      };
      trailing.add({ pod: podKey(pod), sidecarSet: result.sidecarSet, operation: `set condition on pod ${namespace}/${name}`, run });
    }
  });
  await forEachLimited(written, concurrency, async ({ pod, condition }) => {
    const { namespace, name } = podRef(pod);
    try {
      record(await pods.patchStatus(namespace, name, condition, signal));
    } catch (error) {
      result.errors.push({ sidecarSet: result.sidecarSet, operation: `set condition on pod ${namespace}/${name}`, message: errorMessage(error) });
    }
  });
}

/** Warning Events about skipped pods per pass, at most: one bad annotation on a thousand pods must not flood the Events. */
export const MAX_POD_FAILURE_EVENTS = 5;

/**
 * Tells each pod the round skipped: its SidecarSetUpgradable condition
 * (False, PodUpdateFailed, why) and a Warning Event on the set naming it,
 * the Event only when the condition changed (or could not be written), so a
 * pod failing the same way pass after pass is told once; at most
 * {@link MAX_POD_FAILURE_EVENTS} Events a pass, then one counting the rest.
 */
async function tellFailures(failures: readonly PodFailure[], set: SidecarSet, deps: SetPassDeps, result: SetPassResult, own: Set<string>, signal: AbortSignal | undefined): Promise<void> {
  result.podsFailed = failures.length;
  if (failures.length === 0) return;
  const ref = { name: result.sidecarSet, uid: stringOf(set.metadata?.uid) ?? '' };
  const now = deps.rollout.clock.now();
  const news: PodFailure[] = [];
  for (const failure of failures) {
    const { namespace, name } = podRef(failure.pod);
    const condition = upgradableConditionPatch(failure.pod, ref.name, podUpdateFailedNote(failure.why), now);
    if (condition === undefined) continue;
    news.push(failure);
    if (signal?.aborted === true) continue;
    try {
      const write = await deps.rollout.pods.patchStatus(namespace, name, condition, signal);
      if (write.outcome === 'written') own.add(write.resourceVersion);
    } catch (error) {
      result.errors.push({ sidecarSet: ref.name, operation: `mark pod ${namespace}/${name} update failed`, message: errorMessage(error) });
    }
  }
  const told = news.slice(0, MAX_POD_FAILURE_EVENTS).map((f) => ({ type: 'Warning' as const, reason: POD_UPDATE_FAILED_REASON, message: podUpdateFailedMessage(podKey(f.pod), f.why) }));
  if (news.length > MAX_POD_FAILURE_EVENTS) {
    const rest = news.slice(MAX_POD_FAILURE_EVENTS);
    told.push({ type: 'Warning' as const, reason: POD_UPDATE_FAILED_REASON, message: `${rest.length} more pod(s) skipped this pass (${rest.slice(0, 3).map((f) => podKey(f.pod)).join(', ')}${rest.length > 3 ? ', …' : ''}): see their SidecarSetUpgradable condition` });
  }
  for (const event of told) {
    try {
      await deps.events.record({ sidecarSet: ref, ...event }, signal);
    } catch (error) {
      result.errors.push({ sidecarSet: ref.name, operation: 'record event', message: errorMessage(error) });
    }
  }
}

/** Reports the set's rollout state when it is news (rollout-state.ts). */
async function reportState(set: SidecarSet, state: RolloutState, deps: SetPassDeps, result: SetPassResult, signal: AbortSignal | undefined): Promise<void> {
  const ref = { name: result.sidecarSet, uid: stringOf(set.metadata?.uid) ?? '' };
  const event = deps.rollout.states.due(ref, state);
  // A stall an earlier process told (a cold start's first sight of it) is no news.
  if (event === undefined || (await deps.rollout.states.toldBefore(ref, state, signal))) return;
  result.stateChange = state.message;
  try {
    await deps.events.record(event, signal);
    deps.rollout.states.reported(ref.name, state);
  } catch (error) {
    result.errors.push({ sidecarSet: ref.name, operation: 'record event', message: errorMessage(error) });
  }
}
