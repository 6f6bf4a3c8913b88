/**
 * A SidecarSet's ControllerRevision history (rollout.md §2.1): the revision
 * object, which stored revisions belong to the set and in what order, what
 * registering the latest revision does (reuse, bump an old one, create,
 * resolve a name collision), the custom-version label, and trimming.
 * Pure: the caller lists, writes and retries.
 */
import { arrayOf, isObject, objectOf, stringMapOf, stringOf } from '../kube/json.ts';
import type { JsonObject, ObjectMeta, Pod } from '../kube/types.ts';
import { sidecarSetName } from './match.ts';
import { parseHashAnnotation } from './pod-annotations.ts';
import { ANNOTATION_HASH, API_VERSION, KIND, type SidecarSet } from './types.ts';
import { revisionData, storedRevisionData } from './revision-data.ts';
import { revisionHash, revisionName } from './revision-name.ts';
import { podAnnotation } from './pod-state.ts';

/** Kruise's default ControllerRevision namespace (its manager's). */
export const DEFAULT_REVISION_NAMESPACE = 'kruise-system';
export const LABEL_SIDECARSET_NAME = 'kruise.io/sidecarset-name';
export const LABEL_REVISION_HASH = 'controller.kubernetes.io/hash';
export const LABEL_CUSTOM_VERSION = 'apps.kruise.io/sidecarset-custom-version';
/** revisionHistoryLimit when unset (the defaulting webhook also writes it). */
export const DEFAULT_REVISION_HISTORY_LIMIT = 10;

export interface ControllerRevision {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  data?: unknown;
  revision?: number;
  [key: string]: unknown;
}

/** The revision's name for the set's current spec and a collision count (§2.1). */
export function currentRevisionName(set: SidecarSet, collisionCount = set.status?.collisionCount ?? 0): string {
  return revisionName(sidecarSetName(set), revisionHash(revisionData(set), collisionCount));
}

/**
 * The ControllerRevision Kruise would create for the set (§2.1, §2.2): the
 * set's labels and annotations, the name label, the hash label, a
 * controlling owner reference to the set, `revision` = `number`.
 */
export function newRevision(set: SidecarSet, namespace: string, number: number, collisionCount: number): ControllerRevision {
  const name = sidecarSetName(set);
  const hash = revisionHash(revisionData(set), collisionCount);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(name, hash),
      namespace,
      labels: { ...stringMapOf(set.metadata?.labels), [LABEL_SIDECARSET_NAME]: name, [LABEL_REVISION_HASH]: hash },
      annotations: { ...stringMapOf(set.metadata?.annotations) },
      ownerReferences: [
        { apiVersion: API_VERSION, kind: KIND, name, uid: stringOf(set.metadata?.uid) ?? '', controller: true, blockOwnerDeletion: true },
      ],
    },
    // Kruise compares a revision's Data.Raw byte for byte (history.EqualRevision): the keys go in
    // its order (sorted, as its map round trip prints them), or on the way back to Kruise it takes
    // this revision for a hash collision and registers another under a new name.
    data: JSON.parse(revisionData(set)) as unknown,
    revision: number,
  };
}

function controllerRef(revision: ControllerRevision): JsonObject | undefined {
  return arrayOf(revision.metadata?.ownerReferences).find((r): r is JsonObject => isObject(r) && r.controller === true);
}

function revisionNumber(r: ControllerRevision): number {
  return typeof r.revision === 'number' ? r.revision : 0;
}

/**
 * The set's history (ListControllerRevisions + SortControllerRevisions):
 * revisions labelled with its name whose controller is the set or that have
 * none, by `revision`, then creationTimestamp, then name.
 */
export function setHistory(set: SidecarSet, revisions: readonly ControllerRevision[]): ControllerRevision[] {
  const name = sidecarSetName(set);
  const uid = stringOf(set.metadata?.uid) ?? '';
  const owned = revisions.filter((r) => {
    if (stringMapOf(r.metadata?.labels)[LABEL_SIDECARSET_NAME] !== name) return false;
    const ref = controllerRef(r);
    return ref === undefined || ref.uid === uid;
  });
  return owned.sort((a, b) => {
    const d = revisionNumber(a) - revisionNumber(b);
    if (d !== 0) return d;
    const ta = stringOf(a.metadata?.creationTimestamp) ?? '';
    const tb = stringOf(b.metadata?.creationTimestamp) ?? '';
    if (ta !== tb) return Date.parse(ta || '0001-01-01T00:00:00Z') - Date.parse(tb || '0001-01-01T00:00:00Z');
    const na = stringOf(a.metadata?.name) ?? '';
    const nb = stringOf(b.metadata?.name) ?? '';
    return na < nb ? -1 : na > nb ? 1 : 0;
  });
}

/** k8s history.EqualRevision: hash labels that both parse as int32 must agree, and the data bytes must. */
export function equalRevisions(a: ControllerRevision, b: ControllerRevision): boolean {
  const ha = int32Label(a);
  const hb = int32Label(b);
  if (ha !== undefined && hb !== undefined && ha !== hb) return false;
  return storedRevisionData(a) === storedRevisionData(b);
}

function int32Label(r: ControllerRevision): number | undefined {
  const v = stringMapOf(r.metadata?.labels)[LABEL_REVISION_HASH];
  if (v === undefined || !/^[+-]?\d+$/.test(v)) return undefined;
  const n = Number(v);
  return n >= -(2 ** 31) && n < 2 ** 31 ? n >>> 0 : undefined;
}

/** What registering the latest revision does this pass (§2.1 "Deciding"). */
export type RevisionAction =
  /** The newest revision already records the spec: no write. */
  | { kind: 'reuse'; revision: ControllerRevision }
  /** An older revision records it (rollback): update its `revision` to `number`; the name stays. */
  | { kind: 'bump'; revision: ControllerRevision; number: number }
  /** Create this revision; on AlreadyExists, call {@link resolveCollision}. */
  | { kind: 'create'; revision: ControllerRevision };

/**
 * registerLatestRevision's decision, from the set's sorted history (see
 * {@link setHistory}) and its current `status.collisionCount`.
 */
export function revisionAction(set: SidecarSet, history: readonly ControllerRevision[], namespace: string, collisionCount = set.status?.collisionCount ?? 0): RevisionAction {
  const last = history.at(-1);
  const number = last === undefined ? 1 : revisionNumber(last) + 1;
  const candidate = newRevision(set, namespace, number, collisionCount);
  const equal = history.filter((r) => equalRevisions(r, candidate));
  const newestEqual = equal.at(-1);
  if (newestEqual !== undefined && newestEqual === last) return { kind: 'reuse', revision: last };
  if (newestEqual !== undefined) return { kind: 'bump', revision: newestEqual, number };
  return { kind: 'create', revision: candidate };
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

/** {@link activeRevisions} from the revision names matched pods record (a streamed pass keeps only those). */
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
