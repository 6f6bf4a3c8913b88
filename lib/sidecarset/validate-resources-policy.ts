/**
 * OpenKruise 1.9's checks of `resourcesPolicy` and `shareVolumeDevicePolicy`
 * on a sidecar, with Kruise's messages. Paths are the fields' own
 * (`spec.containers[0].resourcesPolicy.targetContainersNameRegex`); Kruise
 * reports them at `spec[0].resourcesPolicy...` for both lists.
 *
 * Kruise's webhook checks: not with `resources`; on an init container only
 * for a native sidecar; a non-empty, compilable pattern; at least one of
 * `limits` and `requests`; each expression evaluated with its variable (`cpu`
 * for the cpu fields, `memory` for the memory ones) bound to the number 1.
 * The CRD's schema adds `targetContainersMode` (required, `sum` or `max`),
 * `resourcesExpr` (required) and the `enabled`/`disabled` type of
 * `shareVolumeDevicePolicy`; they are checked here too, as the API server
 * words them, since a schema may not reach every copy of the set.
 * Stricter than Kruise: the pattern's size is bounded (target-regex.ts).
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import type { JsonObject } from '../kube/types.ts';
import { evaluateResourceExpr } from './resources-expr.ts';
import { targetRegex } from './target-regex.ts';
import { SHARE_VOLUME_POLICIES, TARGET_CONTAINERS_MODES } from './types.ts';
import { enumAt, isUnset, objectAt, optionalEnumAt, stringAt } from './validate-shape.ts';

/** Kruise's validateResourceExpression: the expression evaluated with its variable as the number 1. */
function validateExpression(value: unknown, variable: 'cpu' | 'memory', path: FieldPath, errs: FieldError[]): void {
  const expr = stringAt(value, path, errs);
  if (expr === undefined || expr === '') return;
  const result = evaluateResourceExpr(expr, new Map([[variable, { kind: 'number', n: 1 }]]));
  if (!result.ok) errs.push(path.invalid(expr, `invalid expression: ${result.error}`));
}

function validateResourcesExpr(policy: JsonObject, path: FieldPath, errs: FieldError[]): void {
  if (isUnset(policy.resourcesExpr)) {
    errs.push(path.required());
    return;
  }
  const exprs = objectAt(policy.resourcesExpr, path, errs);
  if (exprs === undefined) return;
  if (isUnset(exprs.limits) && isUnset(exprs.requests)) {
    errs.push(path.invalid(exprs, 'at least one of limits or requests must be configured'));
    return;
  }
  for (const kind of ['limits', 'requests'] as const) {
    const fields = objectAt(exprs[kind], path.child(kind), errs);
    if (fields === undefined) continue;
    validateExpression(fields.cpu, 'cpu', path.child(kind).child('cpu'), errs);
    validateExpression(fields.memory, 'memory', path.child(kind).child('memory'), errs);
  }
}

function hasResourceList(c: JsonObject): boolean {
  const resources = c.resources;
  if (typeof resources !== 'object' || resources === null || Array.isArray(resources)) return false;
  const nonEmpty = (list: unknown): boolean => typeof list === 'object' && list !== null && Object.keys(list).length > 0;
  return nonEmpty((resources as JsonObject).limits) || nonEmpty((resources as JsonObject).requests);
}

/**
 * The 1.9 fields of one sidecar at `path` (`spec.containers[i]` or
 * `spec.initContainers[i]`).
 */
export function validateResourcesPolicy(c: JsonObject, path: FieldPath, init: boolean, errs: FieldError[]): void {
  const devicePolicy = objectAt(c.shareVolumeDevicePolicy, path.child('shareVolumeDevicePolicy'), errs);
  optionalEnumAt(devicePolicy?.type, SHARE_VOLUME_POLICIES, path.child('shareVolumeDevicePolicy').child('type'), errs);

  const p = path.child('resourcesPolicy');
  const policy = objectAt(c.resourcesPolicy, p, errs);
  if (policy === undefined) return;
  if (init && c.restartPolicy !== 'Always') {
    errs.push(p.invalid(policy, 'resourcesPolicy is only supported for containers with RestartPolicy Always'));
  }
  if (hasResourceList(c)) {
    errs.push(p.invalid(policy, 'resourcesPolicy and resources cannot be configured together'));
    return;
  }
  if (isUnset(policy.targetContainersMode)) errs.push(p.child('targetContainersMode').required());
  else enumAt(policy.targetContainersMode, TARGET_CONTAINERS_MODES, p.child('targetContainersMode'), errs);

  const regexPath = p.child('targetContainersNameRegex');
  const pattern = stringAt(policy.targetContainersNameRegex, regexPath, errs);
  if (isUnset(policy.targetContainersNameRegex) || pattern === '') {
    errs.push(regexPath.required('invalid empty regex'));
  } else if (pattern !== undefined) {
    const regex = targetRegex(pattern);
    if (!regex.ok) errs.push(regexPath.invalid(pattern, `invalid regex pattern: ${regex.error}`));
  }
  validateResourcesExpr(policy, p.child('resourcesExpr'), errs);
}
