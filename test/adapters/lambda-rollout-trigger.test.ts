/**
 * lib/adapters/lambda-rollout-trigger.ts with the real AWS SDK against the
 * Lambda Invoke API on 127.0.0.1 (POST /2015-03-31/functions/<name>/invocations,
 * X-Amz-Invocation-Type: Event, 202), and the validate function composed
 * from STATUS_SYNC_FUNCTION.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ENV_STATUS_SYNC_FUNCTION, lambdaRolloutTrigger, RolloutTriggerError, statusSyncTriggerFromEnv, StatusSyncFunctionError } from '../../lib/adapters/lambda-rollout-trigger.ts';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import type { AdmittedSidecarSet } from '../../lib/ports.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { CONTINUE_EVENT_KIND, parseAdmittedEvent, parseContinueEvent, type ContinueEvent } from '../../lib/status-sync/admitted-event.ts';
import { ContinuationError, lambdaSelfInvoke } from '../../lib/adapters/lambda-self-invoke.ts';
import { admissionLambda } from '../../functions/shared/admission-lambda.ts';
import { ConfigurationError } from '../../functions/shared/compose.ts';
import { capturingLogger, functionUrlEvent, SECRET, sidecarSetReview, userSidecarSet } from '../../testkit/reviews.ts';
import { structured } from '../shared/function-url-result.ts';

interface Received {
  method: string | undefined;
  path: string | undefined;
  invocationType: string | undefined;
  authorization: string | undefined;
  body: string;
}

type Answer = (response: ServerResponse) => void;

const change: AdmittedSidecarSet = { sidecarSet: 'log-agent', uid: '7c9e6679-7425-40de-944b-e07fc1f90ae7', operation: 'UPDATE', resourceVersion: '4711' };

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

/** Lambda's error shape for the REST-JSON protocol: the type in X-Amzn-ErrorType and the body. */
function lambdaError(status: number, type: string, message: string): Answer {
  return (response) => {
    response.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type, 'x-amzn-requestid': 'f00d' });
    response.end(JSON.stringify({ Type: 'User', message }));
  };
}

const queued: Answer = (response) => {
  response.writeHead(202, { 'x-amzn-requestid': 'f00d' });
  response.end();
};

