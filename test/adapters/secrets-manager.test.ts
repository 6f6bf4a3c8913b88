/**
 * lib/adapters/secrets-manager.ts against AWS Secrets Manager's protocol on
 * 127.0.0.1, and the functions that read their caller secret and kubeconfig
 * through it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SecretReadError, secretsManagerReader, secretsManagerStore } from '../../lib/adapters/secrets-manager.ts';
import { admissionLambda } from '../../functions/shared/admission-lambda.ts';
import { clusterSources } from '../../functions/shared/cluster.ts';
import { sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { capturingLogger, functionUrlEvent, podReview, PREVIOUS_SECRET, SECRET, sidecarSetReview, STRANGER_SECRET } from '../../testkit/reviews.ts';
import { structured } from '../shared/function-url-result.ts';
import { startFakeApiServer, type FakeApiServer } from './fake-api-server.ts';

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

const sidecarSetList = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSetList', metadata: { resourceVersion: '7' }, items: [sidecarSet('log-agent')] };

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
      secrets.set(callerArn, { SecretString: JSON.stringify({ current: 'too-short' }) });
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
    let api: FakeApiServer;
    beforeAll(async () => {
      api = await startFakeApiServer();
      api.route = () => ({ status: 200, body: sidecarSetList });
    });
    afterAll(async () => {
      await api.close();
    });

    it('reads the caller secret and the kubeconfig from Secrets Manager and injects', async () => {
      secrets.set(callerArn, { SecretString: SECRET });
      secrets.set(kubeconfigArn, { SecretString: api.kubeconfig() });
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
