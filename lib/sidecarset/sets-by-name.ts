/**
 * The sets of one list by name, so that a review naming a few sets looks
 * each up instead of searching the list for it. Built once per list: the
 * sources hand out the same frozen array until the stored sets change, and
 * the index goes with the array.
 */
import { sidecarSetName } from './match.ts';
import type { SidecarSet } from './types.ts';

const indexes = new WeakMap<readonly SidecarSet[], ReadonlyMap<string, SidecarSet>>();

/** `sets` by name (a set without a name is left out); one index per list. */
export function setsByName(sets: readonly SidecarSet[]): ReadonlyMap<string, SidecarSet> {
  let index = indexes.get(sets);
  if (index === undefined) {
    index = new Map(sets.map((set) => [sidecarSetName(set), set] as const).filter(([name]) => name !== ''));
    indexes.set(sets, index);
  }
  return index;
}
