/**
 * The Lambda handlers as Lambda runs them: composed from the environment once,
 * then invoked with Function URL events (payload format 2.0) shaped as the
 * service delivers them. Secrets Manager and the Kubernetes API are local
 * servers on 127.0.0.1 speaking their real protocols.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { LambdaFunctionURLResult } from 'aws-lambda';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stringify } from 'yaml';
import { SecretReadError, secretsManagerReader, secretsManagerStore } from '../../lib/adapters/secrets-manager.ts';
import { applyPatch, decodePatch } from '../../testkit/json-patch.ts';
import { CallerSecretError } from '../../lib/auth/caller-auth.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../../lib/webhooks/http-door.ts';
import { admissionLambda } from '../../functions/shared/admission-lambda.ts';
import { clusterSources } from '../../functions/shared/cluster.ts';
import { ConfigurationError } from '../../functions/shared/compose.ts';
import { sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { appPod, capturingLogger, functionUrlEvent, podReview, PREVIOUS_SECRET, SECRET, sidecarSetReview, STRANGER_SECRET, userSidecarSet } from '../../testkit/reviews.ts';

/** A Function URL result is a structured object here, never Lambda's bare-string shorthand. */
function structured(result: LambdaFunctionURLResult) {
  if (typeof result === 'string') throw new Error(`expected a structured result, got the string ${result}`);
  return { ...result, json: JSON.parse(result.body ?? '') };
}

const secretEnv = { WEBHOOK_SECRET: SECRET };

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

describe('the functions that read the cluster', () => {
  it.each(['pod-inject', 'sidecarset-validate'] as const)('%s refuses to start without cluster credentials, naming the variables', async (fn) => {
    const start = admissionLambda(fn, { env: secretEnv, overrides: { logger: capturingLogger().logger }, cluster: clusterSources });
    await expect(start).rejects.toThrow(ConfigurationError);
    await expect(start).rejects.toThrow(
      'no cluster credentials: set KUBECONFIG (a file), KUBECONFIG_CONTENT (its YAML) or KUBECONFIG_SECRET_ARN (a Secrets Manager secret)',
    );
  });

  it.each(['pod-inject', 'sidecarset-validate'] as const)('%s refuses to start with two sources of credentials', async (fn) => {
    const start = admissionLambda(fn, {
      env: { ...secretEnv, KUBECONFIG: '/kube/config', KUBECONFIG_CONTENT: 'apiVersion: v1' },
      overrides: { logger: capturingLogger().logger },
      cluster: clusterSources,
    });
    await expect(start).rejects.toThrow('set only one of KUBECONFIG, KUBECONFIG_CONTENT');
  });

  it('pod-inject refuses to start when its kubeconfig file does not exist, naming it', async () => {
    const start = admissionLambda('pod-inject', {
      env: { ...secretEnv, KUBECONFIG: '/nonexistent/kubeconfig.yaml' },
      overrides: { logger: capturingLogger().logger },
      cluster: clusterSources,
    });
    await expect(start).rejects.toThrow('kubeconfig from file /nonexistent/kubeconfig.yaml: the file cannot be read');
  });

  it('checks the caller secret before the cluster credentials', async () => {
    await expect(admissionLambda('pod-inject', { env: {}, cluster: clusterSources })).rejects.toThrow(CallerSecretError);
  });
});

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
  });
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => {
    server.close(() => {
      resolve();
    });
  });
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    request.on('error', reject);
  });
}

function reply(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/** The Kubernetes API answering the one call the functions make: list SidecarSets. */
function standInApiServer(answer: (response: ServerResponse) => void) {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(`${request.method ?? ''} ${request.url ?? ''}`);
    if (request.url?.startsWith('/apis/apps.kruise.io/v1alpha1/sidecarsets') === true) answer(response);
    else reply(response, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound', message: 'not found' });
  });
  return { server, seen };
}

