/**
 * Liveness, readiness and startup probes, as Kubernetes' validateProbe and
 * validateHandler check them: exactly one handler (validate-handlers.ts),
 * and no negative counts. A startup probe may leave out what the API server
 * defaults in the pod (successThreshold, httpGet path and scheme), where
 * Kruise, whose defaulting skips startup probes, denies it.
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import type { JsonObject } from '../kube/types.ts';
import { PROBE_HANDLERS, validateHandler } from './validate-handlers.ts';
import { integerAt } from './validate-shape.ts';

/** The container fields that hold a probe; the rules differ slightly between them. */
export type ProbeKind = 'livenessProbe' | 'readinessProbe' | 'startupProbe';
/** Every {@link ProbeKind}, in Kubernetes' field order. */
export const PROBE_KINDS: readonly ProbeKind[] = ['livenessProbe', 'readinessProbe', 'startupProbe'];

const NON_NEGATIVE = ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'] as const;

/** One probe of a container, at `path` (e.g. `spec.containers[0].livenessProbe`). */
export function validateProbe(probe: JsonObject, kind: ProbeKind, path: FieldPath, errs: FieldError[]): void {
  // Nothing defaults a startup probe before the pod reaches the API server,
  // which then fills its httpGet path and scheme.
  validateHandler(probe, PROBE_HANDLERS, path, errs, kind === 'startupProbe');

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
