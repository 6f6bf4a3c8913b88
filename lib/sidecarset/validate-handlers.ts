/**
 * The actions shared by probes and lifecycle hooks (Kubernetes 1.30's
 * validateHandler): exactly one of exec, httpGet, tcpSocket, grpc (probes
 * only) or sleep (hooks only), each well formed.
 *
 * Go reads ports into an IntOrString or int32 first, so an unset port is 0
 * and reported as out of range, as the API server reports it.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import type { JsonObject } from '../kube/types.ts';
import { portNameErrors, portNumberErrors } from './validate-ports.ts';
import { forEachObjectAt, integerAt, isUnset, listAt, objectAt, stringAt } from './validate-shape.ts';

export type HandlerKind = 'exec' | 'httpGet' | 'tcpSocket' | 'grpc' | 'sleep';
/** The handlers a probe may use, in Kubernetes' order. */
export const PROBE_HANDLERS: readonly HandlerKind[] = ['exec', 'httpGet', 'tcpSocket', 'grpc'];
/** The handlers a lifecycle hook may use, in Kubernetes' order. */
export const HOOK_HANDLERS: readonly HandlerKind[] = ['exec', 'httpGet', 'tcpSocket', 'sleep'];

const SCHEMES = ['HTTP', 'HTTPS'] as const;
const HEADER_NAME = /^[-A-Za-z0-9]+$/;
const HEADER_NAME_MESSAGE =
  "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')";

/** ValidatePortNumOrName on what Go decoded: a number (unset is 0) or a port name. */
function validatePort(value: unknown, path: FieldPath, errs: FieldError[]): void {
  if (typeof value === 'string') {
    for (const msg of portNameErrors(value)) errs.push(path.invalid(value, msg));
    return;
  }
  const port = isUnset(value) ? 0 : integerAt(value, path, errs);
  if (port === undefined) return;
  for (const msg of portNumberErrors(port)) errs.push(path.invalid(port, msg));
}

/**
 * `unsetDefaulted`: an empty path or scheme is allowed because the API
 * server fills them in the pod (SetDefaults_HTTPGetAction: "/" and "HTTP").
 * Set for startup probes, which neither Kruise's defaulting nor ours fills
 * (the hash depends on it); Kruise then denies them, this project does not
 * (docs/DIFFERENCES-FROM-KRUISE-1.9.md).
 */
function validateHttpGet(body: JsonObject, path: FieldPath, errs: FieldError[], unsetDefaulted: boolean): void {
  const httpPath = stringAt(body.path, path.child('path'), errs) ?? '';
  if (httpPath === '' && !unsetDefaulted) errs.push(path.child('path').required());
  validatePort(body.port, path.child('port'), errs);
  const scheme = stringAt(body.scheme, path.child('scheme'), errs) ?? '';
  if (!(SCHEMES as readonly string[]).includes(scheme) && !(scheme === '' && unsetDefaulted)) errs.push(path.child('scheme').unsupported(scheme, SCHEMES));
  forEachObjectAt(body.httpHeaders, path.child('httpHeaders'), errs, (header, p) => {
    const name = stringAt(header.name, p.child('name'), errs) ?? '';
    // Kubernetes reports header names on the list, without the index.
    if (!HEADER_NAME.test(name)) errs.push(path.child('httpHeaders').invalid(name, HEADER_NAME_MESSAGE));
  });
}

function validateSleep(body: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const seconds = isUnset(body.seconds) ? 0 : integerAt(body.seconds, path.child('seconds'), errs);
  // Kubernetes also bounds the sleep by the pod's grace period, which a
  // SidecarSet cannot know; see docs/DIFFERENCES-FROM-KRUISE-1.9.md.
  if (seconds !== undefined && seconds <= 0) errs.push(path.invalid(seconds, 'must be greater than 0'));
}

function validateBody(kind: HandlerKind, body: JsonObject, path: FieldPath, errs: FieldError[], unsetDefaulted: boolean): void {
  switch (kind) {
    case 'exec':
      if (listAt(body.command, path.child('command'), errs).length === 0) errs.push(path.child('command').required());
      break;
    case 'httpGet':
      validateHttpGet(body, path, errs, unsetDefaulted);
      break;
    case 'tcpSocket':
      validatePort(body.port, path.child('port'), errs);
      break;
    case 'grpc':
      // grpc.port is a plain int32, never a name.
      if (typeof body.port === 'string') errs.push(path.child('port').invalid(body.port, 'must be an integer'));
      else validatePort(body.port, path.child('port'), errs);
      break;
    case 'sleep':
      validateSleep(body, path, errs);
  }
}

/**
 * validateHandler for the probe or hook `holder` at `path`, among the
 * `allowed` handler kinds. `unsetDefaulted`: an httpGet may leave out what
 * the API server defaults in the pod (see validateHttpGet).
 */
export function validateHandler(holder: JsonObject, allowed: readonly HandlerKind[], path: FieldPath, errs: FieldError[], unsetDefaulted = false): void {
  let found = 0;
  for (const kind of allowed) {
    if (isUnset(holder[kind])) continue;
    const p = path.child(kind);
    if (found > 0) {
      errs.push(p.forbidden('may not specify more than 1 handler type'));
      continue;
    }
    found++;
    const body = objectAt(holder[kind], p, errs);
    if (body) validateBody(kind, body, p, errs, unsetDefaulted);
  }
  if (found === 0) errs.push(path.required('must specify a handler type'));
}

/** validateLifecycle: each hook set is a valid handler. */
export function validateLifecycle(lifecycle: JsonObject, path: FieldPath, errs: FieldError[]): void {
  for (const hook of ['postStart', 'preStop'] as const) {
    const handler = objectAt(lifecycle[hook], path.child(hook), errs);
    if (handler) validateHandler(handler, HOOK_HANDLERS, path.child(hook), errs);
  }
}
