/**
 * The status reconciler as a Lambda, composed once per cold start, for two
 * events: EventBridge's schedule (a resync, then requeuing the sets
 * whose rollout is in flight while the invocation's time lasts) and the
 * SidecarSet validating webhook's asynchronous invoke after an admitted
 * change (that set's reconcile at once, then requeuing it). A configuration
 * error fails the cold start, so every invocation fails visibly rather than
 * succeeding without a cluster.
 */
import { randomUUID } from 'node:crypto';
import type { Context, ScheduledEvent, SQSEvent } from 'aws-lambda';
import { ENV_STATUS_SYNC_QUEUE_URL, sqsSetQueue, type SetQueueSender } from '../../lib/adapters/sqs-set-queue.ts';
import { failedMessages, readBatch, type QueueBatch } from '../../lib/status-sync/queue-message.ts';
import { ENV_OWN_FUNCTION_NAME, lambdaSelfInvoke, type SelfRequeue } from '../../lib/adapters/lambda-self-invoke.ts';
import { errorMessage } from '../../lib/errors.ts';
import { AdmittedEventError, CONTINUE_EVENT_KIND, deployedUrlsOfScheduledEvent, MAX_CONTINUED_SETS, parseAdmittedEvent, parseContinueEvent, recentTriggers, type ContinueEvent } from '../../lib/status-sync/admitted-event.ts';
import type { ResyncResult } from '../../lib/status-sync/resync.ts';
import type { AdmittedSidecarSet } from '../../lib/ports.ts';
import { admittedQueue } from '../../lib/status-sync/admitted-queue.ts';
import { reconcileCoverage, POD_DEBOUNCE_MS } from '../../lib/status-sync/pod-trigger.ts';
import type { ControllerSummary } from '../../lib/status-sync/run-controller.ts';
import type { Env } from '../shared/compose.ts';
import { composeStatusSync, controllerDidAnything, logControllerSummary, logResync, type StatusSyncOverrides, type StatusSyncRuntime } from './compose.ts';

/** What the handler uses of Lambda's context. */
export type StatusSyncContext = Pick<Context, 'getRemainingTimeInMillis' | 'awsRequestId'>;
/** What an invocation did: the resync (scheduled events) and the requeued reconciles. */
export interface InvocationResult extends Partial<ResyncResult> {
  /** What the controller did for the requeued sets ('followUp' until this release). */
  controller?: ControllerSummary;
  /** API requests sent again during this invocation (a slow or dropped one costs a retry, not the reconcile). */
  requestRetries?: number;
  /** The sets handed to the self-requeue this invocation sent itself. */
  continued?: string[];
  /** Why the event was not acted on: the same admitted change handled lately, or a self-requeue a later invocation took over. */
  skipped?: 'repeated trigger' | 'superseded self-requeue' | 'covered pod change';
  /** The queue's messages to hand out again (SQSBatchResponse): those of sets whose reconciles failed. */
  batchItemFailures?: { itemIdentifier: string }[];
  /** The sets sent back to the queue, still in flight when the controller's budget ended. */
  requeued?: string[];
}
export type StatusSyncEvent = ScheduledEvent | ({ kind: string } & Partial<AdmittedSidecarSet>) | ContinueEvent | SQSEvent;
export type ScheduledStatusHandler = (event: StatusSyncEvent, context: StatusSyncContext) => Promise<InvocationResult>;

/**
 * Time kept back from the Lambda limit so that, when a reconcile has to be cut
 * short, its result is still logged and returned: a tenth of the time left,
 * at least 3 s.
 */
export function invocationDeadlineMs(remainingMs: number): number {
  return Math.max(1_000, remainingMs - Math.max(3_000, Math.round(remainingMs / 10)));
}

/**
 * The longest an invocation runs the controller after its reconcile. Under Lambda's
 * 60 s maximum event age for status-sync's queued invokes (infra/aws), so an
 * admitted change or a tick queued behind this invocation is still run, not
 * dropped; a rollout still in flight goes on in the self-requeue this
 * invocation sends itself as it ends (lambda-self-invoke.ts).
 */
export const CONTROLLER_BUDGET_MS = 50_000;

