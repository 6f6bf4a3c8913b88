/**
 * A SidecarSet's ControllerRevisions (rollout.md §2.1): the revision object
 * and its name for the set's current spec, its labels, which stored revisions
 * belong to the set and in what order, and when two record the same spec.
 * The webhook (a pinned revision) and the reconciler (registering, trimming:
 * lib/rollout/revision-history.ts) read them alike. Pure.
 */
import { arrayOf, isObject, stringMapOf, stringOf } from '../kube/json.ts';
import type { JsonObject, ObjectMeta } from '../kube/types.ts';
import { sidecarSetName } from './match.ts';
import { API_VERSION, GROUP, KIND, type SidecarSet } from './types.ts';
import { revisionData } from './revision-data.ts';
import { revisionHash, revisionName } from './revision-name.ts';

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
 * controlling owner reference to the set, `revision` = `number`. `data` is
 * the set's revision data when the caller has it encoded already.
 */
export function newRevision(set: SidecarSet, namespace: string, number: number, collisionCount: number, data: string = revisionData(set)): ControllerRevision {
  const name = sidecarSetName(set);
  const hash = revisionHash(data, collisionCount);
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
    data: JSON.parse(data) as unknown,
    revision: number,
  };
}

function controllerRef(revision: ControllerRevision): JsonObject | undefined {
  return arrayOf(revision.metadata?.ownerReferences).find((r): r is JsonObject => isObject(r) && r.controller === true);
}

/**
 * The apiVersions an owner reference to a SidecarSet carries: Kruise 1.8 (and
 * this project on a cluster storing v1alpha1) writes v1alpha1, Kruise 1.9
 * writes v1beta1, its stored version. Both name the same object.
 */
export const OWNER_API_VERSIONS: readonly string[] = [`${GROUP}/v1alpha1`, `${GROUP}/v1beta1`];

/** Whether an owner reference names a SidecarSet, in either version of its group. */
export function isSidecarSetRef(ref: unknown): ref is JsonObject {
  return isObject(ref) && ref.kind === KIND && typeof ref.apiVersion === 'string' && OWNER_API_VERSIONS.includes(ref.apiVersion);
}

/**
 * Who controls the revision, when it is not `set`: undefined when its
 * controller reference names the set (a SidecarSet of that name, in either
 * version; and of its uid, when both are known) or it has none (Kruise adopts
 * those); otherwise the controller in words, for messages.
 */
export function foreignController(revision: ControllerRevision, set: SidecarSet): string | undefined {
  const ref = controllerRef(revision);
  if (ref === undefined) return undefined;
  const uid = stringOf(set.metadata?.uid) ?? '';
  const refUid = stringOf(ref.uid) ?? '';
  if (isSidecarSetRef(ref) && ref.name === sidecarSetName(set) && (uid === '' || refUid === '' || uid === refUid)) return undefined;
  const what = `${stringOf(ref.kind) ?? '(no kind)'} ${JSON.stringify(stringOf(ref.name) ?? '')} (${stringOf(ref.apiVersion) ?? 'no apiVersion'}${refUid === '' ? '' : `, uid ${refUid}`})`;
  return what;
}

/**
 * The revision as written to a cluster whose SidecarSets are stored as
 * `apiVersion` (`apps.kruise.io/v1beta1` under Kruise 1.9's CRD): its
 * SidecarSet owner reference carries that apiVersion, as Kruise 1.9's own
 * writes do. Other references are left as they are.
 */
export function withOwnerApiVersion(revision: ControllerRevision, apiVersion: string): ControllerRevision {
  const refs = revision.metadata?.ownerReferences;
  if (!Array.isArray(refs) || !refs.some((r) => isSidecarSetRef(r) && r.apiVersion !== apiVersion)) return revision;
  return { ...revision, metadata: { ...revision.metadata, ownerReferences: refs.map((r: unknown) => (isSidecarSetRef(r) ? { ...r, apiVersion } : r)) } };
}

/** The revision's `revision` number, 0 when it has none. */
export function revisionNumber(r: ControllerRevision): number {
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

/**
 * k8s history.EqualRevision's first test, which needs no data: both hash
 * labels parse as int32 and differ (then the revisions are not equal; else
 * their data bytes decide: rollout/revision-history.ts `revisionAction`).
 */
export function hashLabelsDiffer(a: ControllerRevision, b: ControllerRevision): boolean {
  const ha = int32Label(a);
  const hb = int32Label(b);
  return ha !== undefined && hb !== undefined && ha !== hb;
}

function int32Label(r: ControllerRevision): number | undefined {
  const v = stringMapOf(r.metadata?.labels)[LABEL_REVISION_HASH];
  if (v === undefined || !/^[+-]?\d+$/.test(v)) return undefined;
  const n = Number(v);
  return n >= -(2 ** 31) && n < 2 ** 31 ? n >>> 0 : undefined;
}
