/**
 * Decoding the request: method, content type and size before the body is
 * read, then JSON, then the function's own decoder, which is a parameter so
 * another kind of review is decoded the same way.
 */
import { describe, expect, it } from '@jest/globals';
import { decodeRequest, type Decoder, type HttpRequest } from '../../lib/webhooks/request-decoder.ts';
import { admissionRequestOf } from '../../lib/webhooks/registry.ts';
import { podReview } from '../../testkit/reviews.ts';

function request(body: string, overrides: Partial<HttpRequest> = {}): HttpRequest {
  return { method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body, bodyBytes: Buffer.byteLength(body), ...overrides };
}

/** A request whose body may not be read: reading it fails the test. */
function unreadable(overrides: Partial<HttpRequest>): HttpRequest {
  const base = request('', { bodyBytes: 10, ...overrides });
  return Object.defineProperty({ ...base }, 'body', {
    get() {
      throw new Error('the body was read');
    },
  });
}

/** A decoder for a review other than an AdmissionReview. */
const conversionReview: Decoder<{ uid: string }> = (body) => {
  const review = body as { kind?: unknown; request?: { uid?: unknown } };
  return review.kind === 'ConversionReview' && typeof review.request?.uid === 'string' ? { request: { uid: review.request.uid } } : { invalid: 'not a ConversionReview' };
};

describe('decodeRequest', () => {
  it.each([
    ['a method other than POST', { method: 'GET' }, { kind: 'rejected', why: 'method', method: 'GET' }],
    ['no content type', { headers: {} }, { kind: 'rejected', why: 'content-type' }],
    ['another content type', { headers: { 'content-type': 'text/json' } }, { kind: 'rejected', why: 'content-type' }],
    ['a body over the limit', { bodyBytes: 11 }, { kind: 'rejected', why: 'too-large', bytes: 11, limitBytes: 10 }],
  ] as const)('refuses %s without reading the body', (_why, overrides, expected) => {
    expect(decodeRequest(unreadable(overrides), 10, admissionRequestOf)).toEqual(expected);
  });

  it('checks the method first, then the content type, then the size', () => {
    expect(decodeRequest(unreadable({ method: 'PUT', headers: {}, bodyBytes: 99 }), 10, admissionRequestOf)).toMatchObject({ why: 'method' });
    expect(decodeRequest(unreadable({ headers: {}, bodyBytes: 99 }), 10, admissionRequestOf)).toMatchObject({ why: 'content-type' });
  });

  it('takes application/json with parameters, in any case', () => {
    const body = JSON.stringify(podReview('uid-ct'));
    const opened = decodeRequest(request(body, { headers: { 'content-type': ' Application/JSON ; charset=utf-8' } }), 1 << 20, admissionRequestOf);
    expect(opened).toMatchObject({ request: { uid: 'uid-ct' } });
  });

  it('refuses a body that is not JSON with the parser\'s words', () => {
    expect(decodeRequest(request('{nope'), 1 << 20, admissionRequestOf)).toEqual({ kind: 'rejected', why: 'not-json', error: expect.stringContaining('JSON') });
  });

  it('refuses JSON its decoder refuses, in the decoder\'s words', () => {
    expect(decodeRequest(request('{"kind":"AdmissionReview"}'), 1 << 20, admissionRequestOf)).toEqual({
      kind: 'rejected',
      why: 'undecodable',
      message: expect.stringMatching(/^not an AdmissionReview v1 request: /),
    });
  });

  it('hands the body to the decoder it is given: a ConversionReview passes, an AdmissionReview does not', () => {
    expect(decodeRequest(request('{"kind":"ConversionReview","request":{"uid":"c1"}}'), 1 << 20, conversionReview)).toEqual({ request: { uid: 'c1' } });
    expect(decodeRequest(request(JSON.stringify(podReview('a1'))), 1 << 20, conversionReview)).toEqual({ kind: 'rejected', why: 'undecodable', message: 'not a ConversionReview' });
  });
});
