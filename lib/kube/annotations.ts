/** Removing annotations from an object without writing to it. */
import { objectOf } from './json.ts';
import type { JsonObject } from './types.ts';

/**
 * The object with those annotation keys removed: a copy of it, its metadata
 * and its annotations; the object itself when it carries none of them.
 */
export function withoutAnnotations<T extends JsonObject>(object: T, keys: readonly string[]): T {
  const metadata = objectOf(object.metadata);
  const held = objectOf(metadata?.annotations);
  if (held === undefined || !keys.some((key) => Object.hasOwn(held, key))) return object;
  const annotations = { ...held };
  for (const key of keys) Reflect.deleteProperty(annotations, key);
  return { ...object, metadata: { ...metadata, annotations } };
}
