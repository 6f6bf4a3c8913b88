/** Narrowing helpers for untrusted JSON: admitted objects may hold any type anywhere. */
import type { JsonObject } from './types.ts';

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value when it is an array, else an empty one (a wrong type is validation's business). */
export function arrayOf<T = unknown>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}

/** The value when it is a plain object, else undefined. */
export function objectOf(value: unknown): JsonObject | undefined {
  return isObject(value) ? value : undefined;
}

/** The value when it is a string, else undefined. */
export function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A map of string to string (labels, annotations), ignoring entries of another type. */
export function stringMapOf(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObject(value)) return out;
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
}

/**
 * A deep copy of a JSON value, with plain prototypes. Walked by hand rather
 * than with structuredClone, which goes through V8's serializer and is
 * several times slower on pods. A `__proto__` key (JSON.parse makes it an own
 * property) is defined, not assigned, so it stays data.
 */
/** The JSON object a text holds; undefined when it is absent, not JSON, or JSON of another kind (annotations hold such texts). */
export function parseJsonObject(text: string | undefined): JsonObject | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function cloneJson<T>(value: T): T {
  return cloneValue(value) as T;
}

function cloneValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneValue);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = cloneValue((value as Record<string, unknown>)[key]);
    if (key === '__proto__') Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}

/** Deep equality of two JSON values; object key order does not matter. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * Whether the value JSON.parse makes of `text` nests at most `limit` levels,
 * told from the text alone when it can be: every object or array of that
 * value opens with its own `{` or `[` in the text, so a text holding at most
 * `limit` of them (strings' included) cannot nest deeper. Counted with
 * indexOf, stopping past `limit`: a few µs for a review, where walking the
 * parsed value was several times that. False when the text holds more (it
 * may still nest no deeper: walk the value with {@link nestsDeeperThan}).
 */
export function textNestsAtMost(text: string, limit: number): boolean {
  let count = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
      if (++count > limit) return false;
    }
  }
  return true;
}

/**
 * Whether a JSON value nests deeper than `limit` levels, an object or array
 * being one level (`1` is 0 deep, `[[1]]` is 2). Iterative, so that it never
 * overflows the stack on the very input it is meant to catch.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit < 1) return true;
  // Two parallel stacks of containers and their depths: every request is
  // walked here, and an object per node was most of this walk's cost.
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop() as object;
    const depth = depths.pop() as number;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (typeof child !== 'object' || child === null) continue;
      if (depth + 1 > limit) return true;
      nodes.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}
