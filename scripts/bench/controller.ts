/**
 * Section: the controller's queue (issue 46), in memory (the resync's and the
 * controller's own code over the in-memory ports, with a fixed delay per API
 * request standing in for the API server's round trip):
 * - a resync of 1,000 sets x 100 pods (one paged list of 100,000 pods, every
 *   set counted from it, each status stale) with 1, 4 and 16 workers;
 * - a burst of 10,000 pod triggers over 100 sets (each pod made ready, as
 *   pod-change announces a kubelet's status write): reconciles, API requests,
 *   and the time from the last trigger until every stored status shows all.
 */
import { memoryPodPages } from '../../lib/adapters/memory-status-sync.ts';
import { memoryPods, memoryRevisionStore } from '../../lib/adapters/memory-rollout.ts';
import type { Pod } from '../../lib/kube/types.ts';
import type { AdmittedSidecarSet } from '../../lib/ports.ts';
import { admittedQueue } from '../../lib/status-sync/admitted-queue.ts';
import { runController } from '../../lib/status-sync/run-controller.ts';
import { runResync } from '../../lib/status-sync/resync.ts';
import { rolloutStateEvents } from '../../lib/status-sync/rollout-state.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { hashOf, listedPod, memoryDeps, storedSet } from '../../testkit/status-sync-objects.ts';
import { num } from './format.ts';
import type { SectionReport } from './report.ts';

