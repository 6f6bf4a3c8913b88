/**
 * The in-place rollout under real faults (issue 16): the reconciler as it
 * runs on AWS (functions/status-sync/lambda.ts composed from a kubeconfig,
 * as the least-privilege identity), invoked first with the validating
 * webhook's SidecarSetAdmitted event and then by "schedule" until the
 * rollout is done, against a real control plane with the test kubelet
 * restarting the updated sidecars. The reconciler reaches the API server
 * through a fault proxy; while it rolls out, one fault:
 *
 * - `api-server-restarts`: kube-apiserver is stopped and started again
 *   mid-rollout (every client's requests and watches fail meanwhile);
 * - `connection-resets`: the proxy resets every connection of the
 *   reconciler, and every new one for a moment, twice;
 * - `concurrent-writer`: another writer patches annotations of the same
 *   pods all along (the reconciler's guarded writes meet real conflicts);
 * - `pods-deleted`: a pod being restarted and a pod not yet updated are
 *   deleted mid-rollout.
 *
 * With `hot`, the sidecar is HotUpgrade: each pod takes two writes (the
 * upgrade into the empty container, then the flip of the old one), and the
 * faults strike between them for the pods mid-swap.
 *
 * Every stored version of every pod is checked as it happens
 * (rollout-recorder.ts): never more updated pods unavailable than
 * maxUnavailable, never a pod's sidecar written twice, and for a hot
 * sidecar never the working container empty nor both containers without a
 * real image running; and the rollout must converge: every pod updated,
 * Ready and consistent (a hot pod flipped), the status {N, N, N, N}. A broken rule throws, naming it. Figures say what the fault
 * did, so the jest suite can check it really happened.
 */
import type { ScheduledEvent } from 'aws-lambda';
import type { Pod } from '../../lib/kube/types.ts';
import { hotContainersOf, isPodReady, isPodSidecarUpdated, isPodStateConsistent, podContainers } from '../../lib/sidecarset/pod-state.ts';
import { planRollout } from '../../lib/rollout/plan.ts';
import { currentRevisionName } from '../../lib/sidecarset/revisions.ts';
import { batchWrites } from '../../lib/rollout/batch.ts';
import { admittedEvent } from '../../lib/status-sync/admitted-event.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { statusSyncLambda, type InvocationResult } from '../../functions/status-sync/lambda.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';
import { adminRequest, deleteSet, EMPTY_IMAGE, listPods, NEW_IMAGE, readSet, SIDECAR, seedRollout, updateSidecarImage, type RolloutCluster } from './rollout-fixture.ts';
import { recordRollout, type RolloutRecorder } from './rollout-recorder.ts';
import type { Figures } from '../reliability/figures.ts';
import { capturingLogger } from '../reviews.ts';

export const ROLLOUT_FAULTS = ['none', 'api-server-restarts', 'connection-resets', 'concurrent-writer', 'pods-deleted'] as const;
export type RolloutFault = (typeof ROLLOUT_FAULTS)[number];

export interface RolloutScenario {
  fault: RolloutFault;
  pods: number;
  maxUnavailable: number | string;
  /** Picks when the fault strikes, how long it lasts and which pods it touches. */
  seed: number;
  /** How long the whole rollout may take before the scenario fails (default 240 s). */
  timeoutMs?: number;
  /** The sidecar is HotUpgrade. */
  hot?: boolean;
}

/** The reconciler's longest wait between two reconciles of a set in flight (REQUEUE_AFTER_MS), short so scenarios stay short. */
const REQUEUE_AFTER_MS = 1_000;
/** What a scheduled invocation's context says is left (a Lambda's timeout). */
const INVOCATION_MS = 60_000;

