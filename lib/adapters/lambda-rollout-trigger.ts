/**
 * Starts the reconciler's pass for an admitted SidecarSet change on AWS: an
 * asynchronous invoke (InvocationType `Event`) of the status-sync function
 * with the admitted-change event as its payload. Lambda queues the event and
 * answers 202 at once, so the webhook waits for the hand-over only, never
 * for the pass.
 *
 * The SDK is imported on the first admitted change (lambda-async-invoke.ts):
 * the functions that never trigger (pod-inject, defaulting, and validation
 * without STATUS_SYNC_FUNCTION) pay nothing for it at cold start.
 */
import { errorMessage } from '../errors.ts';
import type { AdmittedSidecarSet, RolloutTrigger } from '../ports.ts';
import { admittedEvent } from '../status-sync/admitted-event.ts';
import { setMessage } from '../status-sync/queue-message.ts';
import { lambdaAsyncInvoke, type LambdaTriggerOptions } from './lambda-async-invoke.ts';
import { ENV_STATUS_SYNC_QUEUE_URL, sqsSetQueue, type SqsQueueOptions } from './sqs-set-queue.ts';

/** The status-sync function's name or ARN; set (by the CDK stack) on sidecarset-validate only. */
export const ENV_STATUS_SYNC_FUNCTION = 'STATUS_SYNC_FUNCTION';

/**
 * A function name, a partial ARN (`123456789012:function:name`) or a full
 * ARN, with an optional version or alias: the pattern the Lambda API
 * documents for `FunctionName`.
 */
const FUNCTION_NAME = /^(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}(-gov)?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9-_.]+)(:(\$LATEST|[a-zA-Z0-9-_]+))?$/;

/** STATUS_SYNC_FUNCTION holds something that cannot name a function; start-up stops with this message. */
export class StatusSyncFunctionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StatusSyncFunctionError';
  }
}

/** The status-sync function could not be invoked; the webhook logs this and answers anyway. */
export class RolloutTriggerError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RolloutTriggerError';
  }
}

/**
 * The trigger the environment configures: the controller's queue when
 * STATUS_SYNC_QUEUE_URL is set (the stack sets it), else STATUS_SYNC_FUNCTION's
 * asynchronous invoke; undefined when neither is (nothing listens: the
 * schedule alone starts passes).
 * @throws StatusSyncFunctionError when STATUS_SYNC_FUNCTION is set to something that is not a function name or ARN.
 */
export function statusSyncTriggerFromEnv(env: Readonly<Record<string, string | undefined>>, options: LambdaTriggerOptions & Pick<SqsQueueOptions, 'protocol'> = {}): RolloutTrigger | undefined {
  const queueUrl = env[ENV_STATUS_SYNC_QUEUE_URL]?.trim() ?? '';
  if (queueUrl !== '') return queueRolloutTrigger(queueUrl, options);
  const name = env[ENV_STATUS_SYNC_FUNCTION]?.trim() ?? '';
  if (name === '') return undefined;
  if (name.length > 170 || !FUNCTION_NAME.test(name)) {
    throw new StatusSyncFunctionError(`${ENV_STATUS_SYNC_FUNCTION} must be a Lambda function name or ARN, got ${JSON.stringify(name.slice(0, 200))}`);
  }
  return lambdaRolloutTrigger(name, options);
}

/** Invokes `functionName` asynchronously for each admitted change; one client per cold start. */
export function lambdaRolloutTrigger(functionName: string, options: LambdaTriggerOptions = {}): RolloutTrigger {
  // One attempt: the webhook's answer waits for this, and a missed trigger only delays the pass to the next scheduled tick.
  const invoke = lambdaAsyncInvoke(functionName, options, 1);
  return {
    async admitted(change: AdmittedSidecarSet, signal?: AbortSignal): Promise<void> {
      let statusCode: number | undefined;
      try {
        statusCode = await invoke(admittedEvent(change), signal);
      } catch (error) {
        throw new RolloutTriggerError(`cannot invoke ${functionName} for SidecarSet ${change.sidecarSet}: ${errorMessage(error)}`, { cause: error });
      }
      // An asynchronous invoke that was queued answers 202, and nothing else.
      if (statusCode !== 202) throw new RolloutTriggerError(`invoking ${functionName} for SidecarSet ${change.sidecarSet} answered ${String(statusCode)}, not 202 (queued)`);
    },
  };
}

/**
 * Sends each admitted change (or pod trigger) to the controller's queue; one
 * attempt, as for the invoke. A message this container sent already within
 * the same second (the same deduplication id, queue-message.ts) is not sent
 * again: SQS would drop it, and a burst of one set's pod triggers would still
 * pay a request each.
 */
export function queueRolloutTrigger(queueUrl: string, options: SqsQueueOptions = {}): RolloutTrigger {
  const send = sqsSetQueue(queueUrl, { ...options, maxAttempts: 1 });
  const sent = new Set<string>();
  let second = 0;
  return {
    async admitted(change: AdmittedSidecarSet, signal?: AbortSignal): Promise<void> {
      const now = Date.now();
      if (Math.floor(now / 1000) !== second) {
        second = Math.floor(now / 1000);
        sent.clear();
      }
      const id = setMessage({ sidecarSet: change.sidecarSet, change }, now).deduplicationId;
      if (sent.has(id)) return;
      try {
        await send([{ sidecarSet: change.sidecarSet, change }], signal);
        sent.add(id);
      } catch (error) {
        throw new RolloutTriggerError(`cannot queue SidecarSet ${change.sidecarSet} for status-sync: ${errorMessage(error)}`, { cause: error });
      }
    },
  };
}
