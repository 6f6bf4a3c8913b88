/**
 * The pod annotations Kruise reads and writes: `kruise.io/sidecarset-hash`
 * and `kruise.io/sidecarset-hash-without-image` (JSON maps keyed by
 * SidecarSet name) and `kruise.io/sidecarset-injected-list`.
 */
import { isObject } from '../kube/json.ts';
import { compareGoStrings } from './go-json.ts';
import { FENCE_ANNOTATIONS } from './rollout-fence.ts';
import { ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, ANNOTATION_INJECTED_LIST } from './types.ts';

/**
 * The pod annotations injection maintains; `patchPodMetadata` may not write
 * them. Kruise's three, and the rollout fence (rollout-fence.ts), which a set
 * naming it could otherwise widen.
 */
export const INJECTION_ANNOTATIONS: readonly string[] = [ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, ANNOTATION_INJECTED_LIST, ...FENCE_ANNOTATIONS];

/** One SidecarSet's entry, in the field order of Kruise's SidecarSetUpgradeSpec. */
export interface SidecarSetUpgradeSpec {
  /** RFC 3339 in UTC, or null for entries converted from the old string form. */
  updateTimestamp: string | null;
  hash: string;
  sidecarSetName: string;
  sidecarList: string[] | null;
  /** Written only when non-empty (Go `omitempty`). */
  controllerRevision?: string;
}

export type UpgradeSpecMap = Map<string, SidecarSetUpgradeSpec>;

/** An annotation value that is neither the current nor the old form. */
export class InvalidHashAnnotationError extends Error {
  readonly annotation: string;
  constructor(annotation: string, detail: string) {
    super(`pod annotation ${annotation} is not a JSON object of SidecarSet entries: ${detail}`);
    this.name = 'InvalidHashAnnotationError';
    this.annotation = annotation;
  }
}

function stringField(entry: Record<string, unknown>, key: string): string {
  const v = entry[key];
  return typeof v === 'string' ? v : '';
}

/**
 * Parses a hash annotation. Accepts the current form (`{"set": {...}}`) and the
 * old one (`{"set": "<hash>"}`), as Kruise does; an empty value is an empty map.
 * @throws InvalidHashAnnotationError on anything else.
 */
export function parseHashAnnotation(annotation: string, value: string | undefined): UpgradeSpecMap {
  const out: UpgradeSpecMap = new Map();
  if (value === undefined || value === '') return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (e) {
    throw new InvalidHashAnnotationError(annotation, (e as Error).message);
  }
  if (!isObject(parsed)) throw new InvalidHashAnnotationError(annotation, 'not an object');
  const entries = Object.entries(parsed);
  // Kruise decodes the whole map as one form or the other, never a mix.
  const allStrings = entries.every(([, v]) => typeof v === 'string');
  const allObjects = entries.every(([, v]) => isObject(v));
  if (!allStrings && !allObjects) throw new InvalidHashAnnotationError(annotation, 'entries mix strings and objects');
  for (const [name, v] of entries) {
    if (typeof v === 'string') {
      out.set(name, { updateTimestamp: null, hash: v, sidecarSetName: name, sidecarList: null });
      continue;
    }
    const entry = v as Record<string, unknown>;
    const list = entry.sidecarList;
    const spec: SidecarSetUpgradeSpec = {
      updateTimestamp: typeof entry.updateTimestamp === 'string' ? entry.updateTimestamp : null,
      hash: stringField(entry, 'hash'),
      sidecarSetName: stringField(entry, 'sidecarSetName'),
      sidecarList: Array.isArray(list) ? list.filter((s): s is string => typeof s === 'string') : null,
    };
    const revision = stringField(entry, 'controllerRevision');
    if (revision !== '') spec.controllerRevision = revision;
    out.set(name, spec);
  }
  return out;
}

/**
 * The annotation text exactly as Go's json.Marshal of Kruise's
 * map[string]SidecarSetUpgradeSpec prints it: keys sorted as Go sorts them
 * (by their UTF-8 bytes, so a set named `10` comes before one named `9`,
 * which a JavaScript object would put the other way round), struct field
 * order, `<`, `>`, `&` escaped.
 */
