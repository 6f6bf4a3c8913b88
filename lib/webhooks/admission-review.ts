/**
 * An admission function's review: the decoded AdmissionReview answered within
 * its deadline, and the answer serialised, or failed when too large to send.
 */
import { errorMessage } from '../errors.ts';
import { MAX_ANSWER_BYTES } from '../admission/answer-size.ts';
import type { AdmissionRequest } from '../admission/review.ts';
import { admissionReviewText } from '../admission/review-text.ts';
import type { HandlerDeps } from './handler.ts';
import type { RequestOutcome } from './request-outcome.ts';
import { withinDeadline } from './request-deadline.ts';
import { reviewRequest, type AdmissionFunctionName, type ReviewedOutcome } from './registry.ts';

/** `fn`'s answer to `review`, within the deadline `timeout` asks for. Never throws. */
export async function reviewWithinDeadline(fn: AdmissionFunctionName, review: AdmissionRequest, deps: Omit<HandlerDeps, 'signal'>, timeout: string | undefined): Promise<RequestOutcome> {
  const reviewed = await withinDeadline<ReviewedOutcome>(timeout, (signal) => reviewRequest(fn, review, { ...deps, signal }), {
    overran: (deadline) => ({ kind: 'failed', uid: review.uid, status: 503, message: `no decision within the ${deadline} ms deadline` }),
    // reviewRequest does not throw; a handler that does still gets an answer.
    crashed: (error) => ({ kind: 'failed', uid: review.uid, status: 500, message: `internal error: ${errorMessage(error)}` }),
  });
  return answerOf(reviewed);
}

/** The request's outcome for a reviewed request: its AdmissionReview serialised, unless that is over {@link MAX_ANSWER_BYTES}. */
export function answerOf(reviewed: ReviewedOutcome): RequestOutcome {
  if (reviewed.kind === 'failed') return reviewed;
  const body = admissionReviewText(reviewed.review);
  // Past Lambda's limit the platform fails the call with its own error; failing
  // here says why, the same on Lambda and the server. Escaped once more, a UTF-16
  // unit is at most 6 bytes (\u001f), so only large answers pay the exact count.
  const bytes = body.length * 6 + 2 <= MAX_ANSWER_BYTES ? undefined : Buffer.byteLength(JSON.stringify(body));
  if (bytes !== undefined && bytes > MAX_ANSWER_BYTES) {
    return { kind: 'failed', uid: reviewed.uid, status: 500, message: `the answer would be ${bytes} bytes, over the ${MAX_ANSWER_BYTES} a webhook answer may carry` };
  }
  return { kind: 'answered', uid: reviewed.uid, verdict: reviewed.outcome, body };
}
