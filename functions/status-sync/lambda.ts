/**
 * The status reconciler as a Lambda for EventBridge scheduled events,
 * composed once per cold start. A configuration error fails the cold start,
 * so every invocation fails visibly rather than passing without a cluster.
 */
import type { Context, ScheduledEvent } from 'aws-lambda';
import type { PassResult } from '../../lib/status-sync/pass.ts';
import type { Env } from '../shared/compose.ts';
import { composeStatusSync, logPass, type StatusSyncOverrides } from './compose.ts';

/** What the handler uses of Lambda's context. */
export type StatusSyncContext = Pick<Context, 'getRemainingTimeInMillis' | 'awsRequestId'>;
export type ScheduledStatusHandler = (event: ScheduledEvent, context: StatusSyncContext) => Promise<PassResult>;

/**
 * Time kept back from the Lambda limit so that, when a pass has to be cut
 * short, its result is still logged and returned: a tenth of the time left,
 * at least 3 s.
 */
export function passDeadlineMs(remainingMs: number): number {
  return Math.max(1_000, remainingMs - Math.max(3_000, Math.round(remainingMs / 10)));
}

export async function statusSyncLambda(options: { env?: Env; overrides?: StatusSyncOverrides } = {}): Promise<ScheduledStatusHandler> {
  const runtime = await composeStatusSync(options.env ?? process.env, options.overrides);
  return async (event, context) => {
    const result = await runtime.runPass(AbortSignal.timeout(passDeadlineMs(context.getRemainingTimeInMillis())));
    // A failed pass is not thrown: EventBridge would retry it, and the next scheduled pass does that better.
    logPass(runtime.logger, result, { requestId: context.awsRequestId, scheduledAt: event.time });
    return result;
  };
}