function kubeconfigFor(url: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'stand-in', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'webhook', user: { token: 'stand-in-token' } }],
    contexts: [{ name: 'stand-in', context: { cluster: 'stand-in', user: 'webhook' } }],
    'current-context': 'stand-in',
  });
}

const sidecarSetList = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSetList', metadata: { resourceVersion: '7' }, items: [sidecarSet('log-agent')] };

describe('pod-inject and sidecarset-validate against a stand-in API server', () => {
  let answer: (response: ServerResponse) => void = (response) => {
    reply(response, 200, sidecarSetList);
  };
  const api = standInApiServer((response) => {
    answer(response);
  });
  let env: Record<string, string>;

  beforeAll(async () => {
    env = { ...secretEnv, KUBECONFIG_CONTENT: kubeconfigFor(await listen(api.server)), SIDECARSET_CACHE_MAX_STALENESS_MS: '0' };
  });
  afterEach(() => {
    api.server.closeAllConnections();
    api.seen.length = 0;
  });
  afterAll(async () => {
    await close(api.server);
  });

  it('pod-inject injects the sidecars the API server lists', async () => {
    answer = (response) => {
      reply(response, 200, sidecarSetList);
    };
    const { logger, entries } = capturingLogger();
    const handler = await admissionLambda('pod-inject', { env, overrides: { logger }, cluster: clusterSources });
    const result = structured(await handler(functionUrlEvent({ body: JSON.stringify(podReview('uid-inject')) })));
    expect(result.statusCode).toBe(200);
    expect(result.json.response).toMatchObject({ uid: 'uid-inject', allowed: true, patchType: 'JSONPatch' });
    const pod = applyPatch(appPod(), decodePatch(result.json.response.patch)) as { spec: { containers: { name: string }[] } };
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['log-agent-sidecar', 'app']);
    expect(api.seen).toEqual(['GET /apis/apps.kruise.io/v1alpha1/sidecarsets']);
    expect(entries()).toEqual([expect.objectContaining({ function: 'pod-inject', uid: 'uid-inject', outcome: 'patched' })]);
  });

  it.each([
    { fn: 'pod-inject' as const, review: podReview('uid-503') },
    { fn: 'sidecarset-validate' as const, review: sidecarSetReview('uid-503', defaultSidecarSet(userSidecarSet() as SidecarSet)) },
  ])('$fn answers 503, not a denial, when the API server fails', async ({ fn, review }) => {
    answer = (response) => {
      reply(response, 500, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500, reason: 'InternalError', message: 'etcd is down' });
    };
    const { logger, entries } = capturingLogger();
    const handler = await admissionLambda(fn, { env, overrides: { logger }, cluster: clusterSources });
    const result = structured(await handler(functionUrlEvent({ body: JSON.stringify(review) })));
    expect(result.statusCode).toBe(503);
    expect(result.json).not.toHaveProperty('response');
    expect(result.json.message).toContain('etcd is down');
    expect(entries()).toEqual([expect.objectContaining({ level: 'error', function: fn, uid: 'uid-503', outcome: 'failed', statusCode: 503 })]);
  });

  it('pod-inject answers 503 inside the ?timeout= deadline when the API server hangs', async () => {
    answer = () => undefined;
    const handler = await admissionLambda('pod-inject', { env, overrides: { logger: capturingLogger().logger }, cluster: clusterSources });
    const started = performance.now();
    const result = structured(await handler(functionUrlEvent({ body: JSON.stringify(podReview('uid-hang')), query: 'timeout=2s' })));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(result.statusCode).toBe(503);
  });
});

/**
 * AWS Secrets Manager's JSON 1.1 protocol on 127.0.0.1: POST / with
 * X-Amz-Target: secretsmanager.GetSecretValue.
 */
