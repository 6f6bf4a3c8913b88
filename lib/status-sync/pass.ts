/**
 * One reconciler pass (spec section 6): list every SidecarSet, stream every
 * pod once, count per set, and write each status that differs from the
 * stored one. Everything outside the process goes through ports, so every
 * rule below is table-testable with in-memory adapters.
 *
 * - A status is never computed from an incomplete pod list: a list whose
 *   continue token expired (410) starts over, up to `maxListAttempts`; any
 *   other list failure skips every set this pass (they all need the list).
 * - Namespace labels are read only when a set has a namespaceSelector; when
 *   they cannot be read, only those sets are skipped.
 * - A write is conditional on the resourceVersion the set was read at. On a
 *   conflict the set is read again: if it still matches the same pods
 *   (statusInputsKey) the counts are reused for the new version (its hash and
 *   generation may differ); if not, the set waits for the next pass.
 * - One set's failure never stops the others; every failure is in the result.
 */
import type { RotationResult } from '../auth/rotation.ts';
import { errorMessage } from '../errors.ts';
import { jsonEqual, objectOf, stringMapOf, stringOf } from '../kube/json.ts';
import type { NamespaceSource, PodPages, SidecarSetEventSink, SidecarSetSource, SidecarSetStatusWriter } from '../ports.ts';
import { sidecarSetName } from '../sidecarset/match.ts';
import { statusAccumulator, statusInputsKey, type PodSummary, type StatusAccumulator } from '../sidecarset/status.ts';
import type { SidecarSet, SidecarSetStatus } from '../sidecarset/types.ts';
import type { RolloutCounts } from '../rollout/plan.ts';
import { LABEL_SIDECARSET_NAME, type ControllerRevision } from '../rollout/revisions.ts';
import { tellRevisionFailure } from './revision-failure.ts';
import { registerRevision, trimHistory, type Registration } from './revision-register.ts';
import { rolloutState } from './rollout-state.ts';
import { runSetPass, type RolloutDeps } from './set-pass.ts';
import { forEachLimited } from './concurrency.ts';
import { ListExpiredError, StatusConflictError } from '../ports/errors.ts';
import { StatusNotWrittenError } from './errors.ts';
import { MAX_NAMESPACES_TOLD, type NotInjectedFinding, type NotInjectedNotices, type NotInjectedPod } from './not-injected.ts';
import { buildSetIndex, type SetIndex } from './set-index.ts';

/** The reconciler's name as a function: the Lambda, its bundle, its log lines, the invoke command. */
export const STATUS_SYNC = 'status-sync';

export interface StatusPassDeps {
  sidecarSets: SidecarSetSource;
  pods: PodPages;
  /** Labels of the namespaces pods are in; asked only when a set has a namespaceSelector. */
  namespaces: NamespaceSource;
  statuses: SidecarSetStatusWriter;
  events: SidecarSetEventSink;
  /** What was already reported about uninjected pods; lives as long as the process. */
  notices: NotInjectedNotices;
  /** Monotonic milliseconds, for durationMs. Default performance.now. */
  nowMs?: () => number;
  /**
   * Revisions and the in-place rollout (rollout.md §0). Absent, the pass
   * computes and writes statuses only (the offline `invoke status-sync`).
   */
  rollout?: RolloutDeps;
}

export interface StatusPassOptions {
  /** Stops the pass (the pod list, pending writes) when aborted, e.g. near the Lambda deadline. */
  signal?: AbortSignal;
  /** How many times the pod list is started when its continue token keeps expiring. Default 3. */
  maxListAttempts?: number;
  /** Writes of one status, the first included, before a conflict counts as an error. Default 4. */
  maxWriteAttempts?: number;
  /** Status writes in flight at once. Default 4. */
  writeConcurrency?: number;
  /** Uninjected pods named per namespace in events. Default 5. */
  samplePods?: number;
}

/** Something the pass could not do; the rest of the pass went on. */
export interface PassError {
  /** The set affected, when it is one set. */
  sidecarSet?: string;
  /** `list pods`, `patch status`, ... */
  operation: string;
  message: string;
}

