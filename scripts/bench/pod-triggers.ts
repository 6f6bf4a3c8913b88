/**
 * Section: from a pod change to the stored SidecarSet status (issue 38 item
 * 1), on the local stack (`npm start`'s: the real kube-apiserver calling the
 * local server's webhooks, the status loop as rbac.yaml's reconciler).
 *
 * Three rows, one per way the status can follow the pods:
 * - triggers (the design): pod-inject's CREATE and pod-change's DELETE and
 *   pods/status UPDATE hand the loop a pod trigger; the schedule an hour away;
 * - the schedule alone (before): the same changes with the loop's interval
 *   at its default (30 s) and the triggers off; fewer changes, as each waits
 *   for a tick;
 * - a burst: 1,000 pod CREATEs, 8 at a time, with the triggers: resyncs,
 *   reconciles and the reconciler's API requests per 1,000 changes, and the
 *   time from the last answer to a status showing all of them.
 */
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import { CONTROLLER_MESSAGE, RESYNC_MESSAGE } from '../../functions/status-sync/compose.ts';
import { burstCreate, createSet, driveOneAtATime, watchedSet, type ChangeLatency } from '../../testkit/pod-change-latency.ts';
import { quantile } from '../../testkit/bench/stats.ts';
import { num } from './format.ts';
import type { SectionReport } from './report.ts';

export interface PodTriggerSettings {
  /** Pods taken one at a time through create, ready, unready (every second one), delete. */
  pods: number;
  /** Pods of the schedule-alone row (each change waits for a tick). */
  schedulePods: number;
  /** Pods of the burst. */
  burst: number;
}

/** The bound on the local stack. */
const BOUND_MS = 2_000;

/** Resyncs and reconciles the status loop ran, from its log lines (a 'resync' line is one, a 'controller' line says how many reconciles). */
function reconcilesOf(stack: LocalStack, fromLine: number): number {
  let reconciles = 0;
  for (const line of stack.logs.slice(fromLine)) {
    const text = statusSyncMessage(line);
    if (text === RESYNC_MESSAGE) reconciles++;
    else if (text === CONTROLLER_MESSAGE) reconciles += (JSON.parse(line) as { reconciles?: number }).reconciles ?? 0;
  }
  return reconciles;
}

/** The message of a status-sync log line, or undefined for another function's. */
function statusSyncMessage(line: string): string | undefined {
  const entry = JSON.parse(line) as { function?: string; msg?: string; message?: string };
  return entry.function === 'status-sync' ? (entry.msg ?? entry.message ?? '') : undefined;
}

/**
 * Waits until the status loop has logged every reconcile it ran for the changes:
 * a controller call serves changes while they keep coming and logs its reconciles
 * only when it ends, after the status it wrote already showed. Done when a
 * resync or controller line was logged after the loop's last API request and
 * the loop then made none for a second (a call still running, even idle,
 * made its requests after the last such line). At most 150 s.
 */