export function formatHashAnnotation(map: UpgradeSpecMap): string {
  const names = [...map.keys()].sort(compareGoStrings);
  let out = '{';
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    out += `${i === 0 ? '' : ','}${hashEntryText(name, map.get(name) as SidecarSetUpgradeSpec)}`;
  }
  return `${out}}`;
}

/** One entry of a hash annotation, `"name":{...}`, as {@link formatHashAnnotation} writes it inside the map. */
export function hashEntryText(name: string, e: SidecarSetUpgradeSpec): string {
  const ordered: SidecarSetUpgradeSpec = {
    updateTimestamp: e.updateTimestamp,
    hash: e.hash,
    sidecarSetName: e.sidecarSetName,
    sidecarList: e.sidecarList,
  };
  if (e.controllerRevision !== undefined && e.controllerRevision !== '') ordered.controllerRevision = e.controllerRevision;
  return htmlEscape(`${JSON.stringify(name)}:${JSON.stringify(ordered)}`);
}

/** What {@link htmlEscape} rewrites; a value with none of them (the usual case) is returned as is. */
const HTML_UNSAFE = /[<>&\u2028\u2029]/;

function htmlEscape(json: string): string {
  if (!HTML_UNSAFE.test(json)) return json;
  return json
    .replaceAll('<', '\\u003c')
    .replaceAll('>', '\\u003e')
    .replaceAll('&', '\\u0026')
    .replaceAll('\u2028', '\\u2028')
    .replaceAll('\u2029', '\\u2029');
}

/** The set names of `kruise.io/sidecarset-injected-list`. */
export function parseInjectedList(value: string | undefined): string[] {
  if (value === undefined || value === '') return [];
  return value.split(',');
}

/** The injected-list value: names de-duplicated, sorted, comma-joined (Kruise's sets.String.List()). */
export function formatInjectedList(names: Iterable<string>): string {
  return [...new Set(names)].sort(compareGoStrings).join(',');
}

/**
 * The hash recorded for `setName` in a pod's hash annotation, read without
 * building the whole map (the resync and a rollout plan read it for
 * every pod). As {@link parseHashAnnotation} reads it: the current form or the
 * old `{"set":"<hash>"}` form, never a mix; undefined when absent or
 * unreadable, '' for an entry whose hash is not a string.
 */
export function recordedHash(annotationValue: string | undefined, setName: string): string | undefined {
  return parseRecordedEntries(annotationValue).hash(setName);
}

/**
 * The hash and controllerRevision a pod records for a set in its hash
 * annotation (either form; the old form has no revision), parsed once;
 * undefined when the annotation is absent, unreadable or has no entry.
 */
export function recordedEntry(annotationValue: string | undefined, setName: string): RecordedEntry | undefined {
  return parseRecordedEntries(annotationValue).entry(setName);
}

/** What a pod records for one set in a hash annotation. */
export interface RecordedEntry {
  hash: string | undefined;
  controllerRevision: string | undefined;
}

/**
 * One hash annotation text parsed once, read for any set: {@link entry} as
 * {@link recordedEntry} reads it, {@link updateTime} as the stall clock reads
 * the entry's `updateTimestamp`. A reconcile keeps one per pod and annotation
 * (lib/sidecarset/pod-state.ts), so every check of a plan reads the same parse.
 */
export interface RecordedEntries {
  /** The text this was parsed from (a reader compares it with the pod's current text before reuse). */
  readonly text: string | undefined;
  entry(setName: string): RecordedEntry | undefined;
  /** `entry(setName)?.hash` without the entry object (a plan asks it of every pod). */
  hash(setName: string): string | undefined;
  /** The entry's `updateTimestamp` in ms whatever the other entries' form; 0 when absent or unreadable. */
  updateTime(setName: string): number;
}

/** Parses a hash annotation's text once for {@link RecordedEntries}; never throws. */
export function parseRecordedEntries(text: string | undefined): RecordedEntries {
  if (text === undefined || text === '') return new ParsedEntries(text, undefined);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return new ParsedEntries(text, undefined);
  }
  return new ParsedEntries(text, isObject(parsed) ? parsed : undefined);
}

