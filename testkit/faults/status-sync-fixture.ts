/**
 * The cluster the status-sync fault scenarios run against: a real control
 * plane with the CRD, a few hundred pods in two namespaces, four SidecarSets,
 * and the true status of each set computed here from the plan the pods were
 * made from (never from what the reconciler reads), so a status written from
 * a partial list cannot agree with it.
 */
import { readFile } from 'node:fs/promises';
import { crdPath, waitForCrd, waitForFunctionsAccess } from '../../functions/server/local-stack.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { computeStatus, summarizePod } from '../../lib/sidecarset/status.ts';
import type { SidecarSet, SidecarSetStatus } from '../../lib/sidecarset/types.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { listedPod } from '../status-sync-objects.ts';

export const SETS_PATH = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
/** Namespace labelled for mesh-proxy's namespaceSelector. */
export const MESHED_NAMESPACE = 'faults-a';
export const PLAIN_NAMESPACE = 'faults-b';
const NAMESPACE_LABELS: Record<string, Record<string, string>> = { [MESHED_NAMESPACE]: { mesh: 'on' }, [PLAIN_NAMESPACE]: {} };

/** What decides a set's true status: the parts a scenario may change. */
export interface SetVariant {
  selector: Record<string, string>;
  hash: string;
}

export interface SetPlan extends SetVariant {
  name: string;
  /** spec.namespace */
  namespace?: string;
  /** spec.namespaceSelector.matchLabels */
  namespaceSelector?: Record<string, string>;
  /** The status stored before every scenario: wrong (or absent), so a correct resync must write. */
  resetStatus: SidecarSetStatus | undefined;
}

/** The sets; the counting rules below are spec section 6 for exactly these shapes (matchLabels only). */
export const SET_PLANS: readonly SetPlan[] = [
  // Matches pods in every page of the list: the set a partial list would undercount most.
  { name: 'log-agent', selector: { app: 'web' }, hash: 'log-v2', resetStatus: { observedGeneration: 1, matchedPods: 3, updatedPods: 3, readyPods: 3, updatedReadyPods: 3 } },
  { name: 'mesh-proxy', selector: { app: 'web' }, namespaceSelector: { mesh: 'on' }, hash: 'mesh-v1', resetStatus: undefined },
  { name: 'metrics', selector: { tier: 'backend' }, namespace: PLAIN_NAMESPACE, hash: 'metrics-v1', resetStatus: { observedGeneration: 1, matchedPods: 900, updatedPods: 0, readyPods: 900, updatedReadyPods: 0 } },
  { name: 'unused', selector: { app: 'none' }, hash: 'unused-v1', resetStatus: { observedGeneration: 1, matchedPods: 2, updatedPods: 2, readyPods: 2, updatedReadyPods: 2 } },
];

/** A selector a scenario switches log-agent to: a proper subset of its pods. */
export const CANARY_SELECTOR: Readonly<Record<string, string>> = { app: 'web', track: 'canary' };
/** A hash a scenario switches log-agent to: the older version some pods still run. */
export const OLD_LOG_HASH = 'log-v1';

export function setPlan(name: string): SetPlan {
  const plan = SET_PLANS.find((p) => p.name === name);
  if (plan === undefined) throw new Error(`no SidecarSet "${name}" in the plan`);
  return plan;
}

/** One pod as planned: what it is, not what a reconciler makes of it. */
export interface PlannedPod {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  /** Set name -> the hash it recorded at injection. */
  injected: Record<string, string>;
  ready: boolean;
  succeeded: boolean;
}

