/**
 * OpenKruise's own answers, from the Go programs under
 * control-plane/tools/kruise-reference/ (v1.9.0) and
 * control-plane/tools/kruise-reference-1.8/ (v1.8.2); each main.go documents
 * the protocol from the Go side. Each is built once like the control plane's
 * binaries (control-plane/build.ts), then one long-lived process per run
 * answers one JSON line per case, in order.
 *
 * A binary is cached under .cache/kruise-reference/<kruise version>-<hash
 * of the module's go.mod, go.sum and Go files>, so any change to a module
 * builds it again, both versions' binaries live side by side, and nothing is
 * fetched once they are built (runs offline).
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOne, isExecutable, moduleBinaryPath, requiredVersion } from '../../control-plane/build.ts';
import { startLineProcess } from '../line-process.ts';
import type { ReferenceAnswer, ReferenceRequest } from './reference-protocol.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const KRUISE_MODULE = 'github.com/openkruise/kruise';

/** The Kruise releases the suite compares with: the current one first. */
export const KRUISE_LINES = ['1.9', '1.8'] as const;
export type KruiseLine = (typeof KRUISE_LINES)[number];

/** Each reference module, and the files its cache key is made of (in a fixed order, so a key never changes by itself). */
const MODULES: Readonly<Record<KruiseLine, { dir: string; files: readonly string[] }>> = {
  '1.9': { dir: join(repoRoot, 'control-plane', 'tools', 'kruise-reference'), files: ['go.mod', 'go.sum', 'main.go', 'controller.go', 'convert.go'] },
  '1.8': { dir: join(repoRoot, 'control-plane', 'tools', 'kruise-reference-1.8'), files: ['go.mod', 'go.sum', 'main.go', 'controller.go'] },
};

/** The module of the current release's reference (Kruise's pod bench is built in it too). */
export const KRUISE_REFERENCE_MODULE_DIR = MODULES['1.9'].dir;

/** The module directory of a release's reference. */
export function kruiseReferenceModuleDir(line: KruiseLine): string {
  return MODULES[line].dir;
}

/** The Kruise version a release's module pins, e.g. `v1.9.0`. */
export async function kruiseReferenceVersion(line: KruiseLine): Promise<string> {
  return requiredVersion(await readFile(join(MODULES[line].dir, 'go.mod'), 'utf8'), KRUISE_MODULE);
}

/** Where the binary for a release's module as it is now lives. */
export async function kruiseReferenceBinaryPath(line: KruiseLine): Promise<string> {
  const { dir, files } = MODULES[line];
  return moduleBinaryPath('kruise-reference', await kruiseReferenceVersion(line), dir, files, 'kruise-reference');
}

const pendingBuilds = new Map<KruiseLine, Promise<string>>();

/** Builds a release's reference (once per module content; minutes on a cold Go cache) and returns its path. */
export function ensureKruiseReference(line: KruiseLine): Promise<string> {
  let pending = pendingBuilds.get(line);
  if (pending === undefined) {
    pending = (async () => {
      const binary = await kruiseReferenceBinaryPath(line);
      if (await isExecutable(binary)) return binary;
      await mkdir(dirname(binary), { recursive: true });
      await buildOne(`kruise-reference (OpenKruise ${await kruiseReferenceVersion(line)})`, MODULES[line].dir, binary, '-s -w', '.');
      return binary;
    })().catch((error: unknown) => {
      pendingBuilds.delete(line);
      throw error;
    });
    pendingBuilds.set(line, pending);
  }
  return pending;
}

/** A running reference: `ask` sends one case and resolves with Kruise's answer. */
export interface KruiseReference {
  ask(request: ReferenceRequest): Promise<ReferenceAnswer>;
  close(): Promise<void>;
}

/** Starts a reference binary; answers come back in the order cases were sent, each checked to be the next case's. */
export function startKruiseReference(binary: string): KruiseReference {
  const lines = startLineProcess(binary, { name: 'the Kruise reference' });
  let nextId = 0;
  return {
    async ask(request) {
      const id = String(nextId++);
      const answer = (await lines.ask({ id, ...request })) as ReferenceAnswer;
      if (answer.id !== id) {
        const error = new Error(`the Kruise reference answered case ${answer.id} when ${id} was next`);
        // Every later answer would be another case's too.
        lines.fail(error);
        throw error;
      }
      return answer;
    },
    close: () => lines.close(),
  };
}
