/**
 * A real control plane for the benchmarks (control-plane/): etcd and
 * kube-apiserver on 127.0.0.1 with the project's CRD and RBAC. No webhook
 * configuration is registered: objects are created as they are stored.
 */
import { readFile } from 'node:fs/promises';
import { crdPath, waitForCrd, waitForFunctionsAccess } from '../../functions/server/local-stack.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { benchNamespaces, clusterSidecarSets } from './admission-inputs.ts';

export async function benchControlPlane(): Promise<ControlPlane> {
  const cp = await startControlPlane();
  try {
    await cp.apply(await readFile(crdPath, 'utf8'));
    await waitForCrd(cp, 'sidecarsets.apps.kruise.io');
    await waitForFunctionsAccess(cp);
    return cp;
  } catch (error) {
    await cp.stop();
    throw error;
  }
}

/** POSTs one object as the admin; anything but 201 fails the benchmark. */
export async function create(cp: ControlPlane, path: string, object: unknown): Promise<void> {
  const res = await cp.request('admin', 'POST', path, object);
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.body.slice(0, 500)}`);
}

export const SIDECARSETS_PATH = '/apis/apps.kruise.io/v1alpha1/sidecarsets';

/** Runs `task` over `items` with at most `limit` in flight. */
export async function inParallel<T>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await task(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** A stored SidecarSet without what the API server assigns (it refuses a resourceVersion on create). */
export function forCreate<T extends { metadata?: Record<string, unknown> }>(object: T): T {
  const metadata = { ...object.metadata };
  for (const key of ['resourceVersion', 'uid', 'creationTimestamp', 'generation']) Reflect.deleteProperty(metadata, key);
  return { ...object, metadata };
}

/** The admission benchmarks' cluster: the pod's namespace and the 50 stored SidecarSets. */
export async function seedAdmissionCluster(cp: ControlPlane): Promise<void> {
  for (const ns of benchNamespaces()) await create(cp, '/api/v1/namespaces', ns);
  await inParallel(clusterSidecarSets(), 8, (set) => create(cp, SIDECARSETS_PATH, forCreate(set)));
}