/** A small deterministic generator (mulberry32): the same seed, the same fault. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** maxUnavailable as a pod count, computed here independently of lib/rollout: a percent rounds up, as Kruise's does. */
export function budgetOf(maxUnavailable: number | string, pods: number): number {
  if (typeof maxUnavailable === 'number') return maxUnavailable;
  const percent = /^(\d+)%$/.exec(maxUnavailable);
  if (percent === null) throw new Error(`maxUnavailable ${JSON.stringify(maxUnavailable)} is neither a count nor a percent`);
  return Math.ceil((Number(percent[1]) * pods) / 100);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `test` holds, polling; rejects when `signal` ends first. */
async function when(test: () => boolean, signal: AbortSignal): Promise<void> {
  while (!test()) {
    signal.throwIfAborted();
    await sleep(20);
  }
}

interface Tally {
  invocations: number;
  reconciles: number;
  podsUpdated: number;
  podsFlipped: number;
  conflicts: number;
  errors: string[];
}

function add(tally: Tally, result: InvocationResult): void {
  tally.invocations++;
  if (result.rollout !== undefined) {
    tally.reconciles += 1;
    tally.podsUpdated += result.rollout.podsUpdated;
    tally.podsFlipped += result.rollout.podsFlipped;
    tally.conflicts += result.rollout.conflicts;
  }
  for (const error of result.errors ?? []) tally.errors.push(`${error.sidecarSet ?? ''} ${error.operation}: ${error.message}`);
  const follow = result.controller;
  if (follow === undefined) return;
  tally.reconciles += follow.reconciles;
  tally.podsUpdated += follow.podsUpdated;
  tally.podsFlipped += follow.podsFlipped;
  tally.conflicts += follow.conflicts;
  for (const error of follow.errors) tally.errors.push(`${error.sidecarSet ?? ''} ${error.operation}: ${error.message}`);
}

/** The image the sidecar serves with: its own, or a hot sidecar's working container's. */
function sidecarImage(pod: Pod, hot: boolean): string {
  const name = hot ? hotContainersOf(pod, SIDECAR).working : SIDECAR;
  return podContainers(pod).find((c) => c.name === name)?.image ?? '';
}

/** A hot sidecar's other container holds the empty image (the swap is over); always true for a cold one. */
function swapDone(pod: Pod, hot: boolean): boolean {
  if (!hot) return true;
  const { other } = hotContainersOf(pod, SIDECAR);
  return podContainers(pod).find((c) => c.name === other)?.image === EMPTY_IMAGE;
}

/** What is not yet converged, in words; undefined when every pod is updated, Ready and consistent and the status says {N, N, N, N}. */
async function notConverged(cluster: RolloutCluster, namespace: string, target: SidecarSet, hot: boolean): Promise<string | undefined> {
  const { items } = await listPods(cluster.cp, namespace);
  const behind = items.filter(
    (pod) => !isPodSidecarUpdated(pod, target) || sidecarImage(pod, hot) !== NEW_IMAGE || !swapDone(pod, hot) || !isPodReady(pod, target) || !isPodStateConsistent(pod, target),
  );
  if (behind.length > 0) return `${behind.length} of ${items.length} pods not updated, Ready and consistent (e.g. ${behind[0]?.metadata?.name ?? ''})`;
  const set = await readSet(cluster.cp, target.metadata?.name ?? '');
  const n = items.length;
  const status = set.status ?? {};
  const want = { observedGeneration: set.metadata?.generation, matchedPods: n, updatedPods: n, readyPods: n, updatedReadyPods: n };
  const got = { observedGeneration: status.observedGeneration, matchedPods: status.matchedPods, updatedPods: status.updatedPods, readyPods: status.readyPods, updatedReadyPods: status.updatedReadyPods };
  return JSON.stringify(got) === JSON.stringify(want) ? undefined : `the status is ${JSON.stringify(got)}, not ${JSON.stringify(want)}`;
}

interface FaultRun {
  /** Resolves when the fault has run its course, with its figures. */
  done: Promise<Figures>;
}

/** Starts the scenario's fault in the background; it strikes when the recorder shows the rollout under way. */
function startFault(fault: RolloutFault, cluster: RolloutCluster, proxy: FaultProxy, recorder: RolloutRecorder, namespace: string, pods: number, hot: boolean, rand: () => number, signal: AbortSignal): FaultRun {
  // Strikes while pods are being updated: after the first batch, before the last.
  const threshold = (low: number, high: number) => Math.max(1, Math.min(pods - 1, Math.floor(pods * (low + (high - low) * rand()))));
  switch (fault) {
    case 'none':
      return { done: Promise.resolve({}) };
    case 'api-server-restarts': {
      const at = threshold(0.2, 0.6);
      return {
        done: (async () => {
          // A hot rollout's restart strikes with pods between their upgrade and their flip.
          await when(() => recorder.updatedNow() >= at && (!hot || recorder.swappingNow() > 0), signal);
          const updatedAt = recorder.updatedNow();
          const swappingAt = recorder.swappingNow();
          await cluster.cp.stopApiServer();
          await sleep(200 + Math.floor(800 * rand()));
          await cluster.cp.startApiServer();
          return { restarts: 1, restartAtUpdated: updatedAt, ...(hot ? { restartAtSwapping: swappingAt } : {}) };
        })(),
      };
    }
    case 'connection-resets': {
      const points = [threshold(0.1, 0.4), threshold(0.5, 0.8)];
      return {
        done: (async () => {
          const at: number[] = [];
          for (const point of points) {
            await when(() => recorder.updatedNow() >= point, signal);
            at.push(recorder.updatedNow());
            proxy.reset();
            await sleep(100 + Math.floor(700 * rand()));
            proxy.passThrough();
          }
          return { resetWindows: points.length, resetAtUpdated: at.join('/'), connectionsReset: proxy.counters().resets };
        })(),
      };
    }
    case 'concurrent-writer':
      return {
        done: (async () => {
          // Until the rollout is done (the signal ends): merge patches, unguarded, as another controller's writes are.
          let writes = 0;
          const writer = async () => {
            while (!signal.aborted) {
              const name = `pod-${String(Math.floor(rand() * pods)).padStart(5, '0')}`;
              const res = await cluster.cp
                .request('admin', 'PATCH', `/api/v1/namespaces/${namespace}/pods/${name}`, { metadata: { annotations: { 'faults.test/other-writer': String(++writes) } } }, 'application/merge-patch+json')
                .catch(() => undefined);
              if (res !== undefined && res.status !== 200 && res.status !== 404) throw new Error(`the other writer's patch of ${name} answered ${res.status}: ${res.body.slice(0, 200)}`);
              await sleep(5);
            }
          };
          await Promise.all([writer(), writer(), writer()]);
          return { otherWrites: writes };
        })(),
      };
    case 'pods-deleted': {
      const at = threshold(0.2, 0.6);
      return {
        done: (async () => {
          // One pod restarting its updated sidecar, one not yet updated.
          await when(() => recorder.updatedNow() >= at && recorder.unavailableNow().length > 0, signal);
          const restarting = recorder.unavailableNow()[0] ?? '';
          const { items } = await listPods(cluster.cp, namespace);
          const waiting = items.filter((p) => sidecarImage(p, hot) !== NEW_IMAGE).map((p) => p.metadata?.name ?? '');
          const old = waiting[Math.floor(rand() * waiting.length)] ?? '';
          for (const name of [restarting, old].filter((n) => n !== '')) {
            await adminRequest(cluster.cp, 'DELETE', `/api/v1/namespaces/${namespace}/pods/${name}`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 });
          }
          return { podsDeleted: [restarting, old].filter((n) => n !== '').length, deletedAtUpdated: at };
        })(),
      };
    }
  }
}

