/**
 * The conversion function's (sidecarset-convert) review: its ConversionReview
 * decoder and the conversion within the request's deadline, so authentication,
 * decoding, the log line and the metric are the admission functions' own. A
 * `result.status: Failure` answer counts as `denied`: the API server fails the
 * read or write that needed it, as it does for a denial.
 */
import { errorMessage } from '../errors.ts';
import { conversionReviewProblem, type ConversionAnswer } from '../conversion/review.ts';
import { MAX_ANSWER_BYTES } from '../admission/answer-size.ts';
import { isObject } from '../kube/json.ts';
import type { LazyConversionHandler } from './descriptors.ts';
import type { Decoder } from './request-decoder.ts';
import type { RequestOutcome } from './request-outcome.ts';
import { withinDeadline } from './request-deadline.ts';

/** The parsed body of a ConversionReview v1 request, with its uid. */
export interface ConversionRequestBody {
  uid: string;
  body: unknown;
}

/** The decoder for a ConversionReview: anything else is a 400 naming what is wrong. */
export const conversionRequestOf: Decoder<ConversionRequestBody> = (body) => {
  const problem = conversionReviewProblem(body);
  if (problem !== undefined) return { invalid: `not a ConversionReview v1 request: ${problem}` };
  const request = isObject(body) && isObject(body.request) ? body.request : {};
  return { request: { uid: String(request.uid), body } };
};

/** The request's outcome for a conversion answer: its review serialised, unless that is too large to send. */
export function conversionOutcomeOf(uid: string, answer: ConversionAnswer): RequestOutcome {
  const body = JSON.stringify(answer.review);
  // Lambda's limit counts the body escaped once more (see admission-review.ts): at most 6 bytes a UTF-16 unit.
  const bytes = body.length * 6 + 2 <= MAX_ANSWER_BYTES ? undefined : Buffer.byteLength(JSON.stringify(body));
  if (bytes !== undefined && bytes > MAX_ANSWER_BYTES) {
    return { kind: 'failed', uid, status: 500, message: `the answer would be ${bytes} bytes, over the ${MAX_ANSWER_BYTES} a webhook answer may carry` };
  }
  return { kind: 'answered', uid, verdict: answer.outcome === 'converted' ? 'allowed' : 'denied', body };
}

/** `handler`'s answer to the review, within the deadline `timeout` asks for. Never throws. */
export async function convertWithinDeadline(handler: LazyConversionHandler, request: ConversionRequestBody, timeout: string | undefined): Promise<RequestOutcome> {
  return withinDeadline<RequestOutcome>(timeout, async () => conversionOutcomeOf(request.uid, await handler(request.body)), {
    overran: (deadline) => ({ kind: 'failed', uid: request.uid, status: 503, message: `no conversion within the ${deadline} ms deadline` }),
    crashed: (error) => ({ kind: 'failed', uid: request.uid, status: 500, message: `internal error: ${errorMessage(error)}` }),
  });
}
