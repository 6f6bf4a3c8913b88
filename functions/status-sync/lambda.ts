/**
 * The status reconciler as a Lambda, composed once per cold start, for two
 * events: EventBridge's schedule (a full pass, then following the sets
 * whose rollout is in flight while the invocation's time lasts) and the
 * SidecarSet validating webhook's asynchronous invoke after an admitted
 * change (that set's pass at once, then following it). A configuration
 * error fails the cold start, so every invocation fails visibly rather than
 * passing without a cluster.
 */
import { randomUUID } from 'node:crypto';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { ENV_OWN_FUNCTION_NAME, lambdaSelfInvoke, type Continuation } from '../../lib/adapters/lambda-self-invoke.ts';
import { errorMessage } from '../../lib/errors.ts';
import { AdmittedEventError, CONTINUE_EVENT_KIND, deployedUrlsOfScheduledEvent, MAX_CONTINUED_SETS, parseAdmittedEvent, parseContinueEvent, recentTriggers, type ContinueEvent } from '../../lib/status-sync/admitted-event.ts';
import type { PassResult } from '../../lib/status-sync/pass.ts';
import type { AdmittedSidecarSet } from '../../lib/ports.ts';
import { admittedQueue } from '../../lib/status-sync/admitted-queue.ts';
import { passCoverage, POD_SETTLE_MS } from '../../lib/status-sync/pod-trigger.ts';
import type { PaceSummary } from '../../lib/status-sync/pace.ts';
import type { Env } from '../shared/compose.ts';
import { composeStatusSync, followWasNews, logFollow, logPass, type StatusSyncOverrides } from './compose.ts';

/** What the handler uses of Lambda's context. */
export type StatusSyncContext = Pick<Context, 'getRemainingTimeInMillis' | 'awsRequestId'>;
/** What an invocation did: the full pass (scheduled events) and the follow-up passes. */
export interface InvocationResult extends Partial<PassResult> {
  followUp?: PaceSummary;
  /** API requests sent again during this invocation (a slow or dropped one costs a retry, not the pass). */
  requestRetries?: number;
  /** The sets handed to the continuation this invocation sent itself. */
  continued?: string[];
  /** Why the event was not acted on: the same admitted change handled lately, or a continuation a later invocation took over. */
  skipped?: 'repeated trigger' | 'superseded continuation' | 'covered pod change';
}
export type ScheduledStatusHandler = (event: ScheduledEvent | ({ kind: string } & Partial<AdmittedSidecarSet>) | ContinueEvent, context: StatusSyncContext) => Promise<InvocationResult>;

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
 * dropped; a rollout still in flight goes on in the continuation this
 * invocation sends itself as it ends (lambda-self-invoke.ts).
 */
export const FOLLOW_BUDGET_MS = 50_000;

export interface StatusSyncLambdaOptions {
  env?: Env;
  overrides?: StatusSyncOverrides;
  /**
   * How an invocation continues itself; default: an asynchronous invoke of
   * the function the Lambda runtime names (AWS_LAMBDA_FUNCTION_NAME), none
   * outside Lambda (the schedule takes unfinished rollouts up).
   */
  continueWith?: Continuation;
  /** How long an invocation follows rollouts. Default {@link FOLLOW_BUDGET_MS}; tests shorten it. */
  followBudgetMs?: number;
}