/**
 * Runs one rollout under `scenario.fault` on its own namespace and set.
 * @throws Error naming the broken rule, or what did not converge in time.
 */
export async function rolloutUnderFault(cluster: RolloutCluster, scenario: RolloutScenario): Promise<Figures> {
  const started = performance.now();
  const rand = random(scenario.seed);
  const hot = scenario.hot === true;
  const name = `${hot ? 'hot-' : ''}rollout-${scenario.fault}-${scenario.seed}`.slice(0, 63);
  const label = `${hot ? 'hot ' : ''}rollout of ${scenario.pods} pods (maxUnavailable ${scenario.maxUnavailable}) under ${scenario.fault}, seed ${scenario.seed}`;
  const budget = budgetOf(scenario.maxUnavailable, scenario.pods);
  const seeded = await seedRollout(cluster, { name, pods: scenario.pods, maxUnavailable: scenario.maxUnavailable, hot });
  const proxy = await startFaultProxy({ targetPort: Number(new URL(cluster.cp.url).port) });
  const logs = capturingLogger();
  const kubeconfig = cluster.cp.kubeconfig('functions').replace(cluster.cp.url, `https://127.0.0.1:${proxy.port}`);
  const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: kubeconfig, REQUEUE_AFTER_MS: String(REQUEUE_AFTER_MS) }, overrides: { logger: logs.logger } });
  const tally: Tally = { invocations: 0, reconciles: 0, podsUpdated: 0, podsFlipped: 0, conflicts: 0, errors: [] };
  const rollout = new AbortController();
  let recorder: RolloutRecorder | undefined;
  let fault: FaultRun | undefined;
  try {
    const target = await updateSidecarImage(cluster.cp, seeded.set, NEW_IMAGE);
    recorder = await recordRollout(cluster.cp, seeded.namespace, target, budget, SIDECAR, hot ? { emptyImage: EMPTY_IMAGE } : undefined);
    const rec = recorder;
    fault = startFault(scenario.fault, cluster, proxy, rec, seeded.namespace, scenario.pods, hot, rand, rollout.signal);
    // A fault that fails fails the scenario at once, not at the deadline.
    const faultFailed = fault.done.then(
      () => new Promise<never>(() => undefined),
      (error: unknown) => {
        if (rollout.signal.aborted) return new Promise<never>(() => undefined);
        throw error;
      },
    );
    const rolloutStarted = performance.now();
    const deadline = Date.now() + (scenario.timeoutMs ?? 240_000);
    const invoke = async (event: Parameters<typeof handler>[0]) => {
      const ends = Math.min(deadline, Date.now() + INVOCATION_MS);
      const result = await Promise.race([handler(event, { awsRequestId: `req-${tally.invocations + 1}`, getRemainingTimeInMillis: () => Math.max(0, ends - Date.now()) }), faultFailed]);
      add(tally, result);
    };
    // The validating webhook's asynchronous invoke after the update, then EventBridge's schedule until done.
    await invoke(admittedEvent({ sidecarSet: name, uid: target.metadata?.uid ?? '', operation: 'UPDATE', resourceVersion: seeded.set.metadata?.resourceVersion ?? '' }));
    let behind = await notConverged(cluster, seeded.namespace, target, hot);
    while (behind !== undefined) {
      if (Date.now() > deadline) throw new Error(`${label}: not converged after ${scenario.timeoutMs ?? 240_000} ms: ${behind}; errors reported: ${tally.errors.slice(-5).join(' | ') || 'none'}; last log lines:\n${logs.lines.slice(-3).join('\n')}`);
      await invoke({ 'detail-type': 'Scheduled Event', source: 'aws.events', time: new Date().toISOString() } as unknown as ScheduledEvent);
      behind = await notConverged(cluster, seeded.namespace, target, hot);
    }
    const rolloutMs = performance.now() - rolloutStarted;
    rollout.abort();
    const faultFigures = await fault.done;
    await rec.caughtUp();
    if (rec.gaps.length > 0) throw new Error(`${label}: the pod record is incomplete, so it proves nothing: ${rec.gaps.join('; ')}`);
    if (rec.violations.length > 0) throw new Error(`${label}: ${rec.violations.length} broken rule(s); first: ${rec.violations.slice(0, 3).join(' | ')}`);
    const images = rec.imageChanges();
    const remaining = scenario.pods - rec.deleted().length;
    if (hot && rec.flips() < remaining) throw new Error(`${label}: only ${rec.flips()} pods were seen flipping their old container to the empty image, but ${remaining} pods finished`);
    if (images.pods < remaining) throw new Error(`${label}: only ${images.pods} pods' sidecar images were seen changing, but ${remaining} pods run the new image`);
    return {
      scenario: scenario.fault,
      seed: scenario.seed,
      pods: scenario.pods,
      maxUnavailable: String(scenario.maxUnavailable),
      budget,
      maxUnavailableSeen: rec.maxUnavailableSeen(),
      podVersions: rec.versions(),
      imageWrites: images.pods,
      repeatedImageWrites: images.repeated,
      invocations: tally.invocations,
      reconciles: tally.reconciles,
      podsUpdated: tally.podsUpdated,
      ...(hot ? { podsFlipped: tally.podsFlipped, flipsSeen: rec.flips() } : {}),
      conflicts: tally.conflicts,
      errorsReported: tally.errors.length,
      firstError: tally.errors[0] ?? '',
      ...faultFigures,
      rolloutMs: Math.round(rolloutMs),
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    rollout.abort();
    await fault?.done.catch(() => undefined);
    await recorder?.stop();
    await proxy.close();
    await deleteSet(cluster.cp, name).catch(() => undefined);
  }
}

