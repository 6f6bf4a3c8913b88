/**
 * Pods on the real control plane for the test kubelet's suites and the
 * benchmarks: create them (as the admin, objects from
 * sidecarset-objects.ts pod()), change an image, and wait for a state.
 */
import type { Pod } from '../lib/kube/types.ts';
import type { ControlPlane } from '../control-plane/harness.ts';

export function podPath(namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
}

/** Creates a namespace as the admin; anything but 201 throws. */
export async function createNamespace(cp: ControlPlane, name: string): Promise<void> {
  const res = await cp.request('admin', 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  if (res.status !== 201) throw new Error(`creating namespace ${name}: ${res.status} ${res.body.slice(0, 300)}`);
}

/** Creates a pod as the admin in its metadata.namespace and returns it as stored; anything but 201 throws. */
export async function createPod(cp: ControlPlane, pod: Pod): Promise<Pod> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const res = await cp.request('admin', 'POST', `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`, pod);
  if (res.status !== 201) throw new Error(`creating pod ${namespace}/${pod.metadata?.name ?? ''}: ${res.status} ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body) as Pod;
}

export async function readPod(cp: ControlPlane, namespace: string, name: string): Promise<Pod | undefined> {
  const res = await cp.request('admin', 'GET', podPath(namespace, name));
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw new Error(`reading pod ${namespace}/${name}: ${res.status} ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body) as Pod;
}

/** Sets one container's image (spec.containers, or a native sidecar in spec.initContainers) with a JSON Patch. */
export async function setImage(cp: ControlPlane, pod: Pod, container: string, image: string): Promise<void> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const name = pod.metadata?.name ?? '';
  const index = pod.spec?.containers.findIndex((c) => c.name === container) ?? -1;
  const initIndex = pod.spec?.initContainers?.findIndex((c) => c.name === container) ?? -1;
  if (index < 0 && initIndex < 0) throw new Error(`pod ${namespace}/${name} has no container ${container}`);
  const path = index >= 0 ? `/spec/containers/${index}/image` : `/spec/initContainers/${initIndex}/image`;
  const res = await cp.request('admin', 'PATCH', podPath(namespace, name), [{ op: 'replace', path, value: image }], 'application/json-patch+json');
  if (res.status !== 200) throw new Error(`setting the image of ${namespace}/${name} ${container}: ${res.status} ${res.body.slice(0, 300)}`);
}

export function isReady(pod: Pod | undefined): boolean {
  return pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/** Polls (every 50 ms) until `test` holds for the pod as stored; throws with the last version seen after `timeoutMs`. */
export async function waitForPod(cp: ControlPlane, namespace: string, name: string, test: (pod: Pod | undefined) => boolean, timeoutMs = 30_000): Promise<Pod | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pod = await readPod(cp, namespace, name);
    if (test(pod)) return pod;
    if (Date.now() > deadline) throw new Error(`pod ${namespace}/${name} did not reach the expected state within ${timeoutMs} ms; last seen: ${JSON.stringify(pod?.status)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
