/**
 * From a pod change to the SidecarSet status that shows it, on a real
 * control plane whose webhooks and status loop are the local stack's: the
 * end-to-end suite and the bench (`npm run bench -- --only pod-triggers`)
 * both drive pods through this.
 *
 * Each change is made as a user or a kubelet makes it (a pod CREATE; a
 * pods/status write of the kubelet's Ready status, from
 * control-plane/kubelet-status.ts; the same status not Ready; a DELETE),
 * and the time is taken from the moment the API server answered it until a
 * GET of the set (polled every `pollMs`) shows the counts expected.
 */
import type { ControlPlane } from '../control-plane/harness.ts';
import { defaultBadImage, nextStep, statusAfter } from '../control-plane/kubelet-status.ts';
import type { Pod } from '../lib/kube/types.ts';
import type { SidecarSet } from '../lib/sidecarset/types.ts';
import { createPod, podPath } from './cluster-pods.ts';

export type ChangeKind = 'create' | 'ready' | 'unready' | 'delete';

export interface ChangeLatency {
  kind: ChangeKind;
  pod: string;
  /** From the API server's answer to the change until the stored status showed it. */
  ms: number;
}

export interface Counts {
  matchedPods: number;
  readyPods: number;
}

const SETS = '/apis/apps.kruise.io/v1alpha1/sidecarsets';

/** A SidecarSet of one sidecar selecting `app=<app>`. */
export function watchedSet(name: string, app: string): SidecarSet {
  return { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name }, spec: { selector: { matchLabels: { app } }, containers: [{ name: `${name}-agent`, image: 'busybox:1.36' }] } };
}

export async function createSet(cp: ControlPlane, set: SidecarSet): Promise<void> {
  const res = await cp.request('admin', 'POST', SETS, set);
  if (res.status !== 201) throw new Error(`creating SidecarSet ${set.metadata?.name ?? ''}: ${res.status} ${res.body.slice(0, 300)}`);
}

export async function readCounts(cp: ControlPlane, set: string): Promise<Counts> {
  const res = await cp.request('admin', 'GET', `${SETS}/${set}`);
  if (res.status !== 200) throw new Error(`reading SidecarSet ${set}: ${res.status} ${res.body.slice(0, 300)}`);
  const status = (JSON.parse(res.body) as SidecarSet).status ?? {};
  return { matchedPods: status.matchedPods ?? 0, readyPods: status.readyPods ?? 0 };
}

/** Polls the set until its counts are `want`; the time it took, or a throw naming the last counts after `timeoutMs`. */
export async function waitForCounts(cp: ControlPlane, set: string, want: Counts, since: number, timeoutMs: number, pollMs = 20): Promise<number> {
  for (;;) {
    const counts = await readCounts(cp, set);
    const elapsed = performance.now() - since;
    if (counts.matchedPods === want.matchedPods && counts.readyPods === want.readyPods) return elapsed;
    if (elapsed > timeoutMs) throw new Error(`SidecarSet ${set} showed ${JSON.stringify(counts)}, not ${JSON.stringify(want)}, ${Math.round(elapsed)} ms after the change`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** The kubelet's status for a started pod, Ready or (`ready` false) running but not Ready. */
function kubeletStatus(pod: Pod, ready: boolean): Record<string, unknown> {
  const status = statusAfter(pod, nextStep({ ...pod, status: {} }, defaultBadImage), defaultBadImage, new Date()) as Record<string, unknown>;
  if (ready) return status;
  const notReady = (list: unknown) => (Array.isArray(list) ? list.map((c: Record<string, unknown>) => ({ ...c, ready: false })) : list);
  const conditions = (status.conditions as Record<string, unknown>[]).map((c) => (c.type === 'Ready' || c.type === 'ContainersReady' ? { ...c, status: 'False' } : c));
  return { ...status, conditions, containerStatuses: notReady(status.containerStatuses) };
}

async function writeStatus(cp: ControlPlane, pod: Pod, status: Record<string, unknown>): Promise<void> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const res = await cp.request('admin', 'PATCH', `${podPath(namespace, pod.metadata?.name ?? '')}/status`, { status }, 'application/merge-patch+json');
  if (res.status !== 200) throw new Error(`writing the status of ${namespace}/${pod.metadata?.name ?? ''}: ${res.status} ${res.body.slice(0, 300)}`);
}

export interface DriveOptions {
  set: string;
  app: string;
  namespace: string;
  /** Pods created one after another (each waited for), then each made Ready, then half made not Ready, then all deleted. */
  pods: number;
  /** The most a change may take to show before the drive fails. */
  timeoutMs: number;
  /** Pause after each change showed (ms, default 0): changes arrive apart rather than back to back. */
  gapMs?: number;
}

/**
 * One pod at a time through its life, each change waited for in the status
 * before the next is made: `pods` creates, readies, unreadies (every second
 * pod) and deletes, with the latency of each.
 */
export async function driveOneAtATime(cp: ControlPlane, options: DriveOptions): Promise<ChangeLatency[]> {
  const { set, namespace, timeoutMs } = options;
  const latencies: ChangeLatency[] = [];
  const counts: Counts = await readCounts(cp, set);
  const pods: Pod[] = [];
  const gap = () => new Promise((resolve) => setTimeout(resolve, options.gapMs ?? 0));
  const record = async (kind: ChangeKind, pod: string, since: number) => {
    latencies.push({ kind, pod, ms: await waitForCounts(cp, set, counts, since, timeoutMs) });
    await gap();
  };
  for (let i = 0; i < options.pods; i++) {
    const name = `${options.app}-${i}`;
    const created = await createPod(cp, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels: { app: options.app } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } });
    const since = performance.now();
    counts.matchedPods++;
    pods.push(created);
    await record('create', name, since);
  }
  for (const pod of pods) {
    await writeStatus(cp, pod, kubeletStatus(pod, true));
    const since = performance.now();
    counts.readyPods++;
    await record('ready', pod.metadata?.name ?? '', since);
  }
  for (const [i, pod] of pods.entries()) {
    if (i % 2 === 1) continue;
    await writeStatus(cp, pod, kubeletStatus(pod, false));
    const since = performance.now();
    counts.readyPods--;
    await record('unready', pod.metadata?.name ?? '', since);
  }
  for (const [i, pod] of pods.entries()) {
    const res = await cp.request('admin', 'DELETE', podPath(namespace, pod.metadata?.name ?? ''));
    if (res.status !== 200) throw new Error(`deleting pod ${pod.metadata?.name ?? ''}: ${res.status} ${res.body.slice(0, 300)}`);
    const since = performance.now();
    counts.matchedPods--;
    if (i % 2 === 1) counts.readyPods--;
    await record('delete', pod.metadata?.name ?? '', since);
  }
  return latencies;
}

/**
 * A burst: `pods` pod CREATEs sent `concurrency` at a time, no wait between
 * them; the time from the last answer until the status shows them all.
 */
export async function burstCreate(cp: ControlPlane, options: DriveOptions & { concurrency: number }): Promise<{ lastChangeToStatusMs: number; durationMs: number }> {
  const { set, namespace } = options;
  const before = await readCounts(cp, set);
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < options.pods; i = next++) {
      await createPod(cp, { apiVersion: 'v1', kind: 'Pod', metadata: { name: `${options.app}-burst-${i}`, namespace, labels: { app: options.app } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } });
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const since = performance.now();
  const ms = await waitForCounts(cp, set, { matchedPods: before.matchedPods + options.pods, readyPods: before.readyPods }, since, options.timeoutMs, 50);
  return { lastChangeToStatusMs: ms, durationMs: since - started };
}