/**
 * The checks can fail: a broken reconciler (the batch Kruise's plan gives
 * for maxUnavailable 100%, every pod's patch at once, against a set whose
 * maxUnavailable is 2) and one pod's sidecar written a second time must be
 * reported by the recorder as the broken rules they are.
 * @throws Error when the recorder let either through.
 */
export async function brokenRolloutIsCaught(cluster: RolloutCluster): Promise<Figures> {
  const name = 'rollout-checks-fail';
  const seeded = await seedRollout(cluster, { name, pods: 8, maxUnavailable: 2 });
  const target = await updateSidecarImage(cluster.cp, seeded.set, NEW_IMAGE);
  const recorder = await recordRollout(cluster.cp, seeded.namespace, target, 2, SIDECAR);
  try {
    const { items } = await listPods(cluster.cp, seeded.namespace);
    const reckless = { ...target, spec: { ...target.spec, updateStrategy: { type: 'RollingUpdate' as const, maxUnavailable: '100%' } } };
    const writes = batchWrites(reckless, planRollout(reckless, items, new Map([[seeded.namespace, {}]])), currentRevisionName(target), () => name, new Date());
    for (const { pod, patch } of writes.updates) {
      await adminRequest(cluster.cp, 'PATCH', `/api/v1/namespaces/${seeded.namespace}/pods/${pod.metadata?.name ?? ''}`, patch, 'application/json-patch+json');
    }
    // One pod's sidecar written again (away and back), as a second write of the same batch would.
    const again = writes.updates[0]?.pod.metadata?.name ?? '';
    for (const image of ['agent:2.0-again', NEW_IMAGE]) {
      await adminRequest(cluster.cp, 'PATCH', `/api/v1/namespaces/${seeded.namespace}/pods/${again}`, [{ op: 'replace', path: '/spec/containers/0/image', value: image }], 'application/json-patch+json');
    }
    await recorder.caughtUp();
    return {
      podsWritten: writes.updates.length,
      maxUnavailableSeen: recorder.maxUnavailableSeen(),
      overBudgetCaught: recorder.violations.filter((v) => v.includes('over maxUnavailable 2')).length,
      writtenTwiceCaught: recorder.violations.filter((v) => v.includes(`pod ${seeded.namespace}/${again} was written by the rollout again`)).length,
    };
  } finally {
    await recorder.stop();
    await deleteSet(cluster.cp, name).catch(() => undefined);
  }
}

