/**
 * Documented differences between this project and one Kruise release that
 * the comparison counts by name instead of setting aside (compare.ts sets
 * aside the differences every release shares). Each is written in
 * docs/DIFFERENCES-FROM-KRUISE-1.9.md and docs/CONFORMANCE.md, with the
 * release it concerns; each recogniser is narrow, so that a disagreement it
 * does not describe stays a mismatch.
 */
import { isDeepStrictEqual } from 'node:util';
import { LABEL_CUSTOM_VERSION } from '../../lib/sidecarset/revisions.ts';
import { firstDifference, type Comparison } from './compare.ts';
import { NAMESPACES, type ConformanceCase } from './generator.ts';
import type { KruiseLine } from './kruise-reference.ts';
import type { Verdict } from './verdict.ts';

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A SidecarSet without the parts Kruise's conversion maps lossily: the namespace, its selector, the custom version (label or field). */
function withoutLossyParts(object: unknown): unknown {
  if (!isRecord(object)) return object;
  const spec = isRecord(object.spec) ? Object.fromEntries(Object.entries(object.spec).filter(([k]) => !['namespace', 'namespaceSelector', 'customVersion'].includes(k))) : object.spec;
  const metadata = isRecord(object.metadata) ? { ...object.metadata } : object.metadata;
  if (isRecord(metadata) && isRecord(metadata.labels)) {
    const labels = Object.fromEntries(Object.entries(metadata.labels).filter(([k]) => k !== LABEL_CUSTOM_VERSION));
    if (Object.keys(labels).length === 0) delete metadata.labels;
    else metadata.labels = labels;
  }
  return { ...object, spec, metadata };
}

/** Whether a set holds a part Kruise's conversion does not give back: a v1alpha1 namespace, or a custom-version label. */
function hasLossyPart(object: unknown): boolean {
  if (!isRecord(object)) return false;
  const spec = isRecord(object.spec) ? object.spec : {};
  const labels = isRecord(object.metadata) && isRecord(object.metadata.labels) ? object.metadata.labels : {};
  return (typeof spec.namespace === 'string' && spec.namespace !== '') || LABEL_CUSTOM_VERSION in labels;
}

/**
 * Better than Kruise 1.9 (docs/CONVERSION.md): a round trip through the
 * other version gives back what was written here; Kruise's turns a
 * v1alpha1 `namespace` into a `namespaceSelector` (dropping a selector
 * written beside it), which the Kubernetes conversion guidelines forbid.
 * Recognised only when this project gave back exactly the objects sent,
 * some object had such a part, and Kruise's objects differ from this
 * project's in those parts alone.
 */
const conversionRoundTripKeepsWhatWasWritten: ReleaseDifference = {
  line: '1.9',
  name: 'conversionRoundTripKeepsWhatWasWritten',
  explains(c, comparison, ours) {
    if (c.class !== 'convert' || !c.roundTrip || ours.kind !== 'converted') return false;
    if (!isDeepStrictEqual(ours.objects, c.objects) || !c.objects.some(hasLossyPart)) return false;
    const mine = (comparison.ours as { objects?: unknown[] }).objects ?? [];
    const theirs = (comparison.kruise as { objects?: unknown[] }).objects ?? [];
    return mine.length === theirs.length && isDeepStrictEqual(mine.map(withoutLossyParts), theirs.map(withoutLossyParts));
  },
};

export interface ReleaseDifference {
  /** The release it is a difference from. */
  line: KruiseLine;
  /** Its name in the report and the docs. */
  name: string;
  /** Whether it explains this mismatch. */
  explains(c: ConformanceCase, comparison: Comparison, ours: Verdict, kruise: Verdict): boolean;
}

/** A cross-set error as Kruise words it: a container name or a volume another set also has. */
const KRUISE_CROSS_SET = /^spec\.(?:containers|initContainers|volumes): Invalid value: .*(?:already exist in|is in conflict with sidecarset) /;

function labelsMatch(selector: unknown, labels: Record<string, string>): boolean {
  if (!isRecord(selector)) return false;
  const matchLabels = isRecord(selector.matchLabels) ? selector.matchLabels : {};
  const expressions = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  return Object.entries(matchLabels).every(([k, v]) => labels[k] === v) && expressions.every((e) => isRecord(e) && e.operator === 'Exists' && typeof e.key === 'string' && e.key in labels);
}

