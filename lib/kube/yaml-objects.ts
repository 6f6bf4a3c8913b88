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
