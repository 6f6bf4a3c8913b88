/**
 * SidecarSet conversion between apps.kruise.io/v1alpha1 and v1beta1, with
 * OpenKruise 1.9's mapping and without its losses (docs/CONVERSION.md).
 *
 * Kruise's mapping, `toBeta` and `toAlpha` below, differs only in the part
 * (parts.ts): v1alpha1 `spec.namespace: X` becomes the v1beta1 selector
 * `matchLabels: {kubernetes.io/metadata.name: X}` (winning over a
 * namespaceSelector), the custom-version label becomes `spec.customVersion`,
 * and back. On most sets that mapping is its own inverse ("plain" parts).
 * Where it is not (a `namespace`, both `namespace` and a selector, an empty
 * custom-version label, fields the other version does not have), the
 * converted object carries the source's whole part, as JSON, in the
 * annotation sidecarset.kruise.io/converted-from, and converting back
 * restores it, as long as the object still is what that part converts to
 * (an edit in the other version makes the annotation stale, and it is then
 * kept as data, not applied).
 *
 * The two directions are inverse bijections on every object, whatever it
 * holds: each side's parts fall in three classes, plain (converted by the
 * mapping), carried (their annotation decodes to an unplain part of the
 * other side that converts to exactly them) and unplain (the rest, converted
 * by the mapping plus the annotation carrying them), and the conversion
 * pairs plain with plain, unplain with carried, carried with unplain.
 * Deciding a class may decode a carried part inside a carried part; each
 * level is a JSON string inside the one before, so the levels are few (the
 * escaping at least doubles with each) and the cost stays linear in size
 * times that depth.
 */
import { stringifySorted } from '../kube/merge-patch.ts';
import { isObject, nestsDeeperThan } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import { GROUP, KIND } from '../sidecarset/types.ts';
import { LABEL_CUSTOM_VERSION } from '../sidecarset/revisions.ts';
import {
  annotationOf,
  CONTAINERS,
  join,
  partEqual,
  partOf,
  ShapeError,
  SLOT_KEYS,
  split,
  withAnnotation,
  type Full,
  type Part,
} from './parts.ts';

export const SIDECARSET_VERSIONS = ['v1alpha1', 'v1beta1'] as const;
export type SidecarSetVersion = (typeof SIDECARSET_VERSIONS)[number];

/** The label every Namespace carries with its own name (Kubernetes 1.21 and later). */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/** The deepest nesting an object to convert may have (as an admission review's; real objects nest a few dozen levels). */
export const MAX_CONVERSION_DEPTH = 1000;

export type ConversionResult = { ok: true; object: JsonObject } | { ok: false; error: string };

/** A value for an error message: JSON, cut short. */
export function shown(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}

const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** Kruise's v1alpha1 → v1beta1 on the part. */
function toBeta(a: Part, full: Full): Part {
  const namespace = a.spec.slots.namespace;
  const cv = a.labels.slots[LABEL_CUSTOM_VERSION];
  return partOf(
    {
      spec: {
        namespaceSelector: nonEmptyString(namespace) ? { matchLabels: { [NAMESPACE_NAME_LABEL]: namespace } } : a.spec.slots.namespaceSelector,
        customVersion: nonEmptyString(cv) ? cv : undefined,
      },
    },
    full,
    { spec: a.spec.present },
  );
}

/** Kruise's v1beta1 → v1alpha1 on the part. */
function toAlpha(b: Part, full: Full): Part {
  const customVersion = b.spec.slots.customVersion;
  return partOf(
    {
      spec: { namespaceSelector: b.spec.slots.namespaceSelector },
      labels: { [LABEL_CUSTOM_VERSION]: nonEmptyString(customVersion) ? customVersion : b.labels.slots[LABEL_CUSTOM_VERSION] },
    },
    full,
    { spec: b.spec.present },
  );
}

/** The annotation's text for a part of `version`: sorted JSON, so that one part has one text. */
function encode(version: SidecarSetVersion, part: Part): string {
  const body: Record<string, unknown> = {};
  for (const container of CONTAINERS) {
    const { present, slots } = part[container];
    if (!present) body[container] = null;
    else if (Object.keys(slots).length > 0) body[container] = slots;
  }
  return stringifySorted({ [version]: body });
}

