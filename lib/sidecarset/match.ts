/**
 * Which SidecarSets apply to a pod (spec section 4), shared by injection and
 * the status computation so the two can never disagree.
 */
import { isObject, objectOf, stringMapOf, stringOf } from '../kube/json.ts';
import { selectorMismatch, type SelectorMismatch } from '../kube/label-selector.ts';
import type { Pod } from '../kube/types.ts';
import type { SidecarSet } from './types.ts';

/** Namespace name -> its labels, as the functions see the cluster. */
export type NamespaceLabels = ReadonlyMap<string, Readonly<Record<string, string>>>;

/**
 * A SidecarSet has a namespaceSelector but the pod's Namespace is unknown, so
 * whether it applies cannot be decided. Kruise fails the admission here too.
 */
export class UnknownNamespaceError extends Error {
  readonly namespace: string;
  readonly sidecarSet: string;
  constructor(namespace: string, sidecarSet: string) {
    super(`namespace "${namespace}" is unknown, but SidecarSet "${sidecarSet}" selects pods by namespaceSelector`);
    this.name = 'UnknownNamespaceError';
    this.namespace = namespace;
    this.sidecarSet = sidecarSet;
  }
}

/** The set's name, or '' when it has none (such a set is never admitted). */
export function sidecarSetName(set: SidecarSet): string {
  return stringOf(set.metadata?.name) ?? '';
}

/**
 * Why a set does not select a pod, as {@link selectionMiss} decides it: the
 * set's `namespace` is another; its `selector` fails (the term, as
 * label-selector.ts finds it); its `namespaceSelector` fails on the pod's
 * Namespace labels (the term); or it has no spec or no selector at all.
 */
export type SelectionMiss =
  | { readonly kind: 'namespace'; readonly want: string }
  | { readonly kind: 'selector'; readonly mismatch: SelectorMismatch }
  | { readonly kind: 'namespace-selector'; readonly mismatch: SelectorMismatch }
  | { readonly kind: 'no-selector' };

/**
 * Whether `set` applies to a pod with `podLabels` in `namespace`, ignoring
 * `injectionStrategy.paused` (status counts paused sets' pods too).
 * @throws UnknownNamespaceError when the set's namespaceSelector needs labels of a namespace not in `namespaceLabels`.
 */
export function sidecarSetSelectsPod(
  set: SidecarSet,
  podLabels: Readonly<Record<string, string>>,
  namespace: string,
  namespaceLabels: NamespaceLabels,
): boolean {
  return selectionMiss(set, podLabels, namespace, namespaceLabels) === undefined;
}

/**
 * Why `set` does not apply to the pod ({@link sidecarSetSelectsPod}'s one
 * decision, with its reason), or undefined when it does. Checked in this
 * order: namespace, selector, namespaceSelector.
 * @throws UnknownNamespaceError as sidecarSetSelectsPod.
 */
export function selectionMiss(
  set: SidecarSet,
  podLabels: Readonly<Record<string, string>>,
  namespace: string,
  namespaceLabels: NamespaceLabels,
): SelectionMiss | undefined {
  const spec = objectOf(set.spec);
  if (!spec) return { kind: 'no-selector' };
  const onlyNamespace = stringOf(spec.namespace);
  if (onlyNamespace !== undefined && onlyNamespace !== '' && onlyNamespace !== namespace) return { kind: 'namespace', want: onlyNamespace };
  // A missing or malformed selector never matches: validation forbids it, and a
  // set that slipped through must not inject into every pod of the cluster.
  if (!isObject(spec.selector)) return { kind: 'no-selector' };
  const mismatch = selectorMismatch(spec.selector, podLabels);
  if (mismatch !== undefined) return { kind: 'selector', mismatch };
  if (hasNamespaceSelector(set)) {
    const labels = namespaceLabels.get(namespace);
    if (labels === undefined) throw new UnknownNamespaceError(namespace, sidecarSetName(set));
    const onNamespace = selectorMismatch(spec.namespaceSelector, labels);
    if (onNamespace !== undefined) return { kind: 'namespace-selector', mismatch: onNamespace };
  }
  return undefined;
}

/**
 * True when the set restricts pods by their Namespace's labels (any non-null
 * value, even a malformed one). A set that names its `namespace` is scoped by
 * that name alone and its namespaceSelector is not read: Kruise 1.9 accepts
 * both on a v1alpha1 set and its conversion makes the namespace the selector
 * (on `kubernetes.io/metadata.name`), replacing the other.
 */
export function hasNamespaceSelector(set: SidecarSet): boolean {
  const spec = objectOf(set.spec);
  const namespace = stringOf(spec?.namespace);
  if (namespace !== undefined && namespace !== '') return false;
  const selector: unknown = spec?.namespaceSelector;
  return selector !== undefined && selector !== null;
}

/** True when `injectionStrategy.paused` stops the set from injecting into new pods. */
export function isInjectionPaused(set: SidecarSet): boolean {
  return objectOf(set.spec?.injectionStrategy)?.paused === true;
}

/** The labels of a pod-like object, ignoring values that are not strings. */
export function labelsOf(object: { metadata?: unknown }): Record<string, string> {
  return stringMapOf(objectOf(object.metadata)?.labels);
}

/** Sets sorted by name: injection order is deterministic (better than Kruise). */
export function sortByName(sets: readonly SidecarSet[]): SidecarSet[] {
  return [...sets].sort((a, b) => {
    const x = sidecarSetName(a);
    const y = sidecarSetName(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/** Not Succeeded/Failed and not being deleted (k8s IsPodActive). */
export function isActivePod(pod: Pod): boolean {
  const phase = stringOf(objectOf(pod.status)?.phase);
  const deletion: unknown = objectOf(pod.metadata)?.deletionTimestamp;
  return phase !== 'Succeeded' && phase !== 'Failed' && (deletion === undefined || deletion === null);
}
