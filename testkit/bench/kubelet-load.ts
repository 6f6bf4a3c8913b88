/**
 * The test kubelet under load on the real control plane: how long N new pods
 * take to become Ready, and how long one image change in each of them takes
 * to finish (restarted, then ready `readyDelayMs` later). For the benchmarks
 * that need rollouts to complete, and as a figure of its own.
 */
import type { Pod } from '../../lib/kube/types.ts';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { startTestKubelet, type TestKubeletCounters } from '../../control-plane/test-kubelet.ts';
import { createNamespace, createPod, isReady, setImage } from '../cluster-pods.ts';
import { pod as podObject } from '../sidecarset-objects.ts';
import { inParallel } from './cluster.ts';

export interface KubeletLoadOptions {
  pods: number;
  readyDelayMs: number;
  /** Creations and image patches in flight at once (the kubelet's own writes are bounded separately). */
  clientConcurrency?: number;
  namespace?: string;
}

export interface KubeletLoadResult {
  pods: number;
  readyDelayMs: number;
  /** From the first creation to the last one answered. */
  createMs: number;
  /** From the first creation until every pod is Ready. */
  allReadyMs: number;
  /** From the first image patch to the last one answered. */
  patchMs: number;
  /** From the first image patch until every pod runs the new image and is Ready again. */
  allUpdatedMs: number;
  counters: TestKubeletCounters;
}

const pollMs = 50;

async function until(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

async function listPods(cp: ControlPlane, namespace: string): Promise<Pod[]> {
  const res = await cp.request('admin', 'GET', `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`);
  if (res.status !== 200) throw new Error(`listing pods: ${res.status} ${res.body.slice(0, 300)}`);
  return (JSON.parse(res.body) as { items: Pod[] }).items;
}

export async function kubeletLoad(cp: ControlPlane, options: KubeletLoadOptions): Promise<KubeletLoadResult> {
  const namespace = options.namespace ?? 'kubelet-load';
  const concurrency = options.clientConcurrency ?? 16;
  const timeoutMs = 600_000;
  await createNamespace(cp, namespace);
  const kubelet = startTestKubelet(cp, { namespaces: [namespace], readyDelayMs: options.readyDelayMs, pullDelayMs: 0 });
  try {
    const names = Array.from({ length: options.pods }, (_, i) => `pod-${String(i).padStart(5, '0')}`);
    const template = podObject({ containers: [{ name: 'app', image: 'app:1' }, { name: 'sidecar', image: 'nginx:1.25' }] });
    const created: Pod[] = [];
    const startedAt = performance.now();
    await inParallel(names, concurrency, async (name) => {
      created.push(await createPod(cp, { ...template, metadata: { ...template.metadata, name, namespace } }));
    });
    const createMs = performance.now() - startedAt;
    await until(() => kubelet.counters.podsStarted >= options.pods, timeoutMs, `${options.pods} pods starting`);
    await kubelet.idle();
    const allReadyMs = performance.now() - startedAt;
    const ready = (await listPods(cp, namespace)).filter(isReady).length;
    if (ready !== options.pods) throw new Error(`${ready} of ${options.pods} pods are Ready after the kubelet went idle`);

    const patchedAt = performance.now();
    await inParallel(created, concurrency, (pod) => setImage(cp, pod, 'sidecar', 'nginx:1.27'));
    const patchMs = performance.now() - patchedAt;
    await until(() => kubelet.counters.restarts >= options.pods, timeoutMs, `${options.pods} restarts`);
    await kubelet.idle();
    const allUpdatedMs = performance.now() - patchedAt;
    const updated = (await listPods(cp, namespace)).filter(
      (pod) => isReady(pod) && pod.status?.containerStatuses?.some((s) => s.name === 'sidecar' && s.image === 'nginx:1.27' && s.ready === true) === true,
    ).length;
    if (updated !== options.pods) throw new Error(`${updated} of ${options.pods} pods run the new image and are Ready after the kubelet went idle`);
    return { pods: options.pods, readyDelayMs: options.readyDelayMs, createMs, allReadyMs, patchMs, allUpdatedMs, counters: { ...kubelet.counters } };
  } finally {
    await kubelet.stop();
  }
}
