/**
 * OpenKruise v1.8.2's own answers, from the Go program under
 * control-plane/tools/kruise-reference/ (its main.go documents the
 * protocol from the Go side): built once like the control plane's binaries
 * (control-plane/build.ts), then one long-lived process per run that
 * answers one JSON line per case, in order.
 *
 * The binary is cached under .cache/kruise-reference/<kruise version>-<hash
 * of the module's go.mod, go.sum and Go files>, so any change to the module
 * builds again, and nothing is fetched once it is built (runs offline).
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOne, isExecutable, requiredVersion } from '../../control-plane/build.ts';
import { startLineProcess } from '../line-process.ts';
import type { ReferenceAnswer, ReferenceRequest } from './reference-protocol.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
export const KRUISE_REFERENCE_MODULE_DIR = join(repoRoot, 'control-plane', 'tools', 'kruise-reference');
const KRUISE_MODULE = 'github.com/openkruise/kruise';
const MODULE_FILES = ['go.mod', 'go.sum', 'main.go', 'controller.go'] as const;

/** The Kruise version the module pins, e.g. `v1.8.2`. */
export async function kruiseReferenceVersion(): Promise<string> {
  return requiredVersion(await readFile(join(KRUISE_REFERENCE_MODULE_DIR, 'go.mod'), 'utf8'), KRUISE_MODULE);
}

/** Where the binary for the module as it is now lives. */
export async function kruiseReferenceBinaryPath(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of MODULE_FILES) hash.update(file).update('\0').update(await readFile(join(KRUISE_REFERENCE_MODULE_DIR, file)));
  const key = `${await kruiseReferenceVersion()}-${hash.digest('hex').slice(0, 12)}`;
  return join(repoRoot, '.cache', 'kruise-reference', key, 'kruise-reference');
}

let pendingBuild: Promise<string> | undefined;

/** Builds the reference (once per module content; minutes on a cold Go cache) and returns its path. */
export function ensureKruiseReference(): Promise<string> {
  pendingBuild ??= (async () => {
    const binary = await kruiseReferenceBinaryPath();
    if (await isExecutable(binary)) return binary;
    await mkdir(dirname(binary), { recursive: true });
    await buildOne(`kruise-reference (OpenKruise ${await kruiseReferenceVersion()})`, KRUISE_REFERENCE_MODULE_DIR, binary, '-s -w', '.');
    return binary;
  })().catch((error: unknown) => {
    pendingBuild = undefined;
    throw error;
  });
  return pendingBuild;
}

/** A running reference: `ask` sends one case and resolves with Kruise's answer. */
export interface KruiseReference {
  ask(request: ReferenceRequest): Promise<ReferenceAnswer>;
  close(): Promise<void>;
}

/** Starts the reference binary; answers come back in the order cases were sent, each checked to be the next case's. */
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
