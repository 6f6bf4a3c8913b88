/**
 * Section 4b, opt-in (`npm run bench -- --only resync-100k`; it takes
 * minutes): one resync over 100,000 pods and 1,000 SidecarSets on the
 * real control plane, against the list floor of the same pods from the same
 * API server. Seeding is not measured: the pods are created by concurrent
 * POSTs (Kubernetes has no bulk create) over kept-alive connections, each a
 * copy of its app's template as pod-inject made it (one app container, the
 * sidecar of the one set that selects it, about 3 kB stored: leaner than
 * section 4's 9 kB pod).
 *
 * Per run, in a fresh process (reconciler-child.ts): wall time, CPU time of
 * the process (less sensitive to a shared machine), peak RSS, the API
 * server's own count of requests and of the bytes it answered to pod lists,
 * and the load average when the run ended.
 */
import { Agent, request as httpsRequest } from 'node:https';
import { dirname, join } from 'node:path';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import type { Namespace, Pod } from '../../lib/kube/types.ts';
import { systemClock } from '../../lib/ports.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import type { ResyncResult } from '../../lib/status-sync/resync.ts';
import { runReview } from '../../lib/webhooks/registry.ts';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { storedSidecarSet, userSidecarSet } from '../../testkit/bench/admission-inputs.ts';
import { benchControlPlane, create, forCreate, inParallel, SIDECARSETS_PATH } from '../../testkit/bench/cluster.ts';
import { ratioOfMedians, summarize } from '../../testkit/bench/stats.ts';
import { podReview } from '../../testkit/reviews.ts';
import { CONTEXT_DEFAULTS } from '../../infra/aws/config.ts';
import { DEFAULT_POD_PAGE_SIZE } from '../../lib/adapters/kube-pods.ts';
import { countRequests, scrapeCounts } from './api-requests.ts';
import { pastMeasuredScaleNotes } from './reconciler-scale.ts';
import { runChild } from './child.ts';
import { num, ratioText, withSpread } from './format.ts';
import type { SectionReport } from './report.ts';

export interface Resync100kSettings {
  runs: number;
  pods: number;
  sets: number;
}

/** Issue 28's targets: the resync no slower than merely listing, and inside 30 s. */
export const RESYNC_100K_FLOOR_TARGET = 1.0;
export const RESYNC_100K_SECONDS_TARGET = 30;
const NAMESPACES = 10;
/** Pod POSTs in flight while seeding, each on its own kept-alive connection (the admin is exempt from API priority and fairness). */
const SEED_CONCURRENCY = 64;
/** About the JSON size of one seeded pod as stored (the API server's byte count is after gzip, so not this). */
const LEAN_POD_BYTES = 3_000;

const childFile = join(dirname(fileURLToPath(import.meta.url)), 'reconciler-child.ts');

function namespaces(): Namespace[] {
  return Array.from({ length: NAMESPACES }, (_, i) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `fleet-${i}`, labels: { env: i % 2 === 0 ? 'prod' : 'staging' } } }));
}

/** `count` sets, set j selecting app-j; every tenth also by namespace labels (so the resync reads them). */
function sets(count: number): SidecarSet[] {
  return Array.from({ length: count }, (_, j) => {
    const set = userSidecarSet(`scale-${String(j).padStart(4, '0')}`, 1, { app: `app-${j}` }, j);
    if (j % 10 === 0 && set.spec) set.spec.namespaceSelector = { matchLabels: { env: 'prod' } };
    return storedSidecarSet(set, j + 1);
  });
}

/** A lean pod of app `app` in namespace `namespace`: one container, as a Deployment's ReplicaSet makes it. */
function leanPod(app: number, namespace: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'template',
      namespace,
      labels: { app: `app-${app}`, tier: 'backend', 'pod-template-hash': '6f7c9d8b5' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `app-${app}-6f7c9d8b5`, uid: '0b8f5f2e-3d5c-4b8e-9a0a-6c1f0f3f9d11', controller: true, blockOwnerDeletion: true }],
    },
    spec: { containers: [{ name: 'app', image: `registry.example.com/app-${app}:1.0.0`, ports: [{ containerPort: 8080 }] }] },
  };
}