export interface StatusSyncLambdaOptions {
  env?: Env;
  overrides?: StatusSyncOverrides;
  /**
   * How an invocation continues itself; default: an asynchronous invoke of
   * the function the Lambda runtime names (AWS_LAMBDA_FUNCTION_NAME), none
   * outside Lambda (the schedule takes unfinished rollouts up).
   */
  continueWith?: SelfRequeue;
  /** How long an invocation runs the controller. Default {@link CONTROLLER_BUDGET_MS}; tests shorten it. */
  controllerBudgetMs?: number;
  /** Where set names go back to the controller's queue; default: STATUS_SYNC_QUEUE_URL's SQS queue, none when unset. */
  queue?: SetQueueSender;
}

export async function statusSyncLambda(options: StatusSyncLambdaOptions = {}): Promise<ScheduledStatusHandler> {
  const env = options.env ?? process.env;
  const runtime = await composeStatusSync(env, options.overrides);
  const ownName = env[ENV_OWN_FUNCTION_NAME] ?? '';
  const continueWith = options.continueWith ?? (ownName === '' ? undefined : lambdaSelfInvoke(ownName));
  const queueUrl = env[ENV_STATUS_SYNC_QUEUE_URL]?.trim() ?? '';
  const queue = options.queue ?? (queueUrl === '' ? undefined : sqsSetQueue(queueUrl));
  const container = new WarmContainer(runtime, continueWith, options.controllerBudgetMs ?? CONTROLLER_BUDGET_MS, queue);
  return (event, context) => container.handle(event, context);
}

/** What one invocation starts from: its deadline, its controller budget, its share of the retries. */
class Invocation {
  readonly startedAt = Date.now();
  readonly requestId: string;
  readonly signal: AbortSignal;
  private readonly retriesBefore: number;
  private readonly runtime: StatusSyncRuntime;
  private readonly budgetMs: number;

  constructor(runtime: StatusSyncRuntime, context: StatusSyncContext, budgetMs: number) {
    this.runtime = runtime;
    this.budgetMs = budgetMs;
    this.requestId = context.awsRequestId;
    this.retriesBefore = runtime.retries();
    this.signal = AbortSignal.timeout(invocationDeadlineMs(context.getRemainingTimeInMillis()));
  }

  /** The budget stops new reconciles; a reconcile running when it ends finishes its writes, within the reconcile deadline. */
  budget(): AbortSignal {
    return AbortSignal.timeout(this.budgetMs);
  }

  retries(): number {
    return this.runtime.retries() - this.retriesBefore;
  }
}

/**
 * What a warm container remembers between its invocations (reserved
 * concurrency 1 runs them one after another): the admitted changes handled
 * lately, the pod changes a reconcile here covered (one invoke each: a burst
 * queues many), and the sets its last self-requeue carried.
 */
class WarmContainer {
  private readonly id = randomUUID();
  private readonly triggers = recentTriggers();
  private readonly coverage = reconcileCoverage();
  /** Sets a self-requeue sent from here names, until an invocation here takes them over. */
  private carried: string[] = [];
  /** When the latest invocation here started (epoch ms): a self-requeue sent before it was taken over by it. */
  private lastStartedAt = 0;
  private readonly runtime: StatusSyncRuntime;
  private readonly continueWith: SelfRequeue | undefined;
  private readonly budgetMs: number;
  private readonly queue: SetQueueSender | undefined;

  constructor(runtime: StatusSyncRuntime, continueWith: SelfRequeue | undefined, budgetMs: number, queue: SetQueueSender | undefined) {
    this.runtime = runtime;
    this.continueWith = continueWith;
    this.budgetMs = budgetMs;
    this.queue = queue;
  }

  async handle(event: StatusSyncEvent, context: StatusSyncContext): Promise<InvocationResult> {
    const run = new Invocation(this.runtime, context, this.budgetMs);
    if (isQueueEvent(event)) return this.fromQueue(run, readBatch(event.Records));
    let admitted: (AdmittedSidecarSet & { sentAt?: number }) | undefined;
    let selfRequeue: ContinueEvent | undefined;
    try {
      admitted = parseAdmittedEvent(event);
      selfRequeue = parseContinueEvent(event);
    } catch (error) {
      // Not retried (the async invoke allows none): a malformed event is logged and dropped.
      this.runtime.logger.error('status-sync event refused', { requestId: run.requestId, error: (error as AdmittedEventError).message });
      return {};
    }
    const skipped = this.skipped(admitted, selfRequeue, run.startedAt);
    if (skipped !== undefined) return { skipped };
    this.lastStartedAt = run.startedAt;
    const taken = this.carried;
    this.carried = [];
    if (admitted !== undefined || selfRequeue !== undefined) return this.reconcileEvent(run, taken, admitted, selfRequeue);
    return this.resync(run, event, taken);
  }

