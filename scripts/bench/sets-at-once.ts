/**
 * Section: sets rolled at once (issue 46 item 3), on the local stack
 * (`npm start -- --test-kubelet`'s: the real kube-apiserver calling the local
 * server's webhooks, the controller's loop as rbac.yaml's reconciler, the
 * test kubelet restarting an updated sidecar and making it ready
 * `readyDelayMs` later). Five SidecarSets of `podsPerSet` pods each; one set's
 * image is changed alone, then all five at once, and each rollout is timed
 * from the change until the set's stored status shows every pod updated
 * and ready (what `kubectl get sidecarsets` shows). The pace of a set alone
 * is the floor: the controller's one queue should roll five sets about as
 * fast as one, as Kruise's workers do. Measured twice, on two stacks: with
 * one worker (SIDECARSET_WORKERS=1, the controller before it had more) and
 * with the default.
 */
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import { DEFAULT_SIDECARSET_WORKERS, ENV_SIDECARSET_WORKERS } from '../../functions/status-sync/compose.ts';
import type { Pod } from '../../lib/kube/types.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { summarize } from '../../testkit/bench/stats.ts';
import { createPod } from '../../testkit/cluster-pods.ts';
import { num, ratioText, withSpread } from './format.ts';
import type { SectionReport } from './report.ts';

export interface SetsAtOnceSettings {
  /** Rounds of (one alone, then five at once). */
  runs: number;
  sets: number;
  podsPerSet: number;
  maxUnavailable: number;
  readyDelayMs: number;
}

const SETS = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
const NAMESPACE = 'default';
const TIMEOUT_MS = 180_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function rolledSet(name: string, maxUnavailable: number): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: { selector: { matchLabels: { app: name } }, containers: [{ name: 'agent', image: 'agent:0' }], updateStrategy: { type: 'RollingUpdate', maxUnavailable } },
  };
}

async function admin<T>(stack: LocalStack, method: string, path: string, body?: unknown, contentType?: string): Promise<T> {
  const res = await stack.cp.request('admin', method, path, body, contentType);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body) as T;
}

/** True when the stored status counts `pods` pods, all updated and ready, for the set's current generation. */
function rolledOut(set: SidecarSet, pods: number): boolean {
  const s = set.status ?? {};
  return s.observedGeneration === set.metadata?.generation && s.matchedPods === pods && s.updatedPods === pods && s.readyPods === pods && s.updatedReadyPods === pods;
}

/** Polls the sets (every 50 ms) until each has rolled out; each set's time from `since`, in ms. */
async function rolloutTimes(stack: LocalStack, names: readonly string[], pods: number, since: number): Promise<number[]> {
  const done = new Map<string, number>();
  while (done.size < names.length) {
    for (const name of names.filter((n) => !done.has(n))) {
      if (rolledOut(await admin<SidecarSet>(stack, 'GET', `${SETS}/${name}`), pods)) done.set(name, performance.now() - since);
    }
    if (performance.now() - since > TIMEOUT_MS) throw new Error(`not rolled out within ${TIMEOUT_MS / 1000} s: ${names.filter((n) => !done.has(n)).join(', ')}`);
    await sleep(50);
  }
  return names.map((n) => done.get(n) ?? 0);
}

/** Changes the sets' image at once (through the webhooks, which write the new hashes) and times their rollouts. */
async function roll(stack: LocalStack, names: readonly string[], image: string, pods: number): Promise<{ times: number[]; requests: number }> {
  const requestsBefore = stack.statusSyncRequests();
  const since = performance.now();
  await Promise.all(names.map((name) => admin(stack, 'PATCH', `${SETS}/${name}`, [{ op: 'replace', path: '/spec/containers/0/image', value: image }], 'application/json-patch+json')));
  const times = await rolloutTimes(stack, names, pods, since);
  return { times, requests: stack.statusSyncRequests() - requestsBefore };
}

/** The sets and their pods, injected through pod-inject, running and ready. */
async function seed(stack: LocalStack, s: SetsAtOnceSettings): Promise<string[]> {
  const names = Array.from({ length: s.sets }, (_, i) => `roll-${i}`);
  for (const name of names) await admin(stack, 'POST', SETS, rolledSet(name, s.maxUnavailable));
  for (const name of names) {
    const pods = Array.from({ length: s.podsPerSet }, (_, j): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `${name}-${j}`, namespace: NAMESPACE, labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } }));
    for (const pod of pods) await createPod(stack.cp, pod);
  }
  await rolloutTimes(stack, names, s.podsPerSet, performance.now());
  return names;
}

interface Round {
  alone: number;
  together: number[];
  aloneRequests: number;
  togetherRequests: number;
}

