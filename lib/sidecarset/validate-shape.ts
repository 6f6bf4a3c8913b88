/**
 * Type checks for the untrusted JSON that validation reads. The CRD schema
 * runs only after the webhooks, so any field may hold any type; each reader
 * reports a wrong type as a field error and hands back a usable value, so the
 * rules built on top never throw.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { isObject } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';

/** JSON null is how clients spell "unset" for optional fields, as Go decodes it. */
export function isUnset(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/** The items of a list field: [] when unset, [] plus an error when it is not a list. */
export function listAt(value: unknown, path: FieldPath, errs: FieldError[]): unknown[] {
  if (isUnset(value)) return [];
  if (Array.isArray(value)) return value;
  errs.push(path.invalid(value, 'must be a list'));
  return [];
}

/** Calls `fn` for each item of a list field that is an object; any other item is an error at its path. */
export function forEachObjectAt(
  value: unknown,
  path: FieldPath,
  errs: FieldError[],
  fn: (item: JsonObject, itemPath: FieldPath, index: number) => void,
): void {
  listAt(value, path, errs).forEach((item, i) => {
    const itemPath = path.index(i);
    if (isObject(item)) fn(item, itemPath, i);
    else errs.push(itemPath.invalid(item, 'must be an object'));
  });
}

/** An object field: undefined when unset, undefined plus an error when it is not an object. */
export function objectAt(value: unknown, path: FieldPath, errs: FieldError[]): JsonObject | undefined {
  if (isUnset(value)) return undefined;
  if (isObject(value)) return value;
  errs.push(path.invalid(value, 'must be an object'));
  return undefined;
}

/** A string field: undefined when unset, undefined plus an error when it is not a string. */
export function stringAt(value: unknown, path: FieldPath, errs: FieldError[]): string | undefined {
  if (isUnset(value)) return undefined;
  if (typeof value === 'string') return value;
  errs.push(path.invalid(value, 'must be a string'));
  return undefined;
}

/** An integer field: undefined when unset, undefined plus an error when it is not an integer. */
export function integerAt(value: unknown, path: FieldPath, errs: FieldError[]): number | undefined {
  if (isUnset(value)) return undefined;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  errs.push(path.invalid(value, 'must be an integer'));
  return undefined;
}

/** A map of string to string (annotations, labels): undefined when unset; entries of another type are errors. */
export function stringMapAt(value: unknown, path: FieldPath, errs: FieldError[]): Record<string, string> | undefined {
  const map = objectAt(value, path, errs);
  if (map === undefined) return undefined;
  const entries: [string, string][] = [];
  for (const [k, v] of Object.entries(map)) {
    if (typeof v === 'string') entries.push([k, v]);
    else errs.push(path.key(k).invalid(v, 'must be a string'));
  }
  // Object.fromEntries defines own properties: `out[k] = v` would drop a
  // `__proto__` key (an own key of a parsed body, as in Go's map) unseen.
  return Object.fromEntries(entries);
}

/**
 * The value when it is one of `allowed`; otherwise an Unsupported value error.
 * Unset counts as the empty string: validation sees defaulted objects, so an
 * unset enum field is as wrong as an unknown value (as in Kruise, whose Go
 * structs decode both to "").
 */
export function enumAt<T extends string>(value: unknown, allowed: readonly T[], path: FieldPath, errs: FieldError[]): T | undefined {
  const text = isUnset(value) ? '' : value;
  if ((allowed as readonly unknown[]).includes(text)) return text as T;
  errs.push(path.unsupported(text, allowed));
  return undefined;
}

/** Same as {@link enumAt}, but an unset field is fine (fields Kubernetes defaults later or leaves optional). */
export function optionalEnumAt<T extends string>(value: unknown, allowed: readonly T[], path: FieldPath, errs: FieldError[]): T | undefined {
  if (isUnset(value)) return undefined;
  return enumAt(value, allowed, path, errs);
}
