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
import type { Comparison } from './compare.ts';
import type { ConformanceCase } from './generator.ts';
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

export const RELEASE_DIFFERENCES: readonly ReleaseDifference[] = [conversionRoundTripKeepsWhatWasWritten];

/** The name of the documented difference that explains a mismatch with a release, if one does. */
export function releaseDifferenceOf(line: KruiseLine, c: ConformanceCase, comparison: Comparison, ours: Verdict, kruise: Verdict): string | undefined {
  return RELEASE_DIFFERENCES.find((d) => d.line === line && d.explains(c, comparison, ours, kruise))?.name;
}
