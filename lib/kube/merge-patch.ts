/** RFC 7386 JSON Merge Patch, for `patchPodMetadata` entries with policy MergePatchJson. */
import { isObject } from './json.ts';

/** The result of merging `patch` into `target` (neither is modified). */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      Reflect.deleteProperty(out, key);
    } else {
      Object.defineProperty(out, key, {
        value: mergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return out;
}

/** JSON text with object keys sorted, as Go marshals the map that json-patch's MergePatch builds. */
export function stringifySorted(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (!isObject(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      Object.defineProperty(sorted, k, { value: v[k], enumerable: true, writable: true, configurable: true });
    }
    return sorted;
  });
}
