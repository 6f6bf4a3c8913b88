/**
 * Which pods a SidecarSet's rollout considers (rollout.md §1.1) and how each
 * one stands this batch (§1.2, §1.6).
 */
import { selectorMatches } from '../kube/label-selector.ts';
import { objectOf, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { isActivePod, sidecarSetName, sidecarSetSelectsPod, type NamespaceLabels } from '../sidecarset/match.ts';
import { ANNOTATION_HASH_WITHOUT_IMAGE, type SidecarSet } from '../sidecarset/types.ts';
import {
  isContainerReady,
  isInjectedBy,
  isPodSidecarUpdated,
  isPodStateConsistent,
  podHasSetContainers,
  podContainers,
  podLabels,
  podNativeSidecars,
  recordedHashWithoutImage,
  type RecordedEntriesMemo,
  setContainers,
  setHashWithoutImage,
  sidecarContainerNames,
} from '../sidecarset/pod-state.ts';

/**
 * The set's matched pods (rollout.md §1.1): active, selected by the set
 * (namespace, namespaceSelector, selector), naming it in the injected list
 * and carrying its sidecars (HotUpgrade: `x-1`, `x-2` and a working-container
 * entry). Returned in the API server's list order, namespace/name ascending,
 * which Kruise's tie rules refer to (§1.8a).
 * @throws UnknownNamespaceError when a namespaceSelector needs a namespace missing from `namespaceLabels`.
 */
export function matchedPods(set: SidecarSet, pods: readonly Pod[], namespaceLabels: NamespaceLabels): Pod[] {
  return matchedList(set, pods, namespaceLabels).sorted;
}

/** The matched pods both in the order they were listed and in {@link matchedPods}' order. */
export interface MatchedList {
  /** In the order of the list given (the order they lie in memory when a list was parsed). */
  listed: Pod[];
  /** namespace/name ascending: {@link matchedPods}. The same array as `listed` when that is in order already. */
  sorted: Pod[];
  /** Where each pod of `listed` stands in `sorted`; undefined when the two are the same. */
  position: Int32Array | undefined;
}

/**
 * {@link matchedPods}, with the pods as listed and where each lands in
 * order: a walk over 100,000 pods in the order they were parsed into memory
 * reads them at about half the cost of one in sorted order when the list
 * was not sorted, so the plan walks `listed` and files what it reads under
 * `position`.
 * @throws UnknownNamespaceError when a namespaceSelector needs a namespace missing from `namespaceLabels`.
 */
export function matchedList(set: SidecarSet, pods: readonly Pod[], namespaceLabels: NamespaceLabels): MatchedList {
  const sidecars = setContainers(set);
  const out: Pod[] = [];
  // Each pod's namespace and name: compared as its `namespace/name` key without making the key.
  const namespaces: string[] = [];
  const names: string[] = [];
  let ascending = true;
  for (const pod of pods) {
    if (!isActivePod(pod) || !isInjectedBy(pod, set) || !podHasSetContainers(pod, set, sidecars)) continue;
    const metadata = objectOf(pod.metadata);
    const namespace = stringOf(metadata?.namespace) ?? '';
    if (!sidecarSetSelectsPod(set, podLabels(pod), namespace, namespaceLabels)) continue;
    const name = stringOf(metadata?.name) ?? '';
    const last = out.length - 1;
    if (ascending && last >= 0 && compareKeys(namespaces[last] as string, names[last] as string, namespace, name) > 0) ascending = false;
    namespaces.push(namespace);
    names.push(name);
    out.push(pod);
  }
  // The API server's list comes in this order already: then nothing is sorted.
  if (ascending) return { listed: out, sorted: out, position: undefined };
  // Stable, as the sort of {key, pod} pairs it replaces: equal keys keep list order.
  const order = out.map((_, i) => i).sort(keyOrder(namespaces, names));
  const position = new Int32Array(out.length);
  for (let at = 0; at < order.length; at++) position[order[at] as number] = at;
  return { listed: out, sorted: order.map((i) => out[i] as Pod), position };
}

/**
 * The comparator of pod indexes by `namespace/name` key, then index. Two
 * keys whose namespaces differ compare as their namespaces followed by '/'
 * do, whatever the names, unless a namespace holds a '/' (none valid does):
 * so the few distinct namespaces are ranked once and a comparison of two
 * pods is a difference of ranks or, within a namespace, of names.
 */
function keyOrder(namespaces: readonly string[], names: readonly string[]): (a: number, b: number) => number {
  const distinct = [...new Set(namespaces)];
  if (distinct.some((n) => n.includes('/'))) return (a, b) => compareKeys(namespaces[a] as string, names[a] as string, namespaces[b] as string, names[b] as string) || a - b;
  distinct.sort((x, y) => compareKeys(x, '', y, ''));
  const rankOf = new Map(distinct.map((n, rank) => [n, rank]));
  const rank = Int32Array.from(namespaces, (n) => rankOf.get(n) as number);
  return (a, b) => {
    const d = (rank[a] as number) - (rank[b] as number);
    if (d !== 0) return d;
    const x = names[a] as string;
    const y = names[b] as string;
    return x < y ? -1 : x > y ? 1 : a - b;
  };
}

/** The '/' between a key's namespace and name. */
const SLASH = 0x2f;

/**
 * How `namespaceA/nameA` and `namespaceB/nameB` (the pod's key, podKey) compare as
 * strings (by UTF-16 code units, as `<` does; negative: A first), without
 * making either: a plan over 100,000 pods made and compared a key per pod.
 * Only when one namespace is the other followed by a '/' (no valid
 * namespace holds one) are the keys made.
 */
export function compareKeys(namespaceA: string, nameA: string, namespaceB: string, nameB: string): number {
  if (namespaceA === namespaceB) return nameA < nameB ? -1 : nameA > nameB ? 1 : 0;
  const shorter = Math.min(namespaceA.length, namespaceB.length);
  for (let k = 0; k < shorter; k++) {
    const d = namespaceA.charCodeAt(k) - namespaceB.charCodeAt(k);
    if (d !== 0) return d;
  }
  // One namespace begins the other: the shorter one's key goes on with its '/'.
  const next = namespaceA.length < namespaceB.length ? SLASH - namespaceB.charCodeAt(shorter) : namespaceA.charCodeAt(shorter) - SLASH;
  if (next !== 0) return next;
  const a = `${namespaceA}/${nameA}`;
  const b = `${namespaceB}/${nameB}`;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What a caller of {@link podStanding} may already know of the pod. */
export interface KnownFacts {
  /** {@link isPodStateConsistent} over all of the sidecar names. */
  consistent?: boolean;
  /** The walk's parses of hash annotations, for the without-image hash. */
  withoutImage?: RecordedEntriesMemo;
}

/** How one matched pod stands in this batch (rollout.md §1.2). */
export type Standing =
  /** Its recorded hash is the set's. */
  | 'updated'
  /** `updateStrategy.selector` leaves it out. */
  | 'not-selected'
  /** Fields other than images changed since its injection (§1.6). */
  | 'not-upgradable'
  /** A ready sidecar still runs an earlier in-place update (not yet consistent). */
  | 'in-flight'
  /** Waits for its update. */
  | 'waiting';

/**
 * The standing of a matched pod (rollout.md §1.2): Kruise's
 * GetNextUpgradePods filter with IsSidecarSetUpgradable. An invalid
 * `updateStrategy.selector` selects nothing. A plan walking many pods hands
 * what it already knows of the pod in `known`.
 */
export function podStanding(
  pod: Pod,
  set: SidecarSet,
  withoutImageHash = setHashWithoutImage(set),
  updated = isPodSidecarUpdated(pod, set),
  names: ReadonlySet<string> = sidecarContainerNames(set),
  known: KnownFacts = {},
): Standing {
  if (updated) return 'updated';
  const selector = objectOf(set.spec?.updateStrategy)?.selector;
  if (selector !== undefined && selector !== null && !selectorMatches(selector, podLabels(pod))) return 'not-selected';
  const recorded = known.withoutImage === undefined ? recordedHashWithoutImage(pod, set) : (known.withoutImage.of(pod, ANNOTATION_HASH_WITHOUT_IMAGE).hash(sidecarSetName(set)) ?? '');
  if (recorded !== withoutImageHash) return 'not-upgradable';
  const { consistent } = known;
  // Each sidecar's own consistency check is a part of the whole pod's when its sidecars run tag images
  // (the in-place update state decides for all of them at once): a consistent pod then has none in flight,
  // and the plan, which knows the whole pod's, skips a check per sidecar of every waiting pod.
  if (consistent === true && sidecarsRunTagImages(pod, names)) return 'waiting';
  for (const name of names) {
    if (isContainerReady(pod, name) && !isPodStateConsistent(pod, set, new Set([name]))) return 'in-flight';
  }
  return 'waiting';
}

/** No container or native sidecar of the pod among `names` names its image by digest. */
function sidecarsRunTagImages(pod: Pod, names: ReadonlySet<string>): boolean {
  for (const c of podContainers(pod)) if (names.has(c.name) && (c.image ?? '').includes('@')) return false;
  for (const c of podNativeSidecars(pod)) if (names.has(c.name) && (c.image ?? '').includes('@')) return false;
  return true;
}
