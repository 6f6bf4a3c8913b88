/**
 * Bundle directories for the infra tests: the project's own bundles (dist/,
 * or built into .cache/ from a clean clone), or small stand-ins where the
 * content does not matter.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { distBundles, type BundleDirectories } from '../../infra/aws/bundles.ts';
import { STACK_FUNCTIONS } from '../../infra/aws/functions.ts';
import { bundleFunctions } from '../../scripts/bundle.ts';

export const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const hasBundle = (dir: string) => existsSync(join(dir, 'index.mjs'));

/** A handler the stack can point at: the CLI tests look at the template, never at the code. */
async function writeStandIn(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'index.mjs'), "export const handler = async () => ({ statusCode: 503, body: 'stand-in bundle for infra tests' });\n");
}

/** Stand-ins for every function under `root`, laid out like dist/. */
export async function standInBundles(root: string): Promise<BundleDirectories> {
  const dirs = distBundles(root);
  for (const fn of STACK_FUNCTIONS) await writeStandIn(dirs[fn]);
  return dirs;
}

/**
 * The real bundles: dist/ when it has them all, else freshly built into
 * `scratch` (inside the project, as the e2e bundle tests do).
 */
export async function projectBundles(scratch: string): Promise<BundleDirectories> {
  const dist = distBundles(join(projectRoot, 'dist'));
  if (STACK_FUNCTIONS.every((fn) => hasBundle(dist[fn]))) return dist;
  await rm(scratch, { recursive: true, force: true });
  await bundleFunctions(scratch);
  return distBundles(scratch);
}