/** `s.runs` rounds on a fresh local stack whose controller has `workers` workers. */
async function rounds(s: SetsAtOnceSettings, workers: number, log: (line: string) => void): Promise<Round[]> {
  const stack = await startLocalStack({ statusSyncIntervalMs: 30_000, testKubelet: { readyDelayMs: s.readyDelayMs, pullDelayMs: 0 }, env: { [ENV_SIDECARSET_WORKERS]: String(workers) } });
  const out: Round[] = [];
  try {
    const names = await seed(stack, s);
    for (let i = 0; i < s.runs; i++) {
      const alone = await roll(stack, names.slice(0, 1), `agent:${2 * i + 1}`, s.podsPerSet);
      const together = await roll(stack, names, `agent:${2 * i + 2}`, s.podsPerSet);
      const round = { alone: alone.times[0] ?? 0, together: together.times, aloneRequests: alone.requests, togetherRequests: together.requests };
      log(`  sets-at-once, ${workers} worker(s), round ${i + 1}: one alone ${num(round.alone / 1000)} s; ${s.sets} at once ${together.times.map((t) => num(t / 1000)).join(', ')} s`);
      out.push(round);
    }
  } finally {
    await stack.stop();
  }
  return out;
}

export async function setsAtOnceSection(s: SetsAtOnceSettings, log: (line: string) => void): Promise<SectionReport> {
  const one = await rounds(s, 1, log);
  const byDefault = await rounds(s, DEFAULT_SIDECARSET_WORKERS, log);
  return report(s, [
    [1, one],
    [DEFAULT_SIDECARSET_WORKERS, byDefault],
  ]);
}

/** The rows of one stack's rounds. */
function rowsOf(s: SetsAtOnceSettings, workers: number, rounds: readonly Round[], ideal: number): { rows: [string, string][]; ratio: number } {
  const alone = summarize(rounds.map((r) => r.alone / 1000));
  const slowest = summarize(rounds.map((r) => Math.max(...r.together) / 1000));
  const perSet = summarize(rounds.flatMap((r) => r.together.map((t) => t / 1000)));
  const ratio = slowest.median / alone.median;
  const w = `${workers} worker${workers === 1 ? '' : 's'}`;
  return {
    ratio,
    rows: [
      [`${w}: one set alone, change → status shows all updated and ready`, `${withSpread(alone, 's')} (ideal ${num(ideal)} s)`],
      [`${w}: ${s.sets} sets at once, the last set rolled out`, withSpread(slowest, 's')],
      [`${w}: ${s.sets} sets at once, each set`, withSpread(perSet, 's')],
      [`${w}: ratio, ${s.sets} at once (the last) ÷ one alone`, ratioText(ratio)],
      [`${w}: the reconciler's API requests, one alone; ${s.sets} at once`, `${withSpread(summarize(rounds.map((r) => r.aloneRequests)), '', 0)}; ${withSpread(summarize(rounds.map((r) => r.togetherRequests)), '', 0)}`],
    ],
  };
}

function report(s: SetsAtOnceSettings, runs: readonly [workers: number, rounds: readonly Round[]][]): SectionReport {
  const batches = Math.ceil(s.podsPerSet / s.maxUnavailable);
  const ideal = (batches * s.readyDelayMs) / 1000;
  const measured = runs.map(([workers, rounds]) => ({ workers, ...rowsOf(s, workers, rounds, ideal) }));
  return {
    id: 'sets-at-once',
    title: `11. Sets rolled at once (${s.sets} sets of ${s.podsPerSet} pods, local stack)`,
    method: [
      `The local stack of \`npm start -- --test-kubelet\` (the embedded kube-apiserver calling the local server's webhooks, the controller's loop with its schedule at 30 s, the test kubelet making a restarted container ready ${s.readyDelayMs / 1000} s later, no pull delay). ${s.sets} SidecarSets, each selecting its own ${s.podsPerSet} pods (created through pod-inject), maxUnavailable ${s.maxUnavailable}. Each round changes one set's image alone, then all ${s.sets} sets' images at once (${s.sets} PATCHes through the webhooks, which hand each admitted change to the controller's queue); each rollout is timed from the change until the set's stored status shows every pod updated and ready for its new generation (polled every 50 ms). Ideal for one set: ${batches} batches × ${s.readyDelayMs / 1000} s = ${num(ideal)} s. Two stacks one after the other: the controller with one worker (\`${ENV_SIDECARSET_WORKERS}=1\`), then with its default.`,
    ],
    table: { headers: ['figure', 'value'], rows: measured.flatMap((m) => m.rows) },
    verdicts: measured.map((m) => ({ target: `${s.sets} sets rolled at once ≤ 1.1 × one alone (${m.workers} worker${m.workers === 1 ? '' : 's'})`, figure: ratioText(m.ratio), met: m.ratio <= 1.1 })),
    notes: [],
  };
}
