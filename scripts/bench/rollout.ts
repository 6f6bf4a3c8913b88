/**
 * Section 6: the in-place rollout (issue 16). A 1,000-pod SidecarSet update
 * at maxUnavailable 10% on the real control plane with the test kubelet
 * (ready 2 s after a restart), timed from the update to every pod updated
 * and Ready against the ideal (batches x 2 s), with the reconciler's API
 * requests per reconcile from the API server's audit log; and the plan's compute
 * time for 100,000 pods.
 */
import type { ServerTime } from '../../testkit/bench/audit-count.ts';
import { planTimes } from '../../testkit/bench/rollout-plan.ts';
import { rolloutTime, type RolloutTimeResult } from '../../testkit/bench/rollout-time.ts';
import type { SlotWait } from '../../testkit/bench/slot-wait.ts';
import { summarize } from '../../testkit/bench/stats.ts';
import { num, ratioText, withSpread } from './format.ts';
import type { SectionReport } from './report.ts';

export interface RolloutSettings {
  runs: number;
  /** Runs of the same rollout with the sidecar HotUpgrade. */
  hotRuns: number;
  pods: number;
  maxUnavailable: string;
  readyDelayMs: number;
  planPods: number;
  planRuns: number;
}

export const ROLLOUT_TARGET = 1.3;
export const PLAN_TARGET_MS = 1_000;

const serverTimesText = (times: readonly ServerTime[]) => times.filter((t) => t.count >= 10).map((t) => `${t.request} ${num(t.p50Ms)} / ${num(t.p90Ms)} ms`).join(', ');
const slotWaitText = (wait: SlotWait | undefined) =>
  wait === undefined
    ? 'no pod traced'
    : `freed → its reconcile's set read ${num(wait.freedToRead, 0)}, read → status write ${num(wait.readToStatus, 0)}, status write ${num(wait.status, 0)}, → the pod's patch ${num(wait.statusToPatch, 0)}, patch ${num(wait.patch, 0)}, → seen ${num(wait.patchToSeen, 0)} ms (${wait.pods} pods)`;
const requestsText = (requests: readonly [string, number][]) => `${requests.reduce((n, [, c]) => n + c, 0)}: ${requests.map(([k, n]) => `${n} ${k}`).join(', ')}`;