/** The pods: a fixed, varied mix (injected or not, old or current hash, ready, not ready, finished). */
export function planPods(count: number): PlannedPod[] {
  return Array.from({ length: count }, (_, i) => {
    const namespace = i % 2 === 0 ? MESHED_NAMESPACE : PLAIN_NAMESPACE;
    const labels: Record<string, string> = { app: i % 3 === 0 ? 'api' : 'web' };
    if (i % 4 < 2) labels.track = 'canary';
    if (i % 5 < 3) labels.tier = 'backend';
    const injected: Record<string, string> = {};
    // Every seventh web pod was created while the webhook was down.
    if (labels.app === 'web' && i % 7 !== 0) injected['log-agent'] = i % 5 === 0 ? OLD_LOG_HASH : 'log-v2';
    if (labels.app === 'web' && namespace === MESHED_NAMESPACE && i % 11 !== 1) injected['mesh-proxy'] = 'mesh-v1';
    if (labels.tier === 'backend' && namespace === PLAIN_NAMESPACE) injected.metrics = i % 3 === 2 ? 'metrics-v0' : 'metrics-v1';
    return { namespace, name: `pod-${String(i).padStart(5, '0')}`, labels, injected, ready: i % 6 !== 5, succeeded: i % 13 === 4 };
  });
}

const selects = (selector: Record<string, string>, labels: Record<string, string>): boolean => Object.entries(selector).every(([k, v]) => labels[k] === v);

/** The counts spec section 6 gives for `plan` as `variant` at `generation` over `pods`. */
export function trueStatus(plan: SetPlan, variant: SetVariant, generation: number, pods: readonly PlannedPod[]): SidecarSetStatus {
  let matched = 0;
  let updated = 0;
  let ready = 0;
  let updatedReady = 0;
  for (const pod of pods) {
    if (pod.succeeded || !selects(variant.selector, pod.labels)) continue;
    if (plan.namespace !== undefined && pod.namespace !== plan.namespace) continue;
    if (plan.namespaceSelector !== undefined && !selects(plan.namespaceSelector, NAMESPACE_LABELS[pod.namespace] ?? {})) continue;
    const recorded = pod.injected[plan.name];
    if (recorded === undefined) continue;
    matched++;
    const isUpdated = recorded === variant.hash;
    if (isUpdated) updated++;
    if (pod.ready) ready++;
    if (isUpdated && pod.ready) updatedReady++;
  }
  return { observedGeneration: generation, matchedPods: matched, updatedPods: updated, readyPods: ready, updatedReadyPods: updatedReady };
}

/** The set as the admin creates it (no webhook runs here, so the hash annotation is set by hand). */
function setManifest(plan: SetPlan): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: plan.name, annotations: { 'kruise.io/sidecarset-hash': plan.hash } },
    spec: {
      selector: { matchLabels: { ...plan.selector } },
      ...(plan.namespace !== undefined ? { namespace: plan.namespace } : {}),
      ...(plan.namespaceSelector !== undefined ? { namespaceSelector: { matchLabels: { ...plan.namespaceSelector } } } : {}),
      // listedPod names the sidecar of set S `S-sidecar`.
      containers: [{ name: `${plan.name}-sidecar`, image: `${plan.name}:1` }],
    },
  };
}

export interface FaultCluster {
  cp: ControlPlane;
  pods: readonly PlannedPod[];
  /** Whether lists are read from etcd (--watch-cache=false), so compaction expires continue tokens. */
  listsFromEtcd: boolean;
  /** Puts every set back to its plan (spec, annotations, no labels) and its wrong reset status. */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

export interface FaultClusterOptions {
  /** Default 240. */
  pods?: number;
  /** Default true: read lists from etcd, as clusters before Kubernetes 1.34 do. */
  listsFromEtcd?: boolean;
}

/** One admin call that must succeed; the answer's JSON. */
export async function admin(cp: ControlPlane, method: string, path: string, body?: unknown, contentType?: string): Promise<unknown> {
  const res = await cp.request('admin', method, path, body, contentType);
  if (res.status >= 300) throw new Error(`${method} ${path} as admin: ${res.status} ${res.body.slice(0, 500)}`);
  return JSON.parse(res.body);
}

/** Runs `fn` over `items`, `limit` at a time (the machine has two cores, shared). */
async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/** Creates the pod and sets its status on the status subresource, as a kubelet would. */
async function createPod(cp: ControlPlane, planned: PlannedPod): Promise<void> {
  const pod: Pod = listedPod({ name: planned.name, namespace: planned.namespace, labels: planned.labels, injected: planned.injected, ready: planned.ready });
  const path = `/api/v1/namespaces/${planned.namespace}/pods`;
  await admin(cp, 'POST', path, { ...pod, status: undefined });
  // A new pod is Pending, which is not ready: only running or finished pods need a status.
  if (!planned.ready && !planned.succeeded) return;
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const containers = pod.spec?.containers ?? [];
  const status = planned.succeeded
    ? { phase: 'Succeeded', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: now }] }
    : {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }],
        containerStatuses: containers.map((c) => ({ name: c.name, image: c.image, imageID: '', ready: true, restartCount: 0, started: true, state: { running: { startedAt: now } } })),
      };
  await admin(cp, 'PATCH', `${path}/${planned.name}/status`, { status }, 'application/merge-patch+json');
}

