/**
 * The controller's queue on AWS against a real SQS API (goaws, an
 * SQS-compatible server, testkit/sqs/goaws.ts): set names and admitted
 * changes sent by the adapter come back as the messages status-sync reads,
 * a set's messages are one FIFO group (never handed out twice at once), and
 * a burst of one set's triggers within a second is one message.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ReceiveMessageCommand, DeleteMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { sqsSetQueue } from '../../lib/adapters/sqs-set-queue.ts';
import { parseSetMessage } from '../../lib/status-sync/queue-message.ts';
import { goawsClient, startGoaws, type Goaws } from '../../testkit/sqs/goaws.ts';

let sqs: Goaws;
let client: SQSClient;

beforeAll(async () => {
  sqs = await startGoaws([{ name: 'names.fifo' }, { name: 'groups.fifo' }, { name: 'burst.fifo' }]);
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
