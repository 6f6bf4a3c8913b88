import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { AnswerTooLargeError, MAX_ANSWER_BYTES } from '../../lib/admission/answer-size.ts';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import type { JsonPatchOperation } from '../../lib/admission/json-patch.ts';
import { allowed, complete, denied, patched, patchedWith, skipped } from '../../lib/admission/responses.ts';
import { decodeReview, InvalidReviewError, MAX_REVIEW_DEPTH, reviewOf } from '../../lib/admission/review.ts';
import { textNestsAtMost } from '../../lib/kube/json.ts';
import { decodeReviewText, podReview, sidecarSetReview } from '../../testkit/reviews.ts';

type Review = Record<string, unknown> & { request: Record<string, unknown> };

/** A SidecarSet review with one change; `undefined` removes the field. */
function edited(edit: (review: Review) => void): Review {
  const review = structuredClone(sidecarSetReview('uid-1')) as Review;
  edit(review);
  return review;
}

describe('decodeReview', () => {
  it('returns the request of a real API server review, every field as received', () => {
    const body = sidecarSetReview('2b8f6a1e-8a32-4d7e-b1f4-2c6d0f4f9a10');
    const request = decodeReview(structuredClone(body));
    expect(request).toEqual(body.request);
    expect(request.uid).toBe('2b8f6a1e-8a32-4d7e-b1f4-2c6d0f4f9a10');
    expect(request.operation).toBe('CREATE');
    expect(request.kind).toEqual({ group: 'apps.kruise.io', version: 'v1alpha1', kind: 'SidecarSet' });
  });

  it('keeps fields it does not know about', () => {
    const request = decodeReview(edited((r) => (r.request.futureField = { kept: [1, 2] })));
    expect(request.futureField).toEqual({ kept: [1, 2] });
  });

  it('accepts a pod CREATE with an empty name and a namespace', () => {
    const request = decodeReview(podReview('uid-pod'));
    expect(request).toMatchObject({ name: '', namespace: 'shop', operation: 'CREATE' });
  });

  it.each([
    { operation: 'DELETE', edit: (r: Review) => { r.request.operation = 'DELETE'; r.request.object = null; r.request.oldObject = {}; } },
    { operation: 'CONNECT', edit: (r: Review) => { r.request.operation = 'CONNECT'; delete r.request.object; } },
    { operation: 'UPDATE', edit: (r: Review) => { r.request.operation = 'UPDATE'; r.request.oldObject = { metadata: {} }; } },
  ])('accepts $operation with the objects the API server sends for it', ({ operation, edit }) => {
    expect(decodeReview(edited(edit)).operation).toBe(operation);
  });

  it.each([
    { why: 'the body is an array', body: [], message: 'the body is not a JSON object' },
    { why: 'the body is null', body: null, message: 'the body is not a JSON object' },
    { why: 'the body is a string', body: 'AdmissionReview', message: 'the body is not a JSON object' },
    { why: 'apiVersion is v1beta1', body: edited((r) => (r.apiVersion = 'admission.k8s.io/v1beta1')), message: 'apiVersion is "admission.k8s.io/v1beta1", expected "admission.k8s.io/v1"' },
    { why: 'apiVersion is missing', body: edited((r) => delete r.apiVersion), message: 'apiVersion is undefined, expected "admission.k8s.io/v1"' },
    { why: 'kind is another kind', body: edited((r) => (r.kind = 'TokenReview')), message: 'kind is "TokenReview", expected "AdmissionReview"' },
    { why: 'request is missing', body: edited((r) => delete (r as Record<string, unknown>).request), message: 'request is missing or not an object' },
    { why: 'request is a list', body: edited((r) => ((r as Record<string, unknown>).request = [])), message: 'request is missing or not an object' },
    { why: 'request.uid is missing', body: edited((r) => delete r.request.uid), message: 'request.uid is missing or not a non-empty string' },
    { why: 'request.uid is empty', body: edited((r) => (r.request.uid = '')), message: 'request.uid is missing or not a non-empty string' },
    { why: 'request.uid is a number', body: edited((r) => (r.request.uid = 7)), message: 'request.uid is missing or not a non-empty string' },
    { why: 'request.kind is missing', body: edited((r) => delete r.request.kind), message: 'request.kind must be an object with string group, version and kind' },
    { why: 'request.kind is a string', body: edited((r) => (r.request.kind = 'SidecarSet')), message: 'request.kind must be an object' },
    { why: 'request.kind has no group', body: edited((r) => (r.request.kind = { version: 'v1', kind: 'Pod' })), message: 'request.kind must be an object' },
    { why: 'request.operation is PATCH', body: edited((r) => (r.request.operation = 'PATCH')), message: 'request.operation is "PATCH", expected one of CREATE, UPDATE, DELETE, CONNECT' },
    { why: 'request.operation is lower case', body: edited((r) => (r.request.operation = 'create')), message: 'request.operation is "create"' },
    { why: 'request.operation is missing', body: edited((r) => delete r.request.operation), message: 'request.operation is undefined' },
    { why: 'request.subResource is a number', body: edited((r) => (r.request.subResource = 1)), message: 'request.subResource must be a string' },
    { why: 'request.name is an object', body: edited((r) => (r.request.name = {})), message: 'request.name must be a string' },
    { why: 'request.namespace is null', body: edited((r) => (r.request.namespace = null)), message: 'request.namespace must be a string' },
    { why: 'request.dryRun is a string', body: edited((r) => (r.request.dryRun = 'true')), message: 'request.dryRun must be a boolean' },
    { why: 'request.object is missing on CREATE', body: edited((r) => delete r.request.object), message: 'request.object must be an object for CREATE' },
    { why: 'request.object is a list on CREATE', body: edited((r) => (r.request.object = [])), message: 'request.object must be an object for CREATE' },
    {
      why: 'request.object is null on UPDATE',
      body: edited((r) => { r.request.operation = 'UPDATE'; r.request.object = null; }),
      message: 'request.object must be an object for UPDATE',
    },
    {
      why: 'request.oldObject is null on UPDATE',
      body: edited((r) => { r.request.operation = 'UPDATE'; r.request.oldObject = null; }),
      message: 'request.oldObject must be an object for UPDATE',
    },
  ])('refuses a body where $why, naming it', ({ body, message }) => {
    expect(() => decodeReview(body)).toThrow(InvalidReviewError);
    expect(() => decodeReview(body)).toThrow(message);
  });

  it('quotes at most a short piece of a huge received value', () => {
    const huge = 'v'.repeat(1_000_000);
    let error: unknown;
    try {
      decodeReview(edited((r) => (r.apiVersion = huge)));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidReviewError);
    const text = (error as Error).message;
    expect(text).toMatch(/^apiVersion is "v+\.\.\., expected "admission\.k8s\.io\/v1"$/);
    expect(text.length).toBeLessThan(200);
  });
});

describe('decodeReviewText', () => {
  it('decodes JSON text', () => {
    expect(decodeReviewText(JSON.stringify(sidecarSetReview('uid-t'))).uid).toBe('uid-t');
  });

  it('refuses text that is not JSON as an invalid review', () => {
    expect(() => decodeReviewText('{"apiVersion":')).toThrow(InvalidReviewError);
    expect(() => decodeReviewText('{"apiVersion":')).toThrow(/^the body is not JSON: /);
  });
});

describe('reviewOf', () => {
  it('wraps a response in the AdmissionReview v1 envelope and nothing else', () => {
    expect(reviewOf({ uid: 'u', allowed: true })).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u', allowed: true },
    });
  });
});

