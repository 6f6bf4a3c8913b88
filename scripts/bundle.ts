/**
 * One esbuild bundle per Lambda function: dist/<function>/index.mjs, an ES
 * module for nodejs22.x. The AWS SDK is left out (the runtime provides it)
 * and everything else is inlined, so a cold start reads one file.
 *
 *   node scripts/bundle.ts [--outdir DIR] [--metafile]
 */
import { build, type BuildResult } from 'esbuild';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { zip } from './zip.ts';

export const FUNCTIONS = ['sidecarset-default', 'sidecarset-validate', 'pod-inject', 'status-sync'] as const;
export type BundledFunction = (typeof FUNCTIONS)[number];

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface BundleInfo {
  fn: BundledFunction;
  file: string;
  bytes: number;
  /** The Lambda deployment package: index.mjs and its source map. */
  zipFile: string;
  zipBytes: number;
  /** Every source file the bundle was built from (from esbuild's metafile). */
  inputs: string[];
}

/**
 * Bundles every function into `outdir`; returns each bundle's path and size.
 * Any esbuild error or warning fails the build.
 */
/**
 * Bundles one entry point into `outfile` the way every Lambda bundle is built
 * (also used for the benchmarks' empty-handler bundle, so that it differs
 * from the functions in its code only). Any esbuild error or warning fails.
 */
export async function bundleEntry(entryPoint: string, outfile: string): Promise<{ bytes: number; inputs: string[]; metafile: unknown }> {
  const result: BuildResult = await build({
    entryPoints: [entryPoint],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    minify: true,
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'linked',
    external: ['@aws-sdk/*'],
    // Some CommonJS dependencies call require() for Node built-ins.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    metafile: true,
    logLevel: 'silent',
  });
  if (result.errors.length > 0 || result.warnings.length > 0) {
    throw new Error(`bundling ${entryPoint}: ${[...result.errors, ...result.warnings].map((m) => m.text).join('; ')}`);
  }
  return { bytes: (await stat(outfile)).size, inputs: Object.keys(result.metafile?.inputs ?? {}), metafile: result.metafile };
}

/**
 * Bundles every function into `outdir`; returns each bundle's path and size.
 * Any esbuild error or warning fails the build.
 */
export async function bundleFunctions(outdir = join(projectRoot, 'dist'), options: { writeMetafile?: boolean } = {}): Promise<BundleInfo[]> {
  const out: BundleInfo[] = [];
  for (const fn of FUNCTIONS) {
    const dir = join(outdir, fn);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const file = join(dir, 'index.mjs');
    const { bytes, inputs, metafile } = await bundleEntry(join(projectRoot, 'functions', fn, 'handler.ts'), file);
    if (options.writeMetafile === true) await writeFile(join(dir, 'meta.json'), JSON.stringify(metafile));
    const zipFile = join(outdir, `${fn}.zip`);
    const entries = [
      { name: 'index.mjs', data: await readFile(file) },
      { name: 'index.mjs.map', data: await readFile(`${file}.map`) },
    ];
    await writeFile(zipFile, zip(entries));
    out.push({ fn, file, bytes, zipFile, zipBytes: (await stat(zipFile)).size, inputs });
  }
  return out;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--outdir');
  const outdir = at >= 0 && args[at + 1] !== undefined ? resolve(args[at + 1] ?? '') : undefined;
  const bundles = await bundleFunctions(outdir, { writeMetafile: args.includes('--metafile') });
  for (const b of bundles) {
    process.stdout.write(`${b.fn}\t${(b.bytes / 1024).toFixed(1)} KiB bundle\t${(b.zipBytes / 1024).toFixed(1)} KiB zip\t${b.zipFile}\n`);
  }
}