/** The part of `version` an annotation's text holds, if it is one encode wrote and the rest can hold it. */
function decode(text: unknown, version: SidecarSetVersion, full: Full): Part | undefined {
  if (typeof text !== 'string' || !text.startsWith(`{"${version}":`)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(parsed) || nestsDeeperThan(parsed, MAX_CONVERSION_DEPTH)) return undefined;
  const body = parsed[version];
  if (Object.keys(parsed).length !== 1 || !isObject(body)) return undefined;
  const part = {} as Part;
  for (const key of Object.keys(body)) if (!(CONTAINERS as readonly string[]).includes(key)) return undefined;
  for (const container of CONTAINERS) {
    const value = Object.hasOwn(body, container) ? body[container] : {};
    if (value === null) {
      // A container the rest holds cannot have been absent.
      if (full[container]) return undefined;
      part[container] = { present: false, slots: {} };
      continue;
    }
    if (!isObject(value) || Object.keys(value).some((k) => !SLOT_KEYS[container].includes(k))) return undefined;
    part[container] = { present: true, slots: value };
  }
  // The one text encode writes for it (so no other spelling is taken for it).
  return encode(version, part) === text ? part : undefined;
}

type Side = { version: SidecarSetVersion; map: (part: Part, full: Full) => Part };
const ALPHA: Side = { version: 'v1alpha1', map: toBeta };
const BETA: Side = { version: 'v1beta1', map: toAlpha };
const other = (side: Side): Side => (side === ALPHA ? BETA : ALPHA);

/** Plain: no annotation, and the mapping there and back gives it back. */
function isPlain(side: Side, part: Part, full: Full): boolean {
  return annotationOf(part) === undefined && partEqual(other(side).map(side.map(part, full), full), part);
}

/** Carried: its annotation holds an unplain part of the other side that converts to exactly this; that part, or undefined. */
function carried(side: Side, part: Part, full: Full): Part | undefined {
  const text = annotationOf(part);
  const source = decode(text, other(side).version, full);
  if (source === undefined || typeof text !== 'string') return undefined;
  if (!partEqual(withAnnotation(other(side).map(source, full), text), part)) return undefined;
  return isUnplain(other(side), source, full) ? source : undefined;
}

function isUnplain(side: Side, part: Part, full: Full): boolean {
  return !isPlain(side, part, full) && carried(side, part, full) === undefined;
}

/** The part converted from `side` to the other side. */
function convertPart(side: Side, part: Part, full: Full): Part {
  const source = carried(side, part, full);
  if (source !== undefined) return source;
  const mapped = side.map(part, full);
  return isPlain(side, part, full) ? mapped : withAnnotation(mapped, encode(side.version, part));
}

/** The version of an apps.kruise.io SidecarSet apiVersion, or undefined. */
export function sidecarSetVersionOf(apiVersion: unknown): SidecarSetVersion | undefined {
  return SIDECARSET_VERSIONS.find((version) => apiVersion === `${GROUP}/${version}`);
}

/**
 * `object`, a SidecarSet of either version, as a SidecarSet of version `to`;
 * or the problem that stops it. Never throws; does not change `object`.
 */
export function convertSidecarSet(object: unknown, to: SidecarSetVersion): ConversionResult {
  return convertWith(object, to, convertPart);
}

/**
 * Kruise's mapping plus the annotation carrying the source's part, whatever
 * the part: what convertSidecarSet does to an unplain object, done to any.
 * Not a conversion (it is no bijection); the fuzzers forge carried
 * annotations with it, for parts no real conversion would carry.
 */
export function convertCarrying(object: unknown, to: SidecarSetVersion): ConversionResult {
  return convertWith(object, to, (side, part, full) => withAnnotation(side.map(part, full), encode(side.version, part)));
}

function convertWith(object: unknown, to: SidecarSetVersion, convert: (side: Side, part: Part, full: Full) => Part): ConversionResult {
  if (!isObject(object)) return { ok: false, error: 'the object is not a JSON object' };
  if (object.kind !== KIND) return { ok: false, error: `kind is ${shown(object.kind)}, expected "${KIND}"` };
  const from = sidecarSetVersionOf(object.apiVersion);
  if (from === undefined) {
    return { ok: false, error: `apiVersion is ${shown(object.apiVersion)}, expected ${SIDECARSET_VERSIONS.map((v) => `"${GROUP}/${v}"`).join(' or ')}` };
  }
  if (nestsDeeperThan(object, MAX_CONVERSION_DEPTH)) return { ok: false, error: `the object nests deeper than ${MAX_CONVERSION_DEPTH} levels` };
  if (from === to) return { ok: true, object };
  try {
    const { part, rest, full } = split(object);
    const converted = join(rest, convert(from === 'v1alpha1' ? ALPHA : BETA, part, full));
    converted.apiVersion = `${GROUP}/${to}`;
    return { ok: true, object: converted };
  } catch (error) {
    if (error instanceof ShapeError) return { ok: false, error: error.message };
    throw error;
  }
}
