/**
 * status-sync continuing itself on AWS: an asynchronous invoke (InvocationType
 * `Event`) of its own function with a self-requeue event, sent as an
 * invocation ends with rollouts still in flight.
 *
 * Reserved concurrency 1 still holds: the invoke is queued by Lambda, whose
 * first attempt is throttled while the sender is still running; Lambda
 * retries throttled asynchronous events (1 s, then exponentially longer)
 * until the function's maximum event age (60 s), independently of the retry
 * attempts setting, which counts function errors only. The sender ends
 * within a second of sending, so the self-requeue starts a second or two
 * later, never beside it.
 */
import { errorMessage } from '../errors.ts';
import type { ContinueEvent } from '../status-sync/admitted-event.ts';
import { lambdaAsyncInvoke, type LambdaTriggerOptions } from './lambda-async-invoke.ts';

/** Set by the Lambda runtime in every function: the function's own name. */
export const ENV_OWN_FUNCTION_NAME = 'AWS_LAMBDA_FUNCTION_NAME';

/** The self-requeue could not be handed to Lambda; the schedule takes the rollout up instead. */
export class SelfRequeueError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SelfRequeueError';
  }
}

/** Sends a self-requeue event. */
export type SelfRequeue = (event: ContinueEvent, signal?: AbortSignal) => Promise<void>;

/** Invokes `functionName` (this function) asynchronously with a self-requeue; one client per cold start. */
export function lambdaSelfInvoke(functionName: string, options: LambdaTriggerOptions = {}): SelfRequeue {
  // Two attempts at the hand-over: a lost self-requeue only waits for the schedule.
  const invoke = lambdaAsyncInvoke(functionName, options, 2);
  return async (event, signal) => {
    let statusCode: number | undefined;
    try {
      statusCode = await invoke(event, signal);
    } catch (error) {
      throw new SelfRequeueError(`cannot invoke ${functionName} to continue ${event.sets.join(', ')}: ${errorMessage(error)}`, { cause: error });
    }
    if (statusCode !== 202) throw new SelfRequeueError(`invoking ${functionName} to continue answered ${String(statusCode)}, not 202 (queued)`);
  };
}
