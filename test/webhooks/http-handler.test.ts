import { describe, expect, it } from '@jest/globals';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import type { Clock, SidecarSetSource } from '../../lib/ports.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import {
  DEFAULT_MAX_BODY_BYTES,
  NOT_FOUND,
  serveAdmission,
  type HttpHandlerConfig,
  type HttpRequest,
  type HttpResponse,
} from '../../lib/webhooks/http-handler.ts';
import type { AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { parseCallerNetworks } from '../../lib/auth/caller-network.ts';
import { NOW, sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { appPod, capturingLogger, podReview, PREVIOUS_SECRET, SECRET, sidecarSetReview, STRANGER_SECRET, userSidecarSet } from '../../testkit/reviews.ts';

const fixedClock: Clock = { now: () => NOW };
const logAgent = sidecarSet('log-agent');

function httpRequest(review: unknown, overrides: Partial<HttpRequest> = {}): HttpRequest {
  const body = overrides.body ?? JSON.stringify(review);
  return {
    method: 'POST',
    path: `/${SECRET}`,
    headers: { 'content-type': 'application/json' },
    timeout: '10s',
    body,
    bodyBytes: Buffer.byteLength(body),
    requestId: 'req-1',
    ...overrides,
  };
}

interface Setup {
  fn?: AdmissionFunctionName;
  secrets?: HttpHandlerConfig['secrets'];
  callerNetworks?: HttpHandlerConfig['callerNetworks'];
  refreshSecrets?: HttpHandlerConfig['refreshSecrets'];
  maxBodyBytes?: number;
  sidecarSets?: SidecarSetSource;
  clock?: Clock;
}

/** Serves one request through the HTTP handler with memory sources and a capturing logger. */
async function serve(request: HttpRequest, setup: Setup = {}) {
  const { logger, lines, entries } = capturingLogger();
  const response = await serveAdmission(
    request,
    {
      fn: setup.fn ?? 'sidecarset-default',
      secrets: setup.secrets ?? { current: SECRET, previous: PREVIOUS_SECRET },
      callerNetworks: setup.callerNetworks,
      refreshSecrets: setup.refreshSecrets,
      maxBodyBytes: setup.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    },
    {
      sidecarSets: setup.sidecarSets ?? memorySidecarSetSource([logAgent]),
      namespaces: memoryNamespaceSource([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }]),
      clock: setup.clock ?? fixedClock,
      logger,
    },
  );
  return { response, lines, logs: entries() };
}

/** The parsed body, for assertions on its shape. */
function bodyOf(response: HttpResponse): ReturnType<typeof JSON.parse> {
  return JSON.parse(response.body);
}

describe('serveAdmission: strangers', () => {
  const review = sidecarSetReview('uid-stranger');

  it.each([
    { why: 'a wrong secret', request: httpRequest(review, { path: `/${STRANGER_SECRET}` }) },
    { why: 'no secret', request: httpRequest(review, { path: '/' }) },
    { why: 'an empty path', request: httpRequest(review, { path: '' }) },
    { why: 'the valid secret after another segment', request: httpRequest(review, { path: `/webhook/${SECRET}` }) },
    { why: 'the valid secret before another segment', request: httpRequest(review, { path: `/${SECRET}/validate` }) },
    { why: 'a wrong Bearer token', request: httpRequest(review, { path: '/', headers: { 'content-type': 'application/json', authorization: `Bearer ${STRANGER_SECRET}` } }) },
    { why: 'an empty Bearer token', request: httpRequest(review, { path: '/', headers: { 'content-type': 'application/json', authorization: 'Bearer ' } }) },
    { why: 'the secret in Basic auth', request: httpRequest(review, { path: '/', headers: { 'content-type': 'application/json', authorization: `Basic ${SECRET}` } }) },
    { why: 'a GET with a wrong secret (no hint that only POST exists)', request: httpRequest(review, { method: 'GET', path: `/${STRANGER_SECRET}`, body: '', bodyBytes: 0 }) },
    { why: 'a wrong secret with a body over the limit', request: httpRequest(review, { path: '/', body: 'x', bodyBytes: DEFAULT_MAX_BODY_BYTES + 1 }) },
    { why: 'a wrong secret with a body that is not JSON', request: httpRequest(review, { path: '/', body: '<xml/>', headers: { 'content-type': 'text/xml' } }) },
  ])('answers 404 with no hint for $why', async ({ request }) => {
    const { response, lines, logs } = await serve(request);
    expect(response).toEqual({ statusCode: 404, headers: { 'content-type': 'application/json' }, body: '{"message":"Not Found"}' });
    expect(response.body).toBe(NOT_FOUND.body);
    expect(response.body).not.toContain(SECRET);
    expect(logs).toEqual([expect.objectContaining({ level: 'info', function: 'sidecarset-default', outcome: 'unauthenticated', statusCode: 404 })]);
    for (const line of lines) {
      expect(line).not.toContain(SECRET);
      expect(line).not.toContain(STRANGER_SECRET);
    }
  });

  describe('with a caller network allowlist', () => {
    const callerNetworks = parseCallerNetworks('198.51.100.0/24, 2001:db8::/32', 'ALLOWED_CALLER_CIDRS');

    it.each([
      { why: 'an address outside the list', sourceIp: '203.0.113.7' },
      { why: 'an IPv4-mapped address outside the list', sourceIp: '::ffff:203.0.113.7' },
      { why: 'an IPv6 address outside the list', sourceIp: '2001:db9::1' },
      { why: 'no known address', sourceIp: undefined },
    ])('answers the same bare 404 to $why, even with the secret and before re-reading secrets', async ({ sourceIp }) => {
      let rereads = 0;
      const refreshSecrets = () => {
        rereads++;
        return Promise.resolve();
      };
      const { response, logs } = await serve(httpRequest(review, { sourceIp }), { callerNetworks, refreshSecrets });
      expect(response).toEqual(NOT_FOUND);
      expect(rereads).toBe(0);
      expect(logs).toEqual([expect.objectContaining({ outcome: 'unauthenticated', statusCode: 404 })]);
    });

    it.each(['198.51.100.20', '::ffff:198.51.100.20', '2001:db8:5::1'])('serves a caller from %s that presents the secret', async (sourceIp) => {
      const { response } = await serve(httpRequest(review, { sourceIp }), { callerNetworks });
      expect(response.statusCode).toBe(200);
    });

    it('still wants the secret from an allowed address', async () => {
      const { response } = await serve(httpRequest(review, { sourceIp: '198.51.100.20', path: `/${STRANGER_SECRET}` }), { callerNetworks });
      expect(response).toEqual(NOT_FOUND);
    });

    it('applies even when unauthenticated callers are allowed', async () => {
      const { response } = await serve(httpRequest(review, { sourceIp: '203.0.113.7', path: '/' }), { callerNetworks, secrets: 'insecure' });
      expect(response).toEqual(NOT_FOUND);
    });
  });

  it('serves anyone, on any path, when unauthenticated callers are explicitly allowed', async () => {
    const { response } = await serve(httpRequest(review, { path: '/anything/at/all' }), { secrets: 'insecure' });
    expect(response.statusCode).toBe(200);
    expect(bodyOf(response).response.uid).toBe('uid-stranger');
  });
});

describe('serveAdmission: callers with the secret', () => {
  it.each([
    { why: 'the current secret in the path', overrides: {} },
    { why: 'the previous secret in the path', overrides: { path: `/${PREVIOUS_SECRET}` } },
    { why: 'the current secret as a Bearer token', overrides: { path: '/', headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRET}` } } },
    { why: 'the previous secret as a Bearer token', overrides: { path: '/', headers: { 'content-type': 'application/json', authorization: `Bearer ${PREVIOUS_SECRET}` } } },
  ])('answers 200 with the review to $why', async ({ overrides }) => {
    const { response } = await serve(httpRequest(sidecarSetReview('uid-ok'), overrides));
    expect(response.statusCode).toBe(200);
    expect(response.headers).toEqual({ 'content-type': 'application/json' });
    expect(bodyOf(response)).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'uid-ok', allowed: true } });
  });

  it.each(['GET', 'PUT', 'PATCH', 'DELETE', 'HEAD'])('answers 405 with Allow: POST to %s', async (method) => {
    const { response, logs } = await serve(httpRequest(sidecarSetReview('uid-m'), { method }));
    expect(response.statusCode).toBe(405);
    expect(response.headers).toEqual({ 'content-type': 'application/json', allow: 'POST' });
    expect(bodyOf(response)).toEqual({ message: 'only POST is accepted' });
    expect(logs[0]).toMatchObject({ outcome: 'rejected', statusCode: 405, function: 'sidecarset-default' });
  });

  it.each([
    { why: 'no content type', headers: {} },
    { why: 'text/plain', headers: { 'content-type': 'text/plain' } },
    { why: 'application/jsonx', headers: { 'content-type': 'application/jsonx' } },
    { why: 'application/x-www-form-urlencoded', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
  ])('answers 415 to $why', async ({ headers }) => {
    const { response } = await serve(httpRequest(sidecarSetReview('uid-ct'), { headers }));
    expect(response.statusCode).toBe(415);
    expect(bodyOf(response)).toEqual({ message: 'the body must be application/json' });
  });

  it.each(['application/json; charset=utf-8', 'Application/JSON', ' application/json ;charset=UTF-8'])('accepts the content type %j', async (type) => {
    const { response } = await serve(httpRequest(sidecarSetReview('uid-ct'), { headers: { 'content-type': type } }));
    expect(response.statusCode).toBe(200);
  });

  it('answers 413 to a body over the limit, before reading it', async () => {
    const body = 'x'.repeat(DEFAULT_MAX_BODY_BYTES + 1);
    const { response, logs } = await serve(httpRequest(undefined, { body, bodyBytes: Buffer.byteLength(body) }));
    expect(response.statusCode).toBe(413);
    expect(bodyOf(response)).toEqual({ message: `the body is ${DEFAULT_MAX_BODY_BYTES + 1} bytes; the limit is ${DEFAULT_MAX_BODY_BYTES}` });
    expect(logs[0]).toMatchObject({ outcome: 'rejected', statusCode: 413, bytes: DEFAULT_MAX_BODY_BYTES + 1 });
  });

  it('answers 413 by the byte count, not the character count', async () => {
    const body = JSON.stringify(sidecarSetReview('é'.repeat(60)));
    const { response } = await serve(httpRequest(undefined, { body, bodyBytes: Buffer.byteLength(body) }), { maxBodyBytes: body.length });
    expect(Buffer.byteLength(body)).toBeGreaterThan(body.length);
    expect(response.statusCode).toBe(413);
  });

  it('accepts a review of almost 6 MB', async () => {
    const object = userSidecarSet();
    const padding = 'p'.repeat(DEFAULT_MAX_BODY_BYTES - 4096);
    (object.metadata as { annotations: Record<string, string> }).annotations['example.com/large'] = padding;
    const body = JSON.stringify(sidecarSetReview('uid-large', object));
    expect(Buffer.byteLength(body)).toBeGreaterThan(6_000_000);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(DEFAULT_MAX_BODY_BYTES);
    const { response } = await serve(httpRequest(undefined, { body, bodyBytes: Buffer.byteLength(body) }));
    expect(response.statusCode).toBe(200);
    const answer = bodyOf(response).response;
    expect(answer).toMatchObject({ uid: 'uid-large', allowed: true, patchType: 'JSONPatch' });
    // The patch adds the defaults; it does not carry the large annotation back.
    expect(answer.patch.length).toBeLessThan(10_000);
  });

  it.each([
    { why: 'not JSON', body: '{"apiVersion": "admission.k8s.io/v1",', message: /^the body is not JSON: / },
    { why: 'empty', body: '', message: /^the body is not JSON: / },
    { why: 'JSON but not an object', body: '[1,2]', message: /^not an AdmissionReview v1 request: the body is not a JSON object$/ },
    {
      why: 'a v1beta1 review',
      body: JSON.stringify({ ...sidecarSetReview('uid-beta'), apiVersion: 'admission.k8s.io/v1beta1' }),
      message: /^not an AdmissionReview v1 request: apiVersion is "admission.k8s.io\/v1beta1"/,
    },
    {
      why: 'a review without a request uid',
      body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { operation: 'CREATE' } }),
      message: /request\.uid/,
    },
  ])('answers 400 with a message to a body that is $why', async ({ body, message }) => {
    const { response, logs } = await serve(httpRequest(undefined, { body, bodyBytes: Buffer.byteLength(body) }));
    expect(response.statusCode).toBe(400);
    expect(response.headers).toEqual({ 'content-type': 'application/json' });
    expect(bodyOf(response).message).toMatch(message);
    expect(bodyOf(response).response).toBeUndefined();
    expect(logs[0]).toMatchObject({ outcome: 'rejected', statusCode: 400 });
  });
});

describe('serveAdmission: the three functions', () => {
  it('sidecarset-default answers with a patch that gives the defaulted SidecarSet', async () => {
    const review = sidecarSetReview('uid-default');
    const { response, logs } = await serve(httpRequest(review));
    expect(response.statusCode).toBe(200);
    const answer = bodyOf(response).response;
    expect(answer).toMatchObject({ uid: 'uid-default', allowed: true, patchType: 'JSONPatch' });
    const object = userSidecarSet();
    expect(applyPatch(object, decodePatch(answer.patch))).toEqual(defaultSidecarSet(object));
    expect(logs).toEqual([
      expect.objectContaining({ level: 'info', function: 'sidecarset-default', uid: 'uid-default', outcome: 'patched', statusCode: 200, requestId: 'req-1' }),
    ]);
    expect(typeof logs[0]?.durationMs).toBe('number');
  });

  it('sidecarset-default allows an already defaulted SidecarSet without a patch', async () => {
    const { response } = await serve(httpRequest(sidecarSetReview('uid-again', defaultSidecarSet(userSidecarSet()))));
    expect(bodyOf(response).response).toStrictEqual({ uid: 'uid-again', allowed: true });
  });

  it('sidecarset-validate allows a valid SidecarSet', async () => {
    const { response, logs } = await serve(httpRequest(sidecarSetReview('uid-valid', defaultSidecarSet(userSidecarSet()))), {
      fn: 'sidecarset-validate',
    });
    expect(response.statusCode).toBe(200);
    expect(bodyOf(response).response).toStrictEqual({ uid: 'uid-valid', allowed: true });
    expect(logs[0]).toMatchObject({ function: 'sidecarset-validate', uid: 'uid-valid', outcome: 'allowed' });
  });

  it('sidecarset-validate denies an invalid SidecarSet with 422 and every field error, as HTTP 200', async () => {
    const invalid = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'broken' },
      spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'Bad_Name' }, { name: 'ok', image: '' }] },
    };
    const { response, logs } = await serve(httpRequest(sidecarSetReview('uid-invalid', invalid)), { fn: 'sidecarset-validate' });
    expect(response.statusCode).toBe(200);
    const answer = bodyOf(response).response;
    expect(answer).toMatchObject({ uid: 'uid-invalid', allowed: false, status: { code: 422, reason: 'Invalid' } });
    expect(answer.status.message).toContain('spec.containers[0].name');
    expect(answer.status.message).toContain('spec.containers[0].image');
    expect(answer.status.message).toContain('spec.containers[1].image');
    expect(answer.patch).toBeUndefined();
    expect(logs[0]).toMatchObject({ outcome: 'denied', uid: 'uid-invalid' });
  });

  it.each([
    { why: 'a SidecarSet that defaulting would change', object: userSidecarSet() },
    { why: 'a defaulted SidecarSet', object: defaultSidecarSet(userSidecarSet() as SidecarSet) },
    { why: 'an invalid SidecarSet', object: { ...userSidecarSet(), spec: {} } },
  ])('sidecarset-validate never returns a patch, for $why', async ({ object }) => {
    const { response } = await serve(httpRequest(sidecarSetReview('uid-no-patch', object)), { fn: 'sidecarset-validate' });
    const answer = bodyOf(response).response;
    expect(answer.uid).toBe('uid-no-patch');
    expect(answer).not.toHaveProperty('patch');
    expect(answer).not.toHaveProperty('patchType');
  });

  it('pod-inject answers with a patch that injects the sidecar', async () => {
    const { response, logs } = await serve(httpRequest(podReview('uid-pod')), { fn: 'pod-inject' });
    expect(response.statusCode).toBe(200);
    const answer = bodyOf(response).response;
    expect(answer).toMatchObject({ uid: 'uid-pod', allowed: true, patchType: 'JSONPatch' });
    const pod = applyPatch(appPod(), decodePatch(answer.patch)) as { spec: { containers: { name: string }[] } };
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['log-agent-sidecar', 'app']);
    expect(logs[0]).toMatchObject({ function: 'pod-inject', uid: 'uid-pod', outcome: 'patched' });
  });

  it('pod-inject lets a pods/status update through untouched, logged as skipped', async () => {
    const review = podReview('uid-status') as { request: Record<string, unknown> };
    review.request.operation = 'UPDATE';
    review.request.subResource = 'status';
    review.request.oldObject = appPod();
    const { response, logs } = await serve(httpRequest(review), { fn: 'pod-inject' });
    expect(bodyOf(response).response).toStrictEqual({ uid: 'uid-status', allowed: true });
    expect(logs[0]).toMatchObject({ outcome: 'skipped', uid: 'uid-status' });
  });
});

describe('serveAdmission: when the function cannot decide', () => {
  const unreachable: SidecarSetSource = { list: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.1:443')) };

  it.each([
    { fn: 'pod-inject' as const, review: podReview('uid-down'), message: 'cannot decide the injection: connect ECONNREFUSED 10.0.0.1:443' },
    {
      fn: 'sidecarset-validate' as const,
      review: sidecarSetReview('uid-down', defaultSidecarSet(userSidecarSet() as SidecarSet)),
      message: 'cannot check conflicts with other SidecarSets: connect ECONNREFUSED 10.0.0.1:443',
    },
  ])('$fn answers 503, a failed call and not a denial, when the SidecarSets cannot be listed', async ({ fn, review, message }) => {
    const { response, logs } = await serve(httpRequest(review), { fn, sidecarSets: unreachable });
    expect(response.statusCode).toBe(503);
    expect(response.headers).toEqual({ 'content-type': 'application/json' });
    const body = bodyOf(response);
    expect(body).toEqual({ message });
    expect(body).not.toHaveProperty('response');
    expect(body).not.toHaveProperty('kind');
    expect(logs).toEqual([
      expect.objectContaining({ level: 'error', function: fn, uid: 'uid-down', outcome: 'failed', statusCode: 503, error: message, requestId: 'req-1' }),
    ]);
  });

  it('answers 500 when the handler hits an unexpected error', async () => {
    const broken: Clock = {
      now: () => {
        throw new Error('clock is broken');
      },
    };
    const { response, logs } = await serve(httpRequest(podReview('uid-crash')), { fn: 'pod-inject', clock: broken });
    expect(response.statusCode).toBe(500);
    expect(bodyOf(response)).toEqual({ message: 'internal error: clock is broken' });
    expect(logs[0]).toMatchObject({ level: 'error', outcome: 'failed', uid: 'uid-crash', statusCode: 500 });
  });

  it('gives the handler an AbortSignal for the ?timeout= deadline and answers 503 within it when the source honours it', async () => {
    let seen: AbortSignal | undefined;
    const hanging: SidecarSetSource = {
      list: (signal) => {
        seen = signal;
        return new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => {
            reject(new Error('the list was abandoned at the deadline'));
          });
        });
      },
    };
    const started = performance.now();
    const { response, logs } = await serve(httpRequest(podReview('uid-slow'), { timeout: '2s' }), { fn: 'pod-inject', sidecarSets: hanging });
    const elapsed = performance.now() - started;
    expect(seen).toBeInstanceOf(AbortSignal);
    expect(seen?.aborted).toBe(true);
    expect(elapsed).toBeLessThan(2_000);
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(response.statusCode).toBe(503);
    expect(bodyOf(response).message).toBe('cannot decide the injection: the list was abandoned at the deadline');
    expect(logs[0]).toMatchObject({ outcome: 'failed', uid: 'uid-slow' });
  });

  it('answers 503 within the ?timeout= deadline even when the source ignores its signal', async () => {
    const forever: SidecarSetSource = { list: () => new Promise<never>(() => undefined) };
    const started = performance.now();
    const { response, logs } = await serve(httpRequest(podReview('uid-stuck'), { timeout: '2s' }), { fn: 'pod-inject', sidecarSets: forever });
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(2_000);
    expect(response.statusCode).toBe(503);
    expect(bodyOf(response)).toEqual({ message: 'no decision within the 1000 ms deadline' });
    expect(logs[0]).toMatchObject({ level: 'error', outcome: 'failed', uid: 'uid-stuck', statusCode: 503 });
  });

  it('still answers with the decision of a source that serves a cached list when its signal aborts', async () => {
    const staleOnAbort: SidecarSetSource = {
      list: (signal) =>
        new Promise((resolve) => {
          signal?.addEventListener('abort', () => {
            resolve([logAgent]);
          });
        }),
    };
    const { response } = await serve(httpRequest(podReview('uid-stale'), { timeout: '2s' }), { fn: 'pod-inject', sidecarSets: staleOnAbort });
    expect(response.statusCode).toBe(200);
    expect(bodyOf(response).response).toMatchObject({ uid: 'uid-stale', allowed: true, patchType: 'JSONPatch' });
  });
});
