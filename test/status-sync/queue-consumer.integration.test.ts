/**
 * status-sync as the consumer of its queue on AWS: messages sent by the
 * adapter to a real SQS API (goaws, testkit/sqs/goaws.ts) and received from
 * it are handed to the Lambda as the SQS event source mapping hands them
 * (an SQSEvent); the sets they name get their reconcile, a message that cannot be
 * read is dropped and told, and a set whose reconcile failed has its message
 * reported in batchItemFailures, for SQS to hand out again.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SQSEvent } from 'aws-lambda';
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { statusSyncLambda } from '../../functions/status-sync/lambda.ts';
import { sqsSetQueue } from '../../lib/adapters/sqs-set-queue.ts';
import { capturingLogger } from '../../testkit/reviews.ts';
import { hashOf, listedPod, storedSet } from '../../testkit/status-sync-objects.ts';
import { goawsClient, startGoaws, type Goaws } from '../../testkit/sqs/goaws.ts';
import { apiStatus } from '../adapters/fake-api-server.ts';
import { fakeOneSetCluster } from './fake-cluster.ts';

process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
const context = { awsRequestId: 'req-q', getRemainingTimeInMillis: () => 60_000 };
const set = storedSet('log-agent');
const fake = fakeOneSetCluster(set, [listedPod({ name: 'a', injected: { 'log-agent': hashOf(set) } })]);
let sqs: Goaws;
let client: SQSClient;

beforeAll(async () => {
  sqs = await startGoaws([{ name: 'work.fifo' }, { name: 'failing.fifo' }]);
  client = goawsClient(sqs);
}, 300_000);

afterAll(async () => {
  client.destroy();
  await sqs.stop();
});

/** What Lambda's poller does: receive a batch and hand it over as an SQSEvent (deleting it is the poller's, after success). */
async function received(queue: string): Promise<SQSEvent> {
  const answer = await client.send(new ReceiveMessageCommand({ QueueUrl: sqs.queueUrl(queue), MaxNumberOfMessages: 10 }));
  const arn = `arn:aws:sqs:us-east-1:100010001000:${queue}`;
  return {
    Records: (answer.Messages ?? []).map((m) => ({
      messageId: m.MessageId ?? '', receiptHandle: m.ReceiptHandle ?? '', body: m.Body ?? '', attributes: {} as never, messageAttributes: {},
      md5OfBody: m.MD5OfBody ?? '', eventSource: 'aws:sqs', eventSourceARN: arn, awsRegion: 'us-east-1',
    })),
  };
}

describe('status-sync reading its queue', () => {
  it('reconciles the sets a batch names, drops and tells a message it cannot read, and reports no failure', async () => {
    const send = sqsSetQueue(sqs.queueUrl('work.fifo'), { endpoint: sqs.endpoint, region: 'us-east-1', protocol: 'query' });
    await send([{ sidecarSet: 'log-agent' }]);
    await client.send(new SendMessageCommand({ QueueUrl: sqs.queueUrl('work.fifo'), MessageBody: 'not json', MessageGroupId: 'x', MessageDeduplicationId: 'x1' }));
    const event = await received('work.fifo');
    expect(event.Records).toHaveLength(2);
    const { logger, entries } = capturingLogger();
    const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger }, queue: send, controllerBudgetMs: 5_000 });
    const result = await handler(event, context);
    expect(result).toMatchObject({ batchItemFailures: [], requeued: [] });
    expect(result.controller).toMatchObject({ reconciles: 1, errors: [] });
    expect(fake.seen.some((r) => r.method === 'PATCH' && r.url.includes('/sidecarsets/log-agent/status'))).toBe(true);
    expect(entries().filter((e) => e.message === 'status-sync queue message refused')).toEqual([expect.objectContaining({ level: 'error', error: expect.stringContaining('not JSON') })]);
    for (const record of event.Records) await client.send(new DeleteMessageCommand({ QueueUrl: sqs.queueUrl('work.fifo'), ReceiptHandle: record.receiptHandle }));
  }, 60_000);

  it('reports the message of a set whose reconcile failed, for SQS to hand out again', async () => {
    const send = sqsSetQueue(sqs.queueUrl('failing.fifo'), { endpoint: sqs.endpoint, region: 'us-east-1', protocol: 'query' });
    await send([{ sidecarSet: 'log-agent' }]);
    const event = await received('failing.fifo');
    const working = fake.route;
    // The set can be listed but not read: its reconcile fails at its first read.
    fake.route = (request) => (request.method === 'GET' && request.url.includes('/sidecarsets/log-agent') ? apiStatus(500, 'InternalError', 'etcd is down') : working(request));
    const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger: capturingLogger().logger }, queue: send, controllerBudgetMs: 1_500 });
    const result = await handler(event, context);
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: event.Records[0]?.messageId }]);
  }, 60_000);
});
