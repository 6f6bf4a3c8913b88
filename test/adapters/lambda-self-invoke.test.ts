/**
 * status-sync's self-requeue (lib/adapters/lambda-self-invoke.ts) with the
 * real AWS SDK against the Lambda Invoke API on 127.0.0.1 (POST
 * /2015-03-31/functions/<name>/invocations, X-Amz-Invocation-Type: Event,
 * 202): the one asynchronous invoke left; the webhooks send to the queue
 * (test/adapters/sqs-set-queue.integration.test.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CONTINUE_EVENT_KIND, parseContinueEvent, type ContinueEvent } from '../../lib/status-sync/admitted-event.ts';
import { SelfRequeueError, lambdaSelfInvoke } from '../../lib/adapters/lambda-self-invoke.ts';

interface Received {
  method: string | undefined;
  path: string | undefined;
  invocationType: string | undefined;
  authorization: string | undefined;
  body: string;
}

type Answer = (response: ServerResponse) => void;

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

describe('status-sync\'s self-requeue on the Lambda Invoke API', () => {
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

  it('sends status-sync its own self-requeue the same way (Event, signed), which it reads back as sent', async () => {
    const event: ContinueEvent = { kind: CONTINUE_EVENT_KIND, sets: ['log-agent', 'mesh'], from: 'c0ffee', sentAt: 1_764_600_000_000 };
    await lambdaSelfInvoke('sidecarset-status-sync', { endpoint })(event);
    expect(received).toHaveLength(1);
    expect(received[0]?.path).toBe('/2015-03-31/functions/sidecarset-status-sync/invocations');
    expect(received[0]?.invocationType).toBe('Event');
    expect(parseContinueEvent(JSON.parse(received[0]?.body ?? ''))).toEqual(event);
  });

  it('tells a self-requeue Lambda would not queue, after two attempts at the hand-over', async () => {
    answer = lambdaError(429, 'TooManyRequestsException', 'Rate Exceeded.');
    const outcome = lambdaSelfInvoke('sidecarset-status-sync', { endpoint })({ kind: CONTINUE_EVENT_KIND, sets: ['log-agent'], from: 'c0ffee', sentAt: 1 });
    await expect(outcome).rejects.toThrow(SelfRequeueError);
    await expect(outcome).rejects.toThrow(/cannot invoke sidecarset-status-sync to continue log-agent: Rate Exceeded\./);
    expect(received).toHaveLength(2);
  });

});