/** What a pass did: returned, and logged as one JSON line. */
export interface PassResult {
  setsSeen: number;
  /** Pods in the (last) pod list. */
  podsSeen: number;
  statusesWritten: number;
  /** Sets whose stored status was already right. */
  statusesUnchanged: number;
  /** Times the pod list was started (more than 1 after expired continue tokens). */
  podListAttempts: number;
  errors: PassError[];
  durationMs: number;
  /** Uninjected pods per set, for sets that have any. */
  notInjected: Record<string, number>;
  /**
   * Each counted set's pod counts, as its status shows them after this pass
   * (for metrics; the pass's log line leaves them out).
   */
  sets?: Record<string, RolloutCounts>;
  /** Per set whose own pass ran, its updated pods not available by the kubelet's reason (for metrics). */
  unavailable?: Record<string, Record<string, number>>;
  /** The webhook secret rotation's step, when the pass rotates it (functions/status-sync/compose.ts). */
  secretRotation?: RotationResult;
  /** What the rollout did, when the pass runs it. */
  rollout?: RolloutSummary;
}

/** The rollout's part of a pass. */
export interface RolloutSummary {
  /** Sets whose pods were listed for a rollout round. */
  setsRolled: number;
  podsUpdated: number;
  /** Pods whose finished hot upgrade was flipped. */
  podsFlipped: number;
  /** Pods skipped because they changed since their list (decided again next pass). */
  conflicts: number;
  /** Pods skipped because their write could not be made or was refused (told on the pod and the set). */
  podsFailed?: number;
  /** ControllerRevisions created, renumbered, labelled or deleted. */
  revisionWrites: number;
  /** Sets whose rollout state changed, with the new state in words. */
  states: Record<string, string>;
  /** Sets with work in flight: the pace loop runs their pass again soon. */
  inFlight: string[];
}

/** Per-set state of one attempt at listing pods. */
interface Counting {
  accumulators: StatusAccumulator[];
  /** Per set, its uninjected pods by namespace: every namespace counted, the first few pods of the first few named. */
  notInjected: Map<string, { count: number; pods: NotInjectedPod[] }>[];
  /** Sets that cannot get a status this pass, with why. */
  failed: Map<number, PassError>;
  podsSeen: number;
}

const DEFAULTS = { maxListAttempts: 3, maxWriteAttempts: 4, writeConcurrency: 4, samplePods: 5 };

/** Counts an uninjected pod in its namespace; names it when the namespace is among the first told and has room. */
function tallyNotInjected(byNamespace: Map<string, { count: number; pods: NotInjectedPod[] }>, pod: PodSummary, samplePods: number): void {
  let found = byNamespace.get(pod.namespace);
  if (found === undefined) {
    // Only the first namespaces are told (their entries come first); the others are counted.
    found = { count: 0, pods: [] };
    byNamespace.set(pod.namespace, found);
  }
  found.count++;
  const told = byNamespace.size <= MAX_NAMESPACES_TOLD || found.pods.length > 0;
  if (told && found.pods.length < samplePods) found.pods.push({ name: pod.name, uid: pod.uid ?? '' });
}

/** Streams the pod list once into fresh counters. Throws when the list fails; namespace-label failures only fail the sets that need them. */
async function countPods(sets: readonly SidecarSet[], index: SetIndex, deps: StatusPassDeps, samplePods: number, signal: AbortSignal | undefined): Promise<Counting> {
  const counting: Counting = {
    accumulators: sets.map((set) => statusAccumulator(set)),
    notInjected: sets.map(() => new Map<string, { count: number; pods: NotInjectedPod[] }>()),
    failed: new Map(),
    podsSeen: 0,
  };
  const fail = (i: number, operation: string, error: unknown) => {
    if (!counting.failed.has(i)) counting.failed.set(i, { sidecarSet: sidecarSetName(sets[i] ?? {}), operation, message: errorMessage(error) });
  };
  const needLabels = index.withNamespaceSelector.length > 0;
  const labels = new Map<string, Readonly<Record<string, string>>>();
  const asked = new Set<string>();
  for await (const page of deps.pods.pages(signal)) {
    signal?.throwIfAborted();
    counting.podsSeen += page.length;
    // Once every set that needs labels has failed, reading more is pointless.
    if (needLabels && index.withNamespaceSelector.some((i) => !counting.failed.has(i))) {
      const unknown = [...new Set(page.map((pod) => pod.namespace))].filter((ns) => !asked.has(ns));
      for (const ns of unknown) asked.add(ns);
      if (unknown.length > 0) {
        try {
          for (const [ns, nsLabels] of await deps.namespaces.labels(unknown, signal)) labels.set(ns, nsLabels);
        } catch (error) {
          for (const i of index.withNamespaceSelector) fail(i, 'read namespace labels', error);
        }
      }
    }
    for (const pod of page) {
      index.forEachCandidate(pod, (i) => {
        if (counting.failed.has(i)) return;
        const accumulator = counting.accumulators[i];
        const byNamespace = counting.notInjected[i];
        if (accumulator === undefined || byNamespace === undefined) return;
        try {
          if (accumulator.add(pod, labels) === 'not-injected') tallyNotInjected(byNamespace, pod, samplePods);
        } catch (error) {
          // A namespace that vanished between the pod list and the label read: decide next pass.
          fail(i, 'match pods', error);
        }
      });
    }
  }
  return counting;
}

