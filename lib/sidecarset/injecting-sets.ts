/**
 * Which SidecarSets inject a pod at its creation, and why each other set does
 * not: the one place this is decided (the pod webhook, the resync's
 * not-injected count and any explanation of an injection read it). As
 * Kruise v1.9.0's pod webhook: a set injects when it is not paused, selects
 * the pod (match.ts) and is not the base of a canary that also does
 * (canary.ts).
 */
import { isInjectionPaused, selectionMiss, sidecarSetName, sidecarSetSelectsPod, sortByName, UnknownNamespaceError, type NamespaceLabels, type SelectionMiss } from './match.ts';
import { displacedBases } from './canary.ts';
import type { SidecarSet } from './types.ts';

/** Where a pod is created, as matching reads it. */
export interface PodPlace {
  readonly labels: Readonly<Record<string, string>>;
  readonly namespace: string;
  readonly namespaceLabels: NamespaceLabels;
}

/** One set's part in a pod's injection. */
export type InjectionVerdict =
  | { readonly set: string; readonly injects: true }
  /**
   * `selects`: whether the set would select the pod were it not paused;
   * undefined when that needs a Namespace's labels that are not known (a
   * paused set never needs them to decide).
   */
  | { readonly set: string; readonly injects: false; readonly reason: 'paused'; readonly selects: boolean | undefined }
  | { readonly set: string; readonly injects: false; readonly reason: 'not-selected'; readonly miss: SelectionMiss }
  | { readonly set: string; readonly injects: false; readonly reason: 'displaced-by-canary'; readonly canary: string };

/**
 * The decision, stated once: of the sets not paused that `selects` the pod,
 * those no canary among them displaces; and which canary displaced each base.
 */
function decide(sets: readonly SidecarSet[], selects: (set: SidecarSet) => boolean): { injecting: SidecarSet[]; displaced: ReadonlyMap<string, string> } {
  const matching = sets.filter((set) => !isInjectionPaused(set) && selects(set));
  const displaced = displacedBases(matching);
  return { injecting: displaced.size === 0 ? matching : matching.filter((set) => !displaced.has(sidecarSetName(set))), displaced };
}

/**
 * The sets that inject the pod, sorted by name (the injection order).
 * Cost: one selector test per set, then one pass over those that match.
 * @throws UnknownNamespaceError when a namespaceSelector needs a namespace missing from `place.namespaceLabels`.
 */
export function injectingSets(sets: readonly SidecarSet[], place: PodPlace): SidecarSet[] {
  return sortByName(decide(sets, (set) => sidecarSetSelectsPod(set, place.labels, place.namespace, place.namespaceLabels)).injecting);
}

/** Whether the set selects the pod, or undefined when its namespaceSelector needs labels not given. */
function selectsIfKnown(set: SidecarSet, place: PodPlace): boolean | undefined {
  try {
    return sidecarSetSelectsPod(set, place.labels, place.namespace, place.namespaceLabels);
  } catch (error) {
    if (error instanceof UnknownNamespaceError) return undefined;
    throw error;
  }
}

/**
 * Every set's verdict for the pod, sorted by set name: the same decision as
 * {@link injectingSets}, with the reason each set that does not inject
 * gives (a paused set is reported as paused whether or not it selects the pod).
 * @throws UnknownNamespaceError as injectingSets.
 */
export function injectionVerdicts(sets: readonly SidecarSet[], place: PodPlace): InjectionVerdict[] {
  const sorted = sortByName(sets);
  // The same decision, its selector test kept as the miss each set reports.
  const misses = new Map<SidecarSet, SelectionMiss | undefined>();
  const { displaced } = decide(sorted, (set) => {
    const miss = selectionMiss(set, place.labels, place.namespace, place.namespaceLabels);
    misses.set(set, miss);
    return miss === undefined;
  });
  return sorted.map((set): InjectionVerdict => {
    const name = sidecarSetName(set);
    if (!misses.has(set)) return { set: name, injects: false, reason: 'paused', selects: selectsIfKnown(set, place) };
    const miss = misses.get(set);
    if (miss !== undefined) return { set: name, injects: false, reason: 'not-selected', miss };
    const canary = displaced.get(name);
    if (canary !== undefined) return { set: name, injects: false, reason: 'displaced-by-canary', canary };
    return { set: name, injects: true };
  });
}
