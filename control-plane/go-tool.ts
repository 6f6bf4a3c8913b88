/**
 * A Go program built from a tool module under control-plane/tools/, once,
 * into .cache/<name>/<version>-<hash of its module's files>/<name>, then
 * reused offline: a change to the module builds it again. Shared by the
 * embedded cluster's kube-controller-manager and the Kruise e2e run's test
 * binary (testkit/kruise-e2e/binaries.ts), so each is built in one place.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { buildOne, isExecutable, moduleBinaryPath, requiredVersion, type GoBuildCommand } from './build.ts';

export interface GoTool {
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

/** Where the tool's binary is (or will be) cached, and its version. */
export async function goToolBinary(tool: GoTool): Promise<{ path: string; version: string }> {
  const version = requiredVersion(await readFile(join(tool.moduleDir, 'go.mod'), 'utf8'), tool.versionOf);
  return { path: await moduleBinaryPath(tool.name, version, tool.moduleDir, tool.files, tool.name), version };
}

/** The tool's binary, built first when not cached (minutes on a cold Go cache). */
export async function ensureGoTool(tool: GoTool, log: (line: string) => void): Promise<{ path: string; version: string }> {
  const { path, version } = await goToolBinary(tool);
  if (await isExecutable(path)) {
    log(`${tool.name} ${version} already built: ${path}`);
    return { path, version };
  }
  await mkdir(dirname(path), { recursive: true });
  await buildOne(`${tool.name} ${version}`, tool.moduleDir, path, tool.ldflags(version), tool.packagePath, tool.command);
  return { path, version };
}
