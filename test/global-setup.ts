/**
 * Runs once before any test worker: builds the control plane (etcd and
 * kube-apiserver from Go modules) if the pinned versions are not in the cache
 * yet, so that suites running in parallel never build it concurrently.
 */
import { ensureControlPlaneBinaries } from './control-plane/build.ts';

export default async function globalSetup(): Promise<void> {
  await ensureControlPlaneBinaries();
}