/**
 * Better than Kruise 1.9 (docs/DIFFERENCES-FROM-KRUISE-1.9.md): Kruise 1.9
 * converts a v1alpha1 `namespace` into a selector on
 * `kubernetes.io/metadata.name` and compares two namespace selectors by
 * their keys, so a set naming a namespace clashes with every set whose
 * `namespaceSelector` uses another key, even one that does not select that
 * namespace (1.8 never compared the two). Here the named Namespace's labels
 * are tested against the other selector. Recognised only when Kruise alone
 * refuses, with cross-set errors only, and every set involved pairs a named
 * namespace with a selector that does not select it.
 */
const namespaceAgainstSelectorByKeys: ReleaseDifference = {
  line: '1.9',
  name: 'namespaceAgainstSelectorByKeys',
  explains(c, comparison) {
    if (c.class !== 'validate' || (comparison.oursOnly ?? []).length > 0) return false;
    const only = comparison.kruiseOnly ?? [];
    if (only.length === 0 || !only.every((e) => KRUISE_CROSS_SET.test(e))) return false;
    const scope = (set: unknown) => (isRecord(set) && isRecord(set.spec) ? set.spec : {});
    const mine = scope(c.object);
    return c.cluster.sidecarSets.some((other) => {
      const theirs = scope(other);
      const pair = typeof mine.namespace === 'string' && theirs.namespaceSelector !== undefined ? [mine, theirs] : typeof theirs.namespace === 'string' && mine.namespaceSelector !== undefined ? [theirs, mine] : undefined;
      if (pair === undefined) return false;
      const [named, selecting] = pair as [Json, Json];
      const labels = NAMESPACES.find((ns) => ns.metadata?.name === named.namespace)?.metadata?.labels ?? {};
      return !labelsMatch(selecting.namespaceSelector, labels);
    });
  },
};

/**
 * Stricter than Kruise 1.9 (docs/DIFFERENCES-FROM-KRUISE-1.9.md): a v1beta1
 * `spec.customVersion` must be a valid label value here
 * (lib/sidecarset/validate-version.ts), because it becomes the label
 * `apps.kruise.io/sidecarset-custom-version` on the set read as v1alpha1 and
 * on its ControllerRevisions, which the API server would then refuse;
 * Kruise 1.9 has no rule for it. Recognised only on a v1beta1 object, when
 * every error this project alone gives is at `spec.customVersion` and
 * Kruise alone gives none but cross-set errors (a set invalid on its own is
 * not compared with the others here).
 */
const customVersionIsALabelValue: ReleaseDifference = {
  line: '1.9',
  name: 'customVersionIsALabelValue',
  explains(c, comparison) {
    if (c.class !== 'validate' || c.object.apiVersion !== 'apps.kruise.io/v1beta1') return false;
    const mine = comparison.oursOnly ?? [];
    if (mine.length === 0 || !mine.every((e) => e.startsWith('spec.customVersion: Invalid value: '))) return false;
    return (comparison.kruiseOnly ?? []).every((e) => KRUISE_CROSS_SET.test(e));
  },
};

/** The reasons of a rollout verdict's Events, with the object they are about. */
function eventKeys(verdict: Verdict): string[] {
  return verdict.kind === 'pods' ? verdict.events.map((e) => `${e.object} ${e.reason}`) : [];
}

/** The pods a rollout verdict wrote, each with the kinds of its writes. */
function writtenPods(verdict: Verdict): Set<string> {
  if (verdict.kind !== 'pods') return new Set();
  return new Set(verdict.writes.map((w) => `${String((w.pod.metadata as Json | undefined)?.namespace)}/${String((w.pod.metadata as Json | undefined)?.name)}`));
}

/**
 * Kruise 1.9's reconcile order, which this project follows (docs/ROLLOUT.md): a
 * paused or NotUpdate set flips no HotUpgrade container, and a reconcile that
 * flips returns without updating any pod; Kruise 1.8 flipped first, then
 * went on. Recognised only when Kruise 1.8 flipped in this reconcile (a
 * ResetContainer Event) and everything this project wrote and recorded,
 * Kruise 1.8 wrote and recorded too: this project did less, never else.
 */
