/**
 * The validation rules that belong to one version of SidecarSet, kept apart
 * from the rules both versions share (validate.ts and the files it calls),
 * which the webhook runs on the set in the internal model
 * (lib/conversion/internal-model.ts).
 *
 * OpenKruise 1.9 validates every SidecarSet as v1beta1, converting a
 * v1alpha1 one first: so its rules are those of the shared fields, and what
 * is left to one version is what the other cannot say.
 *
 * - v1alpha1: `spec.namespace` (validate-selectors.ts, on the shared path:
 *   the internal model is v1alpha1's shape), and the custom-version label,
 *   which the API server validates as every label.
 * - v1beta1: `spec.customVersion`. Kruise 1.9 has no rule for it. Here it
 *   must be a string and a valid label value: it becomes the label
 *   `apps.kruise.io/sidecarset-custom-version` on the set's
 *   ControllerRevisions (Kruise's too) and on the set read as v1alpha1, and
 *   a value no label may hold would make the API server refuse both (the
 *   revision never written, the set unreadable in v1alpha1) long after the
 *   set was admitted. docs/SIDECARSET.md lists this among the differences.
 */
import { root, type FieldError } from '../kube/field-errors.ts';
import { isObject } from '../kube/json.ts';
import { labelValueErrors } from '../kube/names.ts';
import { stringAt } from './validate-shape.ts';

/** The versions of SidecarSet the webhooks take. */
export type ValidatedVersion = 'v1alpha1' | 'v1beta1';

/** The problems with the fields only `version` has; the object as sent, in that version. */
export function validateVersionFields(object: unknown, version: ValidatedVersion): FieldError[] {
  if (version !== 'v1beta1' || !isObject(object) || !isObject(object.spec)) return [];
  const errs: FieldError[] = [];
  const path = root.child('spec').child('customVersion');
  const customVersion = stringAt(object.spec.customVersion, path, errs);
  if (customVersion !== undefined) for (const message of labelValueErrors(customVersion)) errs.push(path.invalid(customVersion, message));
  return errs;
}
