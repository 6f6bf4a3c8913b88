/**
 * Canary SidecarSets (Kruise v1.9.0, `IsCanarySidecarSet` in
 * pkg/control/sidecarcontrol/util.go): a set annotated
 * `apps.kruise.io/sidecarset-canary: "true"` with a non-empty
 * `apps.kruise.io/sidecarset-base: <name>` takes, over its base, the pods
 * both would inject. One level only: a base is never a canary itself
 * (validate-canary.ts).
 */
import { objectOf, stringOf } from '../kube/json.ts';
import { sidecarSetName } from './match.ts';
import type { SidecarSet } from './types.ts';

export const ANNOTATION_CANARY = 'apps.kruise.io/sidecarset-canary';
export const ANNOTATION_BASE = 'apps.kruise.io/sidecarset-base';

/**
 * The name of the set's base when it is a canary (both annotations, the
 * first exactly "true", the second not empty); undefined otherwise. Read
 * from the set as stored: a pinned revision keeps the set's metadata, as
 * Kruise's restored revision does.
 */
export function canaryBaseOf(set: SidecarSet): string | undefined {
  const annotations = objectOf(objectOf(set.metadata)?.annotations);
  if (annotations?.[ANNOTATION_CANARY] !== 'true') return undefined;
  const base = stringOf(annotations[ANNOTATION_BASE]);
  return base === undefined || base === '' ? undefined : base;
}

/** Base name -> the name of the matching canary that displaces it (the first by the given order). */
export function displacedBases(matching: readonly SidecarSet[]): Map<string, string> {
  const displaced = new Map<string, string>();
  for (const set of matching) {
    const base = canaryBaseOf(set);
    if (base !== undefined && !displaced.has(base)) displaced.set(base, sidecarSetName(set));
  }
  return displaced;
}

/** The sets among `sets` that name `base` as their base (its canaries). */
export function canariesOf(base: string, sets: readonly SidecarSet[]): SidecarSet[] {
  return sets.filter((set) => canaryBaseOf(set) === base);
}
