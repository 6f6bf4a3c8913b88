/**
 * Kubernetes objects from JSON or YAML text: one object, a JSON array of
 * objects, a List (`items`), or several YAML documents.
 */
import { parseAllDocuments } from 'yaml';
import { isObject } from './json.ts';
import type { JsonObject } from './types.ts';

/** Text that does not hold Kubernetes objects; the message names the source and the problem. */
export class ManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestError';
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
  const docs = parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, i) => {
    const error = doc.errors[0];
    if (error) throw new ManifestError(`${source}: not valid JSON or YAML: ${error.message.split('\n')[0] ?? ''}`);
    add(doc.toJS({ maxAliasCount: 100 }), list.length > 1 ? `document ${i + 1}` : 'the document');
  });
  return out;
}

/** Exactly one object from `text`. */
export function parseSingleObject(text: string, source: string): JsonObject {
  const docs = parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true });
  const list = (Array.isArray(docs) ? docs : [docs]).filter((d) => d.contents !== null || d.errors.length > 0);
  if (list.length !== 1) throw new ManifestError(`${source}: expected one JSON or YAML document, found ${list.length}`);
  const [doc] = list;
  const error = doc?.errors[0];
  if (error) throw new ManifestError(`${source}: not valid JSON or YAML: ${error.message.split('\n')[0] ?? ''}`);
  const value: unknown = doc?.toJS({ maxAliasCount: 100 });
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
