import { describe, expect, it } from '@jest/globals';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { allowed, complete, denied, patched, skipped } from '../../lib/admission/responses.ts';
import { decodeReview, InvalidReviewError, reviewOf } from '../../lib/admission/review.ts';
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
