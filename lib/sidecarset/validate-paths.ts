/**
 * Path and file-mode rules shared by volume sources, volume mounts and
 * security contexts (Kubernetes 1.30's validateLocalDescendingPath,
 * ValidateLocalNonReservedPath, validatePathNoBacksteps, validateKeyToPath),
 * with its messages.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import type { JsonObject } from '../kube/types.ts';
import { forEachObjectAt, integerAt, stringAt } from './validate-shape.ts';

const FILE_MODE_MESSAGE = 'must be a number between 0 and 0777 (octal), both inclusive';
const MAX_FILE_MODE = 0o777;

/** A string field as Go's struct holds it: "" when unset or (reported) of another type. */
export function text(value: unknown, path: FieldPath, errs: FieldError[]): string {
  return stringAt(value, path, errs) ?? '';
}

/** validatePathNoBacksteps: no `..` element. */
export function noBackstepErrors(target: string, path: FieldPath, errs: FieldError[]): void {
  if (target.split('/').includes('..')) errs.push(path.invalid(target, "must not contain '..'"));
}

/** validateLocalDescendingPath: relative, and no `..` element (subPath, gitRepo directory, seccomp profile). */
export function validateLocalDescendingPath(target: string, path: FieldPath, errs: FieldError[]): void {
  if (target.startsWith('/')) errs.push(path.invalid(target, 'must be a relative path'));
  noBackstepErrors(target, path, errs);
}

/** ValidateLocalNonReservedPath: a descending path that does not start with `..` either. */
export function validateLocalNonReservedPath(target: string, path: FieldPath, errs: FieldError[]): void {
  validateLocalDescendingPath(target, path, errs);
  if (target.startsWith('..') && !target.startsWith('../')) errs.push(path.invalid(target, "must not start with '..'"));
}

/** A file mode: 0 to 0777. */
export function validateFileMode(value: unknown, path: FieldPath, errs: FieldError[]): void {
  const mode = integerAt(value, path, errs);
  if (mode !== undefined && (mode < 0 || mode > MAX_FILE_MODE)) errs.push(path.invalid(mode, FILE_MODE_MESSAGE));
}

/** validateKeyToPath: one item of a secret or configMap volume or projection. */
export function validateKeyToPath(item: JsonObject, p: FieldPath, errs: FieldError[]): void {
  if (text(item.key, p.child('key'), errs) === '') errs.push(p.child('key').required());
  const target = text(item.path, p.child('path'), errs);
  if (target === '') errs.push(p.child('path').required());
  validateLocalNonReservedPath(target, p.child('path'), errs);
  validateFileMode(item.mode, p.child('mode'), errs);
}

export function validateKeyToPathItems(value: unknown, path: FieldPath, errs: FieldError[]): void {
  forEachObjectAt(value, path, errs, (item, p) => {
    validateKeyToPath(item, p, errs);
  });
}
