/**
 * The controller's queue on AWS against a real SQS API (goaws, an
 * SQS-compatible server, testkit/sqs/goaws.ts): set names and admitted
 * changes sent by the adapter come back as the messages status-sync reads,
 * a set's messages are one FIFO group (never handed out twice at once), and
 * a burst of one set's triggers within a second is one message; and the
 * webhooks, composed with STATUS_SYNC_QUEUE_URL, send a pod change's sets in
 * one SendMessageBatch and an admitted change as its message.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ReceiveMessageCommand, DeleteMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { RETIRED_STATUS_SYNC_FUNCTION } from '../../lib/adapters/queue-rollout-trigger.ts';
import { ENV_STATUS_SYNC_QUEUE_URL, sqsSetQueue } from '../../lib/adapters/sqs-set-queue.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { admissionLambda } from '../../functions/shared/admission-lambda.ts';
import { ConfigurationError } from '../../functions/shared/compose.ts';
import { appPod, capturingLogger, functionUrlEvent, podStatusReview, SECRET, sidecarSetReview, userSidecarSet } from '../../testkit/reviews.ts';
import { structured } from '../shared/function-url-result.ts';
import { parseSetMessage } from '../../lib/status-sync/queue-message.ts';
import { goawsClient, startGoaws, type Goaws } from '../../testkit/sqs/goaws.ts';

let sqs: Goaws;
let client: SQSClient;

beforeAll(async () => {
  sqs = await startGoaws([{ name: 'names.fifo' }, { name: 'groups.fifo' }, { name: 'burst.fifo' }, { name: 'triggers.fifo' }, { name: 'admitted.fifo' }]);
  client = goawsClient(sqs);
}, 300_000);

afterAll(async () => {
  client.destroy();
  await sqs.stop();
});

process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';

async function receive(queue: string, max = 10): Promise<{ body: string; group: string | undefined; receipt: string }[]> {
  const answer = await client.send(new ReceiveMessageCommand({ QueueUrl: sqs.queueUrl(queue), MaxNumberOfMessages: max }));
  // goaws does not return the MessageGroupId attribute: the set named in the body is the group the adapter sent.
  return (answer.Messages ?? []).map((m) => ({ body: m.Body ?? '', group: parseSetMessage(m.Body ?? '').sidecarSet, receipt: m.ReceiptHandle ?? '' }));
}

describe('the SQS set queue', () => {
  it('never hands out a second message of a set while the first is being processed', async () => {
    const send = sqsSetQueue(sqs.queueUrl('groups.fifo'), { endpoint: sqs.endpoint, region: 'us-east-1', protocol: 'query' });
    await send([{ sidecarSet: 'busy' }]);
    // A second message of the same set, not coalesced (another second's deduplication id).
    await new Promise((r) => setTimeout(r, 1_100));
    await send([{ sidecarSet: 'busy' }, { sidecarSet: 'other' }]);
    const first = await receive('groups.fifo', 1);
    expect(first.map((m) => m.group)).toEqual(['busy']);
    // While 'busy' is processed (not deleted, still invisible), only the other set comes out.
    const meanwhile = await receive('groups.fifo');
    expect(meanwhile.map((m) => m.group)).toEqual(['other']);
    // SQS then hands out the second 'busy' once the first is deleted; goaws 0.4.5 hides it for its visibility
    // timeout (30 s) instead, as it marks a locked group's message received without handing it out.
  }, 30_000);

  it('sends names and admitted changes that come back as the work status-sync reads, grouped by set', async () => {
    const send = sqsSetQueue(sqs.queueUrl('names.fifo'), { endpoint: sqs.endpoint, region: 'us-east-1', protocol: 'query' });
    const work = Array.from({ length: 12 }, (_, i) => ({ sidecarSet: `set-${i}` }));
    await send([...work, { sidecarSet: 'changed', change: { sidecarSet: 'changed', uid: 'u1', operation: 'UPDATE' as const, resourceVersion: '41' } }]);
    const seen: ReturnType<typeof parseSetMessage>[] = [];
    for (let i = 0; i < 5 && seen.length < 13; i++) {
      for (const m of await receive('names.fifo')) {
        seen.push(parseSetMessage(m.body));
        await client.send(new DeleteMessageCommand({ QueueUrl: sqs.queueUrl('names.fifo'), ReceiptHandle: m.receipt }));
      }
    }
    expect(seen.map((s) => s.sidecarSet).sort()).toEqual([...work.map((w) => w.sidecarSet), 'changed'].sort());
    expect(seen.find((s) => s.sidecarSet === 'changed')?.change).toEqual({ sidecarSet: 'changed', uid: 'u1', operation: 'UPDATE', resourceVersion: '41', sentAt: expect.any(Number) });
  }, 30_000);

  it('coalesces one set\'s burst of pod triggers within a second into one message', async () => {
    const send = sqsSetQueue(sqs.queueUrl('burst.fifo'), { endpoint: sqs.endpoint, region: 'us-east-1', protocol: 'query' });
    const pods = { sidecarSet: 'web', uid: '', operation: 'PODS' as const, resourceVersion: '' };
    await send(Array.from({ length: 10 }, () => ({ sidecarSet: 'web', change: pods })));
    const got = await receive('burst.fifo');
    expect(got.map((m) => m.group)).toEqual(['web']);
  }, 30_000);
});

/** A pass-through to goaws that counts the requests sent through it. */
async function countingProxy(target: string): Promise<{ endpoint: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server = createServer((incoming, outgoing) => {
    requests++;
    const forwarded = httpRequest(`${target}${incoming.url ?? '/'}`, { method: incoming.method, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => { resolve(); })),
  };
}

describe('the webhooks\' trigger on the SQS queue (STATUS_SYNC_QUEUE_URL)', () => {
  const selecting = ['a', 'b', 'c'].map((name) => defaultSidecarSet(userSidecarSet(name)));
  const cluster = () => Promise.resolve({ sidecarSets: memorySidecarSetSource(selecting), namespaces: memoryNamespaceSource([]), server: 'memory' });
  const pod = (ready: string) => ({ ...appPod(), metadata: { ...(appPod().metadata as Record<string, unknown>), name: 'web-0', annotations: { 'kruise.io/sidecarset-injected-list': 'a,b,c,gone' } }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready }] } });

  it('sends a pod change\'s sets (those stored that select the pod) in one SendMessageBatch, as PODS triggers grouped by set', async () => {
    const proxy = await countingProxy(sqs.endpoint);
    try {
      const handler = await admissionLambda('pod-change', {
        env: { WEBHOOK_SECRET: SECRET, [ENV_STATUS_SYNC_QUEUE_URL]: sqs.queueUrl('triggers.fifo') },
        overrides: { logger: capturingLogger().logger, statusSyncQueue: { endpoint: proxy.endpoint, region: 'us-east-1', protocol: 'query' } },
        cluster,
      });
      const answer = structured(await handler(functionUrlEvent({ body: JSON.stringify(podStatusReview('u1', pod('False'), pod('True'))) })));
      expect(JSON.parse(answer.body ?? '')).toMatchObject({ response: { allowed: true } });
      expect(proxy.requests()).toBe(1);
    } finally {
      await proxy.close();
    }
    const got = await receive('triggers.fifo');
    expect(got.map((m) => m.group).sort()).toEqual(['a', 'b', 'c']);
    expect(got.map((m) => parseSetMessage(m.body).change?.operation)).toEqual(['PODS', 'PODS', 'PODS']);
  }, 30_000);

  it('sends an admitted SidecarSet change from the validate function, and nothing on a dry run', async () => {
    const handler = await admissionLambda('sidecarset-validate', {
      env: { WEBHOOK_SECRET: SECRET, [ENV_STATUS_SYNC_QUEUE_URL]: sqs.queueUrl('admitted.fifo') },
      overrides: { logger: capturingLogger().logger, statusSyncQueue: { endpoint: sqs.endpoint, region: 'us-east-1', protocol: 'query' } },
      cluster: () => Promise.resolve({ sidecarSets: memorySidecarSetSource([]), namespaces: memoryNamespaceSource([]), server: 'memory' }),
    });
    const set = defaultSidecarSet(userSidecarSet('dns'));
    const review = sidecarSetReview('uid-1', { ...set, metadata: { ...set.metadata, uid: 'u-1' } });
    const dryRun = { ...review, request: { ...(review.request as Record<string, unknown>), uid: 'uid-0', dryRun: true } };
    expect(structured(await handler(functionUrlEvent({ body: JSON.stringify(dryRun) }))).statusCode).toBe(200);
    expect(await receive('admitted.fifo')).toEqual([]);
    expect(JSON.parse(structured(await handler(functionUrlEvent({ body: JSON.stringify(review) }))).body ?? '')).toMatchObject({ response: { allowed: true } });
    const got = await receive('admitted.fifo');
    expect(got.map((m) => parseSetMessage(m.body).change)).toEqual([{ sidecarSet: 'dns', uid: 'u-1', operation: 'CREATE', resourceVersion: '', sentAt: expect.any(Number) }]);
  }, 30_000);

  it('answers allowed, with a warning naming the sets, when the queue does not store them', async () => {
    const { logger, entries } = capturingLogger();
    const handler = await admissionLambda('pod-change', {
      env: { WEBHOOK_SECRET: SECRET, [ENV_STATUS_SYNC_QUEUE_URL]: sqs.queueUrl('no-such-queue.fifo') },
      overrides: { logger, statusSyncQueue: { endpoint: sqs.endpoint, region: 'us-east-1', protocol: 'query' } },
      cluster,
    });
    const answer = structured(await handler(functionUrlEvent({ body: JSON.stringify(podStatusReview('u2', pod('True'), pod('False'))) })));
    expect(JSON.parse(answer.body ?? '')).toMatchObject({ response: { allowed: true } });
    expect(entries().filter((e) => e.level === 'warn')).toEqual([expect.objectContaining({ message: 'could not start the reconcile for a pod change now; the schedule\'s resync will', sidecarSets: ['a', 'b', 'c'] })]);
  }, 30_000);

  it('refuses to start a webhook whose environment still sets the retired STATUS_SYNC_FUNCTION, naming what replaced it', async () => {
    const start = admissionLambda('pod-change', { env: { WEBHOOK_SECRET: SECRET, [RETIRED_STATUS_SYNC_FUNCTION]: 'sidecarset-status-sync' }, overrides: { logger: capturingLogger().logger }, cluster });
    await expect(start).rejects.toThrow(ConfigurationError);
    await expect(start).rejects.toThrow(/STATUS_SYNC_FUNCTION is no longer read.*STATUS_SYNC_QUEUE_URL/);
  });
});