const reconcileOrderOf19: ReleaseDifference = {
  line: '1.8',
  name: 'reconcileOrderOf19',
  explains(c, _comparison, ours, kruise) {
    if (c.class !== 'rollout' || ours.kind !== 'pods' || kruise.kind !== 'pods') return false;
    const theirEvents = eventKeys(kruise);
    if (!theirEvents.some((e) => / ResetContainer(Succeed|Failed)$/.test(e))) return false;
    const theirPods = writtenPods(kruise);
    return [...writtenPods(ours)].every((p) => theirPods.has(p)) && eventKeys(ours).filter((e) => !/ Rollout/.test(e)).every((e) => theirEvents.includes(e));
  },
};

/** The compared view of each pod (compare.ts, rolloutPodView), by `namespace/name`. */
function podViews(view: unknown): Map<string, unknown> {
  const pods = isRecord(view) && Array.isArray(view.pods) ? (view.pods as unknown[]) : [];
  return new Map(pods.map((p) => [isRecord(p) ? String(p.pod) : '', p]));
}

/**
 * Kruise 1.9's priority sort (#2107), which this project follows:
 * `pkg/util/updatesort/priority_sort.go` breaks a tie between pods of equal
 * priority with `i < j` (1.9.0, line 47; the order the pods were in),
 * where 1.8.2 used `indexes[i] > indexes[j]` (the later pod first). The
 * batch is the front of that order, so 1.8 may take other pods of the same
 * priority, and, because a pod that is not ready is taken without counting
 * against maxUnavailable (`calculateUpgradeCount` stops at the first ready
 * pod over the budget), also more or fewer of them. Nothing else in the
 * update path changed between the two releases for such a reconcile (no flip,
 * no deleted pod, no volumeDevices). Recognised only when the set has a
 * priorityStrategy, neither side flipped, the two updated different pods,
 * and every pod that both or neither updated, and Kruise's Events, are the
 * same on both sides.
 */
const prioritySortStable: ReleaseDifference = {
  line: '1.8',
  name: 'prioritySortStable',
  explains(c, comparison, ours, kruise) {
    if (c.class !== 'rollout' || ours.kind !== 'pods' || kruise.kind !== 'pods') return false;
    const strategy = isRecord(c.sidecarSet.spec) && isRecord(c.sidecarSet.spec.updateStrategy) ? c.sidecarSet.spec.updateStrategy : {};
    if (strategy.priorityStrategy === undefined) return false;
    if ([...eventKeys(ours), ...eventKeys(kruise)].some((e) => / ResetContainer/.test(e))) return false;
    const updated = (v: Extract<Verdict, { kind: 'pods' }>) => new Set(v.writes.filter((w) => w.kind === 'update').map((w) => `${String((w.pod.metadata as Json | undefined)?.namespace)}/${String((w.pod.metadata as Json | undefined)?.name)}`));
    const [mine, theirs] = [updated(ours), updated(kruise)];
    const onlyOne = new Set([...mine, ...theirs].filter((p) => !(mine.has(p) && theirs.has(p))));
    if (onlyOne.size === 0) return false;
    const [myViews, theirViews] = [podViews(comparison.ours), podViews(comparison.kruise)];
    if (myViews.size !== theirViews.size) return false;
    // Compared as JSON documents (compare.ts), whichever realm built them.
    for (const [pod, view] of myViews) if (!onlyOne.has(pod) && firstDifference(view, theirViews.get(pod)) !== undefined) return false;
    const events = (view: unknown) => (isRecord(view) ? [view.events, view.stopped] : []);
    return firstDifference(events(comparison.ours), events(comparison.kruise)) === undefined;
  },
};

export const RELEASE_DIFFERENCES: readonly ReleaseDifference[] = [
  conversionRoundTripKeepsWhatWasWritten,
  namespaceAgainstSelectorByKeys,
  customVersionIsALabelValue,
  reconcileOrderOf19,
  prioritySortStable,
];

/** The name of the documented difference that explains a mismatch with a release, if one does. */
export function releaseDifferenceOf(line: KruiseLine, c: ConformanceCase, comparison: Comparison, ours: Verdict, kruise: Verdict): string | undefined {
  return RELEASE_DIFFERENCES.find((d) => d.line === line && d.explains(c, comparison, ours, kruise))?.name;
}
