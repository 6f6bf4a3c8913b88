/**
 * The HTTP handler's typed outcome is the one thing its answer, its log line and its
 * metric are read from: every kind of outcome, with what each of the three
 * makes of it.
 */
import { describe, expect, it } from '@jest/globals';
import { REVIEW_OUTCOMES } from '../../lib/metrics/catalogue.ts';
import { logLineOf, metricOutcomeOf, NOT_FOUND, responseOf, type RequestOutcome } from '../../lib/webhooks/request-outcome.ts';

const answered = (verdict: 'patched' | 'allowed' | 'skipped' | 'denied'): RequestOutcome => ({ kind: 'answered', uid: 'u', verdict, body: '{"kind":"AdmissionReview"}' });

const TABLE: readonly [string, RequestOutcome, { status: number; level: 'info' | 'error'; logged: string; metric: string; fields: Record<string, unknown> }][] = [
  ['a refused caller', { kind: 'refused-caller' }, { status: 404, level: 'info', logged: 'unauthenticated', metric: 'RefusedCaller', fields: { statusCode: 404 } }],
  ['a wrong method', { kind: 'rejected', why: 'method', method: 'GET' }, { status: 405, level: 'info', logged: 'rejected', metric: 'BadRequest', fields: { statusCode: 405, reason: 'method GET' } }],
  ['a wrong content type', { kind: 'rejected', why: 'content-type' }, { status: 415, level: 'info', logged: 'rejected', metric: 'BadRequest', fields: { statusCode: 415, reason: 'content type' } }],
  ['a body over the limit', { kind: 'rejected', why: 'too-large', bytes: 12, limitBytes: 10 }, { status: 413, level: 'info', logged: 'rejected', metric: 'BadRequest', fields: { statusCode: 413, bytes: 12 } }],
  ['a body not JSON', { kind: 'rejected', why: 'not-json', error: 'Unexpected token' }, { status: 400, level: 'info', logged: 'rejected', metric: 'BadRequest', fields: { statusCode: 400, reason: 'not JSON' } }],
  ['JSON the decoder refuses', { kind: 'rejected', why: 'undecodable', message: 'not an AdmissionReview v1 request: kind' }, { status: 400, level: 'info', logged: 'rejected', metric: 'BadRequest', fields: { statusCode: 400, reason: 'not an AdmissionReview v1 request: kind' } }],
  ['a patch', answered('patched'), { status: 200, level: 'info', logged: 'patched', metric: 'Patched', fields: { uid: 'u', statusCode: 200 } }],
  ['an allow', answered('allowed'), { status: 200, level: 'info', logged: 'allowed', metric: 'Allowed', fields: { uid: 'u', statusCode: 200 } }],
  ['a skip', answered('skipped'), { status: 200, level: 'info', logged: 'skipped', metric: 'Skipped', fields: { uid: 'u', statusCode: 200 } }],
  ['a denial', answered('denied'), { status: 200, level: 'info', logged: 'denied', metric: 'Denied', fields: { uid: 'u', statusCode: 200 } }],
  ['no decision in time', { kind: 'failed', uid: 'u', status: 503, message: 'no decision within the 9000 ms deadline' }, { status: 503, level: 'error', logged: 'failed', metric: 'CannotDecide', fields: { uid: 'u', statusCode: 503, error: 'no decision within the 9000 ms deadline' } }],
  ['a crash', { kind: 'failed', uid: 'u', status: 500, message: 'internal error: x' }, { status: 500, level: 'error', logged: 'failed', metric: 'CannotDecide', fields: { uid: 'u', statusCode: 500, error: 'internal error: x' } }],
];

describe('one typed outcome, read by the answer, the log line and the metric', () => {
  it.each(TABLE)('%s', (_name, outcome, expected) => {
    expect(responseOf(outcome).statusCode).toBe(expected.status);
    expect(logLineOf(outcome)).toEqual({ level: expected.level, outcome: expected.logged, fields: expected.fields });
    expect(metricOutcomeOf(outcome)).toBe(expected.metric);
  });

  it('the table names every Outcome dimension value', () => {
    expect(new Set(TABLE.map(([, outcome]) => metricOutcomeOf(outcome)))).toEqual(new Set(REVIEW_OUTCOMES));
  });
});

describe('the answers', () => {
  it('a refused caller sees exactly what an unknown path shows', () => {
    expect(responseOf({ kind: 'refused-caller' })).toEqual(NOT_FOUND);
    expect(NOT_FOUND).toEqual({ statusCode: 404, headers: { 'content-type': 'application/json' }, body: '{"message":"Not Found"}' });
  });

  it.each([
    [{ kind: 'rejected', why: 'method', method: 'PUT' }, { 'content-type': 'application/json', allow: 'POST' }, '{"message":"only POST is accepted"}'],
    [{ kind: 'rejected', why: 'content-type' }, { 'content-type': 'application/json' }, '{"message":"the body must be application/json"}'],
    [{ kind: 'rejected', why: 'too-large', bytes: 12, limitBytes: 10 }, { 'content-type': 'application/json' }, '{"message":"the body is 12 bytes; the limit is 10"}'],
    [{ kind: 'rejected', why: 'not-json', error: 'Unexpected end' }, { 'content-type': 'application/json' }, '{"message":"the body is not JSON: Unexpected end"}'],
    [{ kind: 'rejected', why: 'undecodable', message: 'not a ConversionReview' }, { 'content-type': 'application/json' }, '{"message":"not a ConversionReview"}'],
    [{ kind: 'failed', uid: 'u', status: 503, message: 'down' }, { 'content-type': 'application/json' }, '{"message":"down"}'],
    [answered('patched'), { 'content-type': 'application/json' }, '{"kind":"AdmissionReview"}'],
  ] as const)('%j is answered with its own headers and body', (outcome, headers, body) => {
    const response = responseOf(outcome);
    expect(response.headers).toEqual(headers);
    expect(response.body).toBe(body);
  });
});
