/**
 * functions/shared/admission-lambda.ts (and lambda-event.ts) as Lambda runs
 * them: a function composed from the environment once, then invoked with
 * Function URL events (payload format 2.0) shaped as the service delivers
 * them.
 */
import { describe, expect, it } from '@jest/globals';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { CallerSecretError } from '../../lib/auth/caller-auth.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../../lib/webhooks/http-handler.ts';
import { admissionLambda } from '../../functions/shared/admission-lambda.ts';
import { capturingLogger, functionUrlEvent, PREVIOUS_SECRET, SECRET, sidecarSetReview, STRANGER_SECRET, userSidecarSet } from '../../testkit/reviews.ts';
import { secretEnv, structured } from './function-url-result.ts';

describe('sidecarset-default on Lambda', () => {
  const review = sidecarSetReview('a8e4e1c6-3e4b-4c59-9f1e-0b5c1d7e2f30');

  it.each([
    { encoding: 'a base64 body', base64: true },
    { encoding: 'a plain body', base64: false },
  ])('answers a Function URL event with $encoding with a patch that applies and gives the defaulted SidecarSet', async ({ base64 }) => {
    const { logger, entries } = capturingLogger();
    const handler = await admissionLambda('sidecarset-default', { env: secretEnv, overrides: { logger } });
    const result = structured(await handler(functionUrlEvent({ body: JSON.stringify(review), base64 })));
    expect(result.statusCode).toBe(200);
    expect(result.headers).toEqual({ 'content-type': 'application/json' });
    expect(result.isBase64Encoded).toBe(false);
    expect(result.json).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'a8e4e1c6-3e4b-4c59-9f1e-0b5c1d7e2f30', allowed: true, patchType: 'JSONPatch' },
    });
    const received = userSidecarSet();
    expect(applyPatch(received, decodePatch(result.json.response.patch))).toEqual(defaultSidecarSet(received));
    expect(entries()).toEqual([
      expect.objectContaining({
        function: 'sidecarset-default',
        uid: 'a8e4e1c6-3e4b-4c59-9f1e-0b5c1d7e2f30',
        outcome: 'patched',
        requestId: 'c1b6d3a0-6f0e-4b4e-9a53-3f4b9f0d2a11',
      }),
    ]);
  });

  it.each([
    { why: 'the previous secret in the path', event: { path: `/${PREVIOUS_SECRET}` } },
    { why: 'the current secret as a Bearer token', event: { path: '/', headers: { authorization: `Bearer ${SECRET}` } } },
    { why: 'the previous secret as a Bearer token', event: { path: '/', headers: { authorization: `Bearer ${PREVIOUS_SECRET}` } } },
  ])('accepts $why', async ({ event }) => {
    const handler = await admissionLambda('sidecarset-default', {
      env: { WEBHOOK_SECRET: SECRET, WEBHOOK_SECRET_PREVIOUS: PREVIOUS_SECRET },
      overrides: { logger: capturingLogger().logger },
    });
    const result = structured(await handler(functionUrlEvent({ body: JSON.stringify(review), ...event })));
    expect(result.statusCode).toBe(200);
    expect(result.json.response.uid).toBe('a8e4e1c6-3e4b-4c59-9f1e-0b5c1d7e2f30');
  });

  it.each([
    { why: 'a wrong secret', event: { path: `/${STRANGER_SECRET}` } },
    { why: 'no secret', event: { path: '/' } },
    { why: 'the secret below another segment', event: { path: `/hooks/${SECRET}` } },
    { why: 'a wrong Bearer token', event: { path: '/', headers: { authorization: `Bearer ${STRANGER_SECRET}` } } },
    { why: 'the previous secret when none is configured', event: { path: `/${PREVIOUS_SECRET}` } },
  ])('answers 404 with no hint to $why', async ({ event }) => {
    const handler = await admissionLambda('sidecarset-default', { env: secretEnv, overrides: { logger: capturingLogger().logger } });
    const result = structured(await handler(functionUrlEvent({ body: JSON.stringify(review), ...event })));
    expect(result.statusCode).toBe(404);
    expect(result.body).toBe('{"message":"Not Found"}');
  });

  it.each([
    { why: 'a GET', event: { method: 'GET', body: '' }, status: 405 },
    { why: 'a text/plain body', event: { headers: { 'content-type': 'text/plain' } }, status: 415 },
    { why: 'a base64 body that is not JSON once decoded', event: { body: 'not json' }, status: 400 },
    { why: 'a body that is not an AdmissionReview', event: { body: '{"kind":"Pod"}' }, status: 400 },
  ])('answers $status to $why', async ({ event, status }) => {
    const handler = await admissionLambda('sidecarset-default', { env: secretEnv, overrides: { logger: capturingLogger().logger } });
    const result = structured(await handler(functionUrlEvent({ body: JSON.stringify(review), ...event })));
    expect(result.statusCode).toBe(status);
    expect(typeof result.json.message).toBe('string');
  });

  it('measures the limit on the decoded body: 413 just over 6 MB', async () => {
    const handler = await admissionLambda('sidecarset-default', { env: secretEnv, overrides: { logger: capturingLogger().logger } });
    const body = 'x'.repeat(DEFAULT_MAX_BODY_BYTES + 1);
    const result = structured(await handler(functionUrlEvent({ body })));
    expect(result.statusCode).toBe(413);
    expect(result.json.message).toBe(`the body is ${DEFAULT_MAX_BODY_BYTES + 1} bytes; the limit is ${DEFAULT_MAX_BODY_BYTES}`);
  });

  it('refuses to start without a caller secret, naming the variables to set', async () => {
    const start = admissionLambda('sidecarset-default', { env: {}, overrides: { logger: capturingLogger().logger } });
    await expect(start).rejects.toThrow(CallerSecretError);
    await expect(start).rejects.toThrow(
      'no caller secret is configured: set WEBHOOK_SECRET or WEBHOOK_SECRET_ARN (or ALLOW_UNAUTHENTICATED_CALLERS=true, for local development only)',
    );
  });

  it('refuses to start with a weak secret', async () => {
    await expect(admissionLambda('sidecarset-default', { env: { WEBHOOK_SECRET: 'changeme' } })).rejects.toThrow('WEBHOOK_SECRET is 8 characters');
  });

  it('turns away a caller outside ALLOWED_CALLER_CIDRS with the bare 404, secret or not, by the event\'s sourceIp', async () => {
    const handler = await admissionLambda('sidecarset-default', { env: { ...secretEnv, ALLOWED_CALLER_CIDRS: '198.51.100.0/24' }, overrides: { logger: capturingLogger().logger } });
    const outside = structured(await handler(functionUrlEvent({ body: JSON.stringify(review), sourceIp: '203.0.113.7', headers: { 'x-forwarded-for': '198.51.100.1' } })));
    expect(outside.statusCode).toBe(404);
    expect(outside.body).toBe('{"message":"Not Found"}');
    const inside = structured(await handler(functionUrlEvent({ body: JSON.stringify(review), sourceIp: '198.51.100.1' })));
    expect(inside.statusCode).toBe(200);
  });

  it('refuses to start with a bad ALLOWED_CALLER_CIDRS entry, naming it', async () => {
    await expect(admissionLambda('sidecarset-default', { env: { ...secretEnv, ALLOWED_CALLER_CIDRS: '10.0.0.0/8,nat-gateway' } })).rejects.toThrow(
      'ALLOWED_CALLER_CIDRS: "nat-gateway" is not an IPv4 or IPv6 address or CIDR block',
    );
  });

  it('refuses to start with ALLOW_UNAUTHENTICATED_CALLERS=true: a Function URL is public', async () => {
    const start = admissionLambda('sidecarset-default', { env: { ALLOW_UNAUTHENTICATED_CALLERS: 'true' }, overrides: { logger: capturingLogger().logger } });
    await expect(start).rejects.toThrow(CallerSecretError);
    await expect(start).rejects.toThrow('ALLOW_UNAUTHENTICATED_CALLERS=true is refused on Lambda');
  });
});
