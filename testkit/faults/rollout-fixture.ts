/**
 * A cluster for in-place rollouts (issue 16): a real control plane with the
 * CRD and the functions' RBAC, the test kubelet making pods Running and
 * Ready and restarting containers whose image changed, and per scenario a
 * namespace holding one SidecarSet and its injected pods, all Ready. The
 * pods are injected here by the same code the pod-inject webhook runs, so
 * they carry exactly the annotations a webhook-injected pod carries.
 *
 * Lists and watches are read from etcd (`--watch-cache=false`) unless told
 * otherwise: a watch can then resume from any version after an API server
 * restart, so a recorder sees every stored version of every pod.
 */
import { readFile } from 'node:fs/promises';
import { crdPath, waitForCrd, waitForFunctionsAccess } from '../../functions/server/local-stack.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { startTestKubelet, type TestKubelet } from '../../control-plane/test-kubelet.ts';
import { forCreate, inParallel, SIDECARSETS_PATH } from '../bench/cluster.ts';
import { createNamespace, createPod, isReady } from '../cluster-pods.ts';

/** The sidecar every rollout scenario updates. */
export const SIDECAR = 'agent';
export const OLD_IMAGE = 'agent:1.0';
export const NEW_IMAGE = 'agent:2.0';
/** A hot sidecar's placeholder image (`hotUpgradeEmptyImage`). */
export const EMPTY_IMAGE = 'agent-empty:1.0';

export interface RolloutClusterOptions {
  /** How long a restarted container takes to become ready again. */
  readyDelayMs: number;
  /**
   * The test kubelet's pull delay for a changed image (default 0, not the
   * kubelet's own default): the suites and the rollout benchmark time
   * batches by readyDelayMs alone.
   */
  pullDelayMs?: number;
  /** Serve lists and watches from etcd (default true): watches resume from any version after a restart. */
  listsFromEtcd?: boolean;
  /** More kube-apiserver flags (the benchmark's audit log). */
  apiServerArgs?: readonly string[];
}

export interface RolloutCluster {
  cp: ControlPlane;
  kubelet: TestKubelet;
  readyDelayMs: number;
  stop(): Promise<void>;
}

export async function startRolloutCluster(options: RolloutClusterOptions): Promise<RolloutCluster> {
  const cp = await startControlPlane({ apiServerArgs: [...(options.listsFromEtcd === false ? [] : ['--watch-cache=false']), ...(options.apiServerArgs ?? [])] });
  try {
    await cp.apply(await readFile(crdPath, 'utf8'));
    await waitForCrd(cp, 'sidecarsets.apps.kruise.io');
    await waitForFunctionsAccess(cp);
  } catch (error) {
    await cp.stop();
    throw error;
  }
  const kubelet = startTestKubelet(cp, { readyDelayMs: options.readyDelayMs, pullDelayMs: options.pullDelayMs ?? 0, writeConcurrency: 32 });
  return {
    cp,
    kubelet,
    readyDelayMs: options.readyDelayMs,
    async stop() {
      await kubelet.stop();
      await cp.stop();
    },
  };
}

export interface RolloutSeed {
  /** The SidecarSet's name; its namespace (spec.namespace) and its pods' label `app` too. */
  name: string;
  pods: number;
  maxUnavailable: number | string;
  /** The sidecar is HotUpgrade (runs as agent-1 and agent-2, EMPTY_IMAGE its placeholder). */
  hot?: boolean;
}

/** One scenario's set and pods as created: the set as stored before the update. */
export interface SeededRollout {
  namespace: string;
  set: SidecarSet;
  podNames: string[];
}