  /** Why the event needs no work: its self-requeue was taken over, its pod change covered, its admitted change just handled. */
  private skipped(admitted: (AdmittedSidecarSet & { sentAt?: number }) | undefined, selfRequeue: ContinueEvent | undefined, startedAt: number): InvocationResult['skipped'] {
    // An invocation here started after this was sent and requeued its sets (or a duplicate delivery of one already run).
    if (selfRequeue !== undefined && selfRequeue.from === this.id && selfRequeue.sentAt < this.lastStartedAt) return 'superseded self-requeue';
    if (admitted?.operation === 'PODS') return this.coverage.covers(admitted.sidecarSet, admitted.sentAt ?? startedAt) ? 'covered pod change' : undefined;
    if (admitted !== undefined && this.triggers.seen(admitted, startedAt)) return 'repeated trigger';
    return undefined;
  }

  /** An admitted change or a self-requeue: its sets requeued at once. */
  private async reconcileEvent(run: Invocation, taken: string[], admitted: (AdmittedSidecarSet & { sentAt?: number }) | undefined, selfRequeue: ContinueEvent | undefined): Promise<InvocationResult> {
    const names = [...taken, ...(selfRequeue?.sets ?? [])];
    const sentAt = admitted?.sentAt ?? run.startedAt;
    // A pod change's debounce runs from when the webhook sent it (Lambda's queue usually took that long already).
    const queued = admitted === undefined ? undefined : { ...admitted, queuedAtMs: performance.now() - Math.max(0, run.startedAt - sentAt) };
    // Its reconcile reads the pods after the debounce, never earlier.
    const readsFrom = Math.max(run.startedAt, sentAt + POD_DEBOUNCE_MS);
    const controller = await this.runtime.runController(names, run.signal, queued === undefined ? undefined : admittedQueue([queued]), run.budget());
    // Only a reconcile that went through covers later triggers; after a failure the next one tries again.
    if (admitted?.operation === 'PODS' && controller.errors.length === 0) this.coverage.began(readsFrom, [admitted.sidecarSet]);
    const continued = await this.continueLater(controller, run.requestId);
    logControllerSummary(this.runtime.logger, controller, { requestId: run.requestId, ...(admitted === undefined ? { selfRequeue: selfRequeue?.sets } : { admitted }), continued, requestRetries: run.retries() });
    return { controller, requestRetries: run.retries(), continued };
  }

  /** The schedule's full resync, then requeuing the sets it left in flight (and those a self-requeue carried). */
  private async resync(run: Invocation, event: StatusSyncEvent, taken: string[]): Promise<InvocationResult> {
    const { requestId, signal } = run;
    let deployed: string[] | undefined;
    try {
      deployed = deployedUrlsOfScheduledEvent(event);
    } catch (error) {
      // The reconcile still runs; its rotation writes no secret anywhere without them.
      this.runtime.logger.error('the scheduled event\'s deployed webhook URLs refused', { requestId, error: errorMessage(error) });
    }
    // With the queue, the sets that roll go to it: only its consumers roll a set, one invocation per set at a time.
    const { queue } = this;
    const handed = new Set<string>();
    const handOff = queue === undefined ? undefined : async (names: readonly string[], s?: AbortSignal) => {
      await queue(names.map((sidecarSet) => ({ sidecarSet })), s);
      for (const name of names) handed.add(name);
    };
    const resynced = await this.runtime.resync(signal, deployed, handOff);
    if (resynced.errors.length === 0) this.coverage.began(run.startedAt);
    const result = { ...resynced, requestRetries: run.retries() };
    // A failed resync is not thrown: EventBridge would retry it, and the next scheduled resync does that better.
    logResync(this.runtime.logger, result, { requestId, scheduledAt: (event as ScheduledEvent).time });
    const inFlight = [...new Set([...(resynced.rollout?.inFlight ?? []), ...taken])];
    if (queue !== undefined) return { ...result, requeued: await this.requeue(inFlight.filter((name) => !handed.has(name)), requestId) };
    if (inFlight.length === 0 || signal.aborted) return result;
    const controller = await this.runtime.runController(inFlight, signal, undefined, run.budget());
    const continued = await this.continueLater(controller, requestId);
    if (controllerDidAnything(controller) || continued.length > 0) logControllerSummary(this.runtime.logger, controller, { requestId, continued, requestRetries: run.retries() });
    return { ...result, controller, requestRetries: run.retries(), continued };
  }