describe('response builders', () => {
  it('allowed is the uid and allowed: true, with no other key', () => {
    expect(complete('u1', allowed())).toStrictEqual({ uid: 'u1', allowed: true });
  });

  it('denied carries the status code, message and reason', () => {
    expect(complete('u2', denied(422, 'spec.containers[0].name: Invalid value', 'Invalid'))).toStrictEqual({
      uid: 'u2',
      allowed: false,
      status: { code: 422, message: 'spec.containers[0].name: Invalid value', reason: 'Invalid' },
    });
  });

  it('denied without a reason has no reason key', () => {
    expect(complete('u3', denied(403, 'no'))).toStrictEqual({ uid: 'u3', allowed: false, status: { code: 403, message: 'no' } });
  });

  it('patched with no change is a plain allow, without patchType or patch', () => {
    const object = { metadata: { name: 'a' }, spec: { x: [1, 2] } };
    expect(complete('u4', patched(object, structuredClone(object)))).toStrictEqual({ uid: 'u4', allowed: true });
  });

  it('patched with a change carries a JSONPatch that turns the received object into the mutated one', () => {
    const received = { metadata: { name: 'a' }, spec: { containers: [{ name: 'app' }] } };
    const mutated = { metadata: { name: 'a', annotations: { k: 'v' } }, spec: { containers: [{ name: 'side' }, { name: 'app' }] } };
    const response = complete('u5', patched(received, mutated));
    expect(response).toMatchObject({ uid: 'u5', allowed: true, patchType: 'JSONPatch' });
    expect(response.status).toBeUndefined();
    expect(applyPatch(received, decodePatch(response.patch!))).toEqual(mutated);
  });

  const short = 'w'.repeat(119);
  const exact = 'x'.repeat(120);
  const long = `${'y'.repeat(150)}TAIL`;

  it.each([
    { builder: 'allowed', build: (w: string[]) => complete('u', allowed(w)) },
    { builder: 'patched without a change', build: (w: string[]) => complete('u', patched({ a: 1 }, { a: 1 }, w)) },
    { builder: 'patched with a change', build: (w: string[]) => complete('u', patched({ a: 1 }, { a: 2 }, w)) },
  ])('$builder keeps warnings of up to 120 characters and cuts longer ones to 120', ({ build }) => {
    const warnings = build([short, exact, long]).warnings!;
    expect(warnings[0]).toBe(short);
    expect(warnings[1]).toBe(exact);
    expect(warnings[2]).toHaveLength(120);
    expect(warnings[2]).toBe(`${'y'.repeat(117)}...`);
  });

  it.each([
    { builder: 'allowed', verdict: () => allowed(), outcome: 'allowed' },
    { builder: 'skipped', verdict: () => skipped(), outcome: 'skipped' },
    { builder: 'denied', verdict: () => denied(403, 'no'), outcome: 'denied' },
    { builder: 'patched without a change', verdict: () => patched({ a: 1 }, { a: 1 }), outcome: 'allowed' },
    { builder: 'patched with a change', verdict: () => patched({ a: 1 }, { a: 2 }), outcome: 'patched' },
  ])('$builder decides the outcome $outcome, once, with no uid until the response is completed', ({ verdict, outcome }) => {
    expect(verdict().outcome).toBe(outcome);
    expect(verdict().response).not.toHaveProperty('uid');
    expect(Object.keys(complete('u', verdict()))[0]).toBe('uid');
  });

  it('adds no warnings key when there are none', () => {
    expect(Object.keys(complete('u', allowed([])))).toEqual(['uid', 'allowed']);
    expect(Object.keys(complete('u', patched({ a: 1 }, { a: 2 }, [])))).toEqual(['uid', 'allowed', 'patchType', 'patch']);
  });
});

