/**
 * `npm run bench`: every benchmark of issue 8 with its floor, measured in the
 * same run; prints the tables and writes docs/BENCHMARKS.md.
 *
 *   npm run bench -- [--only admission|kruise|http|cold-start|reconciler|resync-100k|freshness|reads|rollout|pod-triggers|controller|injection|sets-at-once[,...]] [--quick] [--out FILE] [--strict]
 *
 * resync-100k (100,000 pods) runs only when --only names it.
 *
 * Exits 0 whether targets are met or missed unless --strict is given, then 1
 * on any MISS (after the report is written); 2 on a bad command line.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { admissionSection } from './bench/admission-compute.ts';
import { coldStartSection } from './bench/cold-start.ts';
import { freshnessSection } from './bench/freshness.ts';
import { heavyReadsSection } from './bench/heavy-reads.ts';
import { httpSection } from './bench/http-serving.ts';
import { kruisePodSection } from './bench/kruise-pod.ts';
import { machineInfo } from './bench/machine.ts';
import { BenchUsageError, parseBenchOptions, USAGE } from './bench/options.ts';
import { resync100kSection } from './bench/resync-100k.ts';
import { reconcilerSection } from './bench/reconciler.ts';
import { rolloutSection } from './bench/rollout.ts';
import { podTriggerSection } from './bench/pod-triggers.ts';
import { controllerSection } from './bench/controller.ts';
import { injectionPathSection } from './bench/injection-paths.ts';
import { setsAtOnceSection } from './bench/sets-at-once.ts';
import { missedTargets, renderConsole, renderDocument, type SectionId, type SectionReport } from './bench/report.ts';
import { settingsFor } from './bench/settings.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

let options;
try {
  options = parseBenchOptions(process.argv.slice(2), root);
} catch (error) {
  if (!(error instanceof BenchUsageError)) throw error;
  process.stderr.write(`${error.message}\nusage: ${USAGE}\n`);
  process.exit(2);
}
if (options.help) {
  process.stdout.write(`usage: ${USAGE}\n`);
  process.exit(0);
}
const settings = settingsFor(options.quick);
const log = (line: string) => process.stderr.write(`${line}\n`);

const runners: Record<SectionId, () => Promise<SectionReport>> = {
  admission: () => admissionSection(settings.admission),
  kruise: () => kruisePodSection(settings.kruise, log),
  http: () => httpSection(settings.http),
  'cold-start': () => coldStartSection(settings.coldStart),
  reconciler: () => reconcilerSection(settings.reconciler, log),
  'resync-100k': () => resync100kSection(settings.resync100k, log),
  freshness: () => freshnessSection(settings.freshness, log),
  reads: () => heavyReadsSection(settings.reads, log),
  rollout: () => rolloutSection(settings.rollout, log),
  'pod-triggers': () => podTriggerSection(settings.podTriggers, log),
  controller: () => controllerSection(settings.controller, log),
  injection: () => injectionPathSection(settings.injection, log),
  'sets-at-once': () => setsAtOnceSection(settings.setsAtOnce, log),
};

const date = new Date();
const reports: SectionReport[] = [];
for (const id of options.sections) {
  log(`bench: ${id}...`);
  const started = performance.now();
  reports.push(await runners[id]());
  log(`bench: ${id} done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
process.stdout.write(renderConsole(reports));

const args = process.argv.slice(2).join(' ');
const document = renderDocument(
  { command: `npm run bench${args === '' ? '' : ` -- ${args}`}`, machine: machineInfo(), date, quick: options.quick, settings: settings.describe(options.sections) },
  reports,
);
await mkdir(dirname(options.out), { recursive: true });
await writeFile(options.out, document);
log(`bench: wrote ${relative(process.cwd(), options.out)}`);

const missed = missedTargets(reports);
if (options.strict && missed.length > 0) {
  log(`bench: --strict: ${missed.length} target${missed.length === 1 ? '' : 's'} missed:`);
  for (const line of missed) log(`  MISS ${line}`);
  process.exitCode = 1;
}
