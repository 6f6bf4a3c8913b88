/**
 * The admission fuzzer, longer than the seeded run in `npm test`: the same
 * properties (testkit/fuzz/properties.ts) through the Lambda handler and the
 * HTTPS server, with N inputs each, and the SidecarSet conversion's
 * properties (testkit/fuzz/conversion.ts: exact round trips both ways,
 * hostile ConversionReviews).
 *
 *   npm run fuzz -- [--runs N] [--seed S] [--only name,name] [--size quick|full] [--path P]
 *
 * Prints the seed first (so any run can be replayed), one line per property,
 * and last a JSON summary line (`{"fuzzSummary": ...}`) for
 * docs/RELIABILITY.md. Exits 1 when a property fails or a promise rejection
 * goes unhandled, 2 on a usage error.
 */
import fc from 'fast-check';
import { parseArgs } from 'node:util';
import { FULL_SIZE, QUICK_SIZE } from '../testkit/fuzz/arbitraries.ts';
import { conversionProperties } from '../testkit/fuzz/conversion.ts';
import { ClusterView, httpsHandler, lambdaHandler } from '../testkit/fuzz/handlers.ts';
import { everyFieldEveryType, fuzzProperties, sweep } from '../testkit/fuzz/properties.ts';

/** The deterministic sweep, run after the random properties (and selectable with --only). */
const SWEEP = 'every-field';
const SWEEP_DESCRIPTION = 'every node of five real reviews replaced by each JSON type, or deleted (deterministic)';

interface PropertyResult {
  name: string;
  description: string;
  inputs: number;
  durationMs: number;
  ok: boolean;
  failure?: string;
}

function usage(message: string): never {
  process.stderr.write(`fuzz: ${message}\nusage: npm run fuzz -- [--runs N] [--seed S] [--only name,name] [--size quick|full] [--path P]\n`);
  process.exit(2);
}

function integerOption(text: string | undefined, name: string, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^-?\d+$/.test(text)) usage(`--${name} must be an integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        runs: { type: 'string' },
        seed: { type: 'string' },
        only: { type: 'string' },
        size: { type: 'string' },
        path: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    usage((error as Error).message);
  }
  // fast-check takes a 32-bit seed.
  const seed = integerOption(values.seed, 'seed', (Date.now() ^ (Math.random() * 0x7fffffff)) | 0);
  const runs = values.runs === undefined ? undefined : integerOption(values.runs, 'runs', 0);
  if (runs !== undefined && runs < 1) usage('--runs must be at least 1');
  const sizeName = values.size ?? 'full';
  if (sizeName !== 'quick' && sizeName !== 'full') usage(`--size must be quick or full, got ${JSON.stringify(sizeName)}`);
  const size = sizeName === 'quick' ? QUICK_SIZE : FULL_SIZE;

  const unhandled: string[] = [];
  process.on('unhandledRejection', (reason) => {
    unhandled.push(reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason));
  });

  const view = new ClusterView();
  const https = await httpsHandler(view);
  const handlers = [await lambdaHandler(view), https];
  // The conversion properties are pure: they use neither the handlers nor the size.
  const properties = [...fuzzProperties({ view, handlers, size }), ...conversionProperties()];
  const only = values.only?.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const known = [...properties.map((p) => p.name), SWEEP];
  const unknown = only?.filter((name) => !known.includes(name)) ?? [];
  if (unknown.length > 0) usage(`unknown properties ${unknown.join(', ')}; known: ${known.join(', ')}`);
  if (values.path !== undefined && only?.length !== 1) usage('--path replays one property: give exactly one with --only');
  const selected = only === undefined ? properties : properties.filter((p) => only.includes(p.name));

  process.stdout.write(`fuzz: seed ${seed}, ${runs === undefined ? '10x the npm test runs' : `${runs} runs`} per property, size ${sizeName}, handlers ${handlers.map((d) => d.name).join(' and ')}\n`);
  const started = performance.now();
  const results: PropertyResult[] = [];
  try {
    for (const p of selected) {
      const numRuns = runs ?? p.quickRuns * 10;
      const t0 = performance.now();
      const details = await fc.check(p.property, { seed, numRuns, ...(values.path === undefined ? {} : { path: values.path }) });
      const durationMs = Math.round(performance.now() - t0);
      const result: PropertyResult = { name: p.name, description: p.description, inputs: details.numRuns, durationMs, ok: !details.failed };
      if (details.failed) {
        const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
        const counterexample = details.counterexample === null ? 'none' : fc.stringify(details.counterexample);
        result.failure = `${error.slice(0, 2000)}\ninput: ${counterexample.slice(0, 2000)}`;
        process.stdout.write(
          `FAIL ${p.name} after ${details.numRuns} inputs (${durationMs} ms, shrunk ${details.numShrinks} times)\n` +
            `error: ${error}\ninput: ${counterexample}\n` +
            `replay: npm run fuzz -- --seed ${seed} --only ${p.name} --path ${details.counterexamplePath ?? ''}\n`,
        );
      } else {
        process.stdout.write(`ok   ${p.name}: ${details.numRuns} inputs in ${durationMs} ms\n`);
      }
      results.push(result);
    }
    if (only === undefined || only.includes(SWEEP)) {
      // Deterministic: the same inputs whatever the seed or --runs.
      const t0 = performance.now();
      const inputs = everyFieldEveryType();
      const result: PropertyResult = { name: SWEEP, description: SWEEP_DESCRIPTION, inputs: 0, durationMs: 0, ok: true };
      try {
        result.inputs = await sweep({ view, handlers, size }, inputs);
      } catch (error) {
        result.ok = false;
        result.failure = (error as Error).message.slice(0, 4000);
      }
      result.durationMs = Math.round(performance.now() - t0);
      process.stdout.write(result.ok ? `ok   ${SWEEP}: ${inputs.length} inputs in ${result.durationMs} ms\n` : `FAIL ${SWEEP}: ${result.failure ?? ''}\n`);
      results.push(result);
    }
  } finally {
    await https.close();
  }
  const ok = results.every((r) => r.ok) && unhandled.length === 0;
  if (unhandled.length > 0) process.stdout.write(`FAIL ${unhandled.length} unhandled rejection(s): ${unhandled.slice(0, 5).join('; ')}\n`);
  const summary = {
    fuzzSummary: {
      ok,
      seed,
      size: sizeName,
      sizeLimits: size,
      handlers: handlers.map((d) => d.name),
      inputs: results.reduce((sum, r) => sum + r.inputs, 0),
      durationMs: Math.round(performance.now() - started),
      unhandledRejections: unhandled.length,
      // Kept-alive HTTPS connections found closed on reuse, and sent again (not failures).
      staleSocketRetries: https.staleSockets,
      node: process.version,
      properties: results,
    },
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  return ok ? 0 : 1;
}

process.exitCode = await main();