export async function statusSyncLambda(options: StatusSyncLambdaOptions = {}): Promise<ScheduledStatusHandler> {
  const env = options.env ?? process.env;
  const runtime = await composeStatusSync(env, options.overrides);
  const ownName = env[ENV_OWN_FUNCTION_NAME] ?? '';
  const continueWith = options.continueWith ?? (ownName === '' ? undefined : lambdaSelfInvoke(ownName));
  // What this warm container remembers between its invocations (reserved concurrency 1 runs them one after another):
  const container = randomUUID();
  const triggers = recentTriggers();
  // Pod changes come one invoke each (a burst queues many): one a pass here already covered ends at once, with no request.
  const coverage = passCoverage();
  /** Sets a continuation sent from here names, until an invocation here takes them over. */
  let carried: string[] = [];
  /** When the latest invocation here started (epoch ms): a continuation sent before it was taken over by it. */
  let lastStartedAt = 0;

  /**
   * Sends the continuation for the sets still in flight when this invocation
   * moved them on (wrote pods): a set that only waited, for pods that do not
   * get ready, is left to the schedule rather than kept running by a chain of
   * invocations. A failure is logged, and the schedule takes them up.
   */
  const continueLater = async (summary: PaceSummary, requestId: string): Promise<string[]> => {
    const sets = summary.unfinished;
    if (continueWith === undefined || sets.length === 0 || summary.podsUpdated + summary.podsFlipped === 0) return [];
    const names = [...new Set(sets)].slice(0, MAX_CONTINUED_SETS);
    const event: ContinueEvent = { kind: CONTINUE_EVENT_KIND, sets: names, from: container, sentAt: Date.now() };
    try {
      await continueWith(event, AbortSignal.timeout(2_000));
      carried = names;
      return names;
    } catch (error) {
      runtime.logger.error('status-sync continuation not sent', { requestId, sets: names, error: errorMessage(error) });
      return [];
    }
  };

  return async (event, context) => {
    const startedAt = Date.now();
    const retriesBefore = runtime.retries();
    const signal = AbortSignal.timeout(passDeadlineMs(context.getRemainingTimeInMillis()));
    // The budget stops new passes; a pass running when it ends finishes its writes, within the pass deadline.
    const budget = () => AbortSignal.timeout(options.followBudgetMs ?? FOLLOW_BUDGET_MS);
    const requestId = context.awsRequestId;
    let admitted: (AdmittedSidecarSet & { sentAt?: number }) | undefined;
    let continuation: ContinueEvent | undefined;
    try {
      admitted = parseAdmittedEvent(event);
      continuation = parseContinueEvent(event);
    } catch (error) {
      // Not retried (the async invoke allows none): a malformed event is logged and dropped.
      runtime.logger.error('status-sync event refused', { requestId, error: (error as AdmittedEventError).message });
      return {};
    }
    if (continuation !== undefined && continuation.from === container && continuation.sentAt < lastStartedAt) {
      // An invocation here started after this was sent and followed its sets (or a duplicate delivery of one already run).
      return { skipped: 'superseded continuation' };
    }
    if (admitted?.operation === 'PODS') {
      if (coverage.covers(admitted.sidecarSet, admitted.sentAt ?? startedAt)) return { skipped: 'covered pod change' };
    } else if (admitted !== undefined && triggers.seen(admitted, startedAt)) return { skipped: 'repeated trigger' };
    lastStartedAt = startedAt;
    const taken = carried;
    carried = [];
    const retries = () => runtime.retries() - retriesBefore;

    if (admitted !== undefined || continuation !== undefined) {
      const names = [...taken, ...(continuation?.sets ?? [])];
      // A pod change settles from when the webhook sent it (Lambda's queue usually took that long already).
      const queued = admitted === undefined ? undefined : { ...admitted, queuedAtMs: performance.now() - Math.max(0, startedAt - (admitted.sentAt ?? startedAt)) };
      // Its pass reads the pods after the settle, never earlier.
      const readsFrom = Math.max(startedAt, (admitted?.sentAt ?? startedAt) + POD_SETTLE_MS);
      const followUp = await runtime.follow(names, signal, queued === undefined ? undefined : admittedQueue([queued]), budget());
      // Only a pass that went through covers later triggers; after a failure the next one tries again.
      if (admitted?.operation === 'PODS' && followUp.errors.length === 0) coverage.began(readsFrom, [admitted.sidecarSet]);
      const continued = await continueLater(followUp, requestId);
      logFollow(runtime.logger, followUp, { requestId, ...(admitted === undefined ? { continuation: continuation?.sets } : { admitted }), continued, requestRetries: retries() });
      return { followUp, requestRetries: retries(), continued };
    }
    let deployed: string[] | undefined;
    try {
      deployed = deployedUrlsOfScheduledEvent(event);
    } catch (error) {
      // The pass still runs; its rotation writes no secret anywhere without them.
      runtime.logger.error('the scheduled event\'s deployed webhook URLs refused', { requestId, error: errorMessage(error) });
    }
    const pass = await runtime.runPass(signal, deployed);
    if (pass.errors.length === 0) coverage.began(startedAt);
    const result = { ...pass, requestRetries: retries() };
    // A failed pass is not thrown: EventBridge would retry it, and the next scheduled pass does that better.
    logPass(runtime.logger, result, { requestId, scheduledAt: (event as ScheduledEvent).time });
    const inFlight = [...new Set([...(pass.rollout?.inFlight ?? []), ...taken])];
    if (inFlight.length === 0 || signal.aborted) return result;
    const followUp = await runtime.follow(inFlight, signal, undefined, budget());
    const continued = await continueLater(followUp, requestId);
    if (followWasNews(followUp) || continued.length > 0) logFollow(runtime.logger, followUp, { requestId, continued, requestRetries: retries() });
    return { ...result, followUp, requestRetries: retries(), continued };
  };
}
