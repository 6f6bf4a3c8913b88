/**
 * The CDK app: synthesizes the SidecarSet stack into a cloud assembly without
 * the CDK CLI, an AWS account or the network.
 *
 *   npm run synth [-- -c key=value ...] [--outdir DIR] [--bundles DIR]
 *
 * `npm run synth` runs this with `--build`: the context is checked first,
 * then the functions are bundled (into --bundles DIR, else dist/), so that a
 * context mistake is said at once rather than after a minute of bundling.
 * Without `--build` this script only checks that the bundles are there. cdk.json names `npm run -s synth` as its app, so the
 * CDK CLI (`npx aws-cdk deploy -c key=value`) deploys exactly what synth
 * shows; the CLI passes its context and output directory in CDK_CONTEXT_JSON
 * and CDK_OUTDIR, which App reads itself.
 */
import { App } from 'aws-cdk-lib';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { distBundles, MissingBundleError, type BundleDirectories } from './bundles.ts';
import { ContextError, readStackConfig } from './config.ts';
import { SidecarSetStack } from './stack.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The command line cannot be used. */
export class UsageError extends Error {
  constructor(message: string) {
    super(`${message}\nusage: npm run synth -- [-c key=value ...] [--outdir DIR] [--bundles DIR]  (node infra/aws/app.ts [--build] ...)`);
    this.name = 'UsageError';
  }
}

export interface AppArgs {
  context: Record<string, string>;
  outdir: string | undefined;
  /** A directory laid out like dist/ (one directory per function); dist/ when absent. */
  bundles: string | undefined;
  /** Bundle the functions (into `bundles`) once the context has been checked. */
  build: boolean;
}

/** `-c key=value` / `--context key=value` (as the CDK CLI spells them), `--outdir DIR`, `--bundles DIR` and `--build`. */
export function parseArgs(argv: readonly string[]): AppArgs {
  const context: Record<string, string> = {};
  let outdir: string | undefined;
  let bundles: string | undefined;
  let build = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      if (inline !== undefined) return inline;
      const next = argv[++i];
      if (next === undefined) throw new UsageError(`${flag} needs a value`);
      return next;
    };
    if (flag === '-c' || flag === '--context') {
      const pair = value();
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new UsageError(`${flag} takes key=value, not ${JSON.stringify(pair)}`);
      context[pair.slice(0, eq)] = pair.slice(eq + 1);
    } else if (flag === '--outdir' || flag === '-o') {
      outdir = resolve(value());
    } else if (flag === '--bundles') {
      bundles = resolve(value());
    } else if (arg === '--build') {
      build = true;
    } else {
      throw new UsageError(`unknown argument ${JSON.stringify(arg)}`);
    }
  }
  return { context, outdir, bundles, build };
}

/**
 * cdk.json's context: the feature flags, pinned when aws-cdk-lib was added as
 * `cdk init` pins them, so that an upgrade does not change resources
 * unasked. The CLI passes them itself; a direct run reads them here, so both
 * synthesize the same template.
 */
export function projectContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(projectRoot, 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
  return cdkJson.context ?? {};
}

export interface CreateAppOptions {
  /** Context values given on the command line; they win over cdk.json's. */
  context?: Record<string, unknown>;
  /** The cloud assembly directory; App falls back to CDK_OUTDIR, then a temporary directory. */
  outdir?: string | undefined;
  /** Each function's bundle directory; dist/<function> by default. */
  bundles?: BundleDirectories;
}

/** The app, its context cdk.json's under the command line's (the CDK CLI's arrive through the environment). */
function appOf(options: Pick<CreateAppOptions, 'context' | 'outdir'>): App {
  return new App({
    ...(options.outdir === undefined ? {} : { outdir: options.outdir }),
    context: projectContext(),
    postCliContext: options.context ?? {},
  });
}

/**
 * Bundles the functions into `outdir` with scripts/bundle.ts, in its own
 * process (infra/ does not import scripts/), its output passed through.
 * @throws Error when the bundler fails.
 */
function bundleInto(outdir: string): void {
  const run = spawnSync(process.execPath, [join(projectRoot, 'scripts', 'bundle.ts'), '--outdir', outdir], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (run.status !== 0) throw new Error(`bundling the functions failed (node scripts/bundle.ts exited ${run.status ?? run.signal ?? 'abnormally'})`);
}

/**
 * The app with its one stack, configured from context.
 * @throws ContextError for an unusable context value, MissingBundleError for a missing bundle.
 */
export async function createApp(options: CreateAppOptions = {}): Promise<{ app: App; stack: SidecarSetStack }> {
  const app = appOf(options);
  const config = await readStackConfig((key) => app.node.tryGetContext(key));
  const stack = new SidecarSetStack(app, config.stackName, {
    stackName: config.stackName,
    description: 'OpenKruise-compatible SidecarSet webhooks and status reconciler on AWS Lambda',
    config,
    bundles: options.bundles ?? distBundles(join(projectRoot, 'dist')),
  });
  return { app, stack };
}

/** Synthesizes and reports; annotations are printed the way the CDK CLI would, and an error fails the run. */
async function main(argv: readonly string[]): Promise<void> {
  const started = performance.now();
  const args = parseArgs(argv);
  const outdir = args.outdir ?? (process.env.CDK_OUTDIR === undefined ? join(projectRoot, 'cdk.out') : undefined);
  if (args.build) {
    // The whole context is read and checked before anything is bundled.
    const app = appOf({ context: args.context, outdir });
    await readStackConfig((key) => app.node.tryGetContext(key));
    bundleInto(args.bundles ?? join(projectRoot, 'dist'));
  }
  const { app, stack } = await createApp({
    context: args.context,
    outdir,
    ...(args.bundles === undefined ? {} : { bundles: distBundles(args.bundles) }),
  });
  const assembly = app.synth();
  const messages = assembly.getStackArtifact(stack.artifactId).messages;
  let errors = 0;
  for (const m of messages) {
    const level: string = m.level;
    const data: unknown = m.entry.data;
    if (level === 'error') errors++;
    process.stderr.write(`[${level}] ${m.id}: ${typeof data === 'string' ? data : JSON.stringify(data)}\n`);
  }
  if (errors > 0) throw new Error(`synth reported errors for ${stack.stackName}`);
  const template = relative(process.cwd(), join(assembly.directory, stack.templateFile));
  process.stdout.write(`synthesized ${stack.stackName} in ${((performance.now() - started) / 1000).toFixed(1)} s: ${template}\n`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    await main(process.argv.slice(2));
  } catch (error) {
    // Configuration mistakes get their message alone; anything else keeps its stack.
    if (error instanceof UsageError || error instanceof ContextError || error instanceof MissingBundleError) {
      process.stderr.write(`synth: ${error.message}\n`);
      process.exitCode = error instanceof UsageError ? 2 : 1;
    } else {
      throw error;
    }
  }
}
