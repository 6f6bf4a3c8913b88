/**
 * The differential suite, longer than the seeded run in `npm test`: seeded
 * SidecarSets, pods and clusters answered by this project and by OpenKruise
 * v1.8.2's own handlers and controller (testkit/conformance/).
 *
 *   npm run conformance -- [--runs N] [--seed S] [--verbose]
 *
 * Prints `agree X/Y` per class and overall, and the first mismatch of each
 * class; --verbose also lists every kind of mismatch once (with its count
 * and first example) and one example of each known bug. Builds the Kruise
 * reference first when it is not cached (needs Go and, that once, the
 * module proxy). Exits 1 on any unexpected mismatch, 2 on a usage error or
 * when the reference cannot be built or run.
 */
import { parseArgs } from 'node:util';
import { ensureKruiseReference } from '../testkit/conformance/kruise-reference.ts';
import { formatReport, runConformance } from '../testkit/conformance/run.ts';

const USAGE = 'usage: npm run conformance -- [--runs N] [--seed S] [--verbose]';

class UsageError extends Error {}

function integerOption(text: string | undefined, name: string, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^-?\d+$/.test(text)) throw new UsageError(`--${name} must be an integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

async function main(): Promise<number> {
  let runs: number;
  let seed: number;
  let verbose: boolean;
  try {
    const { values } = parseArgs({
      options: { runs: { type: 'string' }, seed: { type: 'string' }, verbose: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    });
    runs = integerOption(values.runs, 'runs', 500);
    if (runs < 1) throw new UsageError('--runs must be at least 1');
    // fast-check takes a 32-bit seed.
    seed = integerOption(values.seed, 'seed', (Date.now() ^ (Math.random() * 0x7fffffff)) | 0);
    verbose = values.verbose === true;
  } catch (error) {
    process.stderr.write(`conformance: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  let binary: string;
  try {
    binary = await ensureKruiseReference();
  } catch (error) {
    process.stderr.write(`conformance: cannot build the Kruise reference: ${(error as Error).message}\n`);
    return 2;
  }
  const started = performance.now();
  let report;
  try {
    report = await runConformance(binary, runs, seed);
  } catch (error) {
    process.stderr.write(`conformance: the run failed: ${(error as Error).message}\n`);
    return 2;
  }
  process.stdout.write(`${formatReport(report, verbose)}\n`);
  process.stdout.write(`(${((performance.now() - started) / 1000).toFixed(1)} s; replay with --seed ${seed} --runs ${runs})\n`);
  return report.unexpected === 0 ? 0 : 1;
}

process.exitCode = await main();
