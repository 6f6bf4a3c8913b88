/**
 * Kubernetes objects from JSON or YAML text: one object, a JSON array of
 * objects, a List (`items`), or several YAML documents.
 */
import { parseAllDocuments, type Document } from 'yaml';
import { isObject } from './json.ts';
import type { JsonObject } from './types.ts';
import { yamlNestingDepth } from './yaml-nesting.ts';

/** Text that does not hold Kubernetes objects; the message names the source and the problem. */
export class ManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestError';
  }
}

/**
 * How the text is read: JSON's data model and nothing more. Keys are strings
 * (a collection as a key is an error, not a stringified warning on stderr);
 * YAML 1.1 tags (`!!binary`, `!!set`, `!!timestamp`...) and custom tags stay
 * unresolved and are refused below, rather than turning into bytes, sets or
 * dates that JSON would print as something else.
 */
const PARSE_OPTIONS = { prettyErrors: true, uniqueKeys: true, stringKeys: true, resolveKnownTags: false } as const;

/**
 * Alias expansions allowed in one document: enough for any hand-written
 * manifest, far below what an alias bomb (nested aliases multiplying a value
 * into billions) needs.
 */
export const MAX_ALIAS_COUNT = 100;

/**
 * The deepest nesting read: Kubernetes objects nest a few dozen levels (a
 * CRD's schema the most); the parser's recursion overflows V8's stack at
 * several hundred.
 */
export const MAX_NESTING_DEPTH = 200;

/** Refuses text nested deeper than {@link MAX_NESTING_DEPTH}, before the recursive parse. */
function checkNesting(text: string, source: string): void {
  if (yamlNestingDepth(text, MAX_NESTING_DEPTH) > MAX_NESTING_DEPTH) {
    throw new ManifestError(`${source}: not valid JSON or YAML: it nests more than ${MAX_NESTING_DEPTH} levels deep`);
  }
}

/** The first line of a parser message, without the colon that introduces its excerpt. */
function firstLine(text: string): string {
  return (text.split('\n')[0] ?? '').replace(/:$/, '');
}

/** The reason a document cannot be read, in one line. */
function problem(message: string): string {
  // The parser recurses per nesting level: V8's stack ends the descent.
  if (message.includes('Maximum call stack size exceeded')) return 'it is nested too deeply';
  if (message.includes('Excessive alias count')) return `its aliases expand more than ${MAX_ALIAS_COUNT} times (a YAML alias bomb?)`;
  return firstLine(message);
}

/** A value JSON cannot hold, or undefined: what a YAML 1.1 type or a special float would become. */
function notJson(value: unknown): string | undefined {
  if (typeof value === 'number' && !Number.isFinite(value)) return `the number ${String(value)}`;
  if (typeof value === 'bigint') return 'a big integer';
  if (value instanceof Uint8Array) return 'binary data (!!binary)';
  if (value instanceof Date) return 'a timestamp (!!timestamp)';
  if (value instanceof Map) return 'an ordered map (!!omap or !!pairs)';
  if (value instanceof Set) return 'a set (!!set)';
  return undefined;
}

/** The document as JSON values; a ManifestError naming `source` and the problem otherwise. */
function documentValue(doc: Document.Parsed, source: string): unknown {
  const error = doc.errors[0];
  if (error) throw new ManifestError(`${source}: not valid JSON or YAML: ${problem(error.message)}`);
  const unresolved = doc.warnings.find((w) => w.code === 'TAG_RESOLVE_FAILED');
  if (unresolved) throw new ManifestError(`${source}: not valid JSON or YAML: ${firstLine(unresolved.message)} (only JSON's types are accepted)`);
  try {
    return doc.toJS({
      maxAliasCount: MAX_ALIAS_COUNT,
      reviver(key, value) {
        const what = notJson(value);
        if (what !== undefined) throw new ManifestError(`${source}: not valid JSON or YAML: ${JSON.stringify(key)} holds ${what}, which JSON cannot`);
        return value;
      },
    });
  } catch (e) {
    if (e instanceof ManifestError) throw e;
    throw new ManifestError(`${source}: not valid JSON or YAML: ${problem(e instanceof Error ? e.message : String(e))}`);
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The text of a file's bytes; a ManifestError naming `source` when they are not UTF-8 (which would otherwise become U+FFFD silently). */
export function decodeUtf8(bytes: Uint8Array, source: string): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new ManifestError(`${source}: not UTF-8 text`);
  }
}

/**
 * The value of text that is JSON by content (its first character after
 * white space is `{` or `[`), parsed as JSON: the YAML parser takes seconds
 * for a megabyte that JSON.parse reads in milliseconds. Undefined when the
 * text is not JSON after all (YAML flow style, comments, several
 * documents): the YAML parser then reads it, and its errors say why.
 * What the YAML reading refuses is refused here too, with the same words: a
 * duplicate key, a number JSON cannot hold.
 */
