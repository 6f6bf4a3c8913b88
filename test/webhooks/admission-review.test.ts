/**
 * The HTTP handler's review part for the admission functions: the function's answer
 * within the deadline, addressed to the request, serialised, and refused
 * when it is too large to send.
 */
import { describe, expect, it } from '@jest/globals';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { MAX_ANSWER_BYTES } from '../../lib/admission/answer-size.ts';
import { reviewOf } from '../../lib/admission/review.ts';
import type { Clock, SidecarSetSource } from '../../lib/ports.ts';
import { answerOf, reviewWithinDeadline } from '../../lib/webhooks/admission-review.ts';
import { MIN_DEADLINE_MS } from '../../lib/webhooks/timeout.ts';
import { NOW, sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { decodeReviewText, podReview } from '../../testkit/reviews.ts';

const clock: Clock = { now: () => NOW };

function deps(sidecarSets: SidecarSetSource = memorySidecarSetSource([sidecarSet('log-agent')]), at: Clock = clock) {
  return { sidecarSets, namespaces: memoryNamespaceSource([]), clock: at };
}

const request = (uid: string) => decodeReviewText(JSON.stringify(podReview(uid)));

describe('answerOf', () => {
  it('serialises a decision, as it is, with its verdict and uid', () => {
    const review = reviewOf({ uid: 'u1', allowed: true });
    expect(answerOf({ kind: 'review', uid: 'u1', outcome: 'allowed', review })).toEqual({ kind: 'answered', uid: 'u1', verdict: 'allowed', body: JSON.stringify(review) });
  });

  it('passes a failure through', () => {
    const failed = { kind: 'failed', uid: 'u2', status: 503, message: 'down' } as const;
    expect(answerOf(failed)).toEqual(failed);
  });

  it('refuses an answer over the limit once escaped for the platform, with its size, as a failure (500)', () => {
    // Each control character is 6 bytes in the body and 7 once the body is escaped again.
    const warnings = ['\u0001'.repeat(Math.ceil(MAX_ANSWER_BYTES / 7) + 1)];
    const review = reviewOf({ uid: 'u3', allowed: true, warnings });
    const bytes = Buffer.byteLength(JSON.stringify(JSON.stringify(review)));
    expect(answerOf({ kind: 'review', uid: 'u3', outcome: 'allowed', review })).toEqual({
      kind: 'failed',
      uid: 'u3',
      status: 500,
      message: `the answer would be ${bytes} bytes, over the ${MAX_ANSWER_BYTES} a webhook answer may carry`,
    });
  });

  it('keeps an answer whose characters are many but whose escaped size fits', () => {
    const warnings = ['a'.repeat(Math.floor(MAX_ANSWER_BYTES / 6) + 10)];
    const review = reviewOf({ uid: 'u4', allowed: true, warnings });
    expect(answerOf({ kind: 'review', uid: 'u4', outcome: 'allowed', review })).toMatchObject({ kind: 'answered', uid: 'u4' });
  });
});

describe('reviewWithinDeadline', () => {
  it('answers with the function\'s decision addressed to the request', async () => {
    const outcome = await reviewWithinDeadline('pod-inject', request('uid-p'), deps(), '10s');
    expect(outcome).toMatchObject({ kind: 'answered', uid: 'uid-p', verdict: 'patched' });
    expect(JSON.parse((outcome as { body: string }).body).response.uid).toBe('uid-p');
  });

  it('answers 503 with the request\'s uid when the function does not decide in time', async () => {
    const never: SidecarSetSource = { list: () => new Promise(() => undefined) };
    await expect(reviewWithinDeadline('pod-inject', request('uid-late'), deps(never), '1s')).resolves.toEqual({
      kind: 'failed',
      uid: 'uid-late',
      status: 503,
      message: `no decision within the ${MIN_DEADLINE_MS} ms deadline`,
    });
  });

  it('answers 500 naming the error when the function throws', async () => {
    const broken: Clock = {
      now: () => {
        throw new Error('clock is broken');
      },
    };
    await expect(reviewWithinDeadline('pod-inject', request('uid-crash'), deps(undefined, broken), '10s')).resolves.toEqual({
      kind: 'failed',
      uid: 'uid-crash',
      status: 500,
      message: 'internal error: clock is broken',
    });
  });
});
