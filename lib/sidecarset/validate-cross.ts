/**
 * Rule 13 of the SidecarSet validation: a set may not clash with another set
 * that can inject into the same pod. Two sets can share a pod when their
 * namespaces may overlap and their pod selectors may overlap; both tests are
 * conservative (see lib/kube/selector-overlap.ts), because a missed clash
 * breaks pod creation later while a false one only asks for a rename.
 *
 * Other sets come from the cluster and are read defensively: they passed
 * validation once, but perhaps under other rules (or Kruise's).
 */
import { root, type FieldError, type FieldPath } from '../kube/field-errors.ts';
import { arrayOf, isObject, jsonEqual, objectOf, stringOf } from '../kube/json.ts';
import { selectorMatches, validateLabelSelector } from '../kube/label-selector.ts';
import { selectorOverlapTest, selectorsMayOverlap } from '../kube/selector-overlap.ts';
import type { JsonObject, LabelSelector } from '../kube/types.ts';
import { canaryBaseOf } from './canary.ts';

/** The label every Namespace carries (set by the API server since Kubernetes 1.21). */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/** The cluster state rule 13 compares with (a subset of ValidationContext). */
export interface CrossSetContext {
  others: readonly unknown[];
  namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>;
}

function namespaceOf(spec: JsonObject): string | undefined {
  const ns = stringOf(spec.namespace);
  return ns === '' ? undefined : ns;
}

function selectorAt(value: unknown): LabelSelector | undefined {
  return isObject(value) ? value : undefined;
}

/**
 * Whether pods of Namespace `ns` may be selected by `selector`. The test is
 * on the Namespace's labels now (as Kruise does); a Namespace that does not
 * exist yet is judged by the one label it will certainly get, its name.
 * A malformed selector cannot rule anything out.
 */
function namespaceMayMatch(ns: string, selector: LabelSelector, labels: CrossSetContext['namespaceLabels']): boolean {
  if (validateLabelSelector(selector, root).length > 0) return true;
  return selectorMatches(selector, labels.get(ns) ?? { [NAMESPACE_NAME_LABEL]: ns });
}

/**
 * Whether two sets may select pods in a common namespace. Kruise's version
 * tests `other.namespace` against the other set's own namespaceSelector
 * (a typo for the origin's); here each namespace is tested against the
 * opposite set's selector.
 */
function namespacesMayOverlap(a: JsonObject, b: JsonObject, labels: CrossSetContext['namespaceLabels']): boolean {
  const nsA = namespaceOf(a);
  const nsB = namespaceOf(b);
  // A set that names its namespace is scoped by it alone (match.ts hasNamespaceSelector).
  const selA = nsA === undefined ? selectorAt(a.namespaceSelector) : undefined;
  const selB = nsB === undefined ? selectorAt(b.namespaceSelector) : undefined;
  if (nsA !== undefined && nsB !== undefined && nsA !== nsB) return false;
  if (selA && selB && !selectorsMayOverlap(selA, selB)) return false;
  if (nsA !== undefined && selB && !namespaceMayMatch(nsA, selB, labels)) return false;
  if (nsB !== undefined && selA && !namespaceMayMatch(nsB, selA, labels)) return false;
  return true;
}

/**
 * Whether a set with `spec` may share a pod with another set, as a test of
 * the other's spec: the set's own pod selector is read once, not once per
 * other set of the cluster.
 */
function mayShareAPodWith(spec: JsonObject, labels: CrossSetContext['namespaceLabels']): (other: JsonObject) => boolean {
  const podSelectorsMayOverlap = selectorOverlapTest(selectorAt(spec.selector));
  return (other) => namespacesMayOverlap(spec, other, labels) && podSelectorsMayOverlap(selectorAt(other.selector));
}

/** The names of all containers and init containers of a spec. */
function containerNames(spec: JsonObject): Set<string> {
  const names = new Set<string>();
  for (const c of [...arrayOf(spec.initContainers), ...arrayOf(spec.containers)]) {
    const name = stringOf(objectOf(c)?.name);
    if (name !== undefined) names.add(name);
  }
  return names;
}

/**
 * annotation key -> whether the spec overwrites it, for the keys of its
 * entries that are not Retain (a stored set may repeat a key, so this is a
 * flag, not a list searched per key).
 */
function annotationOverwrites(spec: JsonObject): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const entry of arrayOf(spec.patchPodMetadata)) {
    const e = objectOf(entry);
    // A Retain entry never changes a key another set wrote: no conflict.
    if (stringOf(e?.patchPolicy) === 'Retain') continue;
    const overwrites = stringOf(e?.patchPolicy) === 'Overwrite';
    for (const key of Object.keys(objectOf(e?.annotations) ?? {})) out.set(key, overwrites || out.get(key) === true);
  }
  return out;
}

