/**
 * Kruise's SidecarSet e2e framework (test/e2e/framework/sidecarset_utils.go)
 * for the local stack: its base SidecarSet and Deployment, and the waits its
 * scenarios use, against the real kube-apiserver as the admin. There is no
 * Deployment controller, so a "Deployment" is its pods, created one by one
 * through the API server (the pod-inject webhook injects them) with the
 * labels its template would give them.
 */
import type { Container, Pod } from '../lib/kube/types.ts';
import { LABEL_SIDECARSET_NAME, type ControllerRevision } from '../lib/sidecarset/revisions.ts';
import type { SidecarContainer, SidecarSet, SidecarSetSpec, SidecarSetStatus } from '../lib/sidecarset/types.ts';
import type { ControlPlane } from '../control-plane/harness.ts';
import { createNamespace, createPod, isReady, podPath, readPod } from './cluster-pods.ts';

export const SETS = '/apis/apps.kruise.io/v1alpha1/sidecarsets';

/** Kruise's e2e images (NginxImage, NewNginxImage, BusyboxImage, InvalidImage); the test kubelet never pulls `invalid`. */
export const IMAGES = { nginx: 'nginx:1.25', newNginx: 'nginx:1.27', busybox: 'busybox:1.36', invalid: 'busybox:invalid' } as const;

/**
 * How long a held state is watched: several resyncs and reconciles as the
 * e2e suites run the reconciler (a resync every second, in-flight sets
 * reconciled every 500 ms).
 */
const HOLD_MS = 2_500;

/** The labels of the base Deployment's pods, which the base SidecarSet selects. */
export const APP_LABELS = { app: 'sidecarset' } as const;

/** The four counts Kruise's WaitForSidecarSetUpgradeComplete compares. */
export type Counts = Pick<Required<SidecarSetStatus>, 'matchedPods' | 'updatedPods' | 'updatedReadyPods' | 'readyPods'>;

/** Counts in the order Kruise's scenarios list them: matched, updated, updatedReady, ready. */
export function counts(matchedPods: number, updatedPods: number, updatedReadyPods: number, readyPods: number): Counts {
  return { matchedPods, updatedPods, updatedReadyPods, readyPods };
}

/** NewBaseSidecarSet(ns): two sidecars around the app, an init container, scoped to `ns`. */
export function baseSidecarSet(ns: string): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: `test-sidecarset-${ns}`, labels: { app: 'sidecar' } },
    spec: {
      namespace: ns,
      selector: { matchLabels: { ...APP_LABELS } },
      initContainers: [{ name: 'init-sidecar', image: IMAGES.busybox, command: ['/bin/sh', '-c', 'sleep 1'] }],
      containers: [
        { name: 'nginx-sidecar', image: IMAGES.nginx, command: ['tail', '-f', '/dev/null'], podInjectPolicy: 'BeforeAppContainer', shareVolumePolicy: { type: 'enabled' } },
        { name: 'busybox-sidecar', image: IMAGES.busybox, command: ['/bin/sh', '-c', 'sleep 10000000'], podInjectPolicy: 'AfterAppContainer', shareVolumePolicy: { type: 'disabled' } },
      ],
      updateStrategy: { type: 'RollingUpdate' },
    },
  };
}

/** One pod of NewBaseDeployment(ns) (`deployment-test`, container `main`). */
export function deploymentPod(ns: string, name: string, extra: { labels?: Record<string, string>; annotations?: Record<string, string>; main?: Partial<Container> } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: { ...APP_LABELS, ...extra.labels }, ...(extra.annotations ? { annotations: extra.annotations } : {}) },
    spec: {
      containers: [{ name: 'main', image: 'busybox:latest', command: ['/bin/sh', '-c', 'sleep 10000000'], ...extra.main }],
    },
  };
}

export class ScenarioCluster {
  readonly cp: ControlPlane;
  /** The webhook server's log, for a failed admission's reason. */
  private readonly logs: readonly string[];