/** Every pod, in one unpaged list: the complete answer a resync must agree with. */
async function listAllPods(cp: ControlPlane): Promise<Pod[]> {
  return ((await admin(cp, 'GET', '/api/v1/pods')) as { items: Pod[] }).items;
}

async function resetSets(cp: ControlPlane): Promise<void> {
  for (const plan of SET_PLANS) {
    const path = `${SETS_PATH}/${plan.name}`;
    const manifest = setManifest(plan);
    // Labels and annotations as planned; the selector replaced whole (a merge patch would keep extra keys).
    await admin(cp, 'PATCH', path, { metadata: { labels: null, annotations: { 'kruise.io/sidecarset-hash': plan.hash } } }, 'application/merge-patch+json');
    const stored = (await admin(cp, 'GET', path)) as SidecarSet;
    if (JSON.stringify(stored.spec?.selector) !== JSON.stringify(manifest.spec?.selector)) {
      await admin(cp, 'PATCH', path, [{ op: 'replace', path: '/spec/selector', value: manifest.spec?.selector }], 'application/json-patch+json');
    }
    await admin(cp, 'PATCH', `${path}/status`, { status: null }, 'application/merge-patch+json');
    if (plan.resetStatus !== undefined) await admin(cp, 'PATCH', `${path}/status`, { status: plan.resetStatus }, 'application/merge-patch+json');
  }
}

/**
 * Starts the control plane, installs the CRD and creates the namespaces,
 * sets and pods. Checks the plan against the pure status computation over a
 * complete list, so a mistake in the plan's counting fails here, not as a
 * false alarm in a scenario.
 */
export async function startFaultCluster(options: FaultClusterOptions = {}): Promise<FaultCluster> {
  const listsFromEtcd = options.listsFromEtcd ?? true;
  const cp = await startControlPlane(listsFromEtcd ? { apiServerArgs: ['--watch-cache=false'] } : {});
  try {
    await cp.apply(await readFile(crdPath, 'utf8'));
    await waitForCrd(cp, 'sidecarsets.apps.kruise.io');
    await waitForFunctionsAccess(cp);
    for (const [name, labels] of Object.entries(NAMESPACE_LABELS)) {
      await admin(cp, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
    }
    for (const plan of SET_PLANS) await admin(cp, 'POST', SETS_PATH, setManifest(plan));
    const pods = planPods(options.pods ?? 240);
    await inParallel(pods, 6, (pod) => createPod(cp, pod));

    const listed = (await listAllPods(cp)).map(summarizePod);
    const labels = new Map(Object.entries(NAMESPACE_LABELS));
    for (const plan of SET_PLANS) {
      const stored = (await admin(cp, 'GET', `${SETS_PATH}/${plan.name}`)) as SidecarSet;
      const generation = stored.metadata?.generation ?? 0;
      const computed = computeStatus({ ...stored, status: {} }, listed, labels).status;
      const planned = trueStatus(plan, plan, generation, pods);
      if (JSON.stringify(computed) !== JSON.stringify(planned)) {
        throw new Error(`the fixture's plan disagrees with a complete list for ${plan.name}: planned ${JSON.stringify(planned)}, computed ${JSON.stringify(computed)}`);
      }
      if (planned.matchedPods === 0 && plan.name !== 'unused') throw new Error(`${plan.name} matches no pod: the plan needs more pods`);
    }
    return { cp, pods, listsFromEtcd, reset: () => resetSets(cp), stop: () => cp.stop() };
  } catch (error) {
    await cp.stop();
    throw error;
  }
}
