/**
 * Runs once before any test worker: builds the control plane (etcd,
 * kube-apiserver and kube-controller-manager from Go modules) and the Kruise reference of the
 * conformance suite if they are not in the cache yet, so that suites running
 * in parallel never build them concurrently.
 *
 * Without a Go toolchain: under CI=true the run fails loudly; elsewhere the
 * suites that need the control plane are skipped and say why (the reason is
 * passed to the workers in SIDECARSET_NO_CONTROL_PLANE).
 *
 * Plain JavaScript on purpose: jest would load a TypeScript global setup
 * through its CommonJS require hook, and the build module is an ES module
 * that Node 22 loads natively.
 */
import { spawnSync } from 'node:child_process';
import process from 'node:process';

export default async function globalSetup() {
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error !== undefined || go.status !== 0) {
    const reason = `no Go toolchain (go version: ${go.error?.message ?? go.stderr.trim()}); the control plane cannot be built`;
    if (process.env.CI === 'true') throw new Error(`${reason}: CI needs it`);
    process.env.SIDECARSET_NO_CONTROL_PLANE = reason;
    process.stderr.write(`\n*** The control-plane and conformance suites will NOT run: ${reason}. Install Go 1.26 to run them. ***\n\n`);
    return;
  }
  const { ensureControlPlaneBinaries } = await import('../control-plane/build.ts');
  await ensureControlPlaneBinaries();
  // The Kruise references of the conformance suite (testkit/conformance/),
  // one per release it compares with, are built the same way, once, for the
  // same reason (one after the other: two Go builds at once only share the cores).
  const { ensureKruiseReference, KRUISE_LINES } = await import('../testkit/conformance/kruise-reference.ts');
  for (const line of KRUISE_LINES) await ensureKruiseReference(line);
  // npm start runs kube-controller-manager by default, and the suites that start it (or ask the local stack for it) share one build.
  const { ensureKubeControllerManager } = await import('../control-plane/controller-manager.ts');
  await ensureKubeControllerManager((line) => process.stderr.write(`${line}\n`));
}
