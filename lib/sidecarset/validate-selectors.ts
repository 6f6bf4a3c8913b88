/**
 * Rules 2 and 3 of the SidecarSet validation: which pods and namespaces a set
 * selects.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { isObject } from '../kube/json.ts';
import { isEmptySelector, validateLabelSelector } from '../kube/label-selector.ts';
import { dns1123LabelErrors } from '../kube/names.ts';
import type { JsonObject } from '../kube/types.ts';
import { isUnset, stringAt } from './validate-shape.ts';

/**
 * A selector as SidecarSets need it (Kruise's validateSelector): valid label
 * syntax and not empty, because an empty selector would select every pod.
 */
export function validateNonEmptySelector(selector: unknown, path: FieldPath, errs: FieldError[]): void {
  const syntax = validateLabelSelector(selector, path);
  errs.push(...syntax);
  if (isObject(selector) && syntax.length === 0 && isEmptySelector(selector)) {
    errs.push(path.invalid(selector, 'empty selector is not valid for sidecarset.'));
  }
}

/** Rules 2 and 3 for `spec` at `path`. */
export function validateSelectors(spec: JsonObject, path: FieldPath, errs: FieldError[]): void {
  if (isUnset(spec.selector)) errs.push(path.child('selector').required('no selector defined for SidecarSet'));
  else validateNonEmptySelector(spec.selector, path.child('selector'), errs);

  const nsPath = path.child('namespace');
  const namespace = stringAt(spec.namespace, nsPath, errs);
  // A name no Namespace can have would make the set silently match nothing.
  if (namespace !== undefined && namespace !== '') {
    for (const msg of dns1123LabelErrors(namespace)) errs.push(nsPath.invalid(namespace, msg));
  }
  if (isUnset(spec.namespaceSelector)) return;
  // Both together are accepted, as by Kruise 1.9 (1.8 refused the pair): the namespace wins and the selector is
  // not read (match.ts hasNamespaceSelector). The selector must still be well formed (Kruise 1.9 drops it unchecked).
  validateNonEmptySelector(spec.namespaceSelector, path.child('namespaceSelector'), errs);
}