describe('the depth of a review told from its text', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  /** A pod review whose object holds `extra` (JSON text) under `x`, as text and parsed. */
  const review = (extra: string) => {
    const text = JSON.stringify(podReview('uid-text', { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: { containers: [] } })).replace('"metadata":{}', `"metadata":{},"x":${extra}`);
    return { text, body: JSON.parse(text) as unknown };
  };

  it.each([
    ['no bracket', '1', 0, true],
    ['one object', '{}', 0, false],
    ['one object', '{}', 1, true],
    ['brackets inside strings count too', '["[{","{["]', 2, false],
    ['brackets inside strings count too', '["[{","{["]', 5, true],
    ['a thousand and one', nested(1001), 2002, true],
    ['a thousand and one', nested(1001), 1000, false],
  ])('%s: %s holds at most %i opening brackets: %s', (_what, text, limit, atMost) => {
    expect(textNestsAtMost(text, limit)).toBe(atMost);
  });

  it('is never wrong about the parsed value: at most `limit` brackets means at most `limit` levels', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 0, max: 8 }), (value, limit) => {
        const text = JSON.stringify(value);
        if (textNestsAtMost(text, limit)) expect(decodeDepth(JSON.parse(text))).toBeLessThanOrEqual(limit);
      }),
      { numRuns: 2000, seed: 20261202 },
    );
  });

  it('refuses a body nested past the limit whether or not its text is given', () => {
    const { text, body } = review(nested(MAX_REVIEW_DEPTH));
    expect(() => decodeReview(body, text)).toThrow(`the body nests deeper than ${MAX_REVIEW_DEPTH} levels`);
    expect(() => decodeReview(body)).toThrow(`the body nests deeper than ${MAX_REVIEW_DEPTH} levels`);
  });

  it('walks the body when its text holds more brackets than the limit, and decodes it when it is shallow', () => {
    // Thousands of brackets, all in strings or side by side: the text cannot tell, the walk can.
    const { text, body } = review(JSON.stringify({ s: '['.repeat(5000), a: Array.from({ length: 1500 }, () => ({})) }));
    expect(textNestsAtMost(text, MAX_REVIEW_DEPTH)).toBe(false);
    expect(decodeReview(body, text).uid).toBe('uid-text');
  });

  it('decodes a body nested exactly to the limit from its text', () => {
    // review -> request -> object -> x, then the arrays.
    const { text, body } = review(nested(MAX_REVIEW_DEPTH - 3));
    expect(textNestsAtMost(text, MAX_REVIEW_DEPTH)).toBe(false);
    expect(decodeReview(body, text).uid).toBe('uid-text');
  });
});

