/**
 * The response vocabulary (controller-runtime style): allowed, denied,
 * patched, skipped. Each builder decides the outcome once, and none takes the
 * request's uid: {@link complete} sets it when the response is addressed to
 * its request, the one place that knows it (controller-runtime's
 * Response.Complete). A webhook that cannot decide does not answer with a
 * response at all (see HandlerResult in lib/webhooks/handler.ts): an
 * AdmissionReview with `allowed: false` is a denial, whatever its code.
 */
import { AnswerTooLargeError, MAX_ANSWER_BYTES, smallestAnswerBytes } from './answer-size.ts';
import { createPatchSharingValues, patchText, type JsonPatchOperation } from './json-patch.ts';
import type { StringTexts } from '../kube/json-text.ts';
import type { AdmissionResponse } from './review.ts';

/** Kubernetes truncates nothing, but users read warnings in a terminal; keep each short. */
const MAX_WARNING = 120;

/** A response before it is addressed to a request. */
export type Decision = Omit<AdmissionResponse, 'uid'>;

/** What a webhook decided: the response, and the outcome's name for logs. */
export interface Verdict {
  outcome: 'allowed' | 'patched' | 'denied' | 'skipped';
  response: Decision;
}

function withWarnings(response: Decision, warnings: readonly string[]): Decision {
  if (warnings.length === 0) return response;
  return {
    ...response,
    warnings: warnings.map((w) => (w.length > MAX_WARNING ? `${w.slice(0, MAX_WARNING - 3)}...` : w)),
  };
}

export function allowed(warnings: readonly string[] = []): Verdict {
  return { outcome: 'allowed', response: withWarnings({ allowed: true }, warnings) };
}

/** Allowed unchanged because the webhook has nothing to say about the request (see lib/webhooks/skip.ts). */
export function skipped(): Verdict {
  return { outcome: 'skipped', response: { allowed: true } };
}

/** A denial the user sees as `admission webhook "..." denied the request: <message>`. */
export function denied(code: number, message: string, reason?: string): Verdict {
  return {
    outcome: 'denied',
    response: {
      allowed: false,
      status: reason === undefined ? { code, message } : { code, message, reason },
    },
  };
}

/**
 * Allows with the JSON Patch that turns `received` into `mutated`; a plain
 * allow when they are equal.
 * @throws AnswerTooLargeError as {@link patchedWith}.
 */
export function patched(received: unknown, mutated: unknown, warnings: readonly string[] = []): Verdict {
  // The ops are encoded right here, so they may hold `mutated`'s own values.
  return patchedWith(createPatchSharingValues(received, mutated), warnings);
}

/**
 * Allows with the JSON Patch `ops`, encoded at once (so they may hold values
 * the caller goes on to share); a plain allow when there are none. `strings`
 * are texts the caller has for strings among the values (see patchText).
 * @throws AnswerTooLargeError when the patch alone makes the answer too large
 * to send (defaults for thousands of containers): said before the patch is
 * encoded and wrapped, which would cost more than building it.
 */
export function patchedWith(ops: readonly JsonPatchOperation[], warnings: readonly string[] = [], strings?: StringTexts): Verdict {
  if (ops.length === 0) return allowed(warnings);
  return { outcome: 'patched', response: withWarnings({ allowed: true, patchType: 'JSONPatch', patch: base64Patch(patchText(ops, strings)) }, warnings) };
}

/** A patch text up to this many UTF-16 units (3 UTF-8 bytes each at most) is encoded in {@link scratch}. */
const SCRATCH_UNITS = 16 * 1024;
/**
 * Where a usual patch is encoded to UTF-8 on its way to base64: one buffer
 * for every review rather than a new one each (a patch of an injection is
 * past the size Node pools, so each was a fresh allocation for the
 * collector). Written and read back in one synchronous step, so never shared.
 */
let scratch: Buffer | undefined;

/**
 * The base64 of `text` in UTF-8.
 * @throws AnswerTooLargeError when an answer carrying it would be too large (checked before encoding it).
 */
function base64Patch(text: string): string {
  if (text.length <= SCRATCH_UNITS) {
    scratch ??= Buffer.allocUnsafeSlow(3 * SCRATCH_UNITS);
    const length = scratch.write(text, 0, 'utf8');
    checkAnswerSize(length);
    return scratch.toString('base64', 0, length);
  }
  // Encoded once: its size is the encoding's.
  const bytes = Buffer.from(text, 'utf8');
  checkAnswerSize(bytes.length);
  return bytes.toString('base64');
}

function checkAnswerSize(patchBytes: number): void {
  const answerBytes = smallestAnswerBytes(patchBytes);
  if (answerBytes > MAX_ANSWER_BYTES) throw new AnswerTooLargeError(answerBytes);
}

/** The response to the request whose uid is `uid`: the uid is set here, once, first among the keys. */
export function complete(uid: string, verdict: Verdict): AdmissionResponse {
  return { uid, ...verdict.response };
}
