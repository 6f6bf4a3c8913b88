/**
 * The admission functions by name (their descriptors are in descriptors.ts),
 * and the request path every entry point shares: body -> decode -> handler ->
 * AdmissionReview (the uid set here, once) or failure.
 */
import { complete, type Verdict } from '../admission/responses.ts';
import { decodeReview, InvalidReviewError, reviewOf, type AdmissionRequest, type AdmissionReviewResponse } from '../admission/review.ts';
import { FUNCTION_DESCRIPTORS, type FunctionName, type ListedDescriptor } from './descriptors.ts';
import type { HandlerDeps } from './handler.ts';

export type AdmissionDescriptor = Extract<ListedDescriptor, { answers: 'AdmissionReview' }>;
export type AdmissionFunctionName = AdmissionDescriptor['name'];
export type ConversionFunctionName = Extract<ListedDescriptor, { answers: 'ConversionReview' }>['name'];

function answersAdmission(descriptor: ListedDescriptor): descriptor is AdmissionDescriptor {
  return descriptor.answers === 'AdmissionReview';
}

/**
 * The names of the functions that answer AdmissionReviews, in the
 * descriptors' order (the conversion function, which answers
 * ConversionReviews, is left out by its `answers`).
 */
export const ADMISSION_FUNCTIONS: readonly AdmissionFunctionName[] = FUNCTION_DESCRIPTORS.filter(answersAdmission).map((d) => d.name);

/** Every function's name, in the descriptors' order. */
export const FUNCTION_NAMES: readonly FunctionName[] = FUNCTION_DESCRIPTORS.map((d) => d.name);

const BY_NAME: ReadonlyMap<string, ListedDescriptor> = new Map(FUNCTION_DESCRIPTORS.map((d) => [d.name, d]));

/** The descriptor of a function. */
export function descriptorOf(name: FunctionName): ListedDescriptor {
  const descriptor = BY_NAME.get(name);
  // Unreachable for a FunctionName: every one has a descriptor.
  if (descriptor === undefined) throw new Error(`no function ${name}`);
  return descriptor;
}

export function isAdmissionFunction(name: string): name is AdmissionFunctionName {
  const descriptor = BY_NAME.get(name);
  return descriptor !== undefined && answersAdmission(descriptor);
}

/** Whether `name` is any function's (admission or conversion). */
export function isFunctionName(name: string): name is FunctionName {
  return BY_NAME.has(name);
}

/** The descriptor of an admission function. */
function admissionDescriptorOf(name: AdmissionFunctionName): AdmissionDescriptor {
  const descriptor = descriptorOf(name);
  // Unreachable for an AdmissionFunctionName.
  if (!answersAdmission(descriptor)) throw new Error(`${name} answers no AdmissionReview`);
  return descriptor;
}

/** The outcome of one review, ready for any entry point to render. */
export type ReviewOutcome = ReviewedOutcome | { kind: 'invalid'; message: string };

/** The outcome of a review of a decoded request. */
export type ReviewedOutcome =
  | { kind: 'review'; uid: string; outcome: Verdict['outcome']; review: AdmissionReviewResponse }
  /** The handler could not decide: HTTP 500/503, so failurePolicy applies. */
  | { kind: 'failed'; uid: string; status: 500 | 503; message: string };

/**
 * The AdmissionReview request in a decoded JSON body, or why it is none: not
 * an AdmissionReview request is HTTP 400, exit 2. `parsedFrom`: the text the
 * body was parsed from, when the caller has it (see decodeReview).
 */
export function admissionRequestOf(body: unknown, parsedFrom?: string): { request: AdmissionRequest } | { invalid: string } {
  try {
    return { request: decodeReview(body, parsedFrom) };
  } catch (error) {
    if (error instanceof InvalidReviewError) return { invalid: `not an AdmissionReview v1 request: ${error.message}` };
    throw error;
  }
}

/** Runs one admission function on a decoded JSON body. Never throws. */
export async function runReview(name: AdmissionFunctionName, body: unknown, deps: HandlerDeps): Promise<ReviewOutcome> {
  const decoded = admissionRequestOf(body);
  return 'invalid' in decoded ? { kind: 'invalid', message: decoded.invalid } : reviewRequest(name, decoded.request, deps);
}

/** Runs one admission function on a decoded request; the answer carries the request's uid. Never throws. */
export async function reviewRequest(name: AdmissionFunctionName, request: AdmissionRequest, deps: HandlerDeps): Promise<ReviewedOutcome> {
  const result = await admissionDescriptorOf(name).handler(request, deps);
  if (result.outcome === 'failed') {
    return { kind: 'failed', uid: request.uid, status: result.failure.status, message: result.failure.message };
  }
  return { kind: 'review', uid: request.uid, outcome: result.outcome, review: reviewOf(complete(request.uid, result)) };
}
