/**
 * One resync (spec section 6): list every SidecarSet, stream every
 * pod once, count per set, then send each set down its one route
 * (set-resync.ts: plan, status, batch, state). This file only lists, indexes
 * and dispatches. Everything outside the process goes through ports, so
 * every rule below is table-testable with in-memory adapters.
 *
 * - A status is never computed from an incomplete pod list: a list whose
 *   continue token expired (410) starts over, up to `maxListAttempts`; any
 *   other list failure skips every set this resync (they all need the list).
 * - Namespace labels are read only when a set has a namespaceSelector; when
 *   they cannot be read, only those sets are skipped.
 * - A set its streamed counts decide (its route, set-resync.ts `routeOf`) is
 *   planned from them, writeConcurrency at a time; the others, one at a
 *   time after them, from their own pod lists.
 * - One set's failure never stops the others; every failure is in the result.
 */
import { errorMessage } from '../errors.ts';
import { stringMapOf, stringOf } from '../kube/json.ts';
import { sidecarSetName } from '../sidecarset/match.ts';
import { statusAccumulator, type PodSummary, type StatusAccumulator } from '../sidecarset/status.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { LABEL_SIDECARSET_NAME, type ControllerRevision } from '../sidecarset/revisions.ts';
import type { RolloutDeps } from './set-reconcile.ts';
import { SetDispatch } from './set-dispatch.ts';
import { ListExpiredError } from '../ports/errors.ts';
import type { ReconcileError } from './errors.ts';
import { canaryFinding, recordCanaryEvents, type CanaryFinding } from './canary-events.ts';
import { MAX_NAMESPACES_RECORDED, type NotInjectedFinding, type NotInjectedPod } from './not-injected.ts';
import { buildSetIndex, type SetIndex } from './set-index.ts';
import { repairMissingPods } from './repair-step.ts';

export type { ResyncResult, RolloutSummary, ResyncDeps, ResyncOptions } from './resync-types.ts';
import { DEFAULTS, type ResyncResult, type RevisionsBySet, type ResyncDeps, type ResyncOptions } from './resync-types.ts';

/** The reconciler's name as a function: the Lambda, its bundle, its log lines, the invoke command. */
export const STATUS_SYNC = 'status-sync';

/** Per-set state of one attempt at listing pods. */
interface Counting {
  accumulators: StatusAccumulator[];
  /** Per set, its uninjected pods by namespace: every namespace counted, the first few pods of the first few named. */
  notInjected: Map<string, { count: number; pods: NotInjectedPod[] }>[];
  /** Sets that cannot get a status this resync, with why. */
  failed: Map<number, ReconcileError>;
  podsSeen: number;
}


/** Counts an uninjected pod in its namespace; names it when the namespace is among the first recorded and has room. */
function tallyNotInjected(byNamespace: Map<string, { count: number; pods: NotInjectedPod[] }>, pod: PodSummary, samplePods: number): void {
  let found = byNamespace.get(pod.namespace);
  if (found === undefined) {
    // Only the first namespaces are recorded (their entries come first); the others are counted.
    found = { count: 0, pods: [] };
    byNamespace.set(pod.namespace, found);
  }
  found.count++;
  const told = byNamespace.size <= MAX_NAMESPACES_RECORDED || found.pods.length > 0;
  if (told && found.pods.length < samplePods) found.pods.push({ name: pod.name, uid: pod.uid ?? '' });
}

/** Streams the pod list once into fresh counters. Throws when the list fails; namespace-label failures only fail the sets that need them. */
async function countPods(sets: readonly SidecarSet[], index: SetIndex, deps: ResyncDeps, samplePods: number, signal: AbortSignal | undefined): Promise<Counting> {
  const counting: Counting = {
    accumulators: sets.map((set) => statusAccumulator(set, sets)),
    notInjected: sets.map(() => new Map<string, { count: number; pods: NotInjectedPod[] }>()),
    failed: new Map(),
    podsSeen: 0,
  };
  const fail = (i: number, operation: string, error: unknown) => {
    if (!counting.failed.has(i)) counting.failed.set(i, { sidecarSet: sidecarSetName(sets[i] ?? {}), operation, message: errorMessage(error) });
  };
  const needLabels = index.withNamespaceSelector.length > 0;
  const labels: NamespaceLabelsRead = { labels: new Map(), asked: new Set() };
  for await (const page of deps.pods.pages(signal)) {
    signal?.throwIfAborted();
    counting.podsSeen += page.length;
    // Once every set that needs labels has failed, reading more is pointless.
    if (needLabels && index.withNamespaceSelector.some((i) => !counting.failed.has(i))) await readNamespaceLabels(page, labels, deps, index, fail, signal);
    for (const pod of page) index.forEachCandidate(pod, (i) => { countPod(counting, i, pod, labels.labels, samplePods, fail); });
  }
  return counting;
}

