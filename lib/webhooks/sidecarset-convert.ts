/**
 * The sidecarset-convert function's handler: the CRD conversion webhook's
 * answer (lib/conversion/review.ts) to a ConversionReview the HTTP handler decoded.
 * It is the whole of the function: no cluster, no clock, no side effect.
 */
import { answerConversionReview, type ConversionAnswer } from '../conversion/review.ts';

/** Converts every object of the review to its desired version. Never throws. */
export function sidecarSetConvertHandler(review: unknown): ConversionAnswer {
  return answerConversionReview(review);
}
