/**
 * How large an admission answer may be, and the smallest answer a JSON Patch
 * of a given size makes: so that an answer too large to send is refused
 * before it is built (encoded, wrapped, escaped), not after.
 */

/**
 * The largest review answer the HTTP handler sends. Lambda refuses a result over
 * 6 MB, counted as the result's JSON, where the body is a string escaped once
 * more; what remains is kept for the status code and headers around it.
 */
export const MAX_ANSWER_BYTES = 6 * 1024 * 1024 - 4 * 1024;

/**
 * The fewest bytes of an answer carrying a JSON Patch of `patchBytes`: its
 * base64 (four characters per three bytes), which nothing around it shortens.
 */
export function smallestAnswerBytes(patchBytes: number): number {
  return 4 * Math.ceil(patchBytes / 3);
}

/** The smallest patch whose answer is over {@link MAX_ANSWER_BYTES}. */
export const patchBytesOverAnswerLimit = 3 * Math.floor(MAX_ANSWER_BYTES / 4) + 1;

/**
 * The answer would be over {@link MAX_ANSWER_BYTES}: the call fails (500,
 * so failurePolicy decides) with the message the HTTP handler gives for an answer
 * it measured too large.
 */
export class AnswerTooLargeError extends Error {
  readonly atLeastBytes: number;

  constructor(atLeastBytes: number) {
    super(`the answer would be at least ${atLeastBytes} bytes, over the ${MAX_ANSWER_BYTES} a webhook answer may carry`);
    this.name = 'AnswerTooLargeError';
    this.atLeastBytes = atLeastBytes;
  }
}
