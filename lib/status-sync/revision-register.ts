/**
 * registerLatestRevision and truncateHistory (rollout.md §2.1) against a
 * RevisionStore: reuse the newest revision when it records the spec, bump an
 * older one that does (rollback), or create one, resolving name collisions;
 * move the custom-version label; trim the history past its limit, keeping
 * revisions in use. The decisions are lib/rollout/revision-history.ts's.
 */
import { errorMessage } from '../errors.ts';
import { stringOf } from '../kube/json.ts';
import type { RevisionStore } from '../ports.ts';
import { activeRevisionNames, customVersionPatch, resolveCollision, revisionAction, revisionFacts, revisionsToDelete, type RevisionFacts } from '../rollout/revision-history.ts';
import { StoredVersionMemo, type StoredVersionMemoOptions } from '../sidecarset/stored-version-memo.ts';
import { setHistory, type ControllerRevision } from '../sidecarset/revisions.ts';
import { sidecarSetName } from '../sidecarset/match.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { ObjectExistsError, WriteConflictError } from '../ports/errors.ts';
import { RevisionWriteError, type RevisionWrite } from './errors.ts';

/** What registering gave: the status's latestRevision and collisionCount, and the history as it now stands. */
export interface Registration {
  latestRevision: string;
  collisionCount: number;
  history: ControllerRevision[];
  /** Revisions written: created, renumbered or labelled. */
  writes: number;
}

/** How registering gets a set's {@link RevisionFacts}: worked out now, or kept per stored version ({@link memoisedRevisionFacts}). */
export type RevisionFactsOf = (set: SidecarSet) => RevisionFacts;

/** The most stored revisions one set's facts remember the comparison with (a history is at most its limit, 10 by default, plus what changed since). */
const MAX_COMPARED_REVISIONS = 64;

/**
 * A set's facts that remember, per stored revision version (uid +
 * resourceVersion: the same pair is the same content), whether it records
 * the set's data, so that an unchanged revision is not encoded again on
 * every reconcile. A revision without both is compared every time.
 */
function rememberingComparisons(facts: RevisionFacts): RevisionFacts {
  const compared = new Map<string, boolean>();
  return {
    data: facts.data,
    hash: (collisionCount) => facts.hash(collisionCount),
    recordsData(revision) {
      const uid = stringOf(revision.metadata?.uid) ?? '';
      const resourceVersion = stringOf(revision.metadata?.resourceVersion) ?? '';
      if (uid === '' || resourceVersion === '') return facts.recordsData(revision);
      const key = `${uid}/${resourceVersion}`;
      let records = compared.get(key);
      if (records === undefined) {
        records = facts.recordsData(revision);
        // Revisions come and go over a process's life: past the bound, what was remembered is forgotten at once.
        if (compared.size >= MAX_COMPARED_REVISIONS) compared.clear();
        compared.set(key, records);
      }
      return records;
    },
  };
}

/**
 * {@link revisionFacts} kept per stored version of a set (uid +
 * resourceVersion, stored-version-memo.ts: any change to the set gives a new
 * resourceVersion, and a set without both is worked out every time), with
 * each stored revision's comparison remembered: a process that reconciles
 * again and again (a warm Lambda, the local loop) encodes an unchanged set's spec
 * and its revisions once, not on every reconcile. Only for sets as the API
 * server stores them, which is what the reconciler registers.
 */
export function memoisedRevisionFacts(options?: StoredVersionMemoOptions): { factsOf: RevisionFactsOf; memo: StoredVersionMemo<RevisionFacts> } {
  const memo = new StoredVersionMemo((set) => rememberingComparisons(revisionFacts(set)), options);
  return { factsOf: (set) => memo.of(set), memo };
}

/** Collisions resolved in one registration before giving up (each needs another set's revision under the same FNV name). */
const MAX_COLLISIONS = 5;

function nameOf(revision: ControllerRevision): string {
  return stringOf(revision.metadata?.name) ?? '';
}

/**
 * One revision write; a failure other than a name taken or a conflict (both
 * decided here or next reconcile) becomes a RevisionWriteError naming the revision.
 */
async function writing<T>(write: RevisionWrite, namespace: string, revision: ControllerRevision | string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ObjectExistsError || error instanceof WriteConflictError || error instanceof RevisionWriteError) throw error;
    throw new RevisionWriteError(write, `${namespace}/${typeof revision === 'string' ? revision : nameOf(revision)}`, errorMessage(error), { cause: error });
  }
}

