/**
 * The differential suite, longer than the seeded run in `npm test`: seeded
 * SidecarSets, pods, clusters and ConversionReviews answered by this project
 * and by OpenKruise's own handlers, conversion and controller, of v1.9.0 and
 * of v1.8.2 (testkit/conformance/).
 *
 *   npm run conformance -- [--runs N] [--seed S] [--kruise 1.9|1.8|both] [--verbose]
 *
 * Prints, per release (both by default, 1.9 first), `agree X/Y` per class
 * and overall, the documented differences with that release by name and
 * count, and the first mismatch of each class; --verbose also lists every
 * kind of mismatch once (with its count and first example) and one example
 * of each known bug and documented difference. Builds the Kruise references
 * first when they are not cached (needs Go and, that once, the module
 * proxy). Exits 1 on any unexpected mismatch, 2 on a usage error or when a
 * reference cannot be built or run.
 *
 *   npm run conformance -- --kruise-e2e [--group v1alpha1|v1beta1|both] [--focus REGEX] [--report-dir DIR]
 *
 * runs OpenKruise v1.9.0's own SidecarSet e2e specs against the embedded
 * cluster instead (testkit/kruise-e2e/; its usage in options.ts).
 */
import { parseArgs } from 'node:util';
import { ensureKruiseReference, KRUISE_LINES, type KruiseLine } from '../testkit/conformance/kruise-reference.ts';
import { formatReport, runConformance } from '../testkit/conformance/run.ts';
import { KRUISE_E2E_FLAG, KRUISE_E2E_USAGE, KruiseE2eUsageError, parseKruiseE2eArgs } from '../testkit/kruise-e2e/options.ts';
import { runKruiseE2e } from '../testkit/kruise-e2e/run.ts';

const USAGE = `usage: npm run conformance -- [--runs N] [--seed S] [--kruise 1.9|1.8|both] [--verbose]\n   or: npm run conformance -- ${KRUISE_E2E_FLAG} [--group v1alpha1|v1beta1|both] [--focus REGEX] [--report-dir DIR]`;

class UsageError extends Error {}

function integerOption(text: string | undefined, name: string, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^-?\d+$/.test(text)) throw new UsageError(`--${name} must be an integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

async function kruiseE2e(argv: readonly string[]): Promise<number> {
  let options;
  try {
    options = parseKruiseE2eArgs(argv);
  } catch (error) {
    if (!(error instanceof KruiseE2eUsageError)) throw error;
    process.stderr.write(`conformance: ${error.message}\n${KRUISE_E2E_USAGE}\n`);
    return 2;
  }
  let run;
  try {
    run = await runKruiseE2e(options, (line) => process.stderr.write(`[kruise-e2e] ${line}\n`));
  } catch (error) {
    process.stderr.write(`conformance: the Kruise e2e run could not be made: ${(error as Error).message}\n`);
    return 2;
  }
  process.stdout.write(`${run.text}\n(tables, JUnit reports and logs: ${run.reportDir})\n`);
  return run.passed ? 0 : 1;
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes(KRUISE_E2E_FLAG)) return kruiseE2e(argv);
  let runs: number;
  let seed: number;
  let verbose: boolean;
  let lines: KruiseLine[];
  try {
    const { values } = parseArgs({
      options: { runs: { type: 'string' }, seed: { type: 'string' }, kruise: { type: 'string' }, verbose: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    });
    runs = integerOption(values.runs, 'runs', 500);
    if (runs < 1) throw new UsageError('--runs must be at least 1');
    // fast-check takes a 32-bit seed.
    seed = integerOption(values.seed, 'seed', (Date.now() ^ (Math.random() * 0x7fffffff)) | 0);
    verbose = values.verbose === true;
    const kruise = values.kruise ?? 'both';
    if (kruise !== 'both' && !(KRUISE_LINES as readonly string[]).includes(kruise)) {
      throw new UsageError(`--kruise must be ${KRUISE_LINES.join(', ')} or both, got ${JSON.stringify(kruise)}`);
    }
    lines = kruise === 'both' ? [...KRUISE_LINES] : [kruise as KruiseLine];
  } catch (error) {
    process.stderr.write(`conformance: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  let unexpected = 0;
  for (const line of lines) {
    let binary: string;
    try {
      binary = await ensureKruiseReference(line);
    } catch (error) {
      process.stderr.write(`conformance: cannot build the Kruise ${line} reference: ${(error as Error).message}\n`);
      return 2;
    }
    const started = performance.now();
    let report;
    try {
      report = await runConformance(line, binary, runs, seed);
    } catch (error) {
      process.stderr.write(`conformance: the run against Kruise ${line} failed: ${(error as Error).message}\n`);
      return 2;
    }
    process.stdout.write(`${formatReport(report, verbose)}\n`);
    process.stdout.write(`(${((performance.now() - started) / 1000).toFixed(1)} s; replay with --seed ${seed} --runs ${runs} --kruise ${line})\n\n`);
    unexpected += report.unexpected;
  }
  return unexpected === 0 ? 0 : 1;
}

process.exitCode = await main();
