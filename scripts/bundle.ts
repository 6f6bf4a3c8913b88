/**
 * One esbuild bundle per Lambda function: dist/<function>/index.mjs, an ES
 * module for nodejs22.x, with the chunks it imports lazily under
 * dist/<function>/chunks/. The AWS SDK is left out (the runtime provides it)
 * and everything else is inlined. Code splitting is on so that a dynamic
 * import (client-node, loaded by the webhooks only for kubeconfigs that need
 * it) stays out of index.mjs and costs a cold start nothing unless used.
 *
 *   node scripts/bundle.ts [--outdir DIR] [--metafile]
 */
import { build, type BuildResult, type Metafile } from 'esbuild';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LAMBDA_ENTRY_POINTS, type LambdaFunctionName } from '../functions/entry-points.ts';
import { FUNCTION_DESCRIPTORS } from '../lib/webhooks/descriptors.ts';
import { zip } from './zip.ts';

/** The bundle of every function the API server calls, in the descriptors' order, then the reconciler's. */
export const BUNDLE_ENTRIES: readonly { fn: BundledFunction; entry: string }[] = [...FUNCTION_DESCRIPTORS.map((d) => d.name), 'status-sync' as const].map((fn) => ({ fn, entry: LAMBDA_ENTRY_POINTS[fn] }));
export type BundledFunction = LambdaFunctionName;

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface BundleInfo extends BundleOutput {
  fn: BundledFunction;
  /** The entry module, index.mjs: what Lambda's `index.handler` loads. */
  file: string;
  /** The Lambda deployment package: every file of the bundle's directory (code, source maps, legal notices). */
  zipFile: string;
  zipBytes: number;
}

/** A bundle's entry module and its chunks, as esbuild wrote them. */
export interface BundleOutput {
  /** The size of the entry module. */
  bytes: number;
  /** The entry module and the chunks it imports statically: what every cold start loads. */
  startupBytes: number;
  /** Every chunk besides the entry module; `lazy` when only a dynamic import reaches it. */
  chunks: { file: string; bytes: number; lazy: boolean }[];
  /** Every source file the bundle was built from, lazily loaded chunks included. */
  inputs: string[];
  /** The source files every cold start evaluates (the entry module and its static imports). */
  startupInputs: string[];
  metafile: Metafile;
}

/** The outputs a cold start loads: the entry and everything it reaches through static imports. */
function startupOutputs(metafile: Metafile, entry: string): Set<string> {
  const reached = new Set<string>();
  const visit = (path: string) => {
    if (reached.has(path)) return;
    reached.add(path);
    for (const imported of metafile.outputs[path]?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
    }
  };
  visit(entry);
  return reached;
}

/**
 * Bundles one entry point into `outfile` (and chunks beside it) the way
 * every Lambda bundle is built (also used for the benchmarks' empty-handler
 * bundle, so that it differs from the functions in its code only). Any
 * esbuild error or warning fails.
 */
export async function bundleEntry(entryPoint: string, outfile: string): Promise<BundleOutput> {
  const outdir = dirname(outfile);
  const extension = extname(outfile);
  const result: BuildResult<{ metafile: true }> = await build({
    entryPoints: [entryPoint],
    outdir,
    entryNames: basename(outfile, extension),
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': extension },
    bundle: true,
    splitting: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    minify: true,
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'linked',
    external: ['@aws-sdk/*'],
    // Some CommonJS dependencies call require() for Node built-ins; every chunk is a module of its own and gets its own.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    metafile: true,
    logLevel: 'silent',
  });
  if (result.errors.length > 0 || result.warnings.length > 0) {
    throw new Error(`bundling ${entryPoint}: ${[...result.errors, ...result.warnings].map((m) => m.text).join('; ')}`);
  }
  const { metafile } = result;
  // Output paths are relative to the working directory.
  const code = Object.keys(metafile.outputs).filter((path) => path.endsWith(extension));
  const entry = code.find((path) => resolve(path) === resolve(outfile));
  if (entry === undefined) throw new Error(`bundling ${entryPoint}: esbuild wrote no ${outfile}`);
  const startup = startupOutputs(metafile, entry);
  const bytesOf = (path: string) => metafile.outputs[path]?.bytes ?? 0;
  const inputsOf = (paths: Iterable<string>) => [...new Set([...paths].flatMap((path) => Object.keys(metafile.outputs[path]?.inputs ?? {})))];
  return {
    bytes: (await stat(outfile)).size,
    startupBytes: [...startup].reduce((sum, path) => sum + bytesOf(path), 0),
    chunks: code.filter((path) => path !== entry).map((path) => ({ file: resolve(path), bytes: bytesOf(path), lazy: !startup.has(path) })),
    inputs: Object.keys(metafile.inputs),
    startupInputs: inputsOf(startup),
    metafile,
  };
}

/** Every file under `dir`, as paths relative to it with `/` separators, sorted, the entry module first. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)).split('\\').join('/'));
  const rank = (name: string) => (name === 'index.mjs' ? 0 : name === 'index.mjs.map' ? 1 : 2);
  return files.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Bundles every function into `outdir`; returns each bundle's path and size.
 * Any esbuild error or warning fails the build.
 */
export async function bundleFunctions(outdir = join(projectRoot, 'dist'), options: { writeMetafile?: boolean } = {}): Promise<BundleInfo[]> {
  const out: BundleInfo[] = [];
  for (const { fn, entry } of BUNDLE_ENTRIES) {
    const dir = join(outdir, fn);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const file = join(dir, 'index.mjs');
    const output = await bundleEntry(join(projectRoot, entry), file);
    // The zip holds what the CDK asset holds (infra/aws/stack.ts): the whole directory, so the chunks travel with index.mjs.
    const entries = await Promise.all((await filesUnder(dir)).map(async (name) => ({ name, data: await readFile(join(dir, name)) })));
    if (options.writeMetafile === true) await writeFile(join(dir, 'meta.json'), JSON.stringify(output.metafile));
    const zipFile = join(outdir, `${fn}.zip`);
    await writeFile(zipFile, zip(entries));
    out.push({ fn, file, ...output, zipFile, zipBytes: (await stat(zipFile)).size });
  }
  return out;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--outdir');
  const outdir = at >= 0 && args[at + 1] !== undefined ? resolve(args[at + 1] ?? '') : undefined;
  const bundles = await bundleFunctions(outdir, { writeMetafile: args.includes('--metafile') });
  for (const b of bundles) {
    const lazy = b.chunks.filter((c) => c.lazy).reduce((sum, c) => sum + c.bytes, 0);
    const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
    process.stdout.write(`${b.fn}\t${kib(b.startupBytes)} loaded at start\t${kib(lazy)} lazy\t${kib(b.zipBytes)} zip\t${b.zipFile}\n`);
  }
}