/** The API server's own sum of bytes it answered to pod LISTs (apiserver_response_sizes). */
async function podListBytes(cp: ControlPlane): Promise<number> {
  const res = await cp.request('admin', 'GET', '/metrics');
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
  let sum = 0;
  for (const line of res.body.split('\n')) {
    if (line.startsWith('apiserver_response_sizes_sum{') && line.includes('resource="pods"') && line.includes('verb="LIST"') && !/subresource="[^"]/.test(line)) sum += Number(line.slice(line.lastIndexOf('}') + 1).trim());
  }
  return sum;
}

/**
 * POSTs as the admin over at most `connections` kept-alive TLS connections:
 * a new connection per pod (the harness's request) costs a TLS handshake on
 * both sides for each of 100,000 pods.
 */
function keptAlivePoster(cp: ControlPlane, connections: number): { post(path: string, body: string): Promise<void>; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: connections, ca: cp.caCert });
  const url = new URL(cp.url);
  if (url.hostname !== '127.0.0.1') throw new Error(`refusing to seed ${url.hostname}: the control plane is on 127.0.0.1 only`);
  const post = (path: string, body: string) =>
    new Promise<void>((resolve, reject) => {
      const req = httpsRequest(
        { agent, host: url.hostname, port: url.port, path, method: 'POST', timeout: 60_000, headers: { Authorization: `Bearer ${cp.adminToken}`, 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': String(Buffer.byteLength(body)) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            if (res.statusCode === 201) resolve();
            else reject(new Error(`POST ${path}: ${res.statusCode ?? 0} ${Buffer.concat(chunks).toString('utf8').slice(0, 500)}`));
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => {
        req.destroy(new Error(`POST ${path} timed out`));
      });
      req.on('error', reject);
      req.end(body);
    });
  return {
    post,
    close: () => {
      agent.destroy();
    },
  };
}

/**
 * Creates a SidecarSet, again after an answer that says the conversion webhook's
 * connection dropped: the API server reuses a kept-alive connection the
 * webhook's server may be closing at that moment, and does not send a POST again.
 * It converts every create (v1alpha1 here, v1beta1 stored).
 */
async function createRetryingConversion(cp: ControlPlane, set: SidecarSet): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const res = await cp.request('admin', 'POST', SIDECARSETS_PATH, set);
    if (res.status === 201) return;
    if (res.status === 409 && attempt > 1) return;
    if (attempt >= 5 || res.status !== 500 || !res.body.includes('conversion webhook')) throw new Error(`POST ${SIDECARSETS_PATH}: ${res.status} ${res.body.slice(0, 500)}`);
  }
}

/** Seeds namespaces, sets and pods; `log` hears progress. Returns the seconds it took. */
export async function seed(cp: ControlPlane, settings: Resync100kSettings, log: (line: string) => void): Promise<number> {
  const started = performance.now();
  const nss = namespaces();
  for (const ns of nss) await create(cp, '/api/v1/namespaces', ns);
  const all = sets(settings.sets);
  await inParallel(all, 16, (set) => createRetryingConversion(cp, forCreate(set)));
  const deps = { sidecarSets: memorySidecarSetSource(all), namespaces: memoryNamespaceSource(nss), clock: systemClock };
  // One injected template per app and namespace label set (env=prod or staging: the sets' namespaceSelectors
  // tell them apart), made by the project's own pod-inject; every pod is a copy, named and in its namespace.
  const templates = new Map<string, Pod>();
  for (let app = 0; app < settings.sets; app++) {
    for (const ns of nss.slice(0, 2)) {
      const namespace = ns.metadata?.name ?? '';
      const pod = leanPod(app, namespace);
      const review = podReview(`seed-${app}-${namespace}`, pod) as { request: Record<string, unknown> };
      review.request.namespace = namespace;
      const outcome = await runReview('pod-inject', review, deps);
      if (outcome.kind !== 'review') throw new Error(`injecting the template of app-${app}: ${JSON.stringify(outcome)}`);
      const patch = outcome.review.response.patch;
      templates.set(`${app}/${ns.metadata?.labels?.env ?? ''}`, patch === undefined ? pod : (applyPatch(pod, decodePatch(patch)) as Pod));
    }
  }
  let created = 0;
  const poster = keptAlivePoster(cp, SEED_CONCURRENCY);
  try {
    await inParallel(Array.from({ length: settings.pods }, (_, i) => i), SEED_CONCURRENCY, async (i) => {
      const namespace = `fleet-${i % NAMESPACES}`;
      const template = templates.get(`${Math.floor(i / NAMESPACES) % settings.sets}/${i % 2 === 0 ? 'prod' : 'staging'}`);
      if (template === undefined) throw new Error(`no template for pod ${i}`);
      const pod = { ...template, metadata: { ...template.metadata, name: `pod-${String(i).padStart(6, '0')}`, namespace } };
      await poster.post(`/api/v1/namespaces/${namespace}/pods`, JSON.stringify(pod));
      if (++created % 10_000 === 0) {
        const seconds = (performance.now() - started) / 1000;
        log(`  ${created} pods created (${num(seconds, 0)} s, ${num(created / seconds, 0)} a second, load ${num(loadavg()[0] ?? 0)})`);
      }
    });
  } finally {
    poster.close();
  }
  return (performance.now() - started) / 1000;
}

