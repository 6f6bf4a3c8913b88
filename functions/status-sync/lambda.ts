/**
 * The status reconciler as a Lambda, composed once per cold start, for two
 * events: EventBridge's schedule (a full pass, then following the sets
 * whose rollout is in flight while the invocation's time lasts) and the
 * SidecarSet validating webhook's asynchronous invoke after an admitted
 * change (that set's pass at once, then following it). A configuration
 * error fails the cold start, so every invocation fails visibly rather than
 * passing without a cluster.
 */
import type { Context, ScheduledEvent } from 'aws-lambda';
import { AdmittedEventError, parseAdmittedEvent } from '../../lib/status-sync/admitted-event.ts';
import type { PassResult } from '../../lib/status-sync/pass.ts';
import type { AdmittedSidecarSet } from '../../lib/ports.ts';
import { admittedQueue, type PaceSummary } from '../../lib/status-sync/pace.ts';
import type { Env } from '../shared/compose.ts';
import { composeStatusSync, followWasNews, logFollow, logPass, type StatusSyncOverrides } from './compose.ts';

/** What the handler uses of Lambda's context. */
export type StatusSyncContext = Pick<Context, 'getRemainingTimeInMillis' | 'awsRequestId'>;
/** What an invocation did: the full pass (scheduled events) and the follow-up passes. */
export interface InvocationResult extends Partial<PassResult> {
  followUp?: PaceSummary;
}
export type ScheduledStatusHandler = (event: ScheduledEvent | ({ kind: string } & Partial<AdmittedSidecarSet>), context: StatusSyncContext) => Promise<InvocationResult>;

/**
 * Time kept back from the Lambda limit so that, when a pass has to be cut
 * short, its result is still logged and returned: a tenth of the time left,
 * at least 3 s.
 */
export function passDeadlineMs(remainingMs: number): number {
  return Math.max(1_000, remainingMs - Math.max(3_000, Math.round(remainingMs / 10)));
}

/**
 * The longest an invocation follows rollouts after its pass. Under Lambda's
 * 60 s maximum event age for status-sync's queued invokes (infra/aws), so an
 * admitted change or a tick queued behind this invocation is still run, not
 * dropped; a rollout still in flight is taken up by that next invocation.
 */
export const FOLLOW_BUDGET_MS = 50_000;

export async function statusSyncLambda(options: { env?: Env; overrides?: StatusSyncOverrides } = {}): Promise<ScheduledStatusHandler> {
  const runtime = await composeStatusSync(options.env ?? process.env, options.overrides);
  return async (event, context) => {
    const signal = AbortSignal.timeout(passDeadlineMs(context.getRemainingTimeInMillis()));
    let admitted: AdmittedSidecarSet | undefined;
    try {
      admitted = parseAdmittedEvent(event);
    } catch (error) {
      // Not retried (the async invoke allows none): a malformed event is logged and dropped.
      runtime.logger.error('status-sync event refused', { requestId: context.awsRequestId, error: (error as AdmittedEventError).message });
      return {};
    }
    if (admitted !== undefined) {
      // Nothing else arrives in this invocation: the next change is another invoke.
      const followUp = await runtime.follow([], AbortSignal.any([signal, AbortSignal.timeout(FOLLOW_BUDGET_MS)]), admittedQueue([admitted]));
      logFollow(runtime.logger, followUp, { requestId: context.awsRequestId, admitted });
      return { followUp };
    }
    const result = await runtime.runPass(signal);
    // A failed pass is not thrown: EventBridge would retry it, and the next scheduled pass does that better.
    logPass(runtime.logger, result, { requestId: context.awsRequestId, scheduledAt: (event as ScheduledEvent).time });
    const inFlight = result.rollout?.inFlight ?? [];
    if (inFlight.length === 0 || signal.aborted) return result;
    const followUp = await runtime.follow(inFlight, AbortSignal.any([signal, AbortSignal.timeout(FOLLOW_BUDGET_MS)]));
    if (followWasNews(followUp)) logFollow(runtime.logger, followUp, { requestId: context.awsRequestId });
    return { ...result, followUp };
  };
}
