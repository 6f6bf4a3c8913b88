// Builds etcd and kube-apiserver from Go modules for the test control plane
// (spec: control-plane.md). No prebuilt binary can be downloaded here, so both
// come from the Go module proxy. The versions are whatever the tool modules
// under control-plane/tools/ pin: the cache directory is named after
// them, so bumping a go.mod makes the next run build again.
//
// Usage: node control-plane/build.ts   (prints the two binary paths)
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, constants, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');
const etcdModuleDir = join(here, 'tools', 'etcd');
const kubeApiserverModuleDir = join(here, 'tools', 'kube-apiserver');

const etcdPackage = 'go.etcd.io/etcd/server/v3';
const kubernetesModule = 'k8s.io/kubernetes';
const kubeApiserverPackage = 'k8s.io/kubernetes/cmd/kube-apiserver';

export interface ControlPlaneBinaries {
  etcd: string;
  kubeApiserver: string;
}

export interface ControlPlaneVersions {
  etcd: string;
  kubernetes: string;
}

function log(message: string): void {
  process.stderr.write(`[control-plane build] ${message}\n`);
}

// The version a go.mod requires for a module, from its require lines (single
// or in a block). Replace lines ("=>") are not requires and are skipped.
export function requiredVersion(goMod: string, modulePath: string): string {
  for (const rawLine of goMod.split('\n')) {
    const line = rawLine.replace(/\/\/.*$/, '').trim();
    if (line.includes('=>')) continue;
    const fields = line.replace(/^require\s+/, '').split(/\s+/);
    if (fields.length === 2 && fields[0] === modulePath && fields[1] !== undefined) return fields[1];
  }
  throw new Error(`go.mod does not require ${modulePath}`);
}

export async function controlPlaneVersions(): Promise<ControlPlaneVersions> {
  const [etcdGoMod, kubeGoMod] = await Promise.all([
    readFile(join(etcdModuleDir, 'go.mod'), 'utf8'),
    readFile(join(kubeApiserverModuleDir, 'go.mod'), 'utf8'),
  ]);
  return {
    etcd: requiredVersion(etcdGoMod, etcdPackage),
    kubernetes: requiredVersion(kubeGoMod, kubernetesModule),
  };
}

export async function controlPlaneCacheDir(): Promise<string> {
  const versions = await controlPlaneVersions();
  return join(repoRoot, '.cache', 'control-plane', `${versions.etcd}-${versions.kubernetes}`);
}

export async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `go build` by default; `['test', '-c']` compiles a package's tests into one binary. */
export type GoBuildCommand = readonly ['build'] | readonly ['test', '-c'];

function goBuild(moduleDir: string, command: GoBuildCommand, args: readonly string[]): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    // Go's own output (download and compile errors) goes to our stderr so a
    // failing build explains itself. GOTOOLCHAIN and GOFLAGS are inherited on
    // purpose: a machine may need a newer toolchain exported.
    const child = spawn('go', [...command, ...args], {
      cwd: moduleDir,
      env: { ...process.env, CGO_ENABLED: '0' },
      stdio: ['ignore', 2, 2],
    });
    child.on('error', (error) => {
      reject(new Error(`cannot run go (is the Go toolchain on PATH?): ${error.message}`));
    });
    child.on('exit', (code, signal) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`go ${[...command, ...args].join(' ')} in ${moduleDir} failed (${signal ?? `exit ${code}`})`));
    });
  });
}

/** Builds one Go package of a tool module to `target` (atomically: a private name, then a rename). */
export async function buildOne(
  name: string,
  moduleDir: string,
  target: string,
  ldflags: string,
  packagePath: string,
  command: GoBuildCommand = ['build'],
): Promise<void> {
  // Build to a private name and rename, so an interrupted build never leaves
  // a half-written binary that a later run would take as finished, and two
  // concurrent runs don't trip over each other.
  const partial = `${target}.partial-${process.pid}`;
  const started = Date.now();
  log(`building ${name} (this can take several minutes on a cold cache)...`);
  try {
    await goBuild(moduleDir, command, ['-trimpath', '-ldflags', ldflags, '-o', partial, packagePath]);
    await rename(partial, target);
  } finally {
    await rm(partial, { force: true });
  }
  log(`built ${name} in ${((Date.now() - started) / 1000).toFixed(0)} s -> ${target}`);
}

/**
 * Where a tool module's binary is cached: .cache/<kind>/<version>-<hash of
 * the module's files, in the order given>/<binary>, so any change to the
 * module builds it again and other versions' binaries stay beside it.
 */
export async function moduleBinaryPath(kind: string, version: string, moduleDir: string, files: readonly string[], binary: string): Promise<string> {
  const hash = createHash('sha256');
  for (const file of files) hash.update(file).update('\0').update(await readFile(join(moduleDir, file)));
  return join(repoRoot, '.cache', kind, `${version}-${hash.digest('hex').slice(0, 12)}`, binary);
}

/**
 * The linker flags of a Kubernetes component: stripped, and stamped with its
 * version. Without the stamps it reports v0.0.0, which clients and
 * version-gated code paths (e.g. API discovery) treat as ancient.
 */
export function kubernetesLdflags(version: string): string {
  const match = /^v(\d+)\.(\d+)\.\d+/.exec(version);
  if (!match) throw new Error(`unexpected Kubernetes version ${version}`);
  const [, major, minor] = match;
  return [
    '-s -w',
    `-X k8s.io/component-base/version.gitVersion=${version}`,
    `-X k8s.io/component-base/version.gitMajor=${major ?? ''}`,
    `-X k8s.io/component-base/version.gitMinor=${minor ?? ''}`,
  ].join(' ');
}

let pending: Promise<ControlPlaneBinaries> | undefined;

/** Builds (once per pinned version pair) and returns the paths of both binaries. */
export function ensureControlPlaneBinaries(): Promise<ControlPlaneBinaries> {
  // One build per process even if several callers ask at once.
  pending ??= ensure().catch((error: unknown) => {
    pending = undefined;
    throw error;
  });
  return pending;
}

async function ensure(): Promise<ControlPlaneBinaries> {
  const versions = await controlPlaneVersions();
  const dir = await controlPlaneCacheDir();
  const binaries: ControlPlaneBinaries = { etcd: join(dir, 'etcd'), kubeApiserver: join(dir, 'kube-apiserver') };
  await mkdir(dir, { recursive: true });

  if (await isExecutable(binaries.etcd)) {
    log(`etcd ${versions.etcd} already built: ${binaries.etcd}`);
  } else {
    await buildOne(`etcd ${versions.etcd}`, etcdModuleDir, binaries.etcd, '-s -w', etcdPackage);
  }

  if (await isExecutable(binaries.kubeApiserver)) {
    log(`kube-apiserver ${versions.kubernetes} already built: ${binaries.kubeApiserver}`);
  } else {
    const ldflags = kubernetesLdflags(versions.kubernetes);
    await buildOne(
      `kube-apiserver ${versions.kubernetes}`,
      kubeApiserverModuleDir,
      binaries.kubeApiserver,
      ldflags,
      kubeApiserverPackage,
    );
  }
  return binaries;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  try {
    const binaries = await ensureControlPlaneBinaries();
    process.stdout.write(`${binaries.etcd}\n${binaries.kubeApiserver}\n`);
  } catch (error) {
    log(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
