/**
 * The two Go programs the Kruise e2e run needs beside the control plane,
 * built from Go modules as the control plane and the Kruise reference are
 * (control-plane/build.ts), once, into .cache, then reused offline:
 *
 * - kube-controller-manager, from k8s.io/kubernetes at the version
 *   control-plane/tools/kube-controller-manager/go.mod pins (the API
 *   server's), so that Deployments make ReplicaSets and pods, namespaces are
 *   deleted and each namespace gets its `default` ServiceAccount;
 * - Kruise's own e2e test binary, `go test -c` of
 *   github.com/openkruise/kruise/test/e2e at the version
 *   control-plane/tools/kruise-e2e/go.mod pins (v1.9.0, with the replace
 *   block of Kruise's own go.mod).
 *
 * Each is cached under .cache/<name>/<version>-<hash of its module's files>,
 * so a change to a module builds it again. They are built one after the
 * other: either build alone fills two cores for minutes.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureGoTool, type GoTool } from '../../control-plane/go-tool.ts';
import { ensureKubeControllerManager } from '../../control-plane/controller-manager.ts';

const toolsDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'control-plane', 'tools');

const KRUISE_E2E: GoTool = {
  name: 'kruise-e2e',
  moduleDir: join(toolsDir, 'kruise-e2e'),
  files: ['go.mod', 'go.sum', 'suite.go'],
  versionOf: 'github.com/openkruise/kruise',
  packagePath: 'github.com/openkruise/kruise/test/e2e',
  command: ['test', '-c'],
  ldflags: () => '-s -w',
};

export interface KruiseE2eBinaries {
  kubeControllerManager: string;
  kruiseE2e: string;
  /** The versions they were built from, for the report. */
  kubernetesVersion: string;
  kruiseVersion: string;
}

/** Builds what is not cached yet, one at a time (minutes each on a cold Go cache), and returns both paths. */
export async function ensureKruiseE2eBinaries(log: (line: string) => void): Promise<KruiseE2eBinaries> {
  const controllerManager = await ensureKubeControllerManager(log);
  const e2e = await ensureGoTool(KRUISE_E2E, log);
  return { kubeControllerManager: controllerManager.path, kruiseE2e: e2e.path, kubernetesVersion: controllerManager.version, kruiseVersion: e2e.version };
}
