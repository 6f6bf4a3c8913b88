/**
 * The reconciler's decisions on a SidecarSet's ControllerRevision history
 * (rollout.md §2.1): what registering the latest revision does (reuse, bump
 * an old one, create, resolve a name collision), the custom-version label,
 * which revisions are in use and which to trim. Pure: the caller lists,
 * writes and retries.
 */
import { objectOf, stringMapOf, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { sidecarSetName } from '../sidecarset/match.ts';
import { parseHashAnnotation } from '../sidecarset/pod-annotations.ts';
import { podAnnotation } from '../sidecarset/pod-state.ts';
import { revisionData, storedRevisionData } from '../sidecarset/revision-data.ts';
import { revisionHash } from '../sidecarset/revision-name.ts';
import {
  DEFAULT_REVISION_HISTORY_LIMIT,
  DEFAULT_REVISION_NAMESPACE,
  hashLabelsDiffer,
  LABEL_CUSTOM_VERSION,
  LABEL_REVISION_HASH,
  newRevision,
  revisionNumber,
  type ControllerRevision,
} from '../sidecarset/revisions.ts';
import { ANNOTATION_HASH, type SidecarSet } from '../sidecarset/types.ts';

/** What registering the latest revision does this reconcile (§2.1 "Deciding"). */
export type RevisionAction =
  /** The newest revision already records the spec: no write. */
  | { kind: 'reuse'; revision: ControllerRevision }
  /** An older revision records it (rollback): update its `revision` to `number`; the name stays. */
  | { kind: 'bump'; revision: ControllerRevision; number: number }
  /** Create this revision; on AlreadyExists, call {@link resolveCollision}. */
  | { kind: 'create'; revision: ControllerRevision };

/**
 * What registering reads of a set's current spec (§2.1): the revision data
 * it records, its hash for a collision count, and whether a stored revision
 * records the same data. {@link revisionFacts} works them out when asked;
 * the reconciler keeps them per stored version of a set, which they depend
 * on alone (status-sync/revision-register.ts).
 */
export interface RevisionFacts {
  /** The Data.Raw of the set's revision (revision-data.ts `revisionData`). */
  readonly data: string;
  /** HashControllerRevision of {@link data} with this collision count. */
  hash(collisionCount: number): string;
  /** Whether the stored revision's Data.Raw, printed again as it was written (`storedRevisionData`), is {@link data}. */
  recordsData(revision: ControllerRevision): boolean;
}

/** The facts of the set's spec, its data encoded now (once), each stored revision's again at every comparison. */
export function revisionFacts(set: SidecarSet): RevisionFacts {
  const data = revisionData(set);
  const hashes = new Map<number, string>();
  return {
    data,
    hash(collisionCount) {
      let hash = hashes.get(collisionCount);
      if (hash === undefined) {
        hash = revisionHash(data, collisionCount);
        hashes.set(collisionCount, hash);
      }
      return hash;
    },
    recordsData: (revision) => storedRevisionData(revision) === data,
  };
}

/**
 * registerLatestRevision's decision, from the set's sorted history (see
 * {@link setHistory}) and its current `status.collisionCount`. A stored
 * revision records the spec as k8s history.EqualRevision decides against
 * the revision that would be created: hash labels that both parse as int32
 * agree, and the data bytes are the same. The history is read from its
 * newest end, which is the answer on every reconcile but the one after a change.
 */
export function revisionAction(set: SidecarSet, history: readonly ControllerRevision[], namespace: string, collisionCount = set.status?.collisionCount ?? 0, facts: RevisionFacts = revisionFacts(set)): RevisionAction {
  const last = history.at(-1);
  const number = last === undefined ? 1 : revisionNumber(last) + 1;
  const labelled: ControllerRevision = { metadata: { labels: { [LABEL_REVISION_HASH]: facts.hash(collisionCount) } } };
  let newestEqual: ControllerRevision | undefined;
  for (let i = history.length - 1; i >= 0 && newestEqual === undefined; i--) {
    const revision = history[i];
    if (revision !== undefined && !hashLabelsDiffer(revision, labelled) && facts.recordsData(revision)) newestEqual = revision;
  }
  if (newestEqual !== undefined && newestEqual === last) return { kind: 'reuse', revision: last };
  if (newestEqual !== undefined) return { kind: 'bump', revision: newestEqual, number };
  return { kind: 'create', revision: newRevision(set, namespace, number, collisionCount, facts.data) };
}

/**
 * After a create met AlreadyExists: the existing object is the set's
 * revision when its data is identical; otherwise the collision count goes up
 * and the returned candidate (new name) is created instead, and the new
 * count goes into `status.collisionCount`.
 */
export function resolveCollision(
  set: SidecarSet,
  attempted: ControllerRevision,
  existing: ControllerRevision,
  collisionCount: number,
): { kind: 'use'; revision: ControllerRevision } | { kind: 'retry'; revision: ControllerRevision; collisionCount: number } {
  if (storedRevisionData(existing) === storedRevisionData(attempted)) return { kind: 'use', revision: existing };
  const next = collisionCount + 1;
  const namespace = stringOf(attempted.metadata?.namespace) ?? DEFAULT_REVISION_NAMESPACE;
  return { kind: 'retry', revision: newRevision(set, namespace, revisionNumber(attempted), next), collisionCount: next };
}

/**
 * updateCustomVersionLabel: the strategic-merge patch that moves the set's
 * custom-version label onto its latest revision, or undefined when the set
 * has none or the revision already carries it.
 */
export function customVersionPatch(set: SidecarSet, latest: ControllerRevision): { metadata: { labels: Record<string, string> } } | undefined {
  const version = stringMapOf(set.metadata?.labels)[LABEL_CUSTOM_VERSION];
  if (version === undefined) return undefined;
  if (stringMapOf(latest.metadata?.labels)[LABEL_CUSTOM_VERSION] === version) return undefined;
  return { metadata: { labels: { [LABEL_CUSTOM_VERSION]: version } } };
}

/**
 * filterActiveRevisions: names recorded as `controllerRevision` for the set
 * on its matched pods, the pinned `revisionName`, and the newest revision
 * labelled with the pinned `customVersion`.
 */
export function activeRevisions(set: SidecarSet, matched: readonly Pod[], history: readonly ControllerRevision[]): Set<string> {
  const name = sidecarSetName(set);
  const recorded: string[] = [];
  for (const pod of matched) {
    let revision: string | undefined;
    try {
      revision = parseHashAnnotation(ANNOTATION_HASH, podAnnotation(pod, ANNOTATION_HASH)).get(name)?.controllerRevision;
    } catch {
      revision = undefined;
    }
    if (revision !== undefined) recorded.push(revision);
  }
  return activeRevisionNames(set, recorded, history);
}

/** {@link activeRevisions} from the revision names matched pods record (a streamed resync keeps only those). */
export function activeRevisionNames(set: SidecarSet, recorded: Iterable<string>, history: readonly ControllerRevision[]): Set<string> {
  const out = new Set<string>();
  for (const revision of recorded) if (revision !== '') out.add(revision);
  const pinned = objectOf(set.spec?.injectionStrategy?.revision);
  const pinnedName = stringOf(pinned?.revisionName);
  if (pinnedName !== undefined) out.add(pinnedName);
  const custom = stringOf(pinned?.customVersion);
  if (custom !== undefined) {
    const newest = [...history].reverse().find((r) => stringMapOf(r.metadata?.labels)[LABEL_CUSTOM_VERSION] === custom);
    const newestName = stringOf(newest?.metadata?.name);
    if (newestName !== undefined) out.add(newestName);
  }
  return out;
}

/**
 * truncateHistory: with more revisions than `max(1, revisionHistoryLimit)`
 * (10 when unset), the oldest inactive ones to delete, never the newest.
 * `short` counts the deletions still missing when active revisions stand in
 * the way (Kruise logs an error and carries on).
 */
export function revisionsToDelete(
  set: SidecarSet,
  history: readonly ControllerRevision[],
  active: ReadonlySet<string>,
): { delete: ControllerRevision[]; short: number } {
  const configured = set.spec?.revisionHistoryLimit;
  const limit = Math.max(1, typeof configured === 'number' ? configured : DEFAULT_REVISION_HISTORY_LIMIT);
  let toDelete = history.length - limit;
  const out: ControllerRevision[] = [];
  if (toDelete <= 0) return { delete: out, short: 0 };
  for (const r of history.slice(0, -1)) {
    if (toDelete === 0) break;
    if (active.has(stringOf(r.metadata?.name) ?? '')) continue;
    out.push(r);
    toDelete--;
  }
  return { delete: out, short: toDelete };
}