async function admin(cp: ControlPlane, method: string, path: string, body?: unknown, contentType?: string): Promise<unknown> {
  const res = await cp.request('admin', method, path, body, contentType);
  if (res.status < 200 || res.status > 299) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 500)}`);
  return JSON.parse(res.body);
}

export async function listPods(cp: ControlPlane, namespace: string): Promise<{ items: Pod[]; resourceVersion: string }> {
  const body = (await admin(cp, 'GET', `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`)) as { items: Pod[]; metadata: { resourceVersion: string } };
  return { items: body.items, resourceVersion: body.metadata.resourceVersion };
}

export async function readSet(cp: ControlPlane, name: string): Promise<SidecarSet> {
  return (await admin(cp, 'GET', `${SIDECARSETS_PATH}/${encodeURIComponent(name)}`)) as SidecarSet;
}

async function until(test: () => Promise<boolean>, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`${what()} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The set (namespace-scoped, one sidecar on OLD_IMAGE) and its pods, injected and Ready. */
export async function seedRollout(cluster: RolloutCluster, seed: RolloutSeed): Promise<SeededRollout> {
  const { cp } = cluster;
  const namespace = seed.name;
  await createNamespace(cp, namespace);
  const defaulted = defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: seed.name },
    spec: {
      namespace,
      selector: { matchLabels: { app: seed.name } },
      containers: [{ name: SIDECAR, image: OLD_IMAGE, ...(seed.hot === true ? { upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: EMPTY_IMAGE } } : {}) }],
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: seed.maxUnavailable },
    },
  });
  const set = (await admin(cp, 'POST', SIDECARSETS_PATH, forCreate(defaulted))) as SidecarSet;
  const podNames = Array.from({ length: seed.pods }, (_, i) => `pod-${String(i).padStart(5, '0')}`);
  const namespaceLabels = new Map([[namespace, {}]]);
  await inParallel(podNames, 16, async (name) => {
    const plain: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels: { app: seed.name } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
    const injected = injectPod({ pod: plain, namespace, sidecarSets: [set], namespaceLabels, now: new Date() });
    if (injected.applied.length !== 1) throw new Error(`the set ${seed.name} did not inject pod ${name}`);
    await createPod(cp, injected.pod);
  });
  let ready = 0;
  await until(
    async () => {
      ready = (await listPods(cp, namespace)).items.filter(isReady).length;
      return ready === seed.pods;
    },
    Math.max(120_000, seed.pods * 200),
    () => `only ${ready} of ${seed.pods} pods in ${namespace} became Ready`,
  );
  return { namespace, set, podNames };
}

/**
 * Changes the sidecar's image as a user's `kubectl apply` through the
 * defaulting webhook would (the hash annotations recomputed), guarded by the
 * set's resourceVersion. Returns the set as stored after the update.
 */
export async function updateSidecarImage(cp: ControlPlane, set: SidecarSet, image: string): Promise<SidecarSet> {
  const containers = (set.spec?.containers ?? []).map((c) => (c.name === SIDECAR ? { ...c, image } : c));
  const next = defaultSidecarSet({ ...set, spec: { ...set.spec, containers } });
  const annotations = next.metadata?.annotations ?? {};
  const ops = [
    { op: 'test', path: '/metadata/resourceVersion', value: set.metadata?.resourceVersion },
    { op: 'replace', path: '/spec/containers', value: next.spec?.containers },
    { op: 'replace', path: '/metadata/annotations', value: annotations },
  ];
  return (await admin(cp, 'PATCH', `${SIDECARSETS_PATH}/${encodeURIComponent(set.metadata?.name ?? '')}`, ops, 'application/json-patch+json')) as SidecarSet;
}

/** Deletes the scenario's set (its pods stay, as pods do when a SidecarSet is deleted). */
export async function deleteSet(cp: ControlPlane, name: string): Promise<void> {
  const res = await cp.request('admin', 'DELETE', `${SIDECARSETS_PATH}/${encodeURIComponent(name)}`);
  if (res.status !== 200 && res.status !== 202 && res.status !== 404) throw new Error(`deleting SidecarSet ${name}: ${res.status} ${res.body.slice(0, 300)}`);
}

export { admin as adminRequest, until };
