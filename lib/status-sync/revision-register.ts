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
import { activeRevisionNames, customVersionPatch, resolveCollision, revisionAction, revisionsToDelete } from '../rollout/revision-history.ts';
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

/** Collisions resolved in one registration before giving up (each needs another set's revision under the same FNV name). */
const MAX_COLLISIONS = 5;

function nameOf(revision: ControllerRevision): string {
  return stringOf(revision.metadata?.name) ?? '';
}

/**
 * One revision write; a failure other than a name taken or a conflict (both
 * decided here or next pass) becomes a RevisionWriteError naming the revision.
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
 * Registers the set's current spec as its latest revision.
 * @param stored every revision the store holds for the set (any order; others' are filtered out).
 * @throws when a write fails (a RevisionWriteError unless it was a conflict): the caller writes no status for
 *   the set this pass (Kruise returns the error) and tells it (revision-failure.ts).
 */
export async function registerRevision(set: SidecarSet, stored: readonly ControllerRevision[], store: RevisionStore, signal?: AbortSignal): Promise<Registration> {
  const history = setHistory(set, stored);
  let collisionCount = set.status?.collisionCount ?? 0;
  let writes = 0;
  const action = revisionAction(set, history, store.namespace, collisionCount);
  let latest: ControllerRevision;
  if (action.kind === 'reuse') latest = action.revision;
  else if (action.kind === 'bump') {
    const { revision, number } = action;
    latest = await writing('renumber', store.namespace, revision, () => store.setNumber(revision, number, signal));
    writes++;
    history.splice(history.indexOf(action.revision), 1);
    history.push(latest);
  } else {
    let candidate = action.revision;
    for (let collisions = 0; ; collisions++) {
      try {
        const attempt = candidate;
        latest = await writing('create', store.namespace, attempt, () => store.create(attempt, signal));
        writes++;
        break;
      } catch (error) {
        if (!(error instanceof ObjectExistsError)) throw error;
        const existing = await store.get(nameOf(candidate), signal);
        // Deleted between the create and the read: create again under the same name.
        if (existing === undefined) continue;
        const resolved = resolveCollision(set, candidate, existing, collisionCount);
        if (resolved.kind === 'use') {
          latest = resolved.revision;
          break;
        }
        if (collisions >= MAX_COLLISIONS) {
          throw new RevisionWriteError('create', `${store.namespace}/${nameOf(resolved.revision)}`, `SidecarSet ${sidecarSetName(set)}: ${MAX_COLLISIONS} revision names in a row were taken by other data`, { cause: error });
        }
        candidate = resolved.revision;
        collisionCount = resolved.collisionCount;
      }
    }
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
