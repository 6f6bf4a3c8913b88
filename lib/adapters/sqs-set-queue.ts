/**
 * The controller's queue on AWS: set names (and admitted changes) sent to
 * status-sync's SQS FIFO queue (lib/status-sync/queue-message.ts), ten to a
 * SendMessageBatch. The SDK is imported on the first send, so a function
 * that never sends pays nothing for it at cold start.
 */
import { errorMessage } from '../errors.ts';
import { setMessage, type SetWork } from '../status-sync/queue-message.ts';

/** status-sync's queue URL; set (by the CDK stack) on the functions that hand it sets, and on status-sync. */
export const ENV_STATUS_SYNC_QUEUE_URL = 'STATUS_SYNC_QUEUE_URL';

export interface SqsQueueOptions {
  /** Overrides the service endpoint (tests point it at a local SQS-compatible server). */
  endpoint?: string;
  region?: string;
  /**
   * The wire protocol: the SDK's JSON one (default), or the Query protocol,
   * which SQS serves too, for SQS-compatible servers that speak only it.
   */
  protocol?: 'json' | 'query';
  /** The SDK's own attempts per request. Default 2. */
  maxAttempts?: number;
}

/** Sends work for sets; resolves once SQS stored every message, else throws naming the sets it did not store. */
export type SetQueueSender = (work: readonly SetWork[], signal?: AbortSignal) => Promise<void>;

export class SetQueueError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SetQueueError';
  }
}

/** SendMessageBatch takes at most ten entries. */
const BATCH = 10;

type Sdk = typeof import('@aws-sdk/client-sqs');

async function sqsClient(options: SqsQueueOptions): Promise<{ sdk: Sdk; client: InstanceType<Sdk['SQSClient']> }> {
  const sdk = await import('@aws-sdk/client-sqs');
  const { AwsQueryProtocol } = await import('@aws-sdk/core/protocols');
  const query = options.protocol === 'query' ? { protocol: AwsQueryProtocol, protocolSettings: { defaultNamespace: 'com.amazonaws.sqs', xmlNamespace: 'http://queue.amazonaws.com/doc/2012-11-05/', version: '2012-11-05' } } : {};
  const client = new sdk.SQSClient({
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(options.region === undefined ? {} : { region: options.region }),
    maxAttempts: options.maxAttempts ?? 2,
    ...query,
  });
  return { sdk, client };
}

/** A sender to `queueUrl`, one client per cold start. */
export function sqsSetQueue(queueUrl: string, options: SqsQueueOptions = {}): SetQueueSender {
  let loaded: ReturnType<typeof sqsClient> | undefined;
  return async (work, signal) => {
    if (work.length === 0) return;
    const { sdk, client } = await (loaded ??= sqsClient(options));
    const now = Date.now();
    const failed: string[] = [];
    for (let i = 0; i < work.length; i += BATCH) {
      const slice = work.slice(i, i + BATCH);
      const entries = slice.map((w, j) => {
        const message = setMessage(w, now);
        return { Id: String(j), MessageBody: message.body, MessageGroupId: message.group, MessageDeduplicationId: message.deduplicationId };
      });
      try {
        const answer = await client.send(new sdk.SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }), signal === undefined ? {} : { abortSignal: signal });
        for (const entry of answer.Failed ?? []) failed.push(`${slice[Number(entry.Id)]?.sidecarSet ?? '?'} (${entry.Code ?? ''} ${entry.Message ?? ''})`.trim());
      } catch (error) {
        throw new SetQueueError(`cannot send ${slice.map((w) => w.sidecarSet).join(', ')} to ${queueUrl}: ${errorMessage(error)}`, { cause: error });
      }
    }
    if (failed.length > 0) throw new SetQueueError(`the queue did not store the messages of ${failed.join(', ')}`);
  };
}