/**
 * Creates `candidate`, or settles on the revision already stored under its
 * name when it holds the same data; a name taken by other data takes the
 * next collision count, at most MAX_COLLISIONS times in a row.
 */
async function createRevision(set: SidecarSet, candidate: ControllerRevision, store: RevisionStore, collisionCount: number, signal: AbortSignal | undefined): Promise<{ revision: ControllerRevision; collisionCount: number; writes: number }> {
  for (let collisions = 0; ; collisions++) {
    try {
      const attempt = candidate;
      const revision = await writing('create', store.namespace, attempt, () => store.create(attempt, signal));
      return { revision, collisionCount, writes: 1 };
    } catch (error) {
      if (!(error instanceof ObjectExistsError)) throw error;
      const existing = await store.get(nameOf(candidate), signal);
      // Deleted between the create and the read: create again under the same name.
      if (existing === undefined) continue;
      const resolved = resolveCollision(set, candidate, existing, collisionCount);
      if (resolved.kind === 'use') return { revision: resolved.revision, collisionCount, writes: 0 };
      if (collisions >= MAX_COLLISIONS) {
        throw new RevisionWriteError('create', `${store.namespace}/${nameOf(resolved.revision)}`, `SidecarSet ${sidecarSetName(set)}: ${MAX_COLLISIONS} revision names in a row were taken by other data`, { cause: error });
      }
      candidate = resolved.revision;
      collisionCount = resolved.collisionCount;
    }
  }
}

/**
 * Registers the set's current spec as its latest revision.
 * @param stored every revision the store holds for the set (any order; others' are filtered out).
 * @param factsOf what the set's spec gives (its revision data, hash, comparisons); a memo of it when the caller runs reconcile after reconcile.
 * @throws when a write fails (a RevisionWriteError unless it was a conflict): the caller writes no status for
 *   the set this reconcile (Kruise returns the error) and tells it (revision-failure.ts).
 */
export async function registerRevision(set: SidecarSet, stored: readonly ControllerRevision[], store: RevisionStore, signal?: AbortSignal, factsOf: RevisionFactsOf = revisionFacts): Promise<Registration> {
  const history = setHistory(set, stored);
  let collisionCount = set.status?.collisionCount ?? 0;
  let writes = 0;
  const action = revisionAction(set, history, store.namespace, collisionCount, factsOf(set));
  let latest: ControllerRevision;
  if (action.kind === 'reuse') latest = action.revision;
  else if (action.kind === 'bump') {
    const { revision, number } = action;
    latest = await writing('renumber', store.namespace, revision, () => store.setNumber(revision, number, signal));
    writes++;
    history.splice(history.indexOf(action.revision), 1);
    history.push(latest);
  } else {
    const created = await createRevision(set, action.revision, store, collisionCount, signal);
    latest = created.revision;
    collisionCount = created.collisionCount;
    writes += created.writes;
    history.push(latest);
  }
  const labels = customVersionPatch(set, latest);
  if (labels !== undefined) {
    const name = nameOf(latest);
    await writing('label', store.namespace, name, () => store.patchLabels(name, labels.metadata.labels, signal));
    writes++;
  }
  return { latestRevision: nameOf(latest), collisionCount, history, writes };
}

/**
 * Deletes the oldest revisions past `revisionHistoryLimit`, never the newest
 * nor one in use (`recorded` by matched pods, pinned, the newest of the
 * pinned custom version).
 * @returns how many were deleted, and why the limit could not be reached when it could not.
 */
export async function trimHistory(
  set: SidecarSet,
  history: readonly ControllerRevision[],
  recorded: Iterable<string>,
  store: RevisionStore,
  signal?: AbortSignal,
): Promise<{ deleted: number; problem?: string }> {
  const plan = revisionsToDelete(set, history, activeRevisionNames(set, recorded, history));
  let deleted = 0;
  for (const revision of plan.delete) {
    try {
      await store.delete(revision, signal);
      deleted++;
    } catch (error) {
      return { deleted, problem: `delete ControllerRevision ${nameOf(revision)}: ${errorMessage(error)}` };
    }
  }
  if (plan.short > 0) return { deleted, problem: `${plan.short} revision(s) over revisionHistoryLimit are still in use by pods or pinned, so they are kept` };
  return { deleted };
}