async function loggedRequeues(stack: LocalStack, fromLine: number): Promise<void> {
  const deadline = Date.now() + 150_000;
  let requests = stack.statusSyncRequests();
  let linesAtLastRequest = stack.logs.length;
  let quietSince = Date.now();
  while (Date.now() < deadline) {
    const now = stack.statusSyncRequests();
    if (now !== requests) {
      requests = now;
      linesAtLastRequest = stack.logs.length;
      quietSince = Date.now();
    }
    let loggedAfter = false;
    for (let i = Math.max(fromLine, linesAtLastRequest); i < stack.logs.length && !loggedAfter; i++) {
      const message = statusSyncMessage(stack.logs[i] ?? '{}');
      loggedAfter = message === RESYNC_MESSAGE || message === CONTROLLER_MESSAGE;
    }
    if (loggedAfter && Date.now() - quietSince >= 1_000) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function percentiles(latencies: readonly ChangeLatency[]): [number, number, number] {
  const sorted = latencies.map((l) => l.ms).sort((a, b) => a - b);
  return [quantile(sorted, 0.5), quantile(sorted, 0.95), quantile(sorted, 0.99)];
}

const ms = (value: number) => `${num(Math.round(value))} ms`;

interface Row {
  latencies: ChangeLatency[];
  /** Resyncs and the controller's reconciles. */
  reconciles: number;
  requests: number;
}

async function drive(stack: LocalStack, app: string, pods: number, timeoutMs: number): Promise<Row> {
  const logsBefore = stack.logs.length;
  const requestsBefore = stack.statusSyncRequests();
  const latencies = await driveOneAtATime(stack.cp, { set: app, app, namespace: 'default', pods, timeoutMs });
  await loggedRequeues(stack, logsBefore);
  return { latencies, reconciles: reconcilesOf(stack, logsBefore), requests: stack.statusSyncRequests() - requestsBefore };
}

async function withStack<T>(intervalMs: number, admitted: boolean, run: (stack: LocalStack) => Promise<T>): Promise<T> {
  // Triggers off: a listener that drops them, so the loop sees only its schedule. The webhook path: a pod's CREATE
  // trigger comes from pod-inject, which the policy path does not call for the pods it injects.
  const stack = await startLocalStack({ injection: 'webhook', statusSyncIntervalMs: intervalMs, statusSyncHeartbeatMs: 0, ...(admitted ? {} : { admitted: { admitted: () => undefined } }) });
  try {
    return await run(stack);
  } finally {
    await stack.stop();
  }
}

async function waitForFirstStatus(stack: LocalStack, set: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await stack.cp.request('admin', 'GET', `/apis/apps.kruise.io/v1alpha1/sidecarsets/${set}`)).body.includes('"observedGeneration"')) {
    if (Date.now() > deadline) throw new Error(`SidecarSet ${set} got no status within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function podTriggerSection(settings: PodTriggerSettings, log: (line: string) => void): Promise<SectionReport> {
  log(`pod-triggers: ${settings.pods} pods one at a time, with the triggers`);
  const triggered = await withStack(3_600_000, true, async (stack) => {
    await createSet(stack.cp, watchedSet('web', 'web'));
    await createSet(stack.cp, watchedSet('burst', 'burst'));
    await waitForFirstStatus(stack, 'web');
    await waitForFirstStatus(stack, 'burst');
    const oneAtATime = await drive(stack, 'web', settings.pods, 30_000);
    log(`pod-triggers: a burst of ${settings.burst} pod CREATEs`);
    const logsBefore = stack.logs.length;
    const requestsBefore = stack.statusSyncRequests();
    const burst = await burstCreate(stack.cp, { set: 'burst', app: 'burst', namespace: 'default', pods: settings.burst, timeoutMs: 60_000, concurrency: 8 });
    await loggedRequeues(stack, logsBefore);
    return { oneAtATime, burst: { ...burst, reconciles: reconcilesOf(stack, logsBefore), requests: stack.statusSyncRequests() - requestsBefore } };
  });
  log(`pod-triggers: ${settings.schedulePods} pods one at a time, the schedule alone (30 s)`);
  const scheduled = await withStack(30_000, false, async (stack) => {
    await createSet(stack.cp, watchedSet('web', 'web'));
    await waitForFirstStatus(stack, 'web');
    return drive(stack, 'web', settings.schedulePods, 90_000);
  });

  const rows: string[][] = [];
  // Resyncs, reconciles and requests are the whole drive's: a row of one kind of change shows its latencies only.
  const rowOf = (label: string, latencies: readonly ChangeLatency[], counted?: Row) => {
    const [p50, p95, p99] = percentiles(latencies);
    const per1000 = (n: number) => num(Math.round((n / latencies.length) * 1000));
    rows.push([label, String(latencies.length), ms(p50), ms(p95), ms(p99), counted === undefined ? '' : per1000(counted.reconciles), counted === undefined ? '' : per1000(counted.requests)]);
    return p95;
  };
  const p95 = rowOf('pod triggers (pod-inject CREATE, pod-change DELETE and pods/status), schedule 1 h away', triggered.oneAtATime.latencies, triggered.oneAtATime);
  for (const kind of ['create', 'ready', 'unready', 'delete'] as const) rowOf(`… ${kind} only`, triggered.oneAtATime.latencies.filter((l) => l.kind === kind));
  rowOf('the schedule alone (STATUS_SYNC_INTERVAL_MS 30 s, no triggers)', scheduled.latencies, scheduled);
  const { burst } = triggered;
  rows.push([`burst: ${settings.burst} CREATEs, 8 at a time (${ms(burst.durationMs)})`, String(settings.burst), `last answer to status: ${ms(burst.lastChangeToStatusMs)}`, '', '', num(Math.round((burst.reconciles / settings.burst) * 1000)), num(Math.round((burst.requests / settings.burst) * 1000))]);

  return {
    id: 'pod-triggers',
    title: '9. Pod changes to stored status (local stack)',
    method: [
      'The local stack (`npm start`\'s: the pinned kube-apiserver calling the local server\'s webhooks, the status loop as rbac.yaml\'s `sidecarset-status-sync`) with one SidecarSet. Pods are taken one at a time through their life, each change made as a user or a kubelet makes it (a pod CREATE; the kubelet\'s Ready status written to pods/status; the same status not Ready, every second pod; a DELETE), and timed from the API server\'s answer until a GET of the set (every 20 ms) shows the counts (matchedPods, readyPods) expected; the next change is made only then.',
      'Resyncs and reconciles: the status loop\'s own log (each `resync` line, and the `reconciles` of each `controller` line). API requests: the reconciler\'s HTTP client\'s count (every request it sent, retries and watches included), per 1,000 changes. The burst sends 1,000 CREATEs 8 at a time with no pause and counts everything from its first request until the status shows all 1,000.',
    ],
    table: { headers: ['how the status follows', 'changes', 'p50', 'p95', 'p99', 'resyncs and reconciles per 1,000 changes', 'API requests per 1,000 changes'], rows },
    verdicts: [{ target: 'a pod change shows in the stored status within 2 s at p95 (local stack)', figure: ms(p95), met: p95 <= BOUND_MS }],
    notes: [
      'Latency is counted from the API server\'s answer to the change. The webhook hands the trigger over before it answers; the reconcile reads the pods 250 ms (POD_DEBOUNCE_MS) after the trigger arrived, so a change whose request took longer than that to be answered can show sooner than 250 ms after its answer.',
    ],
  };
}