interface ChildRun<R> {
  durationMs: number;
  cpuMs: number;
  load1: number;
  result: R;
  maxRssKiB: number;
}

type Run<R> = ChildRun<R> & { requests: [string, number][]; podListBytes: number };

async function run<R>(cp: ControlPlane, mode: 'resync' | 'floor'): Promise<Run<R>> {
  const env = { PATH: process.env.PATH ?? '', KUBECONFIG_CONTENT: cp.kubeconfig('functions') };
  const bytesBefore = await podListBytes(cp);
  const { value, requests } = await countRequests(cp, () => runChild<ChildRun<R>>(childFile, [mode], env));
  return { ...value, requests, podListBytes: (await podListBytes(cp)) - bytesBefore };
}

const requestsText = (requests: readonly [string, number][]) => `${requests.reduce((n, [, c]) => n + c, 0)}: ${requests.map(([k, n]) => `${n} ${k}`).join(', ')}`;
const mb = (bytes: number) => `${num(bytes / 1e6, 0)} MB`;

export async function resync100kSection(settings: Resync100kSettings, log: (line: string) => void): Promise<SectionReport> {
  const cp = await benchControlPlane();
  try {
    const seedSeconds = await seed(cp, settings, log);
    log(`  seeded ${settings.pods} pods and ${settings.sets} SidecarSets in ${num(seedSeconds, 0)} s`);
    return await measureResync100k(cp, settings, seedSeconds, log);
  } finally {
    await cp.stop();
  }
}