function jsonValue(text: string, source: string): { value: unknown } | undefined {
  const first = /[^ \t\r\n\uFEFF]/.exec(text)?.[0];
  if (first !== '{' && first !== '[') return undefined;
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let value: unknown;
  try {
    // V8's JSON.parse does not recurse: the depth is checked after it, in the same pass as the keys.
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  const { depth, duplicate } = scanJson(body);
  if (depth > MAX_NESTING_DEPTH) throw new ManifestError(`${source}: not valid JSON or YAML: it nests more than ${MAX_NESTING_DEPTH} levels deep`);
  if (duplicate !== undefined) throw new ManifestError(`${source}: not valid JSON or YAML: Map keys must be unique (${JSON.stringify(duplicate)} twice in one object)`);
  const number = nonFiniteNumber(value, '');
  if (number !== undefined) throw new ManifestError(`${source}: not valid JSON or YAML: ${JSON.stringify(number.key)} holds the number ${String(number.value)}, which JSON cannot`);
  return { value };
}

/** The first number JSON.parse made Infinity (a literal too large), with its key; the depth is bounded already. */
function nonFiniteNumber(value: unknown, key: string): { key: string; value: number } | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : { key, value };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nonFiniteNumber(value[i], String(i));
      if (found !== undefined) return found;
    }
  } else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      const found = nonFiniteNumber(v, k);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * In valid JSON text: the deepest nesting, and the first key given twice in
 * one object (JSON.parse keeps the last silently). One pass over the text:
 * each object's keys in a set, strings skipped by their escapes.
 */
function scanJson(json: string): { depth: number; duplicate?: string } {
  // Per open bracket: the object's keys, or null for an array.
  const open: (Set<string> | null)[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = i + 1;
      while (json.charCodeAt(end) !== 0x22) end += json.charCodeAt(end) === 0x5c /* \\ */ ? 2 : 1;
      const keys = open[open.length - 1];
      if (expectKey && keys) {
        const key = JSON.parse(json.slice(i, end + 1)) as string;
        if (keys.has(key)) return { depth, duplicate: key };
        keys.add(key);
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */) {
      open.push(new Set());
      depth = Math.max(depth, open.length);
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      open.push(null);
      depth = Math.max(depth, open.length);
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop();
    } else if (c === 0x2c /* , */) {
      expectKey = open[open.length - 1] instanceof Set;
    }
  }
  return { depth };
}

/** Every object in `text`, Lists flattened. `source` names the text in errors (a file path). */
export function parseObjects(text: string, source: string): JsonObject[] {
  const out: JsonObject[] = [];
  const add = (value: unknown, where: string): void => {
    if (value === null || value === undefined) return;
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        add(item, `${where}[${i}]`);
      });
      return;
    }
    if (!isObject(value)) throw new ManifestError(`${source}: ${where} is not an object`);
    if (Array.isArray(value.items) && typeof value.kind === 'string' && value.kind.endsWith('List')) {
      value.items.forEach((item: unknown, i: number) => {
        if (!isObject(item)) throw new ManifestError(`${source}: ${where}.items[${i}] is not an object`);
        out.push(item);
      });
      return;
    }
    out.push(value);
  };
  const json = jsonValue(text, source);
  if (json !== undefined) {
    add(json.value, 'the document');
    return out;
  }
  checkNesting(text, source);
  const docs = parseAllDocuments(text, PARSE_OPTIONS);
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, i) => {
    add(documentValue(doc, source), list.length > 1 ? `document ${i + 1}` : 'the document');
  });
  return out;
}

/** Exactly one object from `text`. */
export function parseSingleObject(text: string, source: string): JsonObject {
  const json = jsonValue(text, source);
  if (json !== undefined) {
    if (!isObject(json.value)) throw new ManifestError(`${source}: the document is not an object`);
    return json.value;
  }
  checkNesting(text, source);
  const docs = parseAllDocuments(text, PARSE_OPTIONS);
  const list = (Array.isArray(docs) ? docs : [docs]).filter((d) => d.contents !== null || d.errors.length > 0);
  const [doc] = list;
  if (list.length !== 1 || doc === undefined) throw new ManifestError(`${source}: expected one JSON or YAML document, found ${list.length}`);
  const value = documentValue(doc, source);
  if (!isObject(value)) throw new ManifestError(`${source}: the document is not an object`);
  return value;
}

/** Checks that every object is of `kind` (objects without a kind are accepted as that kind). */
export function requireKind(objects: readonly JsonObject[], kind: string, source: string): void {
  objects.forEach((o, i) => {
    if (o.kind !== undefined && o.kind !== kind) {
      throw new ManifestError(`${source}: object ${i + 1} is a ${JSON.stringify(o.kind)}, expected ${kind}`);
    }
  });
}