/**
 * Runs one pass. Never throws: whatever fails is in `errors`. The steps:
 * list the sets, count the pods for each (starting the list over when its
 * continue token expires), write the statuses that differ, report the
 * uninjected pods that are due.
 */
export async function runStatusPass(deps: StatusPassDeps, options: StatusPassOptions = {}): Promise<PassResult> {
  const nowMs = deps.nowMs ?? (() => performance.now());
  const started = nowMs();
  const result: PassResult = { setsSeen: 0, podsSeen: 0, statusesWritten: 0, statusesUnchanged: 0, podListAttempts: 0, errors: [], durationMs: 0, notInjected: {}, sets: {} };
  const finish = (): PassResult => {
    result.durationMs = Math.round(nowMs() - started);
    return result;
  };

  const sets = await listSets(deps, options, result);
  if (sets === undefined) return finish();
  const counting = await countPodsRetryingExpiredLists(sets, deps, options, result);
  if (counting === undefined) return finish();
  const { findings, toWrite } = findingsOf(sets, counting, result);
  const revisions = deps.rollout === undefined ? undefined : await revisionsOf(sets, counting, toWrite, deps.rollout, options, result, deps.events);
  if (!(await writeStatuses(sets, counting, revisions?.idle ?? toWrite, deps, options, result, revisions))) return finish();
  if (revisions !== undefined && deps.rollout !== undefined) await rollSets(sets, revisions, deps, deps.rollout, options, result);
  await reportNotInjected(sets, findings, deps, options, result);
  return finish();
}

/** The sets to reconcile; undefined (and the error in the result) when they cannot be listed. */
async function listSets(deps: StatusPassDeps, options: StatusPassOptions, result: PassResult): Promise<readonly SidecarSet[] | undefined> {
  let listed: readonly SidecarSet[];
  try {
    listed = await deps.sidecarSets.list(options.signal);
  } catch (error) {
    result.errors.push({ operation: 'list SidecarSets', message: errorMessage(error) });
    return undefined;
  }
  // A set without a name was never admitted and cannot be written to.
  const sets = listed.filter((set) => sidecarSetName(set) !== '');
  result.setsSeen = sets.length;
  return sets;
}

/** {@link countPods}, started over while the continue token expires (up to maxListAttempts); undefined (and the error in the result) when the list fails. */
async function countPodsRetryingExpiredLists(sets: readonly SidecarSet[], deps: StatusPassDeps, options: StatusPassOptions, result: PassResult): Promise<Counting | undefined> {
  const maxListAttempts = options.maxListAttempts ?? DEFAULTS.maxListAttempts;
  const index = buildSetIndex(sets);
  for (;;) {
    result.podListAttempts++;
    try {
      const counting = await countPods(sets, index, deps, options.samplePods ?? DEFAULTS.samplePods, options.signal);
      result.podsSeen = counting.podsSeen;
      result.errors.push(...counting.failed.values());
      return counting;
    } catch (error) {
      if (error instanceof ListExpiredError && result.podListAttempts < maxListAttempts) continue;
      const detail = error instanceof ListExpiredError ? ` (the list expired ${result.podListAttempts} times in a row)` : '';
      result.errors.push({ operation: 'list pods', message: `${errorMessage(error)}${detail}; no status is written this pass` });
      return undefined;
    }
  }
}

