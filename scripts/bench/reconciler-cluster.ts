/**
 * The reconciler benchmark's cluster: 100 SidecarSets selecting different
 * subsets, and 10,000 pods in 10 namespaces as the pod-inject webhook would
 * have stored them (each injected in-process with the project's own handler,
 * then created directly: no webhook is registered).
 */
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import type { Namespace, Pod } from '../../lib/kube/types.ts';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { runReview } from '../../lib/webhooks/registry.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { systemClock } from '../../lib/ports.ts';
import { podReview } from '../../testkit/reviews.ts';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { benchPod, storedSidecarSet, userSidecarSet } from '../../testkit/bench/admission-inputs.ts';
import { create, forCreate, inParallel, SIDECARSETS_PATH } from '../../testkit/bench/cluster.ts';

const APPS = 50;
const NAMESPACES = 10;

function namespaces(): Namespace[] {
  return Array.from({ length: NAMESPACES }, (_, i) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `team-${i}`, labels: { env: i % 2 === 0 ? 'prod' : 'staging' } } }));
}

/**
 * 100 sets over 50 apps: each pod is selected by two; every tenth set also
 * has a namespaceSelector (so the resync reads namespace labels, as it must).
 */
export function reconcilerSidecarSets(count = 100): SidecarSet[] {
  return Array.from({ length: count }, (_, j) => {
    const set = userSidecarSet(`fleet-${String(j).padStart(3, '0')}`, 1, { app: `app-${j % APPS}` }, j);
    if (j % 10 === 0 && set.spec) set.spec.namespaceSelector = { matchLabels: { env: 'prod' } };
    return storedSidecarSet(set, j + 1);
  });
}

function plainPod(i: number): Pod {
  const pod = benchPod();
  const metadata = { ...pod.metadata };
  Reflect.deleteProperty(metadata, 'generateName');
  pod.metadata = { ...metadata, name: `pod-${String(i).padStart(5, '0')}`, namespace: `team-${i % NAMESPACES}`, labels: { app: `app-${i % APPS}`, tier: i % 3 === 0 ? 'frontend' : 'backend', 'pod-template-hash': '6f7c9d8b5' } };
  return pod;
}

/** Seeds the cluster; `progress` hears every thousandth pod. */
export async function seedReconcilerCluster(cp: ControlPlane, pods: number, progress: (created: number) => void): Promise<{ sets: number; pods: number }> {
  const nss = namespaces();
  for (const ns of nss) await create(cp, '/api/v1/namespaces', ns);
  const sets = reconcilerSidecarSets();
  await inParallel(sets, 8, (set) => create(cp, SIDECARSETS_PATH, forCreate(set)));
  const deps = { sidecarSets: memorySidecarSetSource(sets), namespaces: memoryNamespaceSource(nss), clock: systemClock };
  let created = 0;
  await inParallel(Array.from({ length: pods }, (_, i) => i), 24, async (i) => {
    const pod = plainPod(i);
    const review = podReview(`seed-${i}`, pod) as { request: Record<string, unknown> };
    review.request.namespace = pod.metadata?.namespace;
    const outcome = await runReview('pod-inject', review, deps);
    if (outcome.kind !== 'review') throw new Error(`injecting seed pod ${i}: ${JSON.stringify(outcome)}`);
    const patch = outcome.review.response.patch;
    const injected = patch === undefined ? pod : applyPatch(pod, decodePatch(patch));
    await create(cp, `/api/v1/namespaces/${pod.metadata?.namespace ?? ''}/pods`, injected);
    if (++created % 1000 === 0) progress(created);
  });
  return { sets: sets.length, pods };
}
