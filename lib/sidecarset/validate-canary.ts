/**
 * Rule 14 of the SidecarSet validation: a canary set's annotations (canary.ts),
 * as Kruise v1.9.0's `validateSidecarSetCanaryAnnotations`
 * (pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go):
 * its base is not itself, exists, and is not a canary; the base annotation
 * never changes on UPDATE; the canary is NotUpdate (Kruise rolls no canary).
 * Each error is Kruise's: on `metadata`, its value the set's annotations.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import { ANNOTATION_BASE, canaryBaseOf } from './canary.ts';
import { sidecarSetName } from './match.ts';
import { GROUP, type SidecarSet } from './types.ts';

/**
 * Rule 14 for `object` (metadata at `path`), named `name`; `others` are the
 * cluster's sets (the base is looked up among them by name), `oldObject` the
 * stored set on UPDATE. Nothing is checked for a set that is not a canary.
 */
export function validateCanary(object: JsonObject, name: string, oldObject: SidecarSet | undefined, others: readonly SidecarSet[], path: FieldPath, errs: FieldError[]): void {
  const set = object as SidecarSet;
  const base = canaryBaseOf(set);
  if (base === undefined) return;
  const annotations = objectOf(objectOf(object.metadata)?.annotations);
  const invalid = (detail: string) => errs.push(path.invalid(annotations, detail));
  if (base === name) invalid('base sidecarSet cannot be itself');
  // As Kruise: a set stored without the base annotation may not gain one either.
  if (oldObject !== undefined && (stringOf(objectOf(oldObject.metadata?.annotations)?.[ANNOTATION_BASE]) ?? '') !== base) {
    invalid(`annotations[${ANNOTATION_BASE}] is immutable`);
  }
  // The set under review is not among the stored sets yet on CREATE, as Kruise's Get of the base does not find it.
  const found = others.find((other) => sidecarSetName(other) === base);
  if (found === undefined) invalid(`fetch base sidecarSet[${base}] failed: sidecarsets.${GROUP} "${base}" not found`);
  else if (canaryBaseOf(found) !== undefined) invalid('base sidecarSet cannot be canary');
  if (stringOf(objectOf(objectOf(object.spec)?.updateStrategy)?.type) !== 'NotUpdate') invalid('RollingUpdate is not supported for canary sidecarSet');
}
