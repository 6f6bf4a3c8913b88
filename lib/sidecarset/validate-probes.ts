/**
 * Liveness, readiness and startup probes, as Kubernetes' validateProbe and
 * validateHandler check them: exactly one handler, a usable port, and no
 * negative counts.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import type { JsonObject } from '../kube/types.ts';
import { validatePortNumOrName } from './validate-ports.ts';
import { integerAt, isUnset, listAt, objectAt, optionalEnumAt } from './validate-shape.ts';

/** The container fields that hold a probe; the rules differ slightly between them. */
export type ProbeKind = 'livenessProbe' | 'readinessProbe' | 'startupProbe';
/** Every {@link ProbeKind}, in Kubernetes' field order. */
export const PROBE_KINDS: readonly ProbeKind[] = ['livenessProbe', 'readinessProbe', 'startupProbe'];

const HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;
const NON_NEGATIVE = ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'] as const;

function validateHandlerBody(handler: string, body: JsonObject, path: FieldPath, errs: FieldError[]): void {
  switch (handler) {
    case 'exec':
      if (listAt(body.command, path.child('command'), errs).length === 0) errs.push(path.child('command').required());
      break;
    case 'httpGet':
      validatePortNumOrName(body.port, path.child('port'), errs);
      optionalEnumAt(body.scheme, ['HTTP', 'HTTPS'], path.child('scheme'), errs);
      break;
    case 'tcpSocket':
      validatePortNumOrName(body.port, path.child('port'), errs);
      break;
    default: {
      // grpc.port is a plain int32, never a name.
      const port = integerAt(body.port, path.child('port'), errs);
      if (isUnset(body.port)) errs.push(path.child('port').required());
      else if (port !== undefined && (port < 1 || port > 65535)) errs.push(path.child('port').invalid(port, 'must be between 1 and 65535, inclusive'));
    }
  }
}

/** One probe of a container, at `path` (e.g. `spec.containers[0].livenessProbe`). */
export function validateProbe(probe: JsonObject, kind: ProbeKind, path: FieldPath, errs: FieldError[]): void {
  const present = HANDLERS.filter((h) => !isUnset(probe[h]));
  if (present.length === 0) errs.push(path.required('must specify a handler type'));
  present.forEach((handler, i) => {
    const hp = path.child(handler);
    if (i > 0) errs.push(hp.forbidden('may not specify more than 1 handler type'));
    const body = objectAt(probe[handler], hp, errs);
    if (body) validateHandlerBody(handler, body, hp, errs);
  });

  for (const key of NON_NEGATIVE) {
    const n = integerAt(probe[key], path.child(key), errs);
    if (n !== undefined && n < 0) errs.push(path.child(key).invalid(n, 'must be greater than or equal to 0'));
  }
  // Only checked when set: Kubernetes defaults an unset successThreshold to 1.
  const success = integerAt(probe.successThreshold, path.child('successThreshold'), []);
  if (kind !== 'readinessProbe' && success !== undefined && success !== 1) {
    errs.push(path.child('successThreshold').invalid(success, 'must be 1'));
  }

  const grace = integerAt(probe.terminationGracePeriodSeconds, path.child('terminationGracePeriodSeconds'), errs);
  if (grace !== undefined && kind === 'readinessProbe') {
    errs.push(path.child('terminationGracePeriodSeconds').invalid(grace, 'must not be set for readinessProbes'));
  } else if (grace !== undefined && grace <= 0) {
    errs.push(path.child('terminationGracePeriodSeconds').invalid(grace, 'must be greater than 0'));
  }
}
