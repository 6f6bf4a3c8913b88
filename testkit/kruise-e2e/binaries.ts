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
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOne, isExecutable, kubernetesLdflags, moduleBinaryPath, requiredVersion, type GoBuildCommand } from '../../control-plane/build.ts';

const toolsDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'control-plane', 'tools');

interface Tool {
  /** The binary's name, and its cache directory's. */
  name: string;
  moduleDir: string;
  /** The files its cache key is made of, in a fixed order. */
  files: readonly string[];
  /** The module whose required version names the binary's version. */
  versionOf: string;
  packagePath: string;
  command: GoBuildCommand;
  ldflags(version: string): string;
}

const KUBE_CONTROLLER_MANAGER: Tool = {
  name: 'kube-controller-manager',
  moduleDir: join(toolsDir, 'kube-controller-manager'),
  files: ['go.mod', 'go.sum'],
  versionOf: 'k8s.io/kubernetes',
  packagePath: 'k8s.io/kubernetes/cmd/kube-controller-manager',
  command: ['build'],
  ldflags: kubernetesLdflags,
};

const KRUISE_E2E: Tool = {
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

async function versionOf(tool: Tool): Promise<string> {
  return requiredVersion(await readFile(join(tool.moduleDir, 'go.mod'), 'utf8'), tool.versionOf);
}

async function ensure(tool: Tool, log: (line: string) => void): Promise<{ path: string; version: string }> {
  const version = await versionOf(tool);
  const path = await moduleBinaryPath(tool.name, version, tool.moduleDir, tool.files, tool.name);
  if (await isExecutable(path)) {
    log(`${tool.name} ${version} already built: ${path}`);
    return { path, version };
  }
  await mkdir(dirname(path), { recursive: true });
  await buildOne(`${tool.name} ${version}`, tool.moduleDir, path, tool.ldflags(version), tool.packagePath, tool.command);
  return { path, version };
}

/** kube-controller-manager alone (other suites run a controller beside the stack), built only when not cached. */
export async function ensureKubeControllerManager(log: (line: string) => void): Promise<{ path: string; version: string }> {
  return ensure(KUBE_CONTROLLER_MANAGER, log);
}

/** Builds what is not cached yet, one at a time (minutes each on a cold Go cache), and returns both paths. */
export async function ensureKruiseE2eBinaries(log: (line: string) => void): Promise<KruiseE2eBinaries> {
  const controllerManager = await ensure(KUBE_CONTROLLER_MANAGER, log);
  const e2e = await ensure(KRUISE_E2E, log);
  return { kubeControllerManager: controllerManager.path, kruiseE2e: e2e.path, kubernetesVersion: controllerManager.version, kruiseVersion: e2e.version };
}