  constructor(cp: ControlPlane, logs: readonly string[]) {
    this.cp = cp;
    this.logs = logs;
  }

  /** One request as the admin; anything but 2xx throws with the webhook server's last lines. */
  async admin<T>(method: string, path: string, body?: unknown, contentType?: string): Promise<T> {
    const res = await this.cp.request('admin', method, path, body, contentType);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 1000)}\nwebhook log:\n${this.logs.slice(-5).join('\n')}`);
    return JSON.parse(res.body) as T;
  }

  async namespace(name: string, labels: Record<string, string> = {}): Promise<void> {
    await createNamespace(this.cp, name);
    if (Object.keys(labels).length > 0) await this.labelNamespace(name, labels);
  }

  async labelNamespace(name: string, labels: Record<string, string>): Promise<void> {
    await this.admin('PATCH', `/api/v1/namespaces/${name}`, { metadata: { labels } }, 'application/merge-patch+json');
  }

  /** Creates the set (defaulted and validated by the webhooks) and returns it as stored. */
  createSet(set: SidecarSet): Promise<SidecarSet> {
    return this.admin<SidecarSet>('POST', SETS, set);
  }

  getSet(name: string): Promise<SidecarSet> {
    return this.admin<SidecarSet>('GET', `${SETS}/${name}`);
  }

  /**
   * UpdateSidecarSet: reads the set, changes it and PUTs it back; a conflict
   * (the reconciler wrote the status in between) starts again from a fresh read.
   */
  async updateSet(name: string, change: (set: SidecarSet) => void): Promise<SidecarSet> {
    for (let attempt = 1; ; attempt++) {
      const set = await this.getSet(name);
      change(set);
      const res = await this.cp.request('admin', 'PUT', `${SETS}/${name}`, set);
      if (res.status === 200) return JSON.parse(res.body) as SidecarSet;
      if (res.status !== 409 || attempt === 10) throw new Error(`updating SidecarSet ${name}: ${res.status} ${res.body.slice(0, 1000)}\nwebhook log:\n${this.logs.slice(-5).join('\n')}`);
    }
  }

  async deleteSet(name: string): Promise<void> {
    await this.admin('DELETE', `${SETS}/${name}`);
  }

  /** Creates the pods (injected by the webhook) and waits until the test kubelet reports each Ready. */
  async createPods(pods: readonly Pod[], timeoutMs = 60_000): Promise<Pod[]> {
    for (const pod of pods) await createPod(this.cp, pod);
    const ready: Pod[] = [];
    for (const pod of pods) ready.push(await this.waitForPodState(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', isReady, 'Ready', timeoutMs));
    return ready;
  }

  async deletePod(ns: string, name: string): Promise<void> {
    await this.admin('DELETE', podPath(ns, name));
  }

  async patchPodLabels(ns: string, name: string, labels: Record<string, string>): Promise<void> {
    await this.admin('PATCH', podPath(ns, name), { metadata: { labels } }, 'application/merge-patch+json');
  }

  /** GetSelectorPods: the namespace's pods carrying every given label, by name. */
  async pods(ns: string, labels: Record<string, string> = APP_LABELS): Promise<Pod[]> {
    const selector = Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const list = await this.admin<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`);
    return list.items.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  }

  async waitForPodState(ns: string, name: string, test: (pod: Pod) => boolean, what: string, timeoutMs = 60_000): Promise<Pod> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const pod = await readPod(this.cp, ns, name);
      if (pod !== undefined && test(pod)) return pod;
      if (Date.now() > deadline) throw new Error(`pod ${ns}/${name} not ${what} within ${timeoutMs} ms; last seen: ${JSON.stringify(pod)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * WaitForSidecarSetUpgradeComplete: the four counts as expected and
   * observedGeneration == generation; throws with the last status seen.
   */
  async waitForStatus(name: string, expected: Counts, timeoutMs = 60_000): Promise<SidecarSet> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const set = await this.getSet(name);
      if (statusIs(set, expected)) return set;
      if (Date.now() > deadline) {
        throw new Error(`SidecarSet ${name}: expected ${JSON.stringify(expected)} at generation ${set.metadata?.generation}, last status ${JSON.stringify(set.status)}\nlast log lines:\n${this.logs.slice(-8).join('\n')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The reconciler has seen the set's current generation (Kruise's waitingForSidecarSetReconcile). */
  async waitForReconcile(name: string, timeoutMs = 60_000): Promise<SidecarSet> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const set = await this.getSet(name);
      if (set.status?.observedGeneration === set.metadata?.generation) return set;
      if (Date.now() > deadline) throw new Error(`SidecarSet ${name}: observedGeneration ${set.status?.observedGeneration} never reached generation ${set.metadata?.generation} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * After a wait reached a state that must last (a rollout held by pause,
   * partition, selector or an unready pod), checks that it still holds
   * `forMs` later, after the reconciler had time for several more reconciles.
   */
  async expectStatusHolds(name: string, expected: Counts, forMs = HOLD_MS): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, forMs));
    const set = await this.getSet(name);
    if (!statusIs(set, expected)) throw new Error(`SidecarSet ${name}: ${JSON.stringify(expected)} did not hold for ${forMs} ms; now ${JSON.stringify(set.status)}`);
  }

  /** Waits (bounded) until the set has Events of this reason and returns them; throws when none comes. */
  async waitForEvents(setName: string, reason: string, timeoutMs = 10_000): Promise<{ type: string; reason: string; message: string }[]> {
    const selector = encodeURIComponent(`involvedObject.kind=SidecarSet,involvedObject.name=${setName},reason=${reason}`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const events = await this.admin<{ items: { type: string; reason: string; message: string }[] }>('GET', `/api/v1/events?fieldSelector=${selector}`);
      if (events.items.length > 0) return events.items;
      if (Date.now() > deadline) throw new Error(`SidecarSet ${setName}: no ${reason} Event within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** ListControllerRevisions, sorted as SortControllerRevisions does (revision, creation time, name). */
  async revisions(setName: string, namespace = 'kruise-system'): Promise<ControllerRevision[]> {
    const selector = encodeURIComponent(`${LABEL_SIDECARSET_NAME}=${setName}`);
    const list = await this.admin<{ items: ControllerRevision[] }>('GET', `/apis/apps/v1/namespaces/${namespace}/controllerrevisions?labelSelector=${selector}`);
    return list.items.sort(
      (a, b) =>
        (a.revision ?? 0) - (b.revision ?? 0) ||
        (a.metadata?.creationTimestamp ?? '').localeCompare(b.metadata?.creationTimestamp ?? '') ||
        (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
    );
  }
}

function statusIs(set: SidecarSet, expected: Counts): boolean {
  const status = set.status ?? {};
  return (
    status.observedGeneration === set.metadata?.generation &&
    status.matchedPods === expected.matchedPods &&
    status.updatedPods === expected.updatedPods &&
    status.updatedReadyPods === expected.updatedReadyPods &&
    status.readyPods === expected.readyPods
  );
}

/** A pod container's image by name (undefined when the pod has no such container). */
export function imageOf(pod: Pod, container: string): string | undefined {
  return pod.spec?.containers.find((c) => c.name === container)?.image;
}

/** The pod's condition of this type, if any. */
export function conditionOf(pod: Pod, type: string): { status?: string; reason?: string; message?: string } | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

/** The set's spec, to change in an update; throws when the set has none. */
export function specOf(set: SidecarSet): SidecarSetSpec {
  if (set.spec === undefined) throw new Error(`SidecarSet ${set.metadata?.name ?? ''} has no spec`);
  return set.spec;
}

/** The set's sidecar at `index` (the first by default), to change in an update; throws when there is none. */
export function sidecarAt(set: SidecarSet, index = 0): SidecarContainer {
  const container = set.spec?.containers?.[index];
  if (container === undefined) throw new Error(`SidecarSet ${set.metadata?.name ?? ''} has no container ${index}`);
  return container;
}