describe('the rollout trigger on the Lambda Invoke API', () => {
  const received: Received[] = [];
  let answer: Answer = queued;
  const server = createServer((request, response) => {
    void readBody(request).then((body) => {
      received.push({ method: request.method, path: request.url, invocationType: request.headers['x-amz-invocation-type'] as string | undefined, authorization: request.headers.authorization, body });
      answer(response);
    });
  });
  const saved: Record<string, string | undefined> = {};
  const fakeCredentials = { AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', AWS_SESSION_TOKEN: undefined, AWS_REGION: 'eu-west-1' };
  let endpoint = '';

  beforeAll(async () => {
    for (const [key, value] of Object.entries(fakeCredentials)) {
      saved[key] = process.env[key];
      if (value === undefined) Reflect.deleteProperty(process.env, key);
      else process.env[key] = value;
    }
    await new Promise<void>((resolve) => {
      server.listen(0, '127.0.0.1', () => {
        resolve();
      });
    });
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(() => {
    received.length = 0;
    answer = queued;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) Reflect.deleteProperty(process.env, key);
      else process.env[key] = value;
    }
  });

  it('invokes the function asynchronously (Event) with the admitted-change event as the payload, signed', async () => {
    await lambdaRolloutTrigger('sidecarset-status-sync', { endpoint }).admitted(change);
    expect(received).toHaveLength(1);
    const [call] = received;
    expect(call?.method).toBe('POST');
    expect(call?.path).toBe('/2015-03-31/functions/sidecarset-status-sync/invocations');
    expect(call?.invocationType).toBe('Event');
    expect(call?.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/eu-west-1\/lambda\/aws4_request/);
    const payload = JSON.parse(call?.body ?? '') as unknown;
    expect(payload).toEqual({ kind: 'SidecarSetAdmitted', ...change, sentAt: expect.any(Number) });
    // What the receiver reads back is exactly what was admitted, with when it was sent (a pod change's settle and coverage read it).
    expect(parseAdmittedEvent(payload)).toEqual({ ...change, sentAt: expect.any(Number) });
  });

  it('sends status-sync its own continuation the same way (Event, signed), which it reads back as sent', async () => {
    const event: ContinueEvent = { kind: CONTINUE_EVENT_KIND, sets: ['log-agent', 'mesh'], from: 'c0ffee', sentAt: 1_764_600_000_000 };
    await lambdaSelfInvoke('sidecarset-status-sync', { endpoint })(event);
    expect(received).toHaveLength(1);
    expect(received[0]?.path).toBe('/2015-03-31/functions/sidecarset-status-sync/invocations');
    expect(received[0]?.invocationType).toBe('Event');
    expect(parseContinueEvent(JSON.parse(received[0]?.body ?? ''))).toEqual(event);
  });

  it('tells a continuation Lambda would not queue, after two attempts at the hand-over', async () => {
    answer = lambdaError(429, 'TooManyRequestsException', 'Rate Exceeded.');
    const outcome = lambdaSelfInvoke('sidecarset-status-sync', { endpoint })({ kind: CONTINUE_EVENT_KIND, sets: ['log-agent'], from: 'c0ffee', sentAt: 1 });
    await expect(outcome).rejects.toThrow(ContinuationError);
    await expect(outcome).rejects.toThrow(/cannot invoke sidecarset-status-sync to continue log-agent: Rate Exceeded\./);
    expect(received).toHaveLength(2);
  });

  it('puts a function ARN into the path as the API expects (URL-encoded)', async () => {
    const arn = 'arn:aws:lambda:eu-west-1:123456789012:function:sidecarset-status-sync';
    await lambdaRolloutTrigger(arn, { endpoint }).admitted(change);
    expect(received[0]?.path).toBe(`/2015-03-31/functions/${encodeURIComponent(arn)}/invocations`);
  });

  it.each([
    { what: 'a throttled invoke (429 TooManyRequestsException)', reply: lambdaError(429, 'TooManyRequestsException', 'Rate Exceeded.'), expected: /cannot invoke sidecarset-status-sync for SidecarSet log-agent: Rate Exceeded\./ },
    { what: 'a function that does not exist (404 ResourceNotFoundException)', reply: lambdaError(404, 'ResourceNotFoundException', 'Function not found: arn:aws:lambda:eu-west-1:123456789012:function:sidecarset-status-sync'), expected: /cannot invoke sidecarset-status-sync for SidecarSet log-agent: Function not found/ },
    { what: 'no permission (403 AccessDeniedException)', reply: lambdaError(403, 'AccessDeniedException', 'not authorized to perform: lambda:InvokeFunction'), expected: /not authorized to perform: lambda:InvokeFunction/ },
    {
      what: 'a synchronous answer (200) where a queued one (202) was asked for',
      reply: ((response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{}');
      }) satisfies Answer,
      expected: /invoking sidecarset-status-sync for SidecarSet log-agent answered 200, not 202 \(queued\)/,
    },
  ])('rejects with a clear error on $what, after one attempt', async ({ reply, expected }) => {
    answer = reply;
    const outcome = lambdaRolloutTrigger('sidecarset-status-sync', { endpoint }).admitted(change);
    await expect(outcome).rejects.toThrow(RolloutTriggerError);
    await expect(outcome).rejects.toThrow(expected);
    // Not retried: the webhook's answer waits for this, and the schedule covers a miss.
    expect(received).toHaveLength(1);
  });

  it('is cut off by its signal when the endpoint never answers', async () => {
    answer = () => undefined;
    const started = performance.now();
    const outcome = lambdaRolloutTrigger('sidecarset-status-sync', { endpoint }).admitted(change, AbortSignal.timeout(200));
    await expect(outcome).rejects.toThrow(RolloutTriggerError);
    // The bound is 200 ms; a hang would last until the test's own timeout.
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(received).toHaveLength(1);
  });

  it('the validate function composed with STATUS_SYNC_FUNCTION invokes it for an admitted change, and only then', async () => {
    const handler = await admissionLambda('sidecarset-validate', {
      env: { WEBHOOK_SECRET: SECRET, [ENV_STATUS_SYNC_FUNCTION]: 'sidecarset-status-sync' },
      overrides: { logger: capturingLogger().logger, lambdaEndpoint: endpoint },
      cluster: () => Promise.resolve({ sidecarSets: memorySidecarSetSource([]), namespaces: memoryNamespaceSource([]), server: 'memory' }),
    });
    const set = defaultSidecarSet(userSidecarSet('dns'));
    const review = sidecarSetReview('uid-1', { ...set, metadata: { ...set.metadata, uid: 'u-1' } });
    const allowed = structured(await handler(functionUrlEvent({ body: JSON.stringify(review) })));
    expect(allowed.statusCode).toBe(200);
    expect(JSON.parse(allowed.body ?? '')).toMatchObject({ response: { allowed: true } });
    expect(received.map((r) => JSON.parse(r.body) as unknown)).toEqual([{ kind: 'SidecarSetAdmitted', sidecarSet: 'dns', uid: 'u-1', operation: 'CREATE', resourceVersion: '', sentAt: expect.any(Number) }]);
    const dryRun = { ...review, request: { ...(review.request as Record<string, unknown>), uid: 'uid-2', dryRun: true } };
    expect(structured(await handler(functionUrlEvent({ body: JSON.stringify(dryRun) }))).statusCode).toBe(200);
    expect(received).toHaveLength(1);
  });

  it('a failed invoke is a warning in the validate function, and the change is still admitted', async () => {
    answer = lambdaError(429, 'TooManyRequestsException', 'Rate Exceeded.');
    const { logger, entries } = capturingLogger();
    const handler = await admissionLambda('sidecarset-validate', {
      env: { WEBHOOK_SECRET: SECRET, [ENV_STATUS_SYNC_FUNCTION]: 'sidecarset-status-sync' },
      overrides: { logger, lambdaEndpoint: endpoint },
      cluster: () => Promise.resolve({ sidecarSets: memorySidecarSetSource([]), namespaces: memoryNamespaceSource([]), server: 'memory' }),
    });
    const review = sidecarSetReview('uid-3', defaultSidecarSet(userSidecarSet('dns')));
    const result = structured(await handler(functionUrlEvent({ body: JSON.stringify(review) })));
    expect(JSON.parse(result.body ?? '')).toMatchObject({ response: { uid: 'uid-3', allowed: true } });
    expect(entries().filter((line) => line.level === 'warn')).toEqual([expect.objectContaining({ sidecarSet: 'dns', error: expect.stringMatching(/Rate Exceeded/) as unknown })]);
  });
});

describe('STATUS_SYNC_FUNCTION', () => {
  it.each([undefined, '', '  '])('configures no trigger when it is %p', (value) => {
    expect(statusSyncTriggerFromEnv({ [ENV_STATUS_SYNC_FUNCTION]: value })).toBeUndefined();
  });

  it.each(['sidecarset-status-sync', 'arn:aws:lambda:eu-west-1:123456789012:function:Stack-StatusSync1A2B3C', '123456789012:function:status-sync', 'status-sync:live'])('accepts the function name or ARN %p', (value) => {
    expect(statusSyncTriggerFromEnv({ [ENV_STATUS_SYNC_FUNCTION]: value })).toBeDefined();
  });

  it.each([
    { why: 'a space', value: 'status sync' },
    { why: 'a URL', value: 'https://lambda.eu-west-1.amazonaws.com/status-sync' },
    { why: 'a slash', value: 'a/b' },
    { why: 'over 170 characters', value: 'x'.repeat(171) },
  ])('refuses a value with $why, naming the variable', ({ value }) => {
    expect(() => statusSyncTriggerFromEnv({ [ENV_STATUS_SYNC_FUNCTION]: value })).toThrow(StatusSyncFunctionError);
    expect(() => statusSyncTriggerFromEnv({ [ENV_STATUS_SYNC_FUNCTION]: value })).toThrow(/^STATUS_SYNC_FUNCTION must be a Lambda function name or ARN/);
  });

  it('stops the validate function from starting when it names no function', async () => {
    const start = admissionLambda('sidecarset-validate', {
      env: { WEBHOOK_SECRET: SECRET, [ENV_STATUS_SYNC_FUNCTION]: 'not a function' },
      overrides: { logger: capturingLogger().logger },
      cluster: () => Promise.resolve({ sidecarSets: memorySidecarSetSource([]), namespaces: memoryNamespaceSource([]), server: 'memory' }),
    });
    await expect(start).rejects.toThrow(ConfigurationError);
    await expect(start).rejects.toThrow(/STATUS_SYNC_FUNCTION/);
  });
});