/** How many levels a JSON value nests (an object or array is one). */
function decodeDepth(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(decodeDepth));
}

describe('a JSON Patch encoded for the answer', () => {
  const ops = (text: string, count: number): JsonPatchOperation[] => Array.from({ length: count }, (_, i) => ({ op: 'add', path: `/a/${i}`, value: text }));

  it('is the base64 of the patch\'s UTF-8, short or long, ASCII or not, however often encoded', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' })), fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 300, max: 2000 })), (text, count) => {
        const patch = ops(text, count);
        const want = Buffer.from(JSON.stringify(patch), 'utf8').toString('base64');
        const first = patchedWith(patch).response.patch;
        // Another patch in between: each answer is its own text, never the last one's bytes.
        patchedWith(ops('other', 3));
        expect(first).toBe(want);
        expect(patchedWith(patch).response.patch).toBe(want);
      }),
      { numRuns: 300, seed: 20261202 },
    );
  });

  it('is encoded whole around 16,384 characters of patch text, of one-byte and of three-byte characters', () => {
    for (const unit of ['a', '\u20ac']) {
      for (const length of [16_300, 16_350, 16_360, 16_361, 16_362, 16_400, 49_200]) {
        const patch: JsonPatchOperation[] = [{ op: 'add', path: '/a', value: unit.repeat(Math.max(0, length - 35)) }];
        expect(patchedWith(patch).response.patch).toBe(Buffer.from(JSON.stringify(patch), 'utf8').toString('base64'));
      }
    }
  });

  it('refuses a patch whose answer would be too large before encoding it', () => {
    const patch: JsonPatchOperation[] = [{ op: 'add', path: '/a', value: 'x'.repeat(MAX_ANSWER_BYTES) }];
    expect(() => patchedWith(patch)).toThrow(AnswerTooLargeError);
  });
});
