/**
 * Section 7: the time a pod creation takes through each injection path, on
 * the local stack (`npm start`'s: the pinned kube-apiserver, the local
 * server's webhooks, the reconciler's loop): through the injection policy
 * (MutatingAdmissionPolicy, no webhook call) and through pod-inject (the
 * webhook path), with 1, 10 and 100 SidecarSets stored, and through the
 * policy with the webhook server stopped. The pod is selected by one set
 * alone, so that the policy injects it (a pod several sets select goes to
 * pod-inject on either path). Also: how long after a set is stored its
 * pods get its sidecar (the API server's informer of SidecarSets; a pod
 * created before is created without it), and until the policy injects them
 * itself rather than marking them for pod-inject.
 */
import { startLocalStack, type LocalStack } from '../../functions/server/local-stack.ts';
import type { InjectionMode } from '../../lib/webhook-config/webhook-configurations.ts';
import { ANNOTATION_POLICY_RECORD } from '../../lib/sidecarset/policy-record.ts';
import type { Pod } from '../../lib/kube/types.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { quantile } from '../../testkit/bench/stats.ts';
import { inParallel } from '../../testkit/bench/cluster.ts';
import { num } from './format.ts';
import type { SectionReport } from './report.ts';

export interface InjectionPathSettings {
  /** Pod creations timed per row, one after another. */
  pods: number;
  /** The set counts of the rows. */
  setCounts: readonly number[];
  /** New sets timed until the policy first acts on them. */
  cacheSamples: number;
}

const NS = 'bench-paths';
const SETS = '/apis/apps.kruise.io/v1beta1/sidecarsets';
const PODS = `/api/v1/namespaces/${NS}/pods`;
/** How long the reconciler may take to record every stored set's generation (the policy marks a pod of a set it has not). */
const OBSERVED_TIMEOUT_MS = 120_000;
const STATUS_SYNC_INTERVAL_MS = 10_000;

/** The one sidecar of bench set `set`. */
const sidecarOf = (set: string): string => `${set}-agent`;

/** A set the policy takes: one sidecar sharing volumes, selecting `use-<name>`. */
function benchSet(name: string): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { [`use-${name}`]: 'yes' } },
      containers: [{ name: sidecarOf(name), image: `agent:${name}`, env: [{ name: 'LOG_LEVEL', value: 'info' }], volumeMounts: [{ name: `${name}-data`, mountPath: `/${name}` }], shareVolumePolicy: { type: 'enabled' } }],
      volumes: [{ name: `${name}-data`, emptyDir: {} }],
    },
  };
}

/** Whether `pod` came back with the sidecar of bench set `set`. */
function hasSidecarOf(pod: Pod, set: string): boolean {
  return pod.spec?.containers.some((c) => c.name === sidecarOf(set)) === true;
}

function benchPod(name: string, set: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { [`use-${set}`]: 'yes' } },
    spec: { volumes: [{ name: 'www', emptyDir: {} }], containers: [{ name: 'app', image: 'nginx:1.27', volumeMounts: [{ name: 'www', mountPath: '/www' }] }] },
  };
}

const setName = (i: number): string => `set-${String(i).padStart(3, '0')}`;

async function post(stack: LocalStack, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await stack.cp.request('admin', 'POST', path, body);
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body) as Record<string, unknown>;
}

