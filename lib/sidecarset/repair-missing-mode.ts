/**
 * The SidecarSet annotation that asks the reconciler to repair the pods the
 * pod webhook missed (docs/SIDECARSET.md "Repairing pods the webhook
 * missed"): `serverless-sidecarset/repair-missing: Evict`. An annotation, not
 * a spec field, so the CRD stays Kruise's drop-in schema and a set carrying it
 * still means the same to Kruise (which ignores it).
 *
 * Off unless the set asks, and off for any value but `Evict`: evicting pods is
 * the one thing the reconciler does that a user did not write into a pod, so a
 * typo must never turn it on. Validation warns about such a value
 * ({@link repairMissingWarnings}); the reconciler reads it as off.
 */
import { objectOf, stringOf } from '../kube/json.ts';

/** The annotation's key. */
export const ANNOTATION_REPAIR_MISSING = 'serverless-sidecarset/repair-missing';
/** The one value that turns repair on: evict the pods through the Eviction API. */
export const REPAIR_EVICT = 'Evict';

/** What a set asks for: evict, nothing, or a value that means nothing (treated as off). */
export type RepairMode = { mode: 'Evict' } | { mode: 'off' } | { mode: 'invalid'; value: string };

/** The set's repair mode, from its annotation. */
export function repairModeOf(set: unknown): RepairMode {
  const annotations = objectOf(objectOf(objectOf(set)?.metadata)?.annotations);
  if (annotations === undefined || !(ANNOTATION_REPAIR_MISSING in annotations)) return { mode: 'off' };
  const value = stringOf(annotations[ANNOTATION_REPAIR_MISSING]);
  if (value === REPAIR_EVICT) return { mode: 'Evict' };
  return { mode: 'invalid', value: value ?? String(annotations[ANNOTATION_REPAIR_MISSING]) };
}

/**
 * The admission warnings for the set's repair annotation: one when its value
 * is not `Evict` (kubectl shows warnings; responses.ts cuts them at 120
 * characters, so a long value is shortened to keep the fix in view).
 */
export function repairMissingWarnings(set: unknown): string[] {
  const mode = repairModeOf(set);
  if (mode.mode !== 'invalid') return [];
  const value = mode.value.length > 16 ? `${mode.value.slice(0, 13)}...` : mode.value;
  // No quotes: the API server escapes them in the Warning header kubectl shows.
  return [`${ANNOTATION_REPAIR_MISSING}=${value}: only ${REPAIR_EVICT} turns repair on; treated as off`];
}
