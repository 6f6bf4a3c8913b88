/**
 * The response vocabulary (controller-runtime style): allowed, denied,
 * patched. A webhook that cannot decide does not answer with a response at all
 * (see HandlerResult in lib/webhooks/handler.ts): an AdmissionReview with
 * `allowed: false` is a denial, whatever its code.
 */
import { createPatchSharingValues, encodePatch } from './json-patch.ts';
import type { AdmissionResponse } from './review.ts';

/** Kubernetes truncates nothing, but users read warnings in a terminal; keep each short. */
const MAX_WARNING = 120;

function withWarnings(response: AdmissionResponse, warnings: readonly string[]): AdmissionResponse {
  if (warnings.length === 0) return response;
  return {
    ...response,
    warnings: warnings.map((w) => (w.length > MAX_WARNING ? `${w.slice(0, MAX_WARNING - 3)}...` : w)),
  };
}

export function allowed(uid: string, warnings: readonly string[] = []): AdmissionResponse {
  return withWarnings({ uid, allowed: true }, warnings);
}

/** A denial the user sees as `admission webhook "..." denied the request: <message>`. */
export function denied(uid: string, code: number, message: string, reason?: string): AdmissionResponse {
  return {
    uid,
    allowed: false,
    status: reason === undefined ? { code, message } : { code, message, reason },
  };
}

/**
 * Allows with the JSON Patch that turns `received` into `mutated`; a plain
 * allow when they are equal.
 */
export function patched(uid: string, received: unknown, mutated: unknown, warnings: readonly string[] = []): AdmissionResponse {
  // The ops are encoded right here, so they may hold `mutated`'s own values.
  const ops = createPatchSharingValues(received, mutated);
  if (ops.length === 0) return allowed(uid, warnings);
  return withWarnings({ uid, allowed: true, patchType: 'JSONPatch', patch: encodePatch(ops) }, warnings);
}