/**
 * The hot checks can fail: the working container given the empty image (as
 * a flip of the wrong container would) must be reported as such, and a pod
 * whose working container stops being ready while its partner is empty as
 * one with no container running a real image.
 * @throws Error when the recorder let it through.
 */
export async function brokenHotSwapIsCaught(cluster: RolloutCluster): Promise<Figures> {
  const name = 'hot-rollout-checks-fail';
  const seeded = await seedRollout(cluster, { name, pods: 2, maxUnavailable: 1, hot: true });
  const recorder = await recordRollout(cluster.cp, seeded.namespace, seeded.set, 1, SIDECAR, { emptyImage: EMPTY_IMAGE });
  try {
    const pod = seeded.podNames[0] ?? '';
    const { items } = await listPods(cluster.cp, seeded.namespace);
    const listed = items.find((p) => p.metadata?.name === pod);
    const index = (listed?.spec?.containers ?? []).findIndex((c) => c.name === hotContainersOf(listed as Pod, SIDECAR).working);
    await adminRequest(cluster.cp, 'PATCH', `/api/v1/namespaces/${seeded.namespace}/pods/${pod}`, [{ op: 'replace', path: `/spec/containers/${index}/image`, value: EMPTY_IMAGE }], 'application/json-patch+json');
    // The other pod's working container stops being ready while its partner holds the empty image: nothing serves.
    const other = seeded.podNames[1] ?? '';
    const working = hotContainersOf(items.find((p) => p.metadata?.name === other) as Pod, SIDECAR).working;
    await adminRequest(cluster.cp, 'PATCH', `/api/v1/namespaces/${seeded.namespace}/pods/${other}/status`, { status: { containerStatuses: [{ name: working, ready: false }] } }, 'application/strategic-merge-patch+json');
    await recorder.caughtUp();
    return {
      workingEmptyCaught: recorder.violations.filter((v) => v.includes(`pod ${seeded.namespace}/${pod}`) && v.includes('holds the empty image')).length,
      nothingServingCaught: recorder.violations.filter((v) => v.includes(`pod ${seeded.namespace}/${other}`) && v.includes('runs a real image ready')).length,
    };
  } finally {
    await recorder.stop();
    await deleteSet(cluster.cp, name).catch(() => undefined);
  }
}
