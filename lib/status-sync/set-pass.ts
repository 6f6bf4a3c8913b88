/**
 * One SidecarSet's whole pass (rollout.md §0), from fresh reads: register
 * the latest revision, list the set's pods, write the status, then, unless
 * the rollout stops (NotUpdate, finished, paused), update the next batch of
 * pods with guarded writes, trim the revision history and report the
 * rollout's state. The full pass runs it for every set with rollout work;
 * the pace loop runs it again for sets with work in flight.
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
import { planRollout, type RolloutPlan } from '../rollout/plan.ts';
import { podScope } from '../rollout/pod-scope.ts';
import { backfillInjectedList } from '../rollout/pod-patch.ts';
import { activeRevisions, type ControllerRevision } from '../rollout/revisions.ts';
import { podKey } from '../rollout/pod-state.ts';
import { FLIP_EVENT, POD_UPDATE_FAILED_REASON, podUpdateFailedMessage, podUpdateFailedNote, rolloutStatusFields, roundWrites, type RoundWrites } from '../rollout/round.ts';
import { upgradableConditionPatch } from '../rollout/upgradable-condition.ts';
import { hasNamespaceSelector, sidecarSetName, type NamespaceLabels } from '../sidecarset/match.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { forEachLimited } from './concurrency.ts';
import { StatusConflictError, WriteConflictError } from '../ports/errors.ts';
import type { PassError } from './pass.ts';
import { tellRevisionFailure } from './revision-failure.ts';
import { registerRevision, trimHistory } from './revision-register.ts';
import { DEFAULT_STALL_MS, rolloutState, type RolloutState, type RolloutStateNotices } from './rollout-state.ts';

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
}

export interface SetPassDeps {
  statuses: SidecarSetStatusWriter;
  events: SidecarSetEventSink;
  namespaces: NamespaceSource;
  rollout: RolloutDeps;
}

export interface SetPassOptions {
  signal?: AbortSignal;
  /** Pod writes in flight at once. Default 8. */
  writeConcurrency?: number;
}

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

const DEFAULT_WRITE_CONCURRENCY = 8;

function podRef(pod: Pod): { namespace: string; name: string } {
  return { namespace: stringOf(pod.metadata?.namespace) ?? '', name: stringOf(pod.metadata?.name) ?? '' };
}

/**
 * Runs the pass for `set` (as just read from the API server).
 * @param stored the set's ControllerRevisions when the caller already listed them (the full pass lists all at once).
 */
