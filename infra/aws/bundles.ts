/** Where each function's esbuild bundle is (scripts/bundle.ts writes dist/<function>/index.mjs). */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { STACK_FUNCTIONS, type StackFunctionName } from './functions.ts';

export type BundleDirectories = Readonly<Record<StackFunctionName, string>>;

/** A function has no bundle; synth stops rather than deploy a function that cannot start. */
export class MissingBundleError extends Error {
  readonly functions: readonly StackFunctionName[];
  constructor(missing: readonly { fn: StackFunctionName; dir: string }[]) {
    super(
      `no bundle for ${missing.map(({ fn, dir }) => `${fn} (${join(dir, 'index.mjs')})`).join(', ')}: ` +
        'run `npm run build` first, or `npm run synth`, which bundles before it synthesizes',
    );
    this.name = 'MissingBundleError';
    this.functions = missing.map(({ fn }) => fn);
  }
}

/** The bundle directory of every function under `distDir`, the way scripts/bundle.ts lays them out. */
export function distBundles(distDir: string): BundleDirectories {
  return Object.fromEntries(STACK_FUNCTIONS.map((fn) => [fn, join(distDir, fn)])) as Record<StackFunctionName, string>;
}

/**
 * Checks that every directory holds the `index.mjs` the handler
 * `index.handler` names.
 * @throws MissingBundleError listing every function without one.
 */
export function checkBundles(dirs: BundleDirectories): void {
  const missing = STACK_FUNCTIONS.filter((fn) => !existsSync(join(dirs[fn], 'index.mjs'))).map((fn) => ({ fn, dir: dirs[fn] }));
  if (missing.length > 0) throw new MissingBundleError(missing);
}