/** The uninjected pods of each counted set (also into the result), and which sets get their status compared and written. */
function findingsOf(sets: readonly SidecarSet[], counting: Counting, result: PassResult): { findings: Map<string, NotInjectedFinding>; toWrite: number[] } {
  const findings = new Map<string, NotInjectedFinding>();
  const toWrite: number[] = [];
  sets.forEach((set, i) => {
    const accumulator = counting.accumulators[i];
    if (counting.failed.has(i) || accumulator === undefined) return;
    const name = sidecarSetName(set);
    const count = accumulator.notInjectedPods;
    if (count > 0) result.notInjected[name] = count;
    const { matchedPods = 0, updatedPods = 0, readyPods = 0, updatedReadyPods = 0 } = accumulator.status(set);
    if (result.sets !== undefined) result.sets[name] = { matchedPods, updatedPods, readyPods, updatedReadyPods };
    const byNamespace = [...(counting.notInjected[i] ?? new Map<string, { count: number; pods: NotInjectedPod[] }>()).entries()];
    const namespaces = byNamespace.slice(0, MAX_NAMESPACES_TOLD).map(([namespace, found]) => ({ namespace, ...found }));
    findings.set(name, { uid: stringOf(set.metadata?.uid) ?? '', count, namespaceCount: byNamespace.length, namespaces });
    toWrite.push(i);
  });
  return { findings, toWrite };
}

/** Writes the statuses that differ, writeConcurrency at a time. False when the pass was stopped before every one was compared. */
async function writeStatuses(
  sets: readonly SidecarSet[],
  counting: Counting,
  toWrite: readonly number[],
  deps: StatusPassDeps,
  options: StatusPassOptions,
  result: PassResult,
  revisions?: PassRevisions,
): Promise<boolean> {
  const { signal } = options;
  let outOfTime = 0;
  await forEachLimited(toWrite, options.writeConcurrency ?? DEFAULTS.writeConcurrency, async (i) => {
    const set = sets[i];
    const accumulator = counting.accumulators[i];
    if (set === undefined || accumulator === undefined) return;
    // Once the deadline passed, one error says so rather than one per set.
    if (signal?.aborted === true) {
      outOfTime++;
      return;
    }
    const registration = revisions?.registrations.get(i);
    if (registration !== undefined && deps.rollout !== undefined) await trimBeforeStatus(set, accumulator, registration, deps.rollout, options, result);
    try {
      await writeStatus(set, accumulator, deps, options, result, registration === undefined ? {} : { latestRevision: registration.latestRevision, collisionCount: registration.collisionCount });
    } catch (error) {
      result.errors.push({ sidecarSet: sidecarSetName(set), operation: 'patch status', message: errorMessage(error) });
    }
    if (revisions !== undefined && deps.rollout !== undefined && !revisions.unregistered.has(i)) await settleIdleSet(set, accumulator, deps, deps.rollout, options, result);
  });
  if (outOfTime > 0) {
    result.errors.push({ operation: 'patch status', message: `the pass was stopped (${errorMessage(signal?.reason)}) before ${outOfTime} statuses were compared and written` });
    return false;
  }
  return true;
}

/** Writes one set's status if it differs, re-reading on conflict. */
async function writeStatus(
  set: SidecarSet,
  accumulator: StatusAccumulator,
  deps: StatusPassDeps,
  options: StatusPassOptions,
  result: PassResult,
  revisionFields: Pick<SidecarSetStatus, 'latestRevision' | 'collisionCount'>,
): Promise<void> {
  const { signal } = options;
  const maxWriteAttempts = options.maxWriteAttempts ?? DEFAULTS.maxWriteAttempts;
  const name = sidecarSetName(set);
  const inputs = statusInputsKey(set);
  let current = set;
  for (let attempt = 1; ; attempt++) {
    const status = { ...accumulator.status(current), ...revisionFields };
    if (jsonEqual(objectOf(current.status) ?? {}, status)) {
      result.statusesUnchanged++;
      return;
    }
    try {
      if ((await deps.statuses.patchStatus(name, stringOf(current.metadata?.resourceVersion), status, signal)) === 'written') result.statusesWritten++;
      return;
    } catch (error) {
      if (!(error instanceof StatusConflictError)) throw error;
      if (attempt >= maxWriteAttempts) throw new StatusNotWrittenError(name, `the SidecarSet kept changing: ${maxWriteAttempts} writes conflicted`, { cause: error });
    }
    const fresh = await deps.statuses.get(name, signal);
    if (fresh === undefined) return;
    if (statusInputsKey(fresh) !== inputs) {
      throw new StatusNotWrittenError(name, 'the SidecarSet changed which pods it selects during the pass; its status is computed again next pass');
    }
    current = fresh;
  }
}

