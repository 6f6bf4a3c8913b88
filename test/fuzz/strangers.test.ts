/**
 * Strangers cost nothing: neither entry point reads the body of a request that does
 * not carry the secret (nor, on Lambda, of a caller's request with the wrong
 * method or content type), and the answer is the same short 404 whatever was
 * sent. The fuzz properties check the answers; these check the work not done.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { Agent, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { DEFAULT_MAX_BODY_BYTES } from '../../lib/webhooks/http-handler.ts';
import { ADMISSION_FUNCTIONS, type AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { buildApp } from '../../functions/server/app.ts';
import { generateServingTls } from '../../functions/server/tls.ts';
import { admissionLambda } from '../../functions/shared/admission-lambda.ts';
import { admissionRuntime } from '../../functions/shared/compose.ts';
import { functionUrlEvent, SECRET, sidecarSetReview, STRANGER_SECRET, type EventOptions } from '../../testkit/reviews.ts';
import { ClusterView, discardingLogger, fuzzClock } from '../../testkit/fuzz/handlers.ts';

const NOT_FOUND_BODY = '{"message":"Not Found"}';

/** A review padded to just under the size limit: the most a stranger can make a function receive. */
const largest = (() => {
  const review = sidecarSetReview('uid-large') as { request: { object: { metadata: Record<string, unknown> } } };
  review.request.object.metadata.padding = '';
  const room = DEFAULT_MAX_BODY_BYTES - Buffer.byteLength(JSON.stringify(review)) - 8;
  review.request.object.metadata.padding = 'p'.repeat(room);
  return JSON.stringify(review);
})();

describe('the Lambda handler', () => {
  const view = new ClusterView();

  /** A Function URL event whose body counts how often it is read. */
  function countingEvent(options: EventOptions) {
    const event = functionUrlEvent(options);
    const { body } = event;
    let reads = 0;
    Object.defineProperty(event, 'body', {
      get() {
        reads++;
        return body;
      },
    });
    return { event, reads: () => reads };
  }

  it.each<{ why: string; options: EventOptions }>([
    { why: 'a wrong secret in the path', options: { path: `/${STRANGER_SECRET}` } },
    { why: 'no secret', options: { path: '/' } },
    { why: 'a wrong Bearer token', options: { path: '/', headers: { authorization: `Bearer ${STRANGER_SECRET}` } } },
    { why: 'a wrong secret, a PUT and a text body', options: { path: `/${STRANGER_SECRET}`, method: 'PUT', headers: { 'content-type': 'text/plain' } } },
  ])('never reads the 6 MB body of a stranger with $why, and answers the bare 404', async ({ options }) => {
    for (const fn of ADMISSION_FUNCTIONS) {
      const handler = await admissionLambda(fn, {
        env: { WEBHOOK_SECRET: SECRET },
        overrides: { logger: discardingLogger, clock: fuzzClock },
        cluster: () => Promise.resolve({ sidecarSets: view.sidecarSets, namespaces: view.namespaces, server: 'memory' }),
      });
      const { event, reads } = countingEvent({ body: largest, ...options });
      const started = performance.now();
      const result = await handler(event);
      const elapsed = performance.now() - started;
      expect(result).toEqual({ statusCode: 404, headers: { 'content-type': 'application/json' }, body: NOT_FOUND_BODY, isBase64Encoded: false });
      // The proof that nothing was done with it; the time is only a loose sanity bound.
      expect(reads()).toBe(0);
      expect(elapsed).toBeLessThan(1_000);
    }
  });

  it.each<{ why: string; options: EventOptions; status: number }>([
    { why: 'a GET', options: { method: 'GET' }, status: 405 },
    { why: 'a text/plain body', options: { headers: { 'content-type': 'text/plain' } }, status: 415 },
  ])('does not read the body of a caller with the secret and $why either', async ({ options, status }) => {
    const handler = await admissionLambda('sidecarset-default', { env: { WEBHOOK_SECRET: SECRET }, overrides: { logger: discardingLogger } });
    const { event, reads } = countingEvent({ body: largest, ...options });
    const result = await handler(event);
    expect(result).toMatchObject({ statusCode: status });
    expect(reads()).toBe(0);
  });
});

describe('the HTTPS server', () => {
  let app: FastifyInstance;
  let port: number;
  let ca: string;

  beforeAll(async () => {
    const tls = generateServingTls();
    ca = tls.caPem;
    const view = new ClusterView();
    const sources = { sidecarSets: view.sidecarSets, namespaces: view.namespaces };
    app = buildApp({
      runtimes: Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, admissionRuntime(fn, { current: SECRET }, sources, discardingLogger, fuzzClock)])),
      readiness: () => Promise.resolve({ ready: true, message: 'memory' }),
      https: { key: tls.keyPem, cert: tls.certPem },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await app.close();
  });

  /**
   * Sends the headers of a request announcing `announced` bytes of body,
   * then none of the body: an answer can only come from a server that does
   * not wait for it.
   */
  function announce(fn: AdmissionFunctionName, path: string, announced: number, headers: Record<string, string> = {}): Promise<{ status: number; body: string; ms: number }> {
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const req = request(
        {
          host: '127.0.0.1',
          port,
          ca,
          agent: new Agent({ ca }),
          method: 'POST',
          path: `/${fn}${path}`,
          headers: { 'content-type': 'application/json', 'content-length': announced, ...headers },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started });
            req.destroy();
          });
        },
      );
      req.on('error', reject);
      req.flushHeaders();
    });
  }

  it.each(ADMISSION_FUNCTIONS)('answers a stranger to %s with the bare 404 before a byte of the announced body arrives', async (fn) => {
    for (const [path, headers] of [
      [`/${STRANGER_SECRET}`, {}],
      ['/', { authorization: `Bearer ${STRANGER_SECRET}` }],
      ['/', {}],
    ] as const) {
      const answer = await announce(fn, path, DEFAULT_MAX_BODY_BYTES, headers);
      expect({ status: answer.status, body: answer.body }).toEqual({ status: 404, body: NOT_FOUND_BODY });
      expect(answer.ms).toBeLessThan(2_000);
    }
  });

  it('answers a caller announcing more than the transport limit with 413 before the body arrives, without details', async () => {
    const answer = await announce('pod-inject', `/${SECRET}`, DEFAULT_MAX_BODY_BYTES * 2 + 1);
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 413, body: '{"message":"the body is too large"}' });
  });
});
