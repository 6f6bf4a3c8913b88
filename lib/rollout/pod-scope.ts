/**
 * Where one SidecarSet's pods are listed (rollout.md §1.1): its namespace
 * (all namespaces otherwise; a namespaceSelector is applied to what comes
 * back) and its selector as the API server's label selector query, so a
 * reconcile of one set reads only that set's pods.
 */
import { root } from '../kube/field-errors.ts';
import { isObject, objectOf, stringOf } from '../kube/json.ts';
import { validateLabelSelector } from '../kube/label-selector.ts';
import type { SidecarSet } from '../sidecarset/types.ts';

/**
 * Where one SidecarSet's pods are (rollout.md §1.1): one namespace or all,
 * and a label selector ('' selects every pod; the caller filters again).
 */
export interface PodScope {
  namespace?: string;
  labelSelector: string;
}

function requirement(key: string, operator: unknown, values: readonly string[]): string {
  switch (operator) {
    case 'In':
      return `${key} in (${values.join(',')})`;
    case 'NotIn':
      return `${key} notin (${values.join(',')})`;
    case 'Exists':
      return key;
    default:
      return `!${key}`;
  }
}

/**
 * The set's pod scope; undefined when its selector is missing or malformed,
 * which selects no pod (the matching rules say the same), so nothing is listed.
 */
export function podScope(set: SidecarSet): PodScope | undefined {
  const spec = objectOf(set.spec) ?? {};
  const selector: unknown = spec.selector;
  if (!isObject(selector) || validateLabelSelector(selector, root).length > 0) return undefined;
  const parts: string[] = [];
  for (const [key, value] of Object.entries(objectOf(selector.matchLabels) ?? {})) parts.push(`${key}=${String(value)}`);
  for (const expression of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    const e = objectOf(expression) ?? {};
    const values = Array.isArray(e.values) ? e.values.map(String) : [];
    parts.push(requirement(String(e.key), e.operator, values));
  }
  const namespace = stringOf(spec.namespace);
  return { ...(namespace !== undefined && namespace !== '' ? { namespace } : {}), labelSelector: parts.join(',') };
}