/**
 * Container names must differ across the two sets. Kruise compares init
 * containers only with init containers and containers with containers; a pod
 * rejects a name used by both kinds too, so both kinds are compared here.
 */
function checkContainers(spec: JsonObject, path: FieldPath, other: JsonObject, otherName: string, errs: FieldError[]): void {
  const taken = containerNames(other);
  for (const key of ['initContainers', 'containers']) {
    arrayOf(spec[key]).forEach((c, i) => {
      const name = stringOf(objectOf(c)?.name);
      if (name !== undefined && taken.has(name)) {
        errs.push(path.child(key).index(i).child('name').invalid(name, `container ${name} already exist in ${otherName}`));
      }
    });
  }
}

/** Both sets may add the same volume to a pod only if they define it identically. */
function checkVolumes(spec: JsonObject, path: FieldPath, other: JsonObject, otherName: string, errs: FieldError[]): void {
  const theirs = new Map<string, unknown>();
  for (const v of arrayOf(other.volumes)) {
    const name = stringOf(objectOf(v)?.name);
    if (name !== undefined && !theirs.has(name)) theirs.set(name, v);
  }
  arrayOf(spec.volumes).forEach((v, i) => {
    const name = stringOf(objectOf(v)?.name);
    if (name === undefined || !theirs.has(name)) return;
    if (!jsonEqual(v, theirs.get(name))) {
      errs.push(path.child('volumes').index(i).invalid(name, `volume ${name} is in conflict with sidecarset ${otherName}`));
    }
  });
}

/**
 * Two sets conflict on an annotation key when neither Retains it and one
 * overwrites it, as Kruise decides: the pod's value then depends on which
 * set is applied last. A Retain entry only fills a missing key, so beside
 * an Overwrite the result is the Overwrite's value in either order.
 */
function checkAnnotations(spec: JsonObject, path: FieldPath, other: JsonObject, otherName: string, errs: FieldError[]): void {
  const theirs = annotationOverwrites(other);
  arrayOf(spec.patchPodMetadata).forEach((entry, i) => {
    const e = objectOf(entry);
    const mine = stringOf(e?.patchPolicy);
    if (mine === 'Retain') return;
    for (const key of Object.keys(objectOf(e?.annotations) ?? {})) {
      const overwrites = theirs.get(key);
      if (overwrites === undefined) continue;
      if (mine === 'Overwrite' || overwrites) {
        errs.push(
          path
            .child('patchPodMetadata')
            .index(i)
            .child('annotations')
            .key(key)
            .invalid(key, `annotation ${key} is in conflict with sidecarset ${otherName}`),
        );
      }
    }
  });
}

/**
 * Rule 13: conflicts of `spec` (of the set named `name`, at `path`) with every
 * other set that may share a pod with it, in order of set name. The set's own
 * stored version (same name) is skipped, and so are a canary's base (`base`)
 * and a base's canaries: a pod both select gets the canary only
 * (injecting-sets.ts), so the two never inject the same pod. Kruise skips
 * the first only, and so refuses an update of a base whose canary shares a
 * container name with it (docs/DIFFERENCES-FROM-KRUISE-1.9.md).
 */
export function validateAgainstOthers(name: string, base: string | undefined, spec: JsonObject, path: FieldPath, ctx: CrossSetContext, errs: FieldError[]): void {
  const mayShareAPod = mayShareAPodWith(spec, ctx.namespaceLabels);
  // Filtered before sorting: usually only a few of the cluster's sets can
  // share a pod with this one, and the (stable) sort keeps their order either way.
  const sharing: { otherName: string; otherSpec: JsonObject }[] = [];
  for (const o of ctx.others) {
    const object = objectOf(o);
    const otherSpec = objectOf(object?.spec);
    const otherName = stringOf(objectOf(object?.metadata)?.name) ?? '';
    if (otherSpec === undefined || otherName === name || otherName === base || canaryBaseOf(object ?? {}) === name) continue;
    if (mayShareAPod(otherSpec)) sharing.push({ otherName, otherSpec });
  }
  sharing.sort((x, y) => (x.otherName < y.otherName ? -1 : x.otherName > y.otherName ? 1 : 0));
  for (const { otherName, otherSpec } of sharing) {
    checkContainers(spec, path, otherSpec, otherName, errs);
    checkVolumes(spec, path, otherSpec, otherName, errs);
    checkAnnotations(spec, path, otherSpec, otherName, errs);
  }
}