export interface ControllerSettings {
  sets: number;
  podsPerSet: number;
  workers: readonly number[];
  /** Pod triggers in the burst, and the sets they are spread over. */
  triggers: number;
  triggerSets: number;
  /** The stand-in for one API request's round trip. */
  requestMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function world(sets: number, podsPerSet: number): { sets: SidecarSet[]; pods: Pod[] } {
  const all = Array.from({ length: sets }, (_, i) => storedSet(`set-${i}`, { selector: { matchLabels: { app: `app-${i}` } } }));
  const pods = all.flatMap((set, i) => Array.from({ length: podsPerSet }, (_, j) => listedPod({ name: `p-${i}-${j}`, labels: { app: `app-${i}` }, injected: { [set.metadata?.name ?? '']: hashOf(set) } })));
  return { sets: all, pods };
}

/** One resync with `workers` status writes at a time; every request waits `requestMs`. */
async function resync(s: ControllerSettings, workers: number): Promise<{ ms: number; written: number; lists: number; requests: number }> {
  const { sets, pods } = world(s.sets, s.podsPerSet);
  const { deps } = memoryDeps(sets, pods);
  let requests = 0;
  const patchStatus = deps.statuses.patchStatus.bind(deps.statuses);
  deps.statuses = { ...deps.statuses, patchStatus: async (...args) => { requests++; await sleep(s.requestMs); return patchStatus(...args); } };
  deps.pods = memoryPodPages(pods, 500);
  const started = performance.now();
  const result = await runResync(deps, { writeConcurrency: workers });
  if (result.errors.length > 0) throw new Error(`the resync failed: ${JSON.stringify(result.errors.slice(0, 3))}`);
  // The list: one request per page; the set list: one.
  return { ms: performance.now() - started, written: result.statusesWritten, lists: result.podListAttempts, requests: requests + Math.ceil(pods.length / 500) + 1 };
}

/** 10,000 pods made ready over about a second, each announced by a pod trigger, while the controller runs. */
async function burst(s: ControllerSettings): Promise<{ reconciles: number; requests: number; lastToShownMs: number }> {
  const { sets, pods } = world(s.triggerSets, s.triggers / s.triggerSets);
  for (const pod of pods) pod.status = { ...pod.status, conditions: [{ type: 'Ready', status: 'False' }], containerStatuses: (pod.status?.containerStatuses ?? []).map((c) => ({ ...c, ready: false })) };
  const { deps, statuses } = memoryDeps(sets, pods);
  const cluster = memoryPods(pods);
  let requests = 0;
  const counted = <A extends unknown[], R>(f: (...a: A) => Promise<R>) => async (...a: A): Promise<R> => { requests++; await sleep(s.requestMs); return f(...a); };
  const rollout = { revisions: memoryRevisionStore(), setPods: { ...cluster.source, list: counted(cluster.source.list.bind(cluster.source)) }, pods: cluster.writer, podEvents: { record: () => Promise.resolve() }, clock: { now: () => new Date() }, states: rolloutStateEvents() };
  const reconcileDeps = { statuses: { ...statuses, get: counted(statuses.get.bind(statuses)), patchStatus: counted(statuses.patchStatus.bind(statuses)) }, events: deps.events, namespaces: deps.namespaces, rollout };
  const queue = admittedQueue([], s.triggerSets);
  let pushed = 0;
  let lastAt = 0;
  const perSet = s.triggers / s.triggerSets;
  const pushing = (async () => {
    while (pushed < s.triggers) {
      for (let k = 0; k < 100 && pushed < s.triggers; k++, pushed++) {
        const i = pushed % s.triggerSets;
        cluster.update('default', `p-${i}-${Math.floor(pushed / s.triggerSets)}`, (pod) => {
          pod.status = { ...pod.status, conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: (pod.status?.containerStatuses ?? []).map((c) => ({ ...c, ready: true })) };
        });
        queue.push({ sidecarSet: `set-${i}`, uid: `uid-set-${i}`, operation: 'PODS', resourceVersion: '' } satisfies AdmittedSidecarSet);
      }
      lastAt = performance.now();
      await sleep(10);
    }
  })();
  let reconciles = 0;
  const shown = () => statuses.sets().every((set) => (set.status?.readyPods ?? 0) >= perSet);
  // As the local loop does: follow again whenever triggers wait.
  while (pushed < s.triggers || queue.size() > 0 || !shown()) {
    if (queue.size() === 0) {
      await Promise.race([queue.arrival(), sleep(50)]);
      continue;
    }
    reconciles += (await runController([], reconcileDeps, { intervalMs: 5_000, debounceMs: 50, stallMs: 0, createDebounceMs: 0 }, AbortSignal.timeout(120_000), queue)).reconciles;
  }
  await pushing;
  return { reconciles, requests, lastToShownMs: performance.now() - lastAt };
}

export async function controllerSection(s: ControllerSettings, log: (line: string) => void): Promise<SectionReport> {
  const rows: string[][] = [];
  for (const workers of s.workers) {
    log(`controller: resync of ${s.sets} sets x ${s.podsPerSet} pods, ${workers} workers...`);
    const r = await resync(s, workers);
    rows.push([`resync ${num(s.sets)} sets x ${num(s.podsPerSet)} pods`, String(workers), `${(r.ms / 1000).toFixed(2)} s`, `${num(r.written)} statuses, ${r.lists} pod list, ${num(r.requests)} requests`]);
  }
  log(`controller: burst of ${s.triggers} pod triggers over ${s.triggerSets} sets...`);
  const b = await burst(s);
  rows.push([`burst of ${num(s.triggers)} pod triggers, ${num(s.triggerSets)} sets`, '1', `${(b.lastToShownMs / 1000).toFixed(2)} s after the last`, `${num(b.reconciles)} reconciles, ${num(b.requests)} requests`]);
  return {
    id: 'controller',
    title: '10. The controller\'s queue (in memory)',
    method: [
      `In memory, with ${s.requestMs} ms added to every API request as the API server's round trip. The resync is the schedule's: one paged list of every pod (500 a page), every set counted from it, every status stale, written \`workers\` at a time (writeConcurrency). The burst makes its pods ready 100 at a time every 10 ms, each with its pod trigger, while the controller runs as the local loop runs it (runController again whenever triggers wait); it ends when every stored status shows its set's pods.`,
    ],
    table: { headers: ['what', 'workers', 'time', 'work'], rows },
    verdicts: [],
    notes: [],
  };
}