/** A class rather than closures: a plan makes one per pod. */
class ParsedEntries implements RecordedEntries {
  /** Kruise decodes the whole map as one form or the other, never a mix: decided on first use. */
  private form: 'strings' | 'objects' | 'mixed' | undefined;
  readonly text: string | undefined;
  private readonly object: Record<string, unknown> | undefined;
  constructor(text: string | undefined, object: Record<string, unknown> | undefined) {
    this.text = text;
    this.object = object;
  }

  entry(setName: string): RecordedEntry | undefined {
    const form = this.formFor(setName);
    if (form === undefined) return undefined;
    const object = this.object as Record<string, unknown>;
    if (form === 'strings') return { hash: object[setName] as string, controllerRevision: undefined };
    const entry = object[setName] as Record<string, unknown>;
    return { hash: stringField(entry, 'hash'), controllerRevision: stringField(entry, 'controllerRevision') };
  }

  hash(setName: string): string | undefined {
    const form = this.formFor(setName);
    if (form === undefined) return undefined;
    const value = (this.object as Record<string, unknown>)[setName];
    return form === 'strings' ? (value as string) : stringField(value as Record<string, unknown>, 'hash');
  }

  /** The form of the map when it holds a readable entry for the set; undefined when it does not. */
  private formFor(setName: string): 'strings' | 'objects' | undefined {
    const object = this.object;
    if (object === undefined || !Object.hasOwn(object, setName)) return undefined;
    if (this.form === undefined) {
      const values = Object.values(object);
      this.form = values.every((v) => typeof v === 'string') ? 'strings' : values.every(isObject) ? 'objects' : 'mixed';
    }
    return this.form === 'mixed' ? undefined : this.form;
  }

  updateTime(setName: string): number {
    const object = this.object;
    const entry = object !== undefined && Object.hasOwn(object, setName) ? object[setName] : undefined;
    return isObject(entry) ? timeOf(entry.updateTimestamp) : 0;
  }
}

/** An RFC 3339 time in ms; 0 for absent or unparsable (Go's zero time). */
export function timeOf(value: unknown): number {
  if (typeof value !== 'string') return 0;
  const t = value.length === 20 ? secondsTimeOf(value) : Number.NaN;
  if (!Number.isNaN(t)) return t;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? 0 : parsed;
}

/**
 * `YYYY-MM-DDTHH:MM:SSZ` (what the API server writes, metav1.Time) in ms,
 * by arithmetic; NaN for any other text, which Date.parse then reads. A plan
 * reads two times of each of 100,000 pods, and Date.parse, which reads every
 * format it knows, cost a tenth of it. Exactly Date.parse's value for every
 * text it answers (test/sidecarset/time-of.test.ts): year 1000 or later,
 * month 1-12, day 1-31 (a day past the month's end rolls over, as
 * Date.parse's does), hour 0-23 (Date.parse also reads 24:00:00: left to it).
 */
function secondsTimeOf(s: string): number {
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || s.charCodeAt(19) !== 90) return Number.NaN;
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  const second = digits(s, 17, 2);
  // digits() is NaN for a non-digit, and NaN fails every comparison.
  if (!(year >= 1000 && month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 59)) return Number.NaN;
  return daysFromCivil(year, month, day) * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000;
}

/** The decimal number of `length` ASCII digits at `at`; NaN when one is not a digit. */
function digits(s: string, at: number, length: number): number {
  let n = 0;
  for (let i = at; i < at + length; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return Number.NaN;
    n = n * 10 + d;
  }
  return n;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil); linear in `day`, so a day past the month's end rolls over. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The second {@link formatTimestamp} wrote last (ms since the epoch / 1000, floored) and its text. */
let lastSecond = Number.NaN;
let lastTimestamp = '';

/**
 * RFC 3339 with second precision in UTC, as metav1.Time marshals. The text
 * of the last second asked for is kept: every review in that second writes
 * the same one (an invalid date is never kept, and throws as toISOString does).
 */
export function formatTimestamp(now: Date): string {
  const second = Math.floor(now.getTime() / 1000);
  if (second !== lastSecond) {
    lastTimestamp = `${now.toISOString().slice(0, 19)}Z`;
    lastSecond = second;
  }
  return lastTimestamp;
}