/** The section's runs on a control plane {@link seed} seeded, `seedSeconds` its seeding time. */
export async function measureResync100k(cp: ControlPlane, settings: Resync100kSettings, seedSeconds: number, log: (line: string) => void): Promise<SectionReport> {
  {
    await scrapeCounts(cp);
    const first = await run<ResyncResult>(cp, 'resync');
    if (first.result.errors.length > 0) throw new Error(`the first resync failed: ${JSON.stringify(first.result.errors).slice(0, 1000)}`);
    log(`  first resync: ${num(first.durationMs, 0)} ms, ${first.result.statusesWritten} statuses written`);
    const resyncs: Run<ResyncResult>[] = [];
    const floors: Run<{ podsSeen: number }>[] = [];
    for (let i = 0; i < settings.runs; i++) {
      const order: ('resync' | 'floor')[] = i % 2 === 0 ? ['resync', 'floor'] : ['floor', 'resync'];
      for (const mode of order) {
        if (mode === 'resync') resyncs.push(await run<ResyncResult>(cp, 'resync'));
        else floors.push(await run<{ podsSeen: number }>(cp, 'floor'));
        const last = mode === 'resync' ? resyncs.at(-1) : floors.at(-1);
        if (last) log(`  ${mode}: ${num(last.durationMs, 0)} ms, CPU ${num(last.cpuMs, 0)} ms, ${num(last.maxRssKiB / 1024, 0)} MiB, load ${num(last.load1)}`);
      }
    }
    const bad = resyncs.find((p) => p.result.errors.length > 0 || p.result.podsSeen !== settings.pods);
    if (bad) throw new Error(`a resync did not see the whole cluster: ${JSON.stringify(bad.result).slice(0, 1000)}`);
    const resync = summarize(resyncs.map((p) => p.durationMs));
    const floor = summarize(floors.map((p) => p.durationMs));
    const resyncCpu = summarize(resyncs.map((p) => p.cpuMs));
    const floorCpu = summarize(floors.map((p) => p.cpuMs));
    const resyncRss = summarize(resyncs.map((p) => p.maxRssKiB / 1024));
    const floorRss = summarize(floors.map((p) => p.maxRssKiB / 1024));
    const loads = [...resyncs, ...floors].map((p) => p.load1);
    const ratio = ratioOfMedians(resync, floor);
    const lastResync = resyncs.at(-1);
    const lastFloor = floors.at(-1);
    return {
      id: 'resync-100k',
      title: `4b. Reconciler at ${settings.pods.toLocaleString('en-US')} pods (${settings.sets.toLocaleString('en-US')} SidecarSets, real control plane; opt-in)`,
      method: [
        `Opt-in: \`npm run bench -- --only resync-100k\`. A real etcd and kube-apiserver on 127.0.0.1 hold ${settings.sets.toLocaleString('en-US')} SidecarSets (set j selects app-j; every tenth also has a namespaceSelector) and ${settings.pods.toLocaleString('en-US')} pods in ${NAMESPACES} namespaces, each a copy of its app's template as pod-inject made it: one app container and the sidecar of the one set selecting it (leaner than section 4's 9 kB pod). Seeding (${num(seedSeconds, 0)} s by ${SEED_CONCURRENCY} concurrent POSTs over kept-alive connections; Kubernetes has no bulk create) is not measured.`,
        'Resync and floor as in section 4, each in a fresh process, alternating. CPU time is the process\'s own user and system time over the timed part (`process.cpuUsage`), less sensitive than the wall time to the other work on this shared two-core machine; the load average is the one-minute figure when each run ended. Bytes are the API server\'s own sum of the pod LIST answers it wrote (`apiserver_response_sizes_sum`, as written, after gzip).',
      ],
      table: {
        headers: ['figure', 'resync', 'floor', 'ratio'],
        rows: [
          ['duration', withSpread(resync, 'ms', 0), withSpread(floor, 'ms', 0), ratioText(ratio)],
          ['CPU time of the process', withSpread(resyncCpu, 'ms', 0), withSpread(floorCpu, 'ms', 0), ratioText(ratioOfMedians(resyncCpu, floorCpu))],
          ['peak RSS', withSpread(resyncRss, 'MiB', 0), withSpread(floorRss, 'MiB', 0), ratioText(ratioOfMedians(resyncRss, floorRss))],
          ['API requests (last run)', lastResync ? requestsText(lastResync.requests) : '', lastFloor ? requestsText(lastFloor.requests) : '', ''],
          ['bytes of pod lists answered (last run)', lastResync ? mb(lastResync.podListBytes) : '', lastFloor ? mb(lastFloor.podListBytes) : '', ''],
          ['first resync on the seeded cluster', `${num(first.durationMs, 0)} ms (CPU ${num(first.cpuMs, 0)} ms), ${first.result.statusesWritten} statuses written, API requests ${requestsText(first.requests)}`, '', ''],
          ['load average (1 min) at the end of each run', `${num(Math.min(...loads))}–${num(Math.max(...loads))} on 2 cores`, '', ''],
        ],
      },
      verdicts: [
        { target: `resync over ${settings.pods.toLocaleString('en-US')} pods ≤ ${RESYNC_100K_FLOOR_TARGET} × list floor`, figure: ratioText(ratio), met: ratio <= RESYNC_100K_FLOOR_TARGET },
        { target: `resync over ${settings.pods.toLocaleString('en-US')} pods ≤ ${RESYNC_100K_SECONDS_TARGET} s`, figure: `${num(resync.median / 1000)} s`, met: resync.median / 1000 <= RESYNC_100K_SECONDS_TARGET },
      ],
      notes: pastMeasuredScaleNotes({ pods: settings.pods, perPodMs: resync.median / settings.pods, podBytes: LEAN_POD_BYTES, pageSize: DEFAULT_POD_PAGE_SIZE, timeoutSeconds: CONTEXT_DEFAULTS.statusSyncTimeoutSeconds }),
    };
  }
}