describe('secrets from a Secrets Manager endpoint', () => {
  const secrets = new Map<string, { SecretString?: string; SecretBinary?: string }>();
  const calls: { target: string | undefined; contentType: string | undefined; authorization: string | undefined; body: Record<string, unknown> }[] = [];
  const server = createServer((request, response) => {
    void readBody(request).then((text) => {
      const body = JSON.parse(text) as Record<string, unknown>;
      const target = request.headers['x-amz-target'] as string | undefined;
      calls.push({ target, contentType: request.headers['content-type'], authorization: request.headers.authorization, body });
      const headers = { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': 'f00d' };
      const id = typeof body.SecretId === 'string' ? body.SecretId : '';
      const stored = secrets.get(id);
      if (request.method === 'POST' && request.url === '/' && target === 'secretsmanager.PutSecretValue' && stored !== undefined && typeof body.SecretString === 'string') {
        secrets.set(id, { SecretString: body.SecretString });
        reply(response, 200, { ARN: id, Name: id.split(':').at(-1), VersionId: 'v2', VersionStages: ['AWSCURRENT'] }, headers);
      } else if (request.method !== 'POST' || request.url !== '/' || target !== 'secretsmanager.GetSecretValue') {
        reply(response, 400, { __type: 'UnknownOperationException' }, headers);
      } else if (stored === undefined) {
        reply(response, 400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." }, headers);
      } else {
        reply(response, 200, { ARN: id, Name: id.split(':').at(-1), VersionId: 'v1', VersionStages: ['AWSCURRENT'], CreatedDate: 1_796_040_000, ...stored }, headers);
      }
    });
  });
  const saved: Record<string, string | undefined> = {};
  const fakeCredentials = { AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', AWS_SESSION_TOKEN: undefined };
  let endpoint: string;
  const region = 'eu-west-1';
  const callerArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:webhook-caller-AbCdEf';
  const kubeconfigArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:webhook-kubeconfig-GhIjKl';
  const missingArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:missing-MnOpQr';

  beforeAll(async () => {
    for (const [key, value] of Object.entries(fakeCredentials)) {
      saved[key] = process.env[key];
      if (value === undefined) Reflect.deleteProperty(process.env, key);
      else process.env[key] = value;
    }
    endpoint = await listen(server);
  });
  afterEach(() => {
    calls.length = 0;
    secrets.clear();
  });
  afterAll(async () => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) Reflect.deleteProperty(process.env, key);
      else process.env[key] = value;
    }
    await close(server);
  });

  describe('secretsManagerReader', () => {
    it('reads a string secret with a signed GetSecretValue call', async () => {
      secrets.set(callerArn, { SecretString: 'the value' });
      await expect(secretsManagerReader({ endpoint, region })(callerArn)).resolves.toBe('the value');
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ target: 'secretsmanager.GetSecretValue', contentType: 'application/x-amz-json-1.1', body: { SecretId: callerArn } });
      expect(calls[0]?.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/eu-west-1\/secretsmanager\/aws4_request, /);
    });

    it('says which secret was not found', async () => {
      const read = secretsManagerReader({ endpoint, region })(missingArn);
      await expect(read).rejects.toThrow(SecretReadError);
      await expect(read).rejects.toThrow(`cannot read secret ${missingArn}: Secrets Manager can't find the specified secret.`);
      // A client error is not retried.
      expect(calls).toHaveLength(1);
    });

    it('refuses a binary secret', async () => {
      secrets.set(callerArn, { SecretBinary: Buffer.from('bytes').toString('base64') });
      await expect(secretsManagerReader({ endpoint, region })(callerArn)).rejects.toThrow(
        `secret ${callerArn} has no string value (binary secrets are not supported)`,
      );
    });
  });

  describe('secretsManagerStore', () => {
    it('writes the secret with a signed PutSecretValue call and reads it back', async () => {
      secrets.set(callerArn, { SecretString: SECRET });
      const store = secretsManagerStore(callerArn, { endpoint, region });
      await store.write(JSON.stringify({ current: PREVIOUS_SECRET }));
      await expect(store.read()).resolves.toBe(JSON.stringify({ current: PREVIOUS_SECRET }));
      expect(calls.map((c) => c.target)).toEqual(['secretsmanager.PutSecretValue', 'secretsmanager.GetSecretValue']);
      expect(calls[0]?.body).toMatchObject({ SecretId: callerArn, SecretString: JSON.stringify({ current: PREVIOUS_SECRET }) });
      expect(calls[0]?.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/eu-west-1\/secretsmanager\/aws4_request, /);
    });

    it('says which secret could not be written', async () => {
      await expect(secretsManagerStore(missingArn, { endpoint, region }).write('{}')).rejects.toThrow(`cannot write secret ${missingArn}: `);
    });
  });

  describe('admissionLambda with WEBHOOK_SECRET_ARN', () => {
    const review = sidecarSetReview('uid-arn');

    it('re-reads the secret after WEBHOOK_SECRET_REFRESH_MS, so a rotation reaches a warm function', async () => {
      secrets.set(callerArn, { SecretString: JSON.stringify({ current: SECRET }) });
      const handler = await admissionLambda('sidecarset-default', {
        env: { WEBHOOK_SECRET_ARN: callerArn, WEBHOOK_SECRET_REFRESH_MS: '1000' },
        overrides: { readSecret: secretsManagerReader({ endpoint, region }), logger: capturingLogger().logger },
      });
      const statusFor = async (secret: string) => structured(await handler(functionUrlEvent({ body: JSON.stringify(review), secret }))).statusCode;
      // Rotation phase 1: the new secret beside the old one.
      secrets.set(callerArn, { SecretString: JSON.stringify({ current: STRANGER_SECRET, previous: SECRET, rotation: { phase: 'propagating', since: new Date().toISOString() } }) });
      expect(await statusFor(STRANGER_SECRET)).toBe(404);
      expect(calls).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 1_100));
      expect(await statusFor(STRANGER_SECRET)).toBe(200);
      expect(await statusFor(SECRET)).toBe(200);
      expect(calls).toHaveLength(2);
      // Rotation phase 3: the old secret dropped.
      secrets.set(callerArn, { SecretString: JSON.stringify({ current: STRANGER_SECRET }) });
      await new Promise((r) => setTimeout(r, 1_100));
      expect(await statusFor(SECRET)).toBe(404);
      expect(await statusFor(STRANGER_SECRET)).toBe(200);
    });

    it('keeps serving with the last secrets read when a re-read fails', async () => {
      secrets.set(callerArn, { SecretString: JSON.stringify({ current: SECRET }) });
      const { logger, entries } = capturingLogger();
      const handler = await admissionLambda('sidecarset-default', {
        env: { WEBHOOK_SECRET_ARN: callerArn, WEBHOOK_SECRET_REFRESH_MS: '1000' },
        overrides: { readSecret: secretsManagerReader({ endpoint, region }), logger },
      });
      secrets.set(callerArn, { SecretString: JSON.stringify({ current: 'a'.repeat(43) }) });
      await new Promise((r) => setTimeout(r, 1_100));
      expect(structured(await handler(functionUrlEvent({ body: JSON.stringify(review) }))).statusCode).toBe(200);
      expect(entries()).toContainEqual(expect.objectContaining({ level: 'error', message: 'caller secrets not re-read; serving with the last ones read' }));
    });

    it('accepts the current and the previous secret held in the secret as JSON, and no other', async () => {
      secrets.set(callerArn, { SecretString: JSON.stringify({ current: SECRET, previous: PREVIOUS_SECRET }) });
      const handler = await admissionLambda('sidecarset-default', {
        env: { WEBHOOK_SECRET_ARN: callerArn },
        overrides: { readSecret: secretsManagerReader({ endpoint, region }), logger: capturingLogger().logger },
      });
      expect(calls).toHaveLength(1);
      const statusFor = async (path: string) => structured(await handler(functionUrlEvent({ body: JSON.stringify(review), path }))).statusCode;
      expect(await statusFor(`/${SECRET}`)).toBe(200);
      expect(await statusFor(`/${PREVIOUS_SECRET}`)).toBe(200);
      expect(await statusFor(`/${STRANGER_SECRET}`)).toBe(404);
      // Read once per cold start, not per request.
      expect(calls).toHaveLength(1);
    });

    it('accepts a bare secret string', async () => {
      secrets.set(callerArn, { SecretString: `${SECRET}\n` });
      const handler = await admissionLambda('sidecarset-default', {
        env: { WEBHOOK_SECRET_ARN: callerArn },
        overrides: { readSecret: secretsManagerReader({ endpoint, region }), logger: capturingLogger().logger },
      });
      expect(structured(await handler(functionUrlEvent({ body: JSON.stringify(review) }))).statusCode).toBe(200);
    });

    it('refuses to start when the secret does not exist, naming it', async () => {
      const start = admissionLambda('sidecarset-default', {
        env: { WEBHOOK_SECRET_ARN: missingArn },
        overrides: { readSecret: secretsManagerReader({ endpoint, region }) },
      });
      await expect(start).rejects.toThrow(SecretReadError);
      await expect(start).rejects.toThrow(`cannot read secret ${missingArn}: Secrets Manager can't find the specified secret.`);
    });

    it('refuses to start when the secret holds a weak value, without quoting it', async () => {
      secrets.set(callerArn, { SecretString: JSON.stringify({ current: 'letmein' }) });
      const start = admissionLambda('sidecarset-default', {
        env: { WEBHOOK_SECRET_ARN: callerArn },
        overrides: { readSecret: secretsManagerReader({ endpoint, region }) },
      });
      await expect(start).rejects.toThrow(`secret WEBHOOK_SECRET_ARN=${callerArn} (current) is 7 characters`);
      await expect(start).rejects.not.toThrow(/letmein/);
    });
  });

  describe('pod-inject with KUBECONFIG_SECRET_ARN', () => {
    const api = standInApiServer((response) => {
      reply(response, 200, sidecarSetList);
    });
    let apiUrl: string;
    beforeAll(async () => {
      apiUrl = await listen(api.server);
    });
    afterAll(async () => {
      await close(api.server);
    });

    it('reads the caller secret and the kubeconfig from Secrets Manager and injects', async () => {
      secrets.set(callerArn, { SecretString: SECRET });
      secrets.set(kubeconfigArn, { SecretString: kubeconfigFor(apiUrl) });
      const handler = await admissionLambda('pod-inject', {
        env: { WEBHOOK_SECRET_ARN: callerArn, KUBECONFIG_SECRET_ARN: kubeconfigArn },
        overrides: { readSecret: secretsManagerReader({ endpoint, region }), logger: capturingLogger().logger },
        cluster: clusterSources,
      });
      expect(calls.map((c) => c.body.SecretId)).toEqual([callerArn, kubeconfigArn]);
      const result = structured(await handler(functionUrlEvent({ body: JSON.stringify(podReview('uid-sm')) })));
      expect(result.statusCode).toBe(200);
      expect(result.json.response).toMatchObject({ uid: 'uid-sm', allowed: true, patchType: 'JSONPatch' });
    });

    it('refuses to start when the kubeconfig secret does not exist, naming it', async () => {
      secrets.set(callerArn, { SecretString: SECRET });
      const start = admissionLambda('pod-inject', {
        env: { WEBHOOK_SECRET_ARN: callerArn, KUBECONFIG_SECRET_ARN: missingArn },
        overrides: { readSecret: secretsManagerReader({ endpoint, region }) },
        cluster: clusterSources,
      });
      await expect(start).rejects.toThrow(`kubeconfig from Secrets Manager secret ${missingArn}: loading it failed (cannot read secret ${missingArn}`);
    });
  });
});