/** The labels of the namespaces the resync's pages named so far, and which were asked for. */
interface NamespaceLabelsRead {
  labels: Map<string, Readonly<Record<string, string>>>;
  asked: Set<string>;
}

/** Reads the labels of the page's namespaces not asked for yet; a failure fails every set that selects namespaces. */
async function readNamespaceLabels(page: readonly PodSummary[], read: NamespaceLabelsRead, deps: ResyncDeps, index: SetIndex, fail: (i: number, operation: string, error: unknown) => void, signal: AbortSignal | undefined): Promise<void> {
  const unknown = [...new Set(page.map((pod) => pod.namespace))].filter((ns) => !read.asked.has(ns));
  for (const ns of unknown) read.asked.add(ns);
  if (unknown.length === 0) return;
  try {
    for (const [ns, nsLabels] of await deps.namespaces.labels(unknown, signal)) read.labels.set(ns, nsLabels);
  } catch (error) {
    for (const i of index.withNamespaceSelector) fail(i, 'read namespace labels', error);
  }
}

/** Counts `pod` for set `i`, unless the set already failed this resync. */
function countPod(counting: Counting, i: number, pod: PodSummary, labels: ReadonlyMap<string, Readonly<Record<string, string>>>, samplePods: number, fail: (i: number, operation: string, error: unknown) => void): void {
  if (counting.failed.has(i)) return;
  const accumulator = counting.accumulators[i];
  const byNamespace = counting.notInjected[i];
  if (accumulator === undefined || byNamespace === undefined) return;
  try {
    if (accumulator.add(pod, labels) === 'not-injected') tallyNotInjected(byNamespace, pod, samplePods);
  } catch (error) {
    // A namespace that vanished between the pod list and the label read: decide next resync.
    fail(i, 'match pods', error);
  }
}

/**
 * Runs one resync. Never throws: whatever fails is in `errors`. The steps:
 * list the sets, count the pods for each (starting the list over when its
 * continue token expires), write the statuses that differ, report the
 * uninjected pods that are due, and evict those of the sets that ask for it
 * (repair-step.ts, when `deps.repair` is given).
 */
export async function runResync(deps: ResyncDeps, options: ResyncOptions = {}): Promise<ResyncResult> {
  const nowMs = deps.nowMs ?? (() => performance.now());
  const started = nowMs();
  const result: ResyncResult = { setsSeen: 0, podsSeen: 0, statusesWritten: 0, statusesUnchanged: 0, podListAttempts: 0, errors: [], durationMs: 0, notInjected: {}, sets: {} };
  const finish = (): ResyncResult => {
    result.durationMs = Math.round(nowMs() - started);
    return result;
  };

  const sets = await listSets(deps, options, result);
  if (sets === undefined) return finish();
  // The revisions are read while the pods are: neither needs the other, and the pod list is the resync's longest read.
  const revisionsRead = deps.rollout === undefined ? undefined : startRevisionList(deps.rollout, options.signal);
  const counting = await countPodsRetryingExpiredLists(sets, deps, options, result);
  if (counting === undefined) {
    revisionsRead?.cancel();
    return finish();
  }
  const { findings, canaries, toWrite } = findingsOf(sets, counting, result);
  const revisions = revisionsRead === undefined ? undefined : revisionsBySet(await revisionsRead.listed, result);
  const dispatch = new SetDispatch(sets, counting.accumulators, revisions, deps, options, result);
  const { counted, rolling } = dispatch.routes(toWrite);
  if (!(await dispatch.runCounted(counted))) return finish();
  await dispatch.runRolling(rolling);
  await reportNotInjected(sets, findings, deps, options, result);
  if (deps.canaries !== undefined) await recordCanaryEvents(deps.canaries, canaries, new Set(sets.map(sidecarSetName)), deps.events, result.errors, options.signal);
  if (deps.repair !== undefined) result.repair = await repairMissingPods(sets, result.notInjected, { ...deps.repair, namespaces: deps.namespaces }, result.errors, options.signal);
  return finish();
}