/** Records the events about uninjected pods that are due; a failed event is an error and is due again next pass. */
async function reportNotInjected(sets: readonly SidecarSet[], findings: Map<string, NotInjectedFinding>, deps: StatusPassDeps, options: StatusPassOptions, result: PassResult): Promise<void> {
  const present = new Set(sets.map((set) => sidecarSetName(set)));
  for (const notice of deps.notices.due(findings, present)) {
    let recorded = true;
    try {
      await deps.events.record(notice.event, options.signal);
    } catch (error) {
      recorded = false;
      result.errors.push({ sidecarSet: notice.set, operation: 'record event', message: errorMessage(error) });
    }
    // Each namespace's own event, where pod events can be written (not by the offline invoke command).
    const sink = deps.rollout?.podEvents;
    for (const event of notice.podEvents) {
      if (sink === undefined) break;
      try {
        await sink.record(event, options.signal);
      } catch (error) {
        recorded = false;
        result.errors.push({ sidecarSet: notice.set, operation: 'record event', message: `in namespace ${event.pod.namespace}: ${errorMessage(error)}` });
      }
    }
    if (recorded) deps.notices.reported(notice);
  }
}

/** The revisions a pass read, and which sets roll and which only get a status. */
interface PassRevisions {
  /** Per set index, the revisions labelled with its name. */
  bySet: Map<number, ControllerRevision[]>;
  /** Registrations of the idle sets, by index; a set missing here could not register and keeps its stored revision fields. */
  registrations: Map<number, Registration>;
  /** Sets that only get a status this pass. */
  idle: number[];
  /** Sets with rollout work: their own pass lists their pods and writes their status. */
  rolling: number[];
  /** Idle sets whose revision could not be written: their state is that (revision-failure.ts), not their counts'. */
  unregistered: Set<number>;
}

/**
 * Whether a set has rollout work by the streamed counts (rollout.md §0 steps
 * 6-9): pods mid hot upgrade to flip (whatever the strategy), or not
 * NotUpdate, not paused, and not every matched pod updated and ready. Its
 * last pods restarting are still the rollout's: its own pass follows them
 * (the pace loop writes the status as each becomes ready) and says when
 * they stall; Kruise's pass stops as soon as every pod is updated.
 */
function hasRolloutWork(set: SidecarSet, status: SidecarSetStatus, hotSwappingPods: number): boolean {
  if (hotSwappingPods > 0) return true;
  const strategy = objectOf(set.spec?.updateStrategy) ?? {};
  if (strategy.type === 'NotUpdate' || strategy.paused === true) return false;
  return (status.updatedReadyPods ?? 0) < (status.matchedPods ?? 0);
}

/**
 * Lists every revision once and registers each idle set's latest revision
 * (rollout.md §2.1). When the revisions cannot be listed, no set rolls this
 * pass and statuses keep their stored revision fields (the counts are still
 * written: they do not depend on revisions).
 */
async function revisionsOf(
  sets: readonly SidecarSet[],
  counting: Counting,
  toWrite: readonly number[],
  rollout: RolloutDeps,
  options: StatusPassOptions,
  result: PassResult,
  events: SidecarSetEventSink,
): Promise<PassRevisions> {
  result.rollout = { setsRolled: 0, podsUpdated: 0, podsFlipped: 0, conflicts: 0, podsFailed: 0, revisionWrites: 0, states: {}, inFlight: [] };
  const out: PassRevisions = { bySet: new Map(), registrations: new Map(), idle: [], rolling: [], unregistered: new Set() };
  let all: readonly ControllerRevision[];
  try {
    all = await rollout.revisions.listAll(options.signal);
  } catch (error) {
    result.errors.push({ operation: 'list ControllerRevisions', message: `${errorMessage(error)}; no set rolls this pass` });
    out.idle = [...toWrite];
    return out;
  }
  const byName = new Map<string, ControllerRevision[]>();
  for (const revision of all) {
    const owner = stringMapOf(revision.metadata?.labels)[LABEL_SIDECARSET_NAME];
    if (owner === undefined) continue;
    const list = byName.get(owner) ?? [];
    list.push(revision);
    byName.set(owner, list);
  }
  for (const i of toWrite) {
    const set = sets[i] as SidecarSet;
    const accumulator = counting.accumulators[i] as StatusAccumulator;
    out.bySet.set(i, byName.get(sidecarSetName(set)) ?? []);
    if (hasRolloutWork(set, accumulator.status(set), accumulator.hotSwappingPods)) {
      out.rolling.push(i);
      continue;
    }
    out.idle.push(i);
    try {
      const registration = await registerRevision(set, out.bySet.get(i) ?? [], rollout.revisions, options.signal);
      out.registrations.set(i, registration);
      result.rollout.revisionWrites += registration.writes;
    } catch (error) {
      result.errors.push({ sidecarSet: sidecarSetName(set), operation: 'register the revision', message: errorMessage(error) });
      out.unregistered.add(i);
      await tellRevisionFailure(set, error, { events, states: rollout.states }, result.errors, options.signal);
    }
  }
  return out;
}