export async function rolloutSection(settings: RolloutSettings, log: (line: string) => void): Promise<SectionReport> {
  const runs: RolloutTimeResult[] = [];
  for (let i = 0; i < settings.runs; i++) {
    const run = await rolloutTime({ pods: settings.pods, maxUnavailable: settings.maxUnavailable, readyDelayMs: settings.readyDelayMs }, log);
    if (run.violations > 0) throw new Error(`the rollout broke maxUnavailable or was recorded incompletely (${run.violations})`);
    if (run.errors > 0) throw new Error(`the rollout reported ${run.errors} errors: ${run.errorMessages.slice(0, 3).join(' | ')}`);
    log(`  rollout ${i + 1}: ${num(run.rolloutMs / 1000)} s (ideal ${num(run.idealMs / 1000)} s), ${run.reconciles} reconciles, ${run.invocations} invocations (${run.selfRequeues} self-requeues), ${run.retries} requests retried`);
    runs.push(run);
  }
  const hotRuns: RolloutTimeResult[] = [];
  for (let i = 0; i < settings.hotRuns; i++) {
    const run = await rolloutTime({ pods: settings.pods, maxUnavailable: settings.maxUnavailable, readyDelayMs: settings.readyDelayMs, hot: true }, log);
    if (run.violations > 0) throw new Error(`the hot rollout broke a rule or was recorded incompletely (${run.violations})`);
    if (run.errors > 0) throw new Error(`the hot rollout reported ${run.errors} errors: ${run.errorMessages.slice(0, 3).join(' | ')}`);
    if (run.flipsSeen !== settings.pods) throw new Error(`the hot rollout flipped ${run.flipsSeen} of ${settings.pods} pods`);
    log(`  hot rollout ${i + 1}: ${num(run.rolloutMs / 1000)} s (ideal ${num(run.idealMs / 1000)} s), ${run.invocations} invocations (${run.selfRequeues} self-requeues), ${run.reconciles} reconciles, ${run.podsFlipped} flips, ${run.retries} requests retried`);
    hotRuns.push(run);
  }
  const plans = planTimes(settings.planPods, settings.planRuns);
  const time = summarize(runs.map((r) => r.rolloutMs / 1000));
  const first = runs[0];
  if (first === undefined) throw new Error('no rollout run');
  const ideal = first.idealMs / 1000;
  const ratio = time.median / ideal;
  // What a reconciler that reacts and writes in no time would take with this kubelet on this API server.
  const podCycle = summarize(runs.map((r) => r.podCycleMs));
  const floor = (first.batches * podCycle.median) / 1000;
  const reconciles = summarize(runs.map((r) => r.reconciles));
  const perReconcile = summarize(runs.map((r) => r.requests.reduce((n, [, c]) => n + c, 0) / r.reconciles));
  const last = runs.at(-1) ?? first;
  const worstPlan = Math.max(...plans.map((p) => p.wall.median));
  const hotTime = hotRuns.length === 0 ? undefined : summarize(hotRuns.map((r) => r.rolloutMs / 1000));
  const hotIdeal = (hotRuns[0]?.idealMs ?? 0) / 1000;
  const hotRatio = hotTime === undefined ? Number.NaN : hotTime.median / hotIdeal;
  return {
    id: 'rollout',
    title: `6. In-place rollout (${settings.pods.toLocaleString('en-US')} pods, maxUnavailable ${settings.maxUnavailable}, real control plane)`,
    method: [
      `A real etcd and kube-apiserver (control-plane/, watch cache on, an audit log of the functions' identity only) hold one SidecarSet and ${settings.pods.toLocaleString('en-US')} pods it injected, all Running and Ready through the test kubelet (control-plane/test-kubelet.ts), which restarts a container whose image changed and makes it ready ${settings.readyDelayMs / 1000} s later. The sidecar's image is then changed (with the hashes the defaulting webhook writes) and the reconciler is invoked as on AWS: \`statusSyncLambda\` composed from the functions' kubeconfig, handed the validating webhook's SidecarSetAdmitted event, which runs the set's reconcile and follows it (run-controller.ts) until no pod is in flight.`,
      `Time: from the update to every pod recorded updated, Ready and consistent by a watch on every pod (testkit/faults/rollout-recorder.ts, which also checks that no more than maxUnavailable updated pods were unavailable at any stored version). Ideal: ${first.batches} batches of ${first.budget} pods × ${settings.readyDelayMs / 1000} s = ${num(ideal)} s, writes and reactions taking no time.`,
      'Where the rest goes: a pod\'s cycle is the time from its image write to it being Ready and consistent again (the kubelet\'s restart plus the delay); a slot\'s idle time is how long a slot freed by a pod becoming ready stayed unused until the next pod\'s write landed (the reconciler\'s reaction: the watch, settleMs, the reconcile running meanwhile, the next reconcile\'s reads, plan and status, and the write queue). Idle time summed over the rollout and divided by the budget is the time the rollout lost to it. A freed slot\'s wait is split into steps by the audit log (testkit/bench/slot-wait.ts): the reconcile that filled it is the last SidecarSet read and status write before the next pod\'s patch. The floor is the ideal with the measured pod cycle in place of the delay: what a reconciler that reacts and writes in no time would take with this kubelet on this API server.',
      `API requests: the API server's audit log, counting the functions' identity only (the kubelet and the watcher write as the admin), from the update until the invocation returned; the same log gives the API server's own time for each (request received to response complete), which on a shared machine is most of a freed slot's wait. Plan: \`planRollout\` over ${settings.planPods.toLocaleString('en-US')} pods in memory (testkit/bench/rollout-plan.ts, also \`node scripts/bench/rollout-plan.ts\`), ${settings.planRuns} runs.`,
    ],
    table: {
      headers: ['figure', 'value'],
      rows: [
        ['update → all pods updated and Ready', `${withSpread(time, 's')} (ideal ${num(ideal)} s)`],
        ['ratio to the ideal', ratioText(ratio)],
        ['update → first pod written', withSpread(summarize(runs.map((r) => r.firstWriteMs)), 'ms', 0)],
        ['pod cycle (write → Ready again), median', withSpread(podCycle, 'ms', 0)],
        ['slot idle time, median per slot', withSpread(summarize(runs.map((r) => r.slotIdleMedianMs)), 'ms', 0)],
        ['slot idle time, total ÷ budget', withSpread(summarize(runs.map((r) => r.slotIdleTotalMs / 1000)), 's')],
        ['a freed slot\'s wait, median of each step (last run)', slotWaitText(last.slotWait)],
        ['floor: batches × the median pod cycle; the rollout against it', `${num(floor)} s; ${ratioText(time.median / floor)}`],
        ['reconciles', withSpread(reconciles, '', 0)],
        ['API requests per reconcile', withSpread(perReconcile, '', 1)],
        ['API requests (last run)', requestsText(last.requests)],
        ['API server time per request, p50 / p90 (last run)', serverTimesText(last.serverTimes)],
        ['API requests retried (no answer in time, or 429/5xx), last run', String(last.retries)],
        ['most updated pods unavailable at once', String(Math.max(...runs.map((r) => r.maxUnavailableSeen)))],
        ['final status (last run)', JSON.stringify(last.finalStatus)],
        ...(hotTime === undefined
          ? []
          : ([
              ['HotUpgrade: update → all pods flipped, Ready and consistent', `${withSpread(hotTime, 's')} (ideal ${num(hotIdeal)} s: two restarts per batch)`],
              ['HotUpgrade: ratio to the ideal', ratioText(hotRatio)],
              ['HotUpgrade: Lambda invocations (admitted, its self-requeues, any 1-minute tick)', `${withSpread(summarize(hotRuns.map((r) => r.invocations)), '', 0)} (self-requeues ${withSpread(summarize(hotRuns.map((r) => r.selfRequeues)), '', 0)})`],
              ['HotUpgrade: API requests retried (no answer in time, or 429/5xx)', withSpread(summarize(hotRuns.map((r) => r.retries)), '', 0)],
              ['HotUpgrade: reconciles; API requests per reconcile', `${withSpread(summarize(hotRuns.map((r) => r.reconciles)), '', 0)}; ${withSpread(summarize(hotRuns.map((r) => r.requests.reduce((n, [, c]) => n + c, 0) / r.reconciles)), '', 1)}`],
              ['HotUpgrade: most updated pods unavailable at once', String(Math.max(...hotRuns.map((r) => r.maxUnavailableSeen)))],
            ] satisfies [string, string][])),
        ...plans.map((p): [string, string] => [`plan, ${settings.planPods.toLocaleString('en-US')} pods, ${p.name}`, `wall ${withSpread(p.wall, 'ms', 0)}, CPU ${withSpread(p.cpu, 'ms', 0)}; ${p.updates.toLocaleString('en-US')} updates planned`]),
      ],
    },
    verdicts: [
      { target: `rollout ≤ ${ROLLOUT_TARGET} × ideal (${settings.pods.toLocaleString('en-US')} pods, ${settings.maxUnavailable}, ready ${settings.readyDelayMs / 1000} s after a restart)`, figure: `${ratioText(ratio)} (${num(time.median)} s of ${num(ideal)} s)`, met: ratio <= ROLLOUT_TARGET },
      ...(hotTime === undefined
        ? []
        : [{ target: `HotUpgrade rollout ≤ ${ROLLOUT_TARGET} × ideal (the same ${settings.pods.toLocaleString('en-US')} pods, two restarts per batch)`, figure: `${ratioText(hotRatio)} (${num(hotTime.median)} s of ${num(hotIdeal)} s)`, met: hotRatio <= ROLLOUT_TARGET }]),
      { target: `rollout plan for ${settings.planPods.toLocaleString('en-US')} pods ≤ ${PLAN_TARGET_MS / 1000} s`, figure: `${num(worstPlan, 0)} ms`, met: worstPlan <= PLAN_TARGET_MS },
    ],
    notes: [
      'The first reconcile of each invocation (and each scheduled resync) lists the set\'s pods; the controller\'s reconciles plan from a watch of them that shows the loop\'s own writes (lib/status-sync/pod-view.ts), so a requeued reconcile costs about 3 requests of its own (the SidecarSet, its ControllerRevisions, its status); the rest are the pods\' writes (one guarded JSON Patch and one condition each, 2 per pod whatever the number of reconciles) and the rollout state Events. `list pods` in the requests counts pages of 500.',
      'The reaction time is what the rollout loses beyond the ideal: the rest of the reconcile running when the slot freed (its image patches; the conditions of the pods it updated and the flips\' Events are deferred after it, lib/status-sync/deferred-writes.ts), the debounce after a watched change (50 ms, during which the SidecarSet and its revisions are read again), the plan, the status, and the place of a pod in the reconcile\'s write queue (8 writes at a time). On a shared, busy machine every API request is slow too, the kubelet\'s as well as the reconciler\'s.',
    ],
  };
}
