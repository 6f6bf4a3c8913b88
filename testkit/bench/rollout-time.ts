/**
 * How long an in-place rollout takes on the real control plane, against its
 * ideal: N pods, maxUnavailable M, the test kubelet making a restarted
 * sidecar ready `readyDelayMs` after its image changed. Nothing can finish
 * faster than ceil(N / M) batches of that delay; the figure is the time from
 * the SidecarSet update to every pod updated, Ready and consistent, with the
 * reconciler composed as the Lambda runs it (the validating webhook's
 * SidecarSetAdmitted event, then following the set).
 *
 * The API requests are the API server's own count for the functions'
 * identity alone, from its audit log (the kubelet and the watcher write as
 * the admin), so they are what the reconciler asked for and nothing else.
 * The rollout recorder (testkit/faults/rollout-recorder.ts) watches every
 * pod meanwhile: maxUnavailable must hold at this size too.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { functionsUserName } from '../../control-plane/harness.ts';
import { admittedEvent, type ContinueEvent } from '../../lib/status-sync/admitted-event.ts';
import type { ScheduledEvent } from 'aws-lambda';
import { statusSyncLambda, type InvocationResult } from '../../functions/status-sync/lambda.ts';
import { budgetOf } from '../faults/rollout-faults.ts';
import { EMPTY_IMAGE, NEW_IMAGE, SIDECAR, seedRollout, startRolloutCluster, updateSidecarImage } from '../faults/rollout-fixture.ts';
import { recordRollout } from '../faults/rollout-recorder.ts';
import { capturingLogger } from '../reviews.ts';
import { median } from './stats.ts';
import { countAudit, serverTimes, timedRequests, type ServerTime } from './audit-count.ts';
import { slotFills, slotWait, type SlotWait } from './slot-wait.ts';

export interface RolloutTimeOptions {
  pods: number;
  maxUnavailable: string | number;
  readyDelayMs: number;
  /** REQUEUE_AFTER_MS for the reconciler; its default when unset. */
  requeueAfterMs?: number;
  /**
   * The sidecar is HotUpgrade: each pod is written twice (the new image into
   * the empty container, then the old one flipped to the empty image once
   * the new one is ready), so each batch takes two restarts at the least.
   */
  hot?: boolean;
}

export interface RolloutTimeResult {
  pods: number;
  budget: number;
  batches: number;
  idealMs: number;
  /** From the update to every pod updated, Ready and consistent. */
  rolloutMs: number;
  /** From the update to the invocation's return (the final status written). */
  invocationMs: number;
  /** Lambda invocations: the admitted event's, then the self-requeues it sent itself and any scheduled tick. */
  invocations: number;
  /** Of those, the self-requeues (an invocation's self-invoke as its controller's budget ended with the rollout in flight). */
  selfRequeues: number;
  /** API requests sent again after no answer or a "try again" one (kube-raw.ts). */
  retries: number;
  /** Reconciles of the set: the resync's rollout step and the controller's. */
  reconciles: number;
  podsUpdated: number;
  /** HotUpgrade: flips the reconciler wrote, and pods the recorder saw flipped. */
  podsFlipped: number;
  flipsSeen: number;
  conflicts: number;
  errors: number;
  /** The errors the invocations reported, as `set operation: message`. */
  errorMessages: string[];
  maxUnavailableSeen: number;
  violations: number;
  /** From the update to the first pod's image write seen. */
  firstWriteMs: number;
  /** Median time from a pod's write to it being Ready and consistent again (the kubelet's restart and readyDelayMs). */
  podCycleMs: number;
  /**
   * How long a slot freed by a pod becoming available stayed unused before the
   * next pod's write landed (the reconciler's reaction: watch, settle, list,
   * plan, write): median, and the sum over the rollout divided by the budget
   * (the time the rollout lost to it, as the slots run in parallel).
   */
  slotIdleMedianMs: number;
  slotIdleTotalMs: number;
  /** Where a freed slot's wait went, from the audit log (slot-wait.ts); none when no pod could be traced. */
  slotWait: SlotWait | undefined;
  /** `VERB resource[/subresource]` → requests by the functions' identity during the rollout, largest first. */
  requests: [string, number][];
  /** The API server's own time per kind of those requests, from the same audit log. */
  serverTimes: ServerTime[];
  finalStatus: unknown;
}

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
  - level: Metadata
    users: ["${functionsUserName}"]
  - level: None