/** Stores sets up to `count` (those below `from` are there), then waits until the reconciler recorded each one's generation. */
async function storeSets(stack: LocalStack, from: number, count: number): Promise<void> {
  const names = Array.from({ length: count - from }, (_, i) => setName(from + i));
  await inParallel(names, 4, async (name) => {
    await post(stack, SETS, benchSet(name));
  });
  const deadline = Date.now() + OBSERVED_TIMEOUT_MS;
  for (;;) {
    const list = JSON.parse((await stack.cp.request('admin', 'GET', SETS)).body) as { items: SidecarSet[] };
    const pending = list.items.filter((s) => s.status?.observedGeneration !== s.metadata?.generation);
    if (list.items.length === count && pending.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${pending.length} of ${list.items.length} sets still without their observedGeneration after ${OBSERVED_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Times `pods` creations of a pod set-000 alone selects; each must come back injected, by the path expected. */
async function timeCreations(stack: LocalStack, label: string, pods: number, byPolicy: boolean): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < pods; i++) {
    const started = performance.now();
    const created = (await post(stack, PODS, benchPod(`${label}-${i}`, setName(0)))) as Pod;
    times.push(performance.now() - started);
    const injected = hasSidecarOf(created, setName(0));
    const record = created.metadata?.annotations?.[ANNOTATION_POLICY_RECORD] !== undefined;
    if (!injected || record !== byPolicy) throw new Error(`pod ${label}-${i} came back ${injected ? `injected by ${record ? 'the policy' : 'pod-inject'}` : 'without its sidecar'}, not injected by ${byPolicy ? 'the policy' : 'pod-inject'}`);
  }
  return times;
}

/** A new set's two moments, in ms from its stored answer: its first dry-run pod with its sidecar (either path), and the policy's own injection. */
interface NewSetDelay {
  /** Until a dry-run pod it selects came back with the set's sidecar: before, pods are created without it. */
  injectedMs: number;
  /** Dry-run pods created without the sidecar before that one. */
  misses: number;
  /** Until the policy injected it by itself (the reconciler recorded the set's revision; pod-inject injected the pods it marked before). */
  policyMs: number;
}

/** Dry-run pods a new set selects, one after another: when one first has its sidecar, and when the policy injects one itself. */
async function newSetDelay(stack: LocalStack, name: string): Promise<NewSetDelay> {
  await post(stack, SETS, benchSet(name));
  const stored = performance.now();
  let first: { injectedMs: number; misses: number } | undefined;
  for (let i = 0; ; i++) {
    const created = (await post(stack, `${PODS}?dryRun=All`, benchPod(`probe-${name}-${i}`, name))) as Pod;
    const elapsed = performance.now() - stored;
    const injected = hasSidecarOf(created, name);
    if (injected) first ??= { injectedMs: elapsed, misses: i };
    if (first !== undefined && created.metadata?.annotations?.[ANNOTATION_POLICY_RECORD] !== undefined) return { ...first, policyMs: elapsed };
    if (elapsed > 30_000) throw new Error(`the policy did not inject a pod of set ${name} within 30 s (${first === undefined ? 'nor did pod-inject' : 'pod-inject did'})`);
  }
}

type Row = [string, number, number[]];

async function withStack<T>(injection: InjectionMode, task: (stack: LocalStack) => Promise<T>): Promise<T> {
  // The reconciler's loop records each new set's generation: the reconcile an admitted change starts, else (some of a burst
  // of 100 were left to it in a trial) the schedule's resync, every 10 s here.
  const stack = await startLocalStack({ injection, statusSyncIntervalMs: STATUS_SYNC_INTERVAL_MS });
  try {
    await post(stack, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    return await task(stack);
  } finally {
    await stack.stop();
  }
}

/**
 * The rows of one path: the set counts in turn (sets added between rows); with `stopped`, the server stopped first
 * and sets deleted between rows. `after` runs on the same stack once the rows are measured.
 */
async function pathRows(injection: InjectionMode, settings: InjectionPathSettings, log: (line: string) => void, stopped = false, after?: (stack: LocalStack) => Promise<void>): Promise<Row[]> {
  const label = stopped ? 'policy, webhook server stopped' : injection === 'policy' ? 'policy' : 'pod-inject (webhook path)';
  return withStack(injection, async (stack) => {
    const rows: Row[] = [];
    const counts = stopped ? [...settings.setCounts].sort((a, b) => b - a) : [...settings.setCounts].sort((a, b) => a - b);
    if (stopped) {
      await storeSets(stack, 0, counts[0] ?? 1);
      await stack.stopServer();
    }
    let stored = stopped ? (counts[0] ?? 1) : 0;
    for (const count of counts) {
      log(`bench: injection: ${label}, ${count} set(s)...`);
      if (stopped) {
        for (let i = count; i < stored; i++) await stack.cp.request('admin', 'DELETE', `${SETS}/${setName(i)}`);
      } else await storeSets(stack, stored, count);
      stored = count;
      // The policy's param cache follows the sets' watch: let it settle before timing.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const slug = `${injection}${stopped ? '-stopped' : ''}-${count}`;
      await timeCreations(stack, `${slug}-warm`, 5, injection === 'policy');
      rows.push([label, count, await timeCreations(stack, slug, settings.pods, injection === 'policy')]);
    }
    await after?.(stack);
    return rows;
  });
}

const ms = (value: number): string => `${num(value, 1)} ms`;

function newSetNote(delays: readonly NewSetDelay[]): string {
  const sorted = (pick: (d: NewSetDelay) => number): number[] => delays.map(pick).sort((a, b) => a - b);
  const injected = sorted((d) => d.injectedMs);
  const policy = sorted((d) => d.policyMs);
  const missed = delays.filter((d) => d.misses > 0);
  const misses = missed.reduce((n, d) => n + d.misses, 0);
  return (
    `Of ${delays.length} new sets, ${delays.length - missed.length} had the first pod created after them (as soon as the set's POST was answered) come back with the sidecar` +
    (missed.length === 0 ? '' : `, and ${missed.length} had ${misses} pod(s) created without it first, before the API server's informer of SidecarSets delivered the set`) +
    `; the first pod with the sidecar was answered ${ms(quantile(injected, 0.5))} (median) and at most ${ms(injected.at(-1) ?? 0)} after the set was stored. ` +
    `The policy injected pods itself ${ms(quantile(policy, 0.5))} (median) and at most ${ms(policy.at(-1) ?? 0)} after, once the reconciler had recorded each set's revision; until then it marked them and pod-inject injected them.`
  );
}

function rowCells([label, count, times]: Row): string[] {
  const sorted = [...times].sort((a, b) => a - b);
  return [label, String(count), ms(quantile(sorted, 0.5)), ms(quantile(sorted, 0.99)), String(times.length)];
}

export async function injectionPathSection(settings: InjectionPathSettings, log: (line: string) => void): Promise<SectionReport> {
  const rows: Row[] = [];
  const delays: NewSetDelay[] = [];
  const measureNewSets = async (stack: LocalStack): Promise<void> => {
    log('bench: injection: new sets...');
    for (let i = 0; i < settings.cacheSamples; i++) delays.push(await newSetDelay(stack, `fresh-${i}`));
  };
  rows.push(...(await pathRows('policy', settings, log, false, measureNewSets)));
  rows.push(...(await pathRows('webhook', settings, log)));
  rows.push(...(await pathRows('policy', settings, log, true)));
  return {
    id: 'injection',
    title: '7. Pod creation through the injection policy and through pod-inject (local stack)',
    method: [
      'The local stack (`npm start`\'s: the pinned kube-apiserver v1.36.3 and etcd, the local server\'s webhooks over HTTPS on loopback, the reconciler\'s loop), started once per path: `--injection policy` (the default) and `--injection webhook`. SidecarSets the policy takes (one sidecar sharing volumes, an env var, a volume), each selecting its own label; the timed pod is selected by one of them alone, so the policy injects it alone on the policy path and pod-inject (reading every stored set) on the webhook path. Each pod comes back checked: injected, and by the path expected.',
      `Per row, ${settings.pods} pod creations (POST, stored in etcd, not dry runs) one after another as the admin, timed from the request to the answer, after 5 untimed ones; sets are added between rows (and the reconciler, its resync every ${STATUS_SYNC_INTERVAL_MS / 1000} s, has recorded each set's generation, without which the policy sends the pod to pod-inject). "Webhook server stopped": the local server closed (no webhook, no conversion answers), sets deleted between rows.`,
      `New sets: ${settings.cacheSamples}, each followed at once by server-side dry runs of a pod it selects, one after another, timed from the set's stored answer until one comes back with the set's sidecar (by either path: the policy marks a pod of a set whose revision the reconciler has not recorded, and pod-inject injects it), and until the policy injects one itself.`,
    ],
    table: { headers: ['path', 'SidecarSets', 'p50', 'p99', 'pods'], rows: rows.map(rowCells) },
    verdicts: [],
    notes: [newSetNote(delays)],
  };
}