  /**
   * A batch of the controller's queue (one FIFO group per set, so no other
   * invocation holds these sets): its sets requeued at once, admitted changes
   * waited on until stored. Sets still in flight when the budget ends go back
   * to the queue (FIFO has no per-message delay: the next message of the
   * group is handed out once this batch is done); messages of sets whose
   * reconciles failed are reported, and SQS hands them out again.
   */
  private async fromQueue(run: Invocation, batch: QueueBatch): Promise<InvocationResult> {
    for (const refused of batch.refused) this.runtime.logger.error('status-sync queue message refused', { requestId: run.requestId, messageId: refused.messageId, error: refused.reason });
    const names = batch.work.filter((w) => w.work.change === undefined).map((w) => w.work.sidecarSet);
    const changes = batch.work.flatMap(({ work }) => (work.change === undefined ? [] : [{ ...work.change, queuedAtMs: performance.now() - Math.max(0, run.startedAt - (work.sentAt ?? run.startedAt)) }]));
    const controller = await this.runtime.runController(names, run.signal, changes.length === 0 ? undefined : admittedQueue(changes), run.budget());
    const failedSets = new Set(controller.errors.flatMap((e) => (e.sidecarSet === undefined ? [] : [e.sidecarSet])));
    const requeued = await this.requeue(controller.unfinished, run.requestId);
    for (const name of controller.unfinished) if (!requeued.includes(name)) failedSets.add(name);
    const failures = failedMessages(batch, failedSets, controller.errors.some((e) => e.sidecarSet === undefined));
    logControllerSummary(this.runtime.logger, controller, { requestId: run.requestId, queued: batch.work.map((w) => w.work.sidecarSet), requeued, failed: failures.length, requestRetries: run.retries() });
    return { controller, requestRetries: run.retries(), requeued, batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
  }

  /** Sends sets still in flight back to the queue; the names it could not send are left to their messages' redelivery. */
  private async requeue(names: readonly string[], requestId: string): Promise<string[]> {
    if (this.queue === undefined || names.length === 0) return [];
    try {
      await this.queue(names.map((sidecarSet) => ({ sidecarSet })), AbortSignal.timeout(2_000));
      return [...names];
    } catch (error) {
      this.runtime.logger.error('status-sync sets not sent back to the queue', { requestId, sets: names, error: errorMessage(error) });
      return [];
    }
  }

  /**
   * Sends the self-requeue for the sets still in flight when this invocation
   * moved them on (wrote pods): a set that only waited, for pods that do not
   * get ready, is left to the schedule rather than kept running by a chain of
   * invocations. A failure is logged, and the schedule takes them up.
   */
  private async continueLater(summary: ControllerSummary, requestId: string): Promise<string[]> {
    const sets = summary.unfinished;
    if (this.continueWith === undefined || sets.length === 0 || summary.podsUpdated + summary.podsFlipped === 0) return [];
    const names = [...new Set(sets)].slice(0, MAX_CONTINUED_SETS);
    const event: ContinueEvent = { kind: CONTINUE_EVENT_KIND, sets: names, from: this.id, sentAt: Date.now() };
    try {
      await this.continueWith(event, AbortSignal.timeout(2_000));
      this.carried = names;
      return names;
    } catch (error) {
      this.runtime.logger.error('status-sync self-requeue not sent', { requestId, sets: names, error: errorMessage(error) });
      return [];
    }
  }
}

/** Whether Lambda's SQS event source mapping sent the event. */
function isQueueEvent(event: StatusSyncEvent): event is SQSEvent {
  return 'Records' in event && Array.isArray(event.Records) && event.Records.every((r: { eventSource?: unknown }) => r.eventSource === 'aws:sqs');
}
