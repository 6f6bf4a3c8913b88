/**
 * The response vocabulary (controller-runtime style): allowed, denied,
 * patched. A webhook that cannot decide does not answer with a response at all
 * (see HandlerResult in lib/webhooks/handler.ts): an AdmissionReview with
 * `allowed: false` is a denial, whatever its code.
 */
import { AnswerTooLargeError, MAX_ANSWER_BYTES, smallestAnswerBytes } from './answer-size.ts';
import { createPatchSharingValues, patchText } from './json-patch.ts';
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
 * @throws AnswerTooLargeError when the patch alone makes the answer too large
 * to send (defaults for thousands of containers): said before the patch is
 * encoded and wrapped, which would cost more than building it.
 */
export function patched(uid: string, received: unknown, mutated: unknown, warnings: readonly string[] = []): AdmissionResponse {
  // The ops are encoded right here, so they may hold `mutated`'s own values.
  const ops = createPatchSharingValues(received, mutated);
  if (ops.length === 0) return allowed(uid, warnings);
  const text = patchText(ops);
  const answerBytes = smallestAnswerBytes(Buffer.byteLength(text));
  if (answerBytes > MAX_ANSWER_BYTES) throw new AnswerTooLargeError(answerBytes);
  return withWarnings({ uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(text, 'utf8').toString('base64') }, warnings);
}
