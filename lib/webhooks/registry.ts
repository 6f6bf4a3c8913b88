/**
 * The admission functions by name, and the request path every door shares:
 * body -> decode -> handler -> AdmissionReview or failure.
 */
import { decodeReview, InvalidReviewError, reviewOf, type AdmissionReviewResponse } from '../admission/review.ts';
import type { AdmissionHandler, HandlerDeps, HandlerResult } from './handler.ts';
import { podInjectHandler } from './pod-inject.ts';
import { sidecarSetDefaultHandler } from './sidecarset-default.ts';
import { sidecarSetValidateHandler } from './sidecarset-validate.ts';

export const ADMISSION_FUNCTIONS = ['sidecarset-default', 'sidecarset-validate', 'pod-inject'] as const;
export type AdmissionFunctionName = (typeof ADMISSION_FUNCTIONS)[number];

export const admissionHandlers: Readonly<Record<AdmissionFunctionName, AdmissionHandler>> = {
  'sidecarset-default': sidecarSetDefaultHandler,
  'sidecarset-validate': sidecarSetValidateHandler,
  'pod-inject': podInjectHandler,
};

export function isAdmissionFunction(name: string): name is AdmissionFunctionName {
  return (ADMISSION_FUNCTIONS as readonly string[]).includes(name);
}

/** The outcome of one review, ready for any door to render. */
export type ReviewOutcome =
  | { kind: 'review'; uid: string; outcome: Exclude<HandlerResult['outcome'], 'failed'>; review: AdmissionReviewResponse }
  /** Not an AdmissionReview request: HTTP 400, exit 2. */
  | { kind: 'invalid'; message: string }
  /** The handler could not decide: HTTP 500/503, so failurePolicy applies. */
  | { kind: 'failed'; uid: string; status: 500 | 503; message: string };

/** Runs one admission function on a decoded JSON body. Never throws. */
export async function runReview(name: AdmissionFunctionName, body: unknown, deps: HandlerDeps): Promise<ReviewOutcome> {
  let request;
  try {
    request = decodeReview(body);
  } catch (error) {
    if (error instanceof InvalidReviewError) return { kind: 'invalid', message: `not an AdmissionReview v1 request: ${error.message}` };
    throw error;
  }
  const result = await admissionHandlers[name](request, deps);
  if (result.kind === 'failure') {
    return { kind: 'failed', uid: request.uid, status: result.failure.status, message: result.failure.message };
  }
  return { kind: 'review', uid: request.uid, outcome: result.outcome, review: reviewOf(result.response) };
}