/** The sets to resync; undefined (and the error in the result) when they cannot be listed. */
async function listSets(deps: ResyncDeps, options: ResyncOptions, result: ResyncResult): Promise<readonly SidecarSet[] | undefined> {
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
async function countPodsRetryingExpiredLists(sets: readonly SidecarSet[], deps: ResyncDeps, options: ResyncOptions, result: ResyncResult): Promise<Counting | undefined> {
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
      result.errors.push({ operation: 'list pods', message: `${errorMessage(error)}${detail}; no status is written this resync` });
      return undefined;
    }
  }
}

/** The uninjected pods and the canaries' pods of each counted set (also into the result), and which sets get their status compared and written. */
function findingsOf(sets: readonly SidecarSet[], counting: Counting, result: ResyncResult): { findings: Map<string, NotInjectedFinding>; canaries: Map<string, CanaryFinding>; toWrite: number[] } {
  const findings = new Map<string, NotInjectedFinding>();
  const canaries = new Map<string, CanaryFinding>();
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
    const namespaces = byNamespace.slice(0, MAX_NAMESPACES_RECORDED).map(([namespace, found]) => ({ namespace, ...found }));
    const uid = stringOf(set.metadata?.uid) ?? '';
    findings.set(name, { uid, count, namespaceCount: byNamespace.length, namespaces });
    canaries.set(name, canaryFinding(uid, accumulator.canaryPods));
    toWrite.push(i);
  });
  return { findings, canaries, toWrite };
}

/** Records the events about uninjected pods that are due; a failed event is an error and is due again next resync. */
async function reportNotInjected(sets: readonly SidecarSet[], findings: Map<string, NotInjectedFinding>, deps: ResyncDeps, options: ResyncOptions, result: ResyncResult): Promise<void> {
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


/** Every revision, or why they could not be listed. */
type RevisionList = { revisions: readonly ControllerRevision[] } | { error: unknown };

/** Starts listing every revision (rollout.md §2.1); `listed` never rejects, and `cancel` stops the list when the resync ends without it. */
function startRevisionList(rollout: RolloutDeps, signal: AbortSignal | undefined): { listed: Promise<RevisionList>; cancel: () => void } {
  const own = new AbortController();
  const listed = rollout.revisions.listAll(signal === undefined ? own.signal : AbortSignal.any([signal, own.signal])).then(
    (revisions): RevisionList => ({ revisions }),
    (error: unknown): RevisionList => ({ error }),
  );
  return {
    listed,
    cancel: () => {
      own.abort(new Error('the resync ended without the revisions'));
    },
  };
}

/**
 * The revisions, listed once (rollout.md §2.1), by set. When they cannot be
 * listed, no set rolls this resync and statuses keep their stored revision
 * fields (the counts are still written: they do not depend on revisions).
 */
function revisionsBySet(listed: RevisionList, result: ResyncResult): RevisionsBySet | undefined {
  result.rollout = { setsRolled: 0, podsUpdated: 0, podsFlipped: 0, conflicts: 0, podsFailed: 0, revisionWrites: 0, states: {}, inFlight: [] };
  if ('error' in listed) {
    result.errors.push({ operation: 'list ControllerRevisions', message: `${errorMessage(listed.error)}; no set rolls this resync` });
    return undefined;
  }
  const all = listed.revisions;
  const byName = new Map<string, ControllerRevision[]>();
  for (const revision of all) {
    const owner = stringMapOf(revision.metadata?.labels)[LABEL_SIDECARSET_NAME];
    if (owner === undefined) continue;
    const list = byName.get(owner) ?? [];
    list.push(revision);
    byName.set(owner, list);
  }
  return byName;
}
