/**
 * Which SidecarSets could apply to a pod, without asking every set about
 * every pod: a resync over P pods and S sets then costs about
 * O(P x labels per pod + S + candidates) instead of O(P x S).
 *
 * Each set is filed once, under its namespace (or as cluster-wide) and under
 * one *anchor*: a requirement of its selector that every pod it selects must
 * meet and that a pod's labels can look up directly (`app=web` from
 * matchLabels, `app In (web, api)`, `app Exists`). Sets with no such
 * requirement (only NotIn or DoesNotExist) are asked about every pod of their
 * scope. The index only narrows: the caller still decides with
 * sidecarSetSelectsPod (match.ts), so injection and status can never
 * disagree, and an anchor that is merely necessary is enough.
 */
import { isObject, objectOf, stringOf } from '../kube/json.ts';
import { hasNamespaceSelector } from '../sidecarset/match.ts';
import type { SidecarSet } from '../sidecarset/types.ts';

/** Sets of one scope (cluster-wide, or one namespace), by anchor. */
interface Bucket {
  /** No usable anchor: a candidate for every pod. */
  always: number[];
  /** Anchored on key=value (matchLabels, or one of an In's values): label key -> value -> sets. */
  byLabel: Map<string, Map<string, number[]>>;
  /** Anchored on the key existing (Exists). */
  byKey: Map<string, number[]>;
}

type Anchor = { kind: 'values'; key: string; values: string[] } | { kind: 'key'; key: string } | { kind: 'none' };

function emptyBucket(): Bucket {
  return { always: [], byLabel: new Map(), byKey: new Map() };
}

function push<K>(map: Map<K, number[]>, key: K, value: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/**
 * A requirement every pod the selector matches must meet. Only requirements
 * that selectorMatches enforces exactly so are used; anything unusual (a
 * malformed entry) leads to 'none', which is always safe.
 */
function anchorOf(selector: Record<string, unknown>): Anchor {
  const matchLabels = objectOf(selector.matchLabels);
  if (matchLabels !== undefined) {
    for (const [key, value] of Object.entries(matchLabels)) {
      if (typeof value === 'string') return { kind: 'values', key, values: [value] };
    }
  }
  const expressions: unknown = selector.matchExpressions;
  if (Array.isArray(expressions)) {
    let exists: Anchor | undefined;
    for (const requirement of expressions) {
      if (!isObject(requirement) || typeof requirement.key !== 'string') continue;
      const values: unknown = requirement.values;
      if (requirement.operator === 'In' && Array.isArray(values)) {
        // Non-string values can never equal a label value; an In without any
        // string value matches nothing, so no pod ever looks this set up.
        return { kind: 'values', key: requirement.key, values: values.filter((v): v is string => typeof v === 'string') };
      }
      if (requirement.operator === 'Exists') exists ??= { kind: 'key', key: requirement.key };
    }
    if (exists !== undefined) return exists;
  }
  return { kind: 'none' };
}

function file(bucket: Bucket, anchor: Anchor, index: number): void {
  switch (anchor.kind) {
    case 'values': {
      let byValue = bucket.byLabel.get(anchor.key);
      if (byValue === undefined) {
        byValue = new Map();
        bucket.byLabel.set(anchor.key, byValue);
      }
      // A value listed twice must not make the set a candidate twice.
      for (const value of new Set(anchor.values)) push(byValue, value, index);
      return;
    }
    case 'key':
      push(bucket.byKey, anchor.key, index);
      return;
    case 'none':
      bucket.always.push(index);
  }
}

function visit(bucket: Bucket, labels: Readonly<Record<string, string>>, fn: (index: number) => void): void {
  for (const index of bucket.always) fn(index);
  if (bucket.byLabel.size === 0 && bucket.byKey.size === 0) return;
  for (const key of Object.keys(labels)) {
    const value = labels[key];
    if (value === undefined) continue;
    const byValue = bucket.byLabel.get(key)?.get(value);
    if (byValue !== undefined) for (const index of byValue) fn(index);
    const byKey = bucket.byKey.get(key);
    if (byKey !== undefined) for (const index of byKey) fn(index);
  }
}

/** The sets, indexed; candidates are positions in the array it was built from. */
export interface SetIndex {
  /**
   * Calls `fn` once for each set that may apply to a pod with these labels in
   * this namespace: every set that does is among them.
   */
  forEachCandidate(pod: { namespace: string; labels: Readonly<Record<string, string>> }, fn: (index: number) => void): void;
  /** Positions of the sets with a namespaceSelector (they need Namespace labels). */
  readonly withNamespaceSelector: readonly number[];
}

/** Indexes `sets`; sets that can never select a pod (no selector object) are left out. */
export function buildSetIndex(sets: readonly SidecarSet[]): SetIndex {
  const clusterWide = emptyBucket();
  const byNamespace = new Map<string, Bucket>();
  const withNamespaceSelector: number[] = [];
  sets.forEach((set, index) => {
    const spec = objectOf(set.spec);
    const selector = objectOf(spec?.selector);
    // sidecarSetSelectsPod refuses such a set for every pod.
    if (spec === undefined || selector === undefined) return;
    const namespace = stringOf(spec.namespace);
    let bucket = clusterWide;
    if (namespace !== undefined && namespace !== '') {
      bucket = byNamespace.get(namespace) ?? emptyBucket();
      byNamespace.set(namespace, bucket);
    }
    file(bucket, anchorOf(selector), index);
    if (hasNamespaceSelector(set)) withNamespaceSelector.push(index);
  });
  return {
    forEachCandidate(pod, fn) {
      visit(clusterWide, pod.labels, fn);
      const bucket = byNamespace.get(pod.namespace);
      if (bucket !== undefined) visit(bucket, pod.labels, fn);
    },
    withNamespaceSelector,
  };
}