/** An idle set's history trimmed past its limit, as Kruise does while registering, before the status names the revision. */
async function trimBeforeStatus(set: SidecarSet, accumulator: StatusAccumulator, registration: Registration, rollout: RolloutDeps, options: StatusPassOptions, result: PassResult): Promise<void> {
  const trimmed = await trimHistory(set, registration.history, accumulator.revisionsInUse, rollout.revisions, options.signal);
  if (result.rollout !== undefined) result.rollout.revisionWrites += trimmed.deleted;
  if (trimmed.problem?.startsWith('delete') === true) result.errors.push({ sidecarSet: sidecarSetName(set), operation: 'trim revision history', message: trimmed.problem });
}

/** After an idle set's status: report its state (finished, paused, NotUpdate). */
async function settleIdleSet(
  set: SidecarSet,
  accumulator: StatusAccumulator,
  deps: StatusPassDeps,
  rollout: RolloutDeps,
  options: StatusPassOptions,
  result: PassResult,
): Promise<void> {
  const name = sidecarSetName(set);
  const summary = result.rollout;
  if (summary === undefined) return;
  const status = accumulator.status(set);
  const counts = { matchedPods: status.matchedPods ?? 0, updatedPods: status.updatedPods ?? 0, readyPods: status.readyPods ?? 0, updatedReadyPods: status.updatedReadyPods ?? 0 };
  const strategy = objectOf(set.spec?.updateStrategy) ?? {};
  const waiting = strategy.type === 'NotUpdate' ? ({ kind: 'not-update' } as const) : counts.updatedPods >= counts.matchedPods ? ({ kind: 'finished' } as const) : ({ kind: 'paused' } as const);
  const state = rolloutState(counts, 0, waiting);
  const ref = { name, uid: stringOf(set.metadata?.uid) ?? '' };
  const event = rollout.states.due(ref, state);
  if (event === undefined) return;
  summary.states[name] = state.message;
  try {
    await deps.events.record(event, options.signal);
    rollout.states.reported(name, state);
  } catch (error) {
    result.errors.push({ sidecarSet: name, operation: 'record event', message: errorMessage(error) });
  }
}

/** Runs the whole pass of each set with rollout work (set-pass.ts), one set at a time. */
async function rollSets(sets: readonly SidecarSet[], revisions: PassRevisions, deps: StatusPassDeps, rollout: RolloutDeps, options: StatusPassOptions, result: PassResult): Promise<void> {
  const summary = result.rollout;
  if (summary === undefined) return;
  for (const i of revisions.rolling) {
    if (options.signal?.aborted === true) {
      result.errors.push({ operation: 'roll out', message: `the pass was stopped (${errorMessage(options.signal.reason)}) before every set rolled` });
      return;
    }
    const set = sets[i] as SidecarSet;
    const setResult = await runSetPass(set, { statuses: deps.statuses, events: deps.events, namespaces: deps.namespaces, rollout }, options.signal === undefined ? {} : { signal: options.signal }, revisions.bySet.get(i));
    summary.setsRolled++;
    summary.podsUpdated += setResult.podsUpdated;
    summary.podsFlipped += setResult.podsFlipped;
    summary.conflicts += setResult.conflicts;
    summary.podsFailed = (summary.podsFailed ?? 0) + setResult.podsFailed;
    summary.revisionWrites += setResult.revisionWrites;
    if (setResult.unavailable !== undefined) (result.unavailable ??= {})[setResult.sidecarSet] = setResult.unavailable;
    if (setResult.status === 'written') result.statusesWritten++;
    else if (setResult.status === 'unchanged') result.statusesUnchanged++;
    if (setResult.stateChange !== undefined) summary.states[setResult.sidecarSet] = setResult.stateChange;
    // The set's own list is newer than the streamed one.
    if (setResult.counts !== undefined && result.sets !== undefined) result.sets[setResult.sidecarSet] = { ...setResult.counts };
    if (setResult.inFlight) summary.inFlight.push(setResult.sidecarSet);
    result.errors.push(...setResult.errors);
  }
}
