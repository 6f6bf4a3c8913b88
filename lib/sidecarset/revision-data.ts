/**
 * The data a SidecarSet's ControllerRevision records (rollout.md §2.1,
 * example §2.2): `{"spec":{"$patch":"replace", …}}` of spec.containers,
 * initContainers, volumes, imagePullSecrets and patchPodMetadata, byte for
 * byte as Kruise's json.Marshal → generic map → json.Marshal prints it: keys
 * sorted at every level, absent fields `null`, quantities canonical, `<>&`
 * escaped.
 */
import { isObject, objectOf, stringMapOf, stringOf } from '../kube/json.ts';
import { canonicalQuantity, quantityFromJson } from '../kube/quantity.ts';
import { compareGoStrings, decodeGo, encodeGo, goJsonString, SIDECAR_CONTAINER_LIST } from './go-json.ts';
import type { SidecarSet } from './types.ts';

/**
 * Go's json.Marshal of a decoded `interface{}` value: object keys sorted by
 * bytes, strings HTML-safe. Numbers print as JavaScript prints them, which is
 * Go's float64 form for the integers these documents hold.
 */
export function goSortedJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goJsonString(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (Array.isArray(value)) return `[${value.map(goSortedJson).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort(compareGoStrings);
    return `{${keys.map((k) => `${goJsonString(k)}:${goSortedJson(value[k])}`).join(',')}}`;
  }
  return 'null';
}

/** A container list through Kruise's Go types (unknown keys dropped, omitempty, canonical quantities). */
function containers(list: unknown): unknown {
  if (!Array.isArray(list)) return null;
  return JSON.parse(encodeGo(SIDECAR_CONTAINER_LIST, decodeGo(SIDECAR_CONTAINER_LIST, list))) as unknown;
}

/**
 * Volumes as Go would print them, as far as this project models core/v1
 * Volume: null-valued keys are dropped (nil pointers, omitempty) and an
 * emptyDir sizeLimit is made canonical. Unknown keys are kept (Go would drop
 * them; the API server's CRD schema prunes them before we see the set).
 */
function volumes(list: unknown): unknown {
  if (!Array.isArray(list)) return null;
  return list.map((v) => {
    const out = dropNulls(v);
    const emptyDir = objectOf(objectOf(out)?.emptyDir);
    if (emptyDir !== undefined && emptyDir.sizeLimit !== undefined) {
      const q = quantityFromJson(emptyDir.sizeLimit);
      if (q === undefined) delete emptyDir.sizeLimit;
      else emptyDir.sizeLimit = canonicalQuantity(q);
    }
    return out;
  });
}

function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = dropNulls(v);
  return out;
}

/** []LocalObjectReference: `{"name":…}`, `{}` for an empty name. */
function pullSecrets(list: unknown): unknown {
  if (!Array.isArray(list)) return null;
  return list.map((s) => {
    const name = stringOf(objectOf(s)?.name) ?? '';
    return name === '' ? {} : { name };
  });
}

/** []SidecarSetPatchPodMetadata: annotations and patchPolicy, both omitempty. */
function patchPodMetadata(list: unknown): unknown {
  if (!Array.isArray(list)) return null;
  return list.map((p) => {
    const entry = objectOf(p) ?? {};
    const out: Record<string, unknown> = {};
    const annotations = stringMapOf(entry.annotations);
    if (Object.keys(annotations).length > 0) out.annotations = annotations;
    const policy = stringOf(entry.patchPolicy) ?? '';
    if (policy !== '') out.patchPolicy = policy;
    return out;
  });
}

/** The revision's `data` as an object (what the ControllerRevision carries). */
export function revisionDataObject(set: SidecarSet): { spec: Record<string, unknown> } {
  const spec = objectOf(set.spec) ?? {};
  return {
    spec: {
      $patch: 'replace',
      containers: containers(spec.containers),
      imagePullSecrets: pullSecrets(spec.imagePullSecrets),
      initContainers: containers(spec.initContainers),
      patchPodMetadata: patchPodMetadata(spec.patchPodMetadata),
      volumes: volumes(spec.volumes),
    },
  };
}

/** The revision's `Data.Raw` bytes, which its name hashes and equality compares (§2.1). */
export function revisionData(set: SidecarSet): string {
  return goSortedJson(revisionDataObject(set));
}

/** The `Data.Raw` of a stored revision: its `data` printed again the way it was written (sorted, Go-escaped). */
export function storedRevisionData(revision: { data?: unknown }): string {
  return goSortedJson(revision.data);
}

/**
 * The JSON text that creates `revision`, its `data` written byte for byte
 * as Kruise's Go writes it ({@link storedRevisionData}), the other fields as
 * JSON.stringify writes them. The API server keeps `data` as the raw bytes
 * it was sent and compares them on every update (`data` is immutable), but a
 * patch makes it re-encode the object with Go's encoding/json first, which
 * escapes `&`, `<`, `>`, U+2028 and U+2029: data written with those raw
 * could then never be renumbered (a rollback) nor labelled.
 */
export function revisionJsonText(revision: { data?: unknown; [key: string]: unknown }): string {
  return withRawData(revision, storedRevisionData(revision));
}

/**
 * The `data` bytes an earlier version of this project wrote (until the
 * revision JSON above): JSON.stringify's, which leaves `&`, `<`, `>`,
 * U+2028 and U+2029 raw. Read back (the API server prints them escaped),
 * parsed and printed again, they come out as they were written: the keys in
 * the order they were written, integer-like keys first as JavaScript wrote them.
 */
export function earlierRevisionData(revision: { data?: unknown }): string {
  return JSON.stringify(revision.data ?? null);
}

/** The object's JSON text with `data` (last) as the given bytes. */
export function withRawData(object: { data?: unknown; [key: string]: unknown }, data: string): string {
  const head = JSON.stringify({ ...object, data: undefined });
  return head === '{}' ? `{"data":${data}}` : `${head.slice(0, -1)},"data":${data}}`;
}