export async function runSetPass(set: SidecarSet, deps: SetPassDeps, options: SetPassOptions = {}, stored?: readonly ControllerRevision[]): Promise<SetPassResult> {
  const { signal } = options;
  const { rollout } = deps;
  const name = sidecarSetName(set);
  const result: SetPassResult = { sidecarSet: name, status: 'not-written', podsUpdated: 0, podsFlipped: 0, conflicts: 0, podsFailed: 0, revisionWrites: 0, inFlight: false, restarting: false, errors: [] };
  const fail = (operation: string, error: unknown) => {
    result.errors.push({ sidecarSet: name, operation, message: errorMessage(error) });
    return result;
  };

  let registration;
  try {
    registration = await registerRevision(set, stored ?? (await rollout.revisions.list(name, {}, signal)), rollout.revisions, signal);
    result.revisionWrites += registration.writes;
  } catch (error) {
    // Kruise writes no status when the revision cannot be registered: the status names it.
    await tellRevisionFailure(set, error, { events: deps.events, states: rollout.states }, result.errors, signal);
    return fail('register the revision', error);
  }

  const scope = podScope(set);
  let pods: readonly Pod[] = [];
  let resourceVersion = '';
  let plan: RolloutPlan;
  let labels: NamespaceLabels = new Map();
  try {
    if (scope !== undefined) ({ pods, resourceVersion } = await rollout.setPods.list(scope, signal));
    labels = hasNamespaceSelector(set) ? await deps.namespaces.labels([...new Set(pods.map((p) => podRef(p).namespace))], signal) : new Map<string, Record<string, string>>();
    plan = planRollout(set, pods, labels);
  } catch (error) {
    result.inFlight = true;
    return fail('list pods', error);
  }
  result.counts = plan.status;

  // Kruise trims the history as part of registering, before the status: a status showing the new revision never
  // comes with more revisions listed than the limit.
  const trimmed = await trimHistory(set, registration.history, [...activeRevisions(set, pods, registration.history)], rollout.revisions, signal);
  result.revisionWrites += trimmed.deleted;
  if (trimmed.problem !== undefined && trimmed.problem.startsWith('delete')) result.errors.push({ sidecarSet: name, operation: 'trim revision history', message: trimmed.problem });

  const status = rolloutStatusFields(set, plan.status, registration.latestRevision, registration.collisionCount);
  if (jsonEqual({ ...objectOf(set.status) }, { ...objectOf(set.status), ...status })) result.status = 'unchanged';
  else {
    try {
      if ((await deps.statuses.patchStatus(name, stringOf(set.metadata?.resourceVersion), { ...set.status, ...status }, signal)) === 'written') result.status = 'written';
      else return result;
    } catch (error) {
      // The set changed since it was read: its next pass decides from the new version.
      result.inFlight = true;
      return fail('patch status', error instanceof StatusConflictError ? new Error('the SidecarSet changed during the pass; it is decided again next pass') : error);
    }
  }

  const own = new Set<string>();
  let writes: RoundWrites;
  try {
    // Matched pods carry the injected list; the backfill is only Kruise's guard for ones that lost it.
    // A pod whose write cannot be planned is in writes.unplanned: it costs the others nothing.
    writes = roundWrites(set, plan, registration.latestRevision, () => backfillInjectedList([set]), rollout.clock.now());
    writes = withReplacements(writes, plan, (skip) => {
      const replanned = planRollout(set, pods, labels, skip);
      return { plan: replanned, writes: roundWrites(set, replanned, registration.latestRevision, () => backfillInjectedList([set]), rollout.clock.now()) };
    });
  } catch (error) {
    return fail('plan pod writes', error);
  }
  const failures = await sendRound(writes, { name, uid: stringOf(set.metadata?.uid) ?? '' }, deps, options, result, own);
  await tellFailures(failures, set, deps, result, own, signal);

  const state = rolloutState(plan.status, result.podsUpdated, plan.waiting, { nowMs: rollout.clock.now().getTime(), stallMs: rollout.stallMs ?? DEFAULT_STALL_MS });
  result.state = state;
  if (plan.unavailable !== undefined) result.unavailable = Object.fromEntries(plan.unavailable.reasons.map((r) => [r.reason, r.count]));
  await reportState(set, state, deps, result, signal);
  // A stalled rollout is left to the schedule: following it would spend every follow-up budget on a wait.
  const waitsOnPods = plan.waiting?.kind === 'max-unavailable' || plan.waiting?.kind === 'updated-not-ready';
  result.inFlight = result.podsUpdated > 0 || result.podsFlipped > 0 || result.conflicts > 0 || (waitsOnPods && state.reason !== 'RolloutStalled') || plan.swapping > 0;
  result.restarting = plan.status.updatedReadyPods < plan.status.updatedPods && state.reason !== 'RolloutStalled';
  if (scope !== undefined) result.watch = { scope, resourceVersion, own };
  return result;
}

/** A pod the round skipped because its write could not be planned or was refused. */
interface PodFailure {
  pod: Pod;
  why: string;
}

/**
 * Sends a round's writes in Kruise's order: the flips (each told on its pod
 * by an Event), the not-upgradable conditions, their Event, then each pod's
 * patch and condition. A pod flipped this pass is not updated in the same
 * pass: its update was planned from the version the flip replaced, so it
 * waits for the next pass's list. A pod whose update fails (other than a
 * conflict, decided again next pass) is skipped and returned, to be told;
 * Kruise stops the whole pass there instead.
 */
