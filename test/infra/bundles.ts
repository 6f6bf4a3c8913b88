/**
 * Bundle directories for the stack tests: the project's own bundles where
 * they exist (dist/, or built into .cache/ from a clean clone), and a small
 * stand-in for a function scripts/bundle.ts does not bundle yet.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { distBundles, type BundleDirectories } from '../../infra/aws/bundles.ts';
import { STACK_FUNCTIONS, type StackFunctionName } from '../../infra/aws/functions.ts';
import { bundleFunctions, FUNCTIONS } from '../../scripts/bundle.ts';

export const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const hasBundle = (dir: string) => existsSync(join(dir, 'index.mjs'));

/** A handler the stack can point at; its content does not matter to the template tests. */
export async function writeStandIn(dir: string): Promise<void> {
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
 * The real bundles when dist/ has them all; otherwise the bundler's output in
 * `scratch` (inside the project, as the e2e bundle tests do), plus stand-ins
 * for functions it does not bundle.
 */
export async function projectBundles(scratch: string): Promise<BundleDirectories> {
  const dist = distBundles(join(projectRoot, 'dist'));
  if (STACK_FUNCTIONS.every((fn) => hasBundle(dist[fn]))) return dist;
  await rm(scratch, { recursive: true, force: true });
  await bundleFunctions(scratch);
  const built = distBundles(scratch);
  const bundled: readonly string[] = FUNCTIONS;
  for (const fn of STACK_FUNCTIONS as readonly StackFunctionName[]) {
    if (!bundled.includes(fn)) await writeStandIn(built[fn]);
  }
  return built;
}