`;


/** EventBridge's rate for status-sync (the stack's default statusSyncRateMinutes). */
const SCHEDULE_MS = 60_000;
/**
 * When a self-requeue starts after it was sent: Lambda throttles its first
 * attempt (the sender still holds the reserved concurrency of 1) and
 * retries a throttled asynchronous event after 1 s.
 */
const REQUEUE_DELAY_MS = 1_000;

const medianOrNaN = (values: readonly number[]): number => (values.length === 0 ? Number.NaN : median(values));

export async function rolloutTime(options: RolloutTimeOptions, log: (line: string) => void = () => undefined): Promise<RolloutTimeResult> {
  const dir = await mkdtemp(join(tmpdir(), 'rollout-bench-'));
  const policy = join(dir, 'audit-policy.yaml');
  const auditLog = join(dir, 'audit.log');
  await writeFile(policy, AUDIT_POLICY);
  // The watch cache on, as in a real cluster.
  const cluster = await startRolloutCluster({ readyDelayMs: options.readyDelayMs, listsFromEtcd: false, apiServerArgs: [`--audit-policy-file=${policy}`, `--audit-log-path=${auditLog}`, '--audit-log-mode=blocking'] });
  try {
    const budget = budgetOf(options.maxUnavailable, options.pods);
    const seedStarted = performance.now();
    const hot = options.hot === true;
    const seeded = await seedRollout(cluster, { name: 'bench', pods: options.pods, maxUnavailable: options.maxUnavailable, hot });
    log(`  ${options.pods} pods created and Ready in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
    const env: Record<string, string> = { KUBECONFIG_CONTENT: cluster.cp.kubeconfig('functions') };
    if (options.requeueAfterMs !== undefined) env.REQUEUE_AFTER_MS = String(options.requeueAfterMs);
    // The invocation's self-invoke as Lambda runs it: queued, started once the sender has ended (see below).
    const selfRequeues: { at: number; event: ContinueEvent }[] = [];
    const handler = await statusSyncLambda({
      env,
      overrides: { logger: capturingLogger().logger },
      continueWith: (event) => {
        selfRequeues.push({ at: performance.now() + REQUEUE_DELAY_MS, event });
        return Promise.resolve();
      },
    });
    // The cold start's reads are not the rollout's: the audit log is counted from here.
    const auditBefore = (await readFile(auditLog, 'utf8').catch(() => '')).length;

    const started = performance.now();
    const target = await updateSidecarImage(cluster.cp, seeded.set, NEW_IMAGE);
    // Updated and available means flipped for a hot sidecar: Kruise's readiness wants the empty container empty again.
    const recorder = await recordRollout(cluster.cp, seeded.namespace, target, budget, SIDECAR, hot ? { emptyImage: EMPTY_IMAGE } : undefined);
    const done = () => recorder.updatedNow() === options.pods && recorder.unavailableNow().length === 0;
    let invocationMs = 0;
    const results: InvocationResult[] = [];
    const context = (id: string) => ({ awsRequestId: id, getRemainingTimeInMillis: () => Math.round(900_000 - (performance.now() - started)) });
    // As on AWS, one invocation at a time (reserved concurrency 1): the webhook's SidecarSetAdmitted invoke, which
    // follows the set for at most CONTROLLER_BUDGET_MS and, if the rollout is still in flight, sends itself a self-requeue;
    // the self-requeue runs a second after it was sent (Lambda's retry of the throttled invoke), unless EventBridge's
    // schedule (rate 1 minute, from the update) is due first.
    let ran = 0;
    const invocations = (async () => {
      results.push(await handler(admittedEvent({ sidecarSet: 'bench', uid: target.metadata?.uid ?? '', operation: 'UPDATE', resourceVersion: seeded.set.metadata?.resourceVersion ?? '' }), context('bench')));
      let tick = 1;
      while (!done()) {
        const tickAt = started + tick * SCHEDULE_MS;
        const next = selfRequeues[0];
        const at = next !== undefined && next.at <= tickAt ? next.at : tickAt;
        while (performance.now() < at && !done()) await new Promise((resolve) => setTimeout(resolve, Math.min(100, at - performance.now())));
        if (done()) break;
        if (next !== undefined && next.at <= tickAt) {
          selfRequeues.shift();
          ran++;
          results.push(await handler(next.event, context(`bench-continue-${ran}`)));
        } else {
          results.push(await handler({ 'detail-type': 'Scheduled Event', source: 'aws.events', time: new Date().toISOString() } as unknown as ScheduledEvent, context(`bench-${tick}`)));
          tick++;
        }
      }
      invocationMs = performance.now() - started;
    })();
    let rolloutMs = 0;
    const deadline = Date.now() + 600_000;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`the rollout did not finish in 600 s: ${recorder.updatedNow()} of ${options.pods} updated`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    rolloutMs = performance.now() - started;
    const timeline = recorder.timeline();
    const firstUpdatedAt = timeline.length === 0 ? started : Math.min(...timeline.map((p) => p.updatedAt));
    // In the audit log's clock (milliseconds since the epoch), for the slot-wait steps.
    const seen = timeline.map((p) => ({ name: p.pod, updatedAt: performance.timeOrigin + p.updatedAt, availableAt: p.availableAt === undefined ? undefined : performance.timeOrigin + p.availableAt }));
    const fills = slotFills(seen, budget);
    const idle = fills.map(({ pod, freedAt }) => pod.updatedAt - (freedAt ?? pod.updatedAt));
    await invocations;
    await recorder.caughtUp();
    await recorder.stop();
    const audit = (await readFile(auditLog, 'utf8')).slice(auditBefore);
    const stored = await cluster.cp.request('admin', 'GET', '/apis/apps.kruise.io/v1alpha1/sidecarsets/bench');
    const sum = (pick: (r: InvocationResult) => number) => results.reduce((n, r) => n + pick(r), 0);
    const batches = Math.ceil(options.pods / budget);
    return {
      pods: options.pods,
      budget,
      batches,
      idealMs: batches * options.readyDelayMs * (hot ? 2 : 1),
      rolloutMs,
      invocationMs,
      invocations: results.length,
      selfRequeues: ran,
      retries: sum((r) => r.requestRetries ?? 0),
      reconciles: sum((r) => (r.rollout === undefined ? 0 : 1) + (r.controller?.reconciles ?? 0)),
      podsUpdated: sum((r) => (r.rollout?.podsUpdated ?? 0) + (r.controller?.podsUpdated ?? 0)),
      podsFlipped: sum((r) => (r.rollout?.podsFlipped ?? 0) + (r.controller?.podsFlipped ?? 0)),
      flipsSeen: recorder.flips(),
      conflicts: sum((r) => (r.rollout?.conflicts ?? 0) + (r.controller?.conflicts ?? 0)),
      errors: sum((r) => (r.errors?.length ?? 0) + (r.controller?.errors.length ?? 0)),
      errorMessages: results.flatMap((r) => [...(r.errors ?? []), ...(r.controller?.errors ?? [])].map((e) => `${e.sidecarSet ?? ''} ${e.operation}: ${e.message}`)),
      firstWriteMs: firstUpdatedAt - started,
      podCycleMs: medianOrNaN(timeline.flatMap((p) => (p.availableAt === undefined ? [] : [p.availableAt - p.updatedAt]))),
      slotIdleMedianMs: medianOrNaN(idle),
      slotIdleTotalMs: idle.reduce((sum, ms) => sum + Math.max(0, ms), 0) / budget,
      slotWait: slotWait(timedRequests(audit), fills),
      maxUnavailableSeen: recorder.maxUnavailableSeen(),
      violations: recorder.violations.length + recorder.gaps.length,
      requests: countAudit(audit),
      serverTimes: serverTimes(audit),
      finalStatus: (JSON.parse(stored.body) as { status?: unknown }).status,
    };
  } finally {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