async function sendRound(writes: RoundWrites, set: { name: string; uid: string }, deps: SetPassDeps, options: SetPassOptions, result: SetPassResult, own: Set<string>): Promise<PodFailure[]> {
  const failures: PodFailure[] = writes.unplanned.map(({ pod, why }) => ({ pod, why: `its patch cannot be made: ${why}` }));
  for (const { pod, why } of writes.unplanned) result.errors.push({ sidecarSet: result.sidecarSet, operation: `plan the update of pod ${podKey(pod)}`, message: why });
  const { signal } = options;
  const { pods } = deps.rollout;
  const concurrency = options.writeConcurrency ?? DEFAULT_WRITE_CONCURRENCY;
  const record = (write: { outcome: string; resourceVersion?: string }) => {
    if (write.resourceVersion !== undefined) own.add(write.resourceVersion);
  };
  const flipped = new Set<Pod>();
  await forEachLimited(writes.flips, concurrency, async ({ pod, patch }) => {
    const ref = { ...podRef(pod), uid: stringOf(pod.metadata?.uid) ?? '' };
    if (signal?.aborted === true) return;
    let event: PodEvent;
    try {
      const write = await pods.patch(ref.namespace, ref.name, patch, signal);
      if (write.outcome === 'gone') return;
      record(write);
      flipped.add(pod);
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
    try {
      await deps.rollout.podEvents.record(event, signal);
    } catch (error) {
      result.errors.push({ sidecarSet: result.sidecarSet, operation: `record event on pod ${ref.namespace}/${ref.name}`, message: errorMessage(error) });
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
  if (writes.event !== undefined) {
    try {
      await deps.events.record({ sidecarSet: set, type: 'Normal', reason: writes.event.reason, message: writes.event.message }, signal);
    } catch (error) {
      result.errors.push({ sidecarSet: result.sidecarSet, operation: 'record event', message: errorMessage(error) });
    }
  }
  // Every pod's image first, then the conditions of those written: a pod's restart (and so the rollout) waits
  // for its image patch alone, not for the condition patches of the pods before it.
  const written: { pod: Pod; condition: NonNullable<RoundWrites['updates'][number]['condition']> }[] = [];
  await forEachLimited(writes.updates, concurrency, async ({ pod, patch, condition }) => {
    const { namespace, name } = podRef(pod);
    if (signal?.aborted === true || flipped.has(pod)) return;
    try {
      const write = await pods.patch(namespace, name, patch, signal);
      if (write.outcome === 'gone') return;
      record(write);
      result.podsUpdated++;
    } catch (error) {
      if (error instanceof WriteConflictError) result.conflicts++;
      else {
        result.errors.push({ sidecarSet: result.sidecarSet, operation: `update pod ${namespace}/${name}`, message: errorMessage(error) });
        failures.push({ pod, why: errorMessage(error) });
      }
      return;
    }
    if (condition !== undefined) written.push({ pod, condition });
  });
  await forEachLimited(written, concurrency, async ({ pod, condition }) => {
    const { namespace, name } = podRef(pod);
    try {
      record(await pods.patchStatus(namespace, name, condition, signal));
    } catch (error) {
      result.errors.push({ sidecarSet: result.sidecarSet, operation: `set condition on pod ${namespace}/${name}`, message: errorMessage(error) });
    }
  });
  return failures;
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

async function reportState(set: SidecarSet, state: ReturnType<typeof rolloutState>, deps: SetPassDeps, result: SetPassResult, signal: AbortSignal | undefined): Promise<void> {
  const ref = { name: result.sidecarSet, uid: stringOf(set.metadata?.uid) ?? '' };
  const event = deps.rollout.states.due(ref, state);
  if (event === undefined) return;
  result.stateChange = state.message;
  try {
    await deps.events.record(event, signal);
    deps.rollout.states.reported(ref.name, state);
  } catch (error) {
    result.errors.push({ sidecarSet: ref.name, operation: 'record event', message: errorMessage(error) });
  }
}

/** How many times one pass plans its batch again around pods whose update cannot be made. */
const MAX_REPLANS = 5;

/**
 * A pod of the batch whose update cannot be made (its MergePatchJson
 * annotation is not JSON, say) gives its place to the next pod in the order:
 * otherwise a broken pod first in the order would hold maxUnavailable's slot
 * in every pass and no other pod would ever be rolled. The batch is planned
 * again without the pods found so, a bounded number of times; every pod found
 * so is kept in `unplanned`, to be told.
 */
function withReplacements(first: RoundWrites, plan: RolloutPlan, replan: (skip: ReadonlySet<Pod>) => { plan: RolloutPlan; writes: RoundWrites }): RoundWrites {
  const skip = new Set<Pod>();
  const unplanned = [...first.unplanned];
  const told = new Set(unplanned.map(({ pod }) => pod));
  let writes = first;
  let current = plan;
  for (let replans = 0; replans < MAX_REPLANS; replans++) {
    const inBatch = new Set(current.updates.map(({ pod }) => pod));
    const blocked = writes.unplanned.filter(({ pod }) => inBatch.has(pod) && !skip.has(pod));
    if (blocked.length === 0) break;
    for (const { pod } of blocked) skip.add(pod);
    ({ plan: current, writes } = replan(skip));
    for (const entry of writes.unplanned) {
      if (told.has(entry.pod)) continue;
      told.add(entry.pod);
      unplanned.push(entry);
    }
  }
  return { ...writes, unplanned };
}
