/**
 * How the webhooks start the reconciler's reconciles on AWS: they send the sets'
 * names (an admitted change, or a pod trigger, as its SidecarSetAdmitted
 * event) to status-sync's SQS FIFO queue, the same messages and groups the
 * schedule's resync sends (lib/status-sync/queue-message.ts). One hand-over
 * is one SendMessageBatch: a pod change names at most ten sets
 * (pod-trigger.ts MAX_TRIGGERED_SETS), an admitted change one. The webhooks
 * hold sqs:SendMessage on that queue and nothing else of status-sync's: no
 * invoke, so a stolen webhook credential can only ask for reconciles (docs/
 * OPERATIONS.md, "Identities").
 *
 * The SDK is imported on the first send (sqs-set-queue.ts): the functions
 * that never trigger pay nothing for it at cold start.
 */
import { errorMessage } from '../errors.ts';
import type { AdmittedSidecarSet, RolloutTrigger } from '../ports.ts';
import { setMessage } from '../status-sync/queue-message.ts';
import { ENV_STATUS_SYNC_QUEUE_URL, sqsSetQueue, type SqsQueueOptions } from './sqs-set-queue.ts';

/**
 * The variable the webhooks once read to invoke status-sync directly;
 * still named so that a deployment that sets it is told what replaced it.
 */
export const RETIRED_STATUS_SYNC_FUNCTION = 'STATUS_SYNC_FUNCTION';

/** The trigger's settings cannot be used; start-up stops with this message. */
export class StatusSyncTriggerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StatusSyncTriggerError';
  }
}

/** The sets could not be handed over; the webhook logs this and answers anyway. */
export class RolloutTriggerError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RolloutTriggerError';
  }
}

/**
 * The trigger the environment configures: the controller's queue when
 * STATUS_SYNC_QUEUE_URL is set (the stack sets it), else none (the schedule
 * resync alone reconciles the sets).
 * @throws StatusSyncTriggerError when STATUS_SYNC_FUNCTION is set: it is no longer read, and a silent ignore would stop every trigger unnoticed.
 */
export function statusSyncTriggerFromEnv(env: Readonly<Record<string, string | undefined>>, options: SqsQueueOptions = {}): RolloutTrigger | undefined {
  if ((env[RETIRED_STATUS_SYNC_FUNCTION]?.trim() ?? '') !== '') {
    throw new StatusSyncTriggerError(`${RETIRED_STATUS_SYNC_FUNCTION} is no longer read: the webhooks send set names to status-sync's SQS queue; set ${ENV_STATUS_SYNC_QUEUE_URL} to its URL instead (the stack does)`);
  }
  const queueUrl = env[ENV_STATUS_SYNC_QUEUE_URL]?.trim() ?? '';
  return queueUrl === '' ? undefined : queueRolloutTrigger(queueUrl, options);
}

/** How long a container remembers what it sent: a message with the same deduplication id within it would be dropped by SQS anyway. */
class SentThisSecond {
  private second = 0;
  private readonly ids = new Set<string>();

  /** The changes whose messages this container has not sent within the current second. */
  unsent(changes: readonly AdmittedSidecarSet[], nowMs: number): { change: AdmittedSidecarSet; id: string }[] {
    if (Math.floor(nowMs / 1000) !== this.second) {
      this.second = Math.floor(nowMs / 1000);
      this.ids.clear();
    }
    const out = new Map<string, AdmittedSidecarSet>();
    for (const change of changes) {
      const id = setMessage({ sidecarSet: change.sidecarSet, change }, nowMs).deduplicationId;
      if (!this.ids.has(id) && !out.has(id)) out.set(id, change);
    }
    return [...out].map(([id, change]) => ({ change, id }));
  }

  add(ids: readonly string[]): void {
    for (const id of ids) this.ids.add(id);
  }
}

/**
 * Sends each hand-over's changes to the controller's queue in one request
 * (one attempt: the webhook's answer waits for it, and a missed trigger only
 * delays the reconcile to the next scheduled resync). A message this container sent
 * already within the same second is not sent again: SQS would drop it, and
 * a burst of one set's pod triggers would still pay a request each.
 */
export function queueRolloutTrigger(queueUrl: string, options: SqsQueueOptions = {}): RolloutTrigger {
  const send = sqsSetQueue(queueUrl, { ...options, maxAttempts: 1 });
  const sent = new SentThisSecond();
  return {
    async admitted(changes: readonly AdmittedSidecarSet[], signal?: AbortSignal): Promise<void> {
      const unsent = sent.unsent(changes, Date.now());
      if (unsent.length === 0) return;
      try {
        await send(unsent.map(({ change }) => ({ sidecarSet: change.sidecarSet, change })), signal);
        sent.add(unsent.map(({ id }) => id));
      } catch (error) {
        throw new RolloutTriggerError(`cannot queue SidecarSet(s) ${unsent.map(({ change }) => change.sidecarSet).join(', ')} for status-sync: ${errorMessage(error)}`, { cause: error });
      }
    },
  };
}
