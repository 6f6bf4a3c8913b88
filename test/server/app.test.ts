/**
 * The fastify app through app.inject(): the same answers as the Lambda handler,
 * on /<function>/<secret>, plus what only the server has (health, readiness,
 * turning strangers away before their body is read).
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { sidecarSetReadiness } from '../../lib/adapters/readiness.ts';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import type { CallerSecrets } from '../../lib/auth/caller-auth.ts';
import type { SidecarSetSource } from '../../lib/ports.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../../lib/webhooks/http-handler.ts';
import { ADMISSION_FUNCTIONS, FUNCTION_NAMES } from '../../lib/webhooks/registry.ts';
import type { FunctionName } from '../../lib/webhooks/descriptors.ts';
import { buildApp } from '../../functions/server/app.ts';
import { admissionRuntime, type AdmissionRuntime } from '../../functions/shared/compose.ts';
import { sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { parseCallerNetworks } from '../../lib/auth/caller-network.ts';
import { appPod, capturingLogger, podReview, PREVIOUS_SECRET, SECRET, sidecarSetReview, STRANGER_SECRET, userSidecarSet } from '../../testkit/reviews.ts';

// app.inject() loads light-my-request, which require()s the ESM-only `cookie`
// package; jest's CommonJS loader cannot require an ES module on Node 22 (it
// can from Node 24.9). So the real module, imported as ESM, is handed to the
// CommonJS registry; fastify loads light-my-request on the first inject, after this.
const cookie = await import('cookie');
jest.mock('cookie', () => cookie);

const secrets: CallerSecrets = { current: SECRET, previous: PREVIOUS_SECRET };
const namespaces = memoryNamespaceSource([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }]);

function runtimes(sidecarSets: SidecarSetSource, logger = capturingLogger().logger, only: readonly FunctionName[] = FUNCTION_NAMES) {
  return Object.fromEntries(only.map((fn) => [fn, admissionRuntime(fn, secrets, { sidecarSets, namespaces }, logger)])) as Partial<
    Record<FunctionName, AdmissionRuntime>
  >;
}

const json = { 'content-type': 'application/json' };

describe('buildApp', () => {
  const captured = capturingLogger();
  let app: FastifyInstance;
  let ready = { ready: true, message: 'SidecarSets readable from https://127.0.0.1:6443' };

  beforeAll(async () => {
    app = buildApp({
      runtimes: runtimes(memorySidecarSetSource([sidecarSet('log-agent')]), captured.logger),
      readiness: () => Promise.resolve(ready),
    });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });

  describe('reviews', () => {
    it('sidecarset-default answers with a patch that gives the defaulted SidecarSet, echoing the uid', async () => {
      const response = await app.inject({ method: 'POST', url: `/sidecarset-default/${SECRET}?timeout=10s`, headers: json, payload: sidecarSetReview('uid-app') });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      const answer = response.json().response;
      expect(answer).toMatchObject({ uid: 'uid-app', allowed: true, patchType: 'JSONPatch' });
      const object = userSidecarSet();
      expect(applyPatch(object, decodePatch(answer.patch))).toEqual(defaultSidecarSet(object));
    });

    it('sidecarset-convert converts a ConversionReview behind the same secret path, and logs it as the others do', async () => {
      const review = {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'uid-convert', desiredAPIVersion: 'apps.kruise.io/v1alpha1', objects: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet', metadata: { name: 'v' }, spec: { customVersion: 'v2' } }] },
      };
      const response = await app.inject({ method: 'POST', url: `/sidecarset-convert/${SECRET}?timeout=10s`, headers: json, payload: review });
      expect(response.statusCode).toBe(200);
      const body = response.json<{ response: { uid: string; result: { status: string }; convertedObjects: { apiVersion: string; metadata: { labels: Record<string, string> }; spec: unknown }[] } }>();
      expect([body.response.uid, body.response.result.status]).toEqual(['uid-convert', 'Success']);
      expect(body.response.convertedObjects[0]).toMatchObject({ apiVersion: 'apps.kruise.io/v1alpha1', metadata: { labels: { 'apps.kruise.io/sidecarset-custom-version': 'v2' } }, spec: {} });
      expect(captured.entries()).toContainEqual(expect.objectContaining({ function: 'sidecarset-convert', uid: 'uid-convert', outcome: 'allowed', statusCode: 200 }));
      expect((await app.inject({ method: 'POST', url: `/sidecarset-convert/${STRANGER_SECRET}`, headers: json, payload: review })).statusCode).toBe(404);
      const admission = await app.inject({ method: 'POST', url: `/sidecarset-convert/${SECRET}`, headers: json, payload: sidecarSetReview('uid-wrong') });
      expect([admission.statusCode, admission.json<{ message: string }>().message]).toEqual([400, 'not a ConversionReview v1 request: apiVersion is "admission.k8s.io/v1", expected "apiextensions.k8s.io/v1"']);
    });

    it('pod-inject injects the sidecar', async () => {
      const response = await app.inject({ method: 'POST', url: `/pod-inject/${SECRET}`, headers: json, payload: podReview('uid-pod') });
      expect(response.statusCode).toBe(200);
      const answer = response.json().response;
      expect(answer.uid).toBe('uid-pod');
      const pod = applyPatch(appPod(), decodePatch(answer.patch)) as { spec: { containers: { name: string }[] } };
      expect(pod.spec.containers.map((c) => c.name)).toEqual(['log-agent-sidecar', 'app']);
    });

    it('sidecarset-validate denies an invalid SidecarSet as HTTP 200 with a 422 status and no patch', async () => {
      const invalid = { ...userSidecarSet(), spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'Bad_Name', image: 'x:1' }] } };
      const response = await app.inject({ method: 'POST', url: `/sidecarset-validate/${SECRET}`, headers: json, payload: sidecarSetReview('uid-bad', invalid) });
      expect(response.statusCode).toBe(200);
      const answer = response.json().response;
      expect(answer).toMatchObject({ uid: 'uid-bad', allowed: false, status: { code: 422 } });
      expect(answer.status.message).toContain('spec.containers[0].name');
      expect(answer).not.toHaveProperty('patch');
    });

    it.each([
      { why: 'the previous secret in the path', url: `/sidecarset-default/${PREVIOUS_SECRET}`, headers: json },
      { why: 'a trailing slash after the secret', url: `/sidecarset-default/${SECRET}/`, headers: json },
      { why: 'the current secret as a Bearer token', url: '/sidecarset-default', headers: { ...json, authorization: `Bearer ${SECRET}` } },
      { why: 'the previous secret as a Bearer token', url: '/pod-inject', headers: { ...json, authorization: `Bearer ${PREVIOUS_SECRET}` } },
      { why: 'a Bearer token on /<function>/', url: '/sidecarset-validate/?timeout=5s', headers: { ...json, authorization: `Bearer ${SECRET}` } },
    ])('accepts $why', async ({ url, headers }) => {
      const payload = url.startsWith('/pod-inject') ? podReview('uid-auth') : sidecarSetReview('uid-auth', defaultSidecarSet(userSidecarSet()));
      const response = await app.inject({ method: 'POST', url, headers, payload });
      expect(response.statusCode).toBe(200);
      expect(response.json().response.uid).toBe('uid-auth');
    });

    it('logs each review as a JSON line with the function, uid and outcome', async () => {
      captured.lines.length = 0;
      await app.inject({ method: 'POST', url: `/sidecarset-default/${SECRET}`, headers: json, payload: sidecarSetReview('uid-log') });
      expect(captured.entries()).toEqual([expect.objectContaining({ function: 'sidecarset-default', uid: 'uid-log', outcome: 'patched', statusCode: 200 })]);
      expect(captured.lines.join('\n')).not.toContain(SECRET);
    });
  });

  describe('strangers', () => {
    const notFound = '{"message":"Not Found"}';

    it.each([
      { why: 'a wrong secret', url: `/sidecarset-default/${STRANGER_SECRET}`, headers: json },
      { why: 'no secret', url: '/sidecarset-default', headers: json },
      { why: 'no secret and a trailing slash', url: '/sidecarset-default/', headers: json },
      { why: 'the secret with an extra segment', url: `/sidecarset-default/${SECRET}/extra`, headers: json },
      { why: 'the secret on an unknown function', url: `/sidecarset-mutate/${SECRET}`, headers: json },
      { why: 'the secret alone, without a function', url: `/${SECRET}`, headers: json },
      { why: 'the root', url: '/', headers: json },
      { why: 'a wrong Bearer token', url: '/pod-inject', headers: { ...json, authorization: `Bearer ${STRANGER_SECRET}` } },
      { why: 'the Bearer token on an unknown function', url: '/webhook', headers: { ...json, authorization: `Bearer ${SECRET}` } },
      { why: 'a wrong secret with the wrong content type', url: `/pod-inject/${STRANGER_SECRET}`, headers: { 'content-type': 'text/plain' } },
    ])('get the same 404 for $why', async ({ url, headers }) => {
      const response = await app.inject({ method: 'POST', url, headers, payload: JSON.stringify(sidecarSetReview('uid-x')) });
      expect(response.statusCode).toBe(404);
      expect(response.body).toBe(notFound);
      expect(response.body).not.toContain(SECRET);
    });

    it.each(['GET', 'PUT', 'DELETE'] as const)('get a 404, not a 405, for %s with a wrong secret', async (method) => {
      const response = await app.inject({ method, url: `/sidecarset-default/${STRANGER_SECRET}` });
      expect(response.statusCode).toBe(404);
      expect(response.body).toBe(notFound);
    });

    it('get a 404, not a 413, for a body over every limit: it is never read', async () => {
      const payload = 'x'.repeat(DEFAULT_MAX_BODY_BYTES * 2 + 1024);
      const response = await app.inject({ method: 'POST', url: `/sidecarset-default/${STRANGER_SECRET}`, headers: json, payload });
      expect(response.statusCode).toBe(404);
      expect(response.body).toBe(notFound);
    });

    it('get a 404 for a function this server does not serve, even with the secret', async () => {
      const partial = buildApp({
        runtimes: runtimes(memorySidecarSetSource([]), capturingLogger().logger, ['sidecarset-default']),
        readiness: () => Promise.resolve({ ready: true, message: '' }),
      });
      try {
        const response = await partial.inject({ method: 'POST', url: `/pod-inject/${SECRET}`, headers: json, payload: podReview('uid-p') });
        expect(response.statusCode).toBe(404);
        expect(response.body).toBe(notFound);
        const served = await partial.inject({ method: 'POST', url: `/sidecarset-default/${SECRET}`, headers: json, payload: sidecarSetReview('uid-p') });
        expect(served.statusCode).toBe(200);
      } finally {
        await partial.close();
      }
    });
  });

  describe('callers with the secret and a bad request', () => {
    it.each(['GET', 'PUT', 'PATCH', 'DELETE'] as const)('answers 405 with Allow: POST to %s', async (method) => {
      const response = await app.inject({ method, url: `/sidecarset-default/${SECRET}` });
      expect(response.statusCode).toBe(405);
      expect(response.headers.allow).toBe('POST');
      expect(response.json()).toEqual({ message: 'only POST is accepted' });
    });

    it.each([
      { why: 'text/plain', headers: { 'content-type': 'text/plain' } },
      { why: 'a form', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      { why: 'no content type', headers: {} },
    ])('answers 415 to $why', async ({ headers }) => {
      const response = await app.inject({ method: 'POST', url: `/sidecarset-default/${SECRET}`, headers, payload: JSON.stringify(sidecarSetReview('u')) });
      expect(response.statusCode).toBe(415);
      expect(response.json()).toEqual({ message: 'the body must be application/json' });
    });

    it('answers 413 from the HTTP handler, with its message, to a body just over 6 MB', async () => {
      const payload = 'x'.repeat(DEFAULT_MAX_BODY_BYTES + 1);
      const response = await app.inject({ method: 'POST', url: `/sidecarset-default/${SECRET}`, headers: json, payload });
      expect(response.statusCode).toBe(413);
      expect(response.json()).toEqual({ message: `the body is ${DEFAULT_MAX_BODY_BYTES + 1} bytes; the limit is ${DEFAULT_MAX_BODY_BYTES}` });
    });

    it('answers 413 from fastify, without details, to a body over its transport limit', async () => {
      const payload = 'x'.repeat(DEFAULT_MAX_BODY_BYTES * 2 + 1);
      const response = await app.inject({ method: 'POST', url: `/sidecarset-default/${SECRET}`, headers: json, payload });
      expect(response.statusCode).toBe(413);
      expect(response.json()).toEqual({ message: 'the body is too large' });
    });

    it('accepts a review of almost 6 MB', async () => {
      const object = userSidecarSet();
      (object.metadata as { annotations: Record<string, string> }).annotations['example.com/large'] = 'p'.repeat(DEFAULT_MAX_BODY_BYTES - 4096);
      const payload = JSON.stringify(sidecarSetReview('uid-large', object));
      const response = await app.inject({ method: 'POST', url: `/sidecarset-default/${SECRET}`, headers: json, payload });
      expect(response.statusCode).toBe(200);
      expect(response.json().response.uid).toBe('uid-large');
    });

    it.each([
      { why: 'not JSON', payload: '{"apiVersion":', message: /^the body is not JSON: / },
      { why: 'empty', payload: '', message: /^the body is not JSON: / },
      { why: 'not an AdmissionReview', payload: '{"apiVersion":"v1","kind":"Pod"}', message: /^not an AdmissionReview v1 request: apiVersion is "v1"/ },
    ])('answers 400 with a message to a body that is $why', async ({ payload, message }) => {
      const response = await app.inject({ method: 'POST', url: `/sidecarset-default/${SECRET}`, headers: json, payload });
      expect(response.statusCode).toBe(400);
      expect(response.json().message).toMatch(message);
    });
  });

  describe('health', () => {
    it.each(['/healthz', '/healthz?verbose=1'])('answers 200 on %s without a secret', async (url) => {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ status: 'ok' });
    });

    it('answers 200 on /readyz when the readiness check passes, without saying what it checked', async () => {
      ready = { ready: true, message: 'SidecarSets readable from https://127.0.0.1:6443' };
      const response = await app.inject({ method: 'GET', url: '/readyz' });
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe('{"status":"ready"}');
    });

    it('answers 503 on /readyz when it does not, without the API server address or its error', async () => {
      ready = { ready: false, message: 'cannot list SidecarSets: connect ECONNREFUSED 127.0.0.1:6443' };
      const response = await app.inject({ method: 'GET', url: '/readyz' });
      expect(response.statusCode).toBe(503);
      expect(response.body).toBe('{"status":"not ready"}');
    });

    it('lists SidecarSets once for a flood of /readyz, with the check npm start uses', async () => {
      let lists = 0;
      const inner = memorySidecarSetSource([]);
      const counting: SidecarSetSource = {
        list: (signal) => {
          lists++;
          return inner.list(signal);
        },
      };
      // A lifetime no busy machine outlasts during the flood: the count, not the clock, is under test.
      const probing = buildApp({ runtimes: runtimes(counting), readiness: sidecarSetReadiness(counting, 'https://127.0.0.1:6443', capturingLogger().logger, { ttlMs: 60_000 }) });
      try {
        const answers = await Promise.all(Array.from({ length: 300 }, () => probing.inject({ method: 'GET', url: '/readyz' })));
        expect(new Set(answers.map((a) => a.statusCode))).toEqual(new Set([200]));
        expect(lists).toBe(1);
      } finally {
        await probing.close();
      }
    });

    it('does not serve health under a function path', async () => {
      const response = await app.inject({ method: 'GET', url: '/pod-inject/healthz' });
      expect(response.statusCode).toBe(404);
    });
  });
});

describe('buildApp when the cluster cannot be read', () => {
  it('answers 503, a failed call, when the SidecarSets cannot be listed', async () => {
    const { logger, entries } = capturingLogger();
    const app = buildApp({
      runtimes: runtimes({ list: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6443')) }, logger),
      readiness: () => Promise.resolve({ ready: false, message: 'down' }),
    });
    try {
      const response = await app.inject({ method: 'POST', url: `/pod-inject/${SECRET}`, headers: json, payload: podReview('uid-down') });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({ message: 'cannot decide the injection: connect ECONNREFUSED 127.0.0.1:6443' });
      expect(entries()).toEqual([expect.objectContaining({ level: 'error', function: 'pod-inject', uid: 'uid-down', outcome: 'failed', statusCode: 503 })]);
    } finally {
      await app.close();
    }
  });

  it('answers within the ?timeout= deadline when listing hangs', async () => {
    const app = buildApp({
      runtimes: runtimes({ list: () => new Promise<never>(() => undefined) }),
      readiness: () => Promise.resolve({ ready: true, message: '' }),
    });
    try {
      const started = performance.now();
      const response = await app.inject({ method: 'POST', url: `/pod-inject/${SECRET}?timeout=2s`, headers: json, payload: podReview('uid-hang') });
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(response.statusCode).toBe(503);
    } finally {
      await app.close();
    }
  });
});

describe('buildApp with a caller network allowlist', () => {
  const networks = parseCallerNetworks('198.51.100.0/24', 'ALLOWED_CALLER_CIDRS');
  let app: FastifyInstance;
  beforeAll(async () => {
    const sidecarSets = memorySidecarSetSource([sidecarSet('log-agent')]);
    app = buildApp({
      runtimes: Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, admissionRuntime(fn, secrets, { sidecarSets, namespaces }, capturingLogger().logger, undefined, networks)])),
      readiness: () => Promise.resolve({ ready: true, message: '' }),
    });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });

  it('turns away a caller whose socket is outside the list with the bare 404, whatever X-Forwarded-For says', async () => {
    for (const remoteAddress of ['203.0.113.7', '::ffff:203.0.113.7', '127.0.0.1']) {
      const response = await app.inject({
        method: 'POST',
        url: `/sidecarset-default/${SECRET}`,
        headers: { ...json, 'x-forwarded-for': '198.51.100.1' },
        payload: sidecarSetReview('uid-net'),
        remoteAddress,
      });
      expect(response.statusCode).toBe(404);
      expect(response.body).toBe('{"message":"Not Found"}');
    }
  });

  it('serves a caller whose socket is inside the list, also as IPv4-mapped IPv6', async () => {
    for (const remoteAddress of ['198.51.100.1', '::ffff:198.51.100.1']) {
      const response = await app.inject({ method: 'POST', url: `/sidecarset-default/${SECRET}`, headers: json, payload: sidecarSetReview('uid-net'), remoteAddress });
      expect(response.statusCode).toBe(200);
    }
  });
});

describe('buildApp checks each caller once', () => {
  const networks = parseCallerNetworks('198.51.100.0/24', 'ALLOWED_CALLER_CIDRS');
  const checks = { network: 0, secretRefresh: 0 };
  let app: FastifyInstance;
  beforeAll(async () => {
    const sidecarSets = memorySidecarSetSource([sidecarSet('log-agent')]);
    const runtime = admissionRuntime('sidecarset-default', secrets, { sidecarSets, namespaces }, capturingLogger().logger, undefined, networks);
    const counted: AdmissionRuntime = {
      ...runtime,
      config: {
        ...runtime.config,
        callerNetworks: { entries: networks!.entries, allows: (address) => (checks.network++, networks!.allows(address)) },
        refreshSecrets: () => (checks.secretRefresh++, Promise.resolve()),
      },
    };
    app = buildApp({ runtimes: { 'sidecarset-default': counted }, readiness: () => Promise.resolve({ ready: true, message: '' }) });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });

  it('the hook that lets a caller in is the only check: the network and the secret are consulted once per review', async () => {
    const response = await app.inject({ method: 'POST', url: `/sidecarset-default/${SECRET}`, headers: json, payload: sidecarSetReview('uid-once'), remoteAddress: '198.51.100.1' });
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body).response.uid).toBe('uid-once');
    expect(checks).toEqual({ network: 1, secretRefresh: 1 });
  });
});
