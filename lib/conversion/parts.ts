/**
 * The part of a SidecarSet where apps.kruise.io/v1alpha1 and v1beta1 differ,
 * taken out of the object and put back. Everything else (the "rest": every
 * other field of metadata, spec and status, known or not) is the same in
 * both versions and is never looked at.
 *
 * The part is five slots, each absent or holding any JSON value, and whether
 * each of the three maps holding them (spec, metadata.labels,
 * metadata.annotations) is there at all:
 *   spec.namespace, spec.namespaceSelector, spec.customVersion,
 *   metadata.labels["apps.kruise.io/sidecarset-custom-version"],
 *   metadata.annotations["sidecarset.kruise.io/converted-from"].
 */
import { isObject, jsonEqual } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import { LABEL_CUSTOM_VERSION } from '../sidecarset/revisions.ts';

/**
 * The annotation that carries, on an object of one version, what the other
 * version held and this one cannot (see docs/CONVERSION.md).
 */
export const CONVERTED_FROM_ANNOTATION = 'sidecarset.kruise.io/converted-from';

export type Container = 'spec' | 'labels' | 'annotations';
export const CONTAINERS: readonly Container[] = ['spec', 'labels', 'annotations'];

/** The keys of each container that belong to the part. */
export const SLOT_KEYS: Readonly<Record<Container, readonly string[]>> = {
  spec: ['namespace', 'namespaceSelector', 'customVersion'],
  labels: [LABEL_CUSTOM_VERSION],
  annotations: [CONVERTED_FROM_ANNOTATION],
};

/** Per container: whether it is there, and the part's keys it holds (an absent key is an absent slot). */
export type Part = Record<Container, { present: boolean; slots: Record<string, unknown> }>;

/** Per container: whether the rest holds it (it has keys besides the part's); the same on both sides of a conversion. */
export type Full = Record<Container, boolean>;

export class ShapeError extends Error {}

function containerOf(object: JsonObject, container: Container): unknown {
  if (container === 'spec') return object.spec;
  return (object.metadata as JsonObject)[container];
}

function where(container: Container): string {
  return container === 'spec' ? 'spec' : `metadata.${container}`;
}

/** A new object with `key` defined as data (a `__proto__` key stays a key). */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The part of `object` and the rest (a shallow copy without the part; a
 * container left empty is dropped from the rest).
 * @throws ShapeError when metadata is not an object, or spec, labels or annotations are there but not objects.
 */
export function split(object: JsonObject): { part: Part; rest: JsonObject; full: Full } {
  if (!isObject(object.metadata)) throw new ShapeError('metadata must be an object');
  const rest: JsonObject = { ...object, metadata: { ...object.metadata } };
  const part = {} as Part;
  const full = {} as Full;
  for (const container of CONTAINERS) {
    const value = containerOf(object, container);
    const holder = (container === 'spec' ? rest : rest.metadata) as JsonObject;
    const key = container === 'spec' ? 'spec' : container;
    if (value === undefined) {
      part[container] = { present: false, slots: {} };
      full[container] = false;
      continue;
    }
    if (!isObject(value)) throw new ShapeError(`${where(container)} must be an object`);
    const slots: Record<string, unknown> = {};
    const others: Record<string, unknown> = {};
    for (const k of Object.keys(value)) put(SLOT_KEYS[container].includes(k) ? slots : others, k, value[k]);
    part[container] = { present: true, slots };
    full[container] = Object.keys(others).length > 0;
    if (full[container]) holder[key] = others;
    else Reflect.deleteProperty(holder, key);
  }
  return { part, rest, full };
}

/** `rest` with `part` put back: the inverse of split. */
export function join(rest: JsonObject, part: Part): JsonObject {
  const object: JsonObject = { ...rest, metadata: { ...(rest.metadata as JsonObject) } };
  for (const container of CONTAINERS) {
    const { present, slots } = part[container];
    if (!present) continue;
    const holder = (container === 'spec' ? object : object.metadata) as JsonObject;
    const key = container === 'spec' ? 'spec' : container;
    const target: Record<string, unknown> = { ...(holder[key] as JsonObject | undefined) };
    for (const k of Object.keys(slots)) put(target, k, slots[k]);
    holder[key] = target;
  }
  return object;
}

/** A part from slots, each container there when the rest holds it, when it holds a slot, or when `keep` says so. */
export function partOf(slots: Partial<Record<Container, Record<string, unknown>>>, full: Full, keep: Partial<Record<Container, boolean>> = {}): Part {
  const part = {} as Part;
  for (const container of CONTAINERS) {
    const own: Record<string, unknown> = {};
    const given = slots[container] ?? {};
    for (const k of Object.keys(given)) if (given[k] !== undefined) put(own, k, given[k]);
    part[container] = { present: full[container] || Object.keys(own).length > 0 || keep[container] === true, slots: own };
  }
  return part;
}

export function partEqual(a: Part, b: Part): boolean {
  return CONTAINERS.every((c) => a[c].present === b[c].present && jsonEqual(a[c].slots, b[c].slots));
}

/** The converted-from annotation of a part, or undefined. */
export function annotationOf(part: Part): unknown {
  return Object.hasOwn(part.annotations.slots, CONVERTED_FROM_ANNOTATION) ? part.annotations.slots[CONVERTED_FROM_ANNOTATION] : undefined;
}

/** `part` with the converted-from annotation set to `text`. */
export function withAnnotation(part: Part, text: string): Part {
  const slots: Record<string, unknown> = {};
  put(slots, CONVERTED_FROM_ANNOTATION, text);
  return { ...part, annotations: { present: true, slots } };
}
