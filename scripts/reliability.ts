/**
 * `npm run reliability`: the bad-input, fault and load cases of
 * docs/RELIABILITY.md, each the same scenario its short version in
 * `npm test` runs, for longer. Prints a summary and writes the document;
 * exits 1 when a case failed, 2 on a usage error.
 *
 *   npm run reliability -- [--quick] [--only bad-input|adversarial|faults|load[,...]] [--seed N] [--out FILE]
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { machineInfo } from './bench/machine.ts';
import { CASES, SECTIONS, Shared, type SectionId } from './reliability/cases.ts';
import { renderConsole, renderDocument, type CaseResult } from './reliability/report.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const USAGE = `npm run reliability -- [--quick] [--only ${SECTIONS.join('|')}[,...]] [--seed N] [--out FILE]`;

function usage(message: string): never {
  process.stderr.write(`reliability: ${message}\nusage: ${USAGE}\n`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({ options: { quick: { type: 'boolean' }, only: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string' } }, strict: true, allowPositionals: false }));
} catch (error) {
  usage((error as Error).message);
}
const only = values.only?.split(',').map((s) => s.trim()).filter((s) => s !== '');
const unknown = only?.filter((s) => !(SECTIONS as readonly string[]).includes(s)) ?? [];
if (unknown.length > 0) usage(`unknown section ${unknown.join(', ')}; sections are ${SECTIONS.join(', ')}`);
if (values.seed !== undefined && !/^-?\d+$/.test(values.seed)) usage(`--seed must be an integer, got ${JSON.stringify(values.seed)}`);
const seed = values.seed === undefined ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0 : Number(values.seed);
const quick = values.quick === true;
const out = resolve(values.out ?? resolve(root, 'docs', 'RELIABILITY.md'));
const sections = new Set<SectionId>((only as SectionId[] | undefined) ?? SECTIONS);

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head} with uncommitted changes` : head;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

const log = (line: string) => process.stderr.write(`${line}\n`);
// A rejection nobody handled is a failure of the run, not noise.
const unhandled: string[] = [];
process.on('unhandledRejection', (reason) => {
  unhandled.push(reason instanceof Error ? reason.stack ?? reason.message : String(reason));
});

const date = new Date();
const started = performance.now();
const shared = new Shared();
const results: CaseResult[] = [];
try {
  for (const c of CASES.filter((c) => sections.has(c.section))) {
    log(`reliability: ${c.name}...`);
    const t0 = performance.now();
    const result: CaseResult = { section: c.section, name: c.name, claim: c.claim, passed: false, durationSeconds: 0 };
    try {
      result.output = await c.run({ quick, seed }, shared);
      result.passed = true;
    } catch (error) {
      result.failure = error instanceof Error ? error.message : String(error);
    }
    result.durationSeconds = (performance.now() - t0) / 1000;
    log(`reliability: ${c.name}: ${result.passed ? 'PASS' : 'FAIL'} in ${result.durationSeconds.toFixed(0)} s`);
    results.push(result);
  }
} finally {
  await shared.stop();
}
if (unhandled.length > 0) {
  results.push({ section: 'bad-input', name: 'No unhandled rejections during the run', claim: 'Nothing in the run left a promise rejection unhandled.', passed: false, durationSeconds: 0, failure: unhandled.slice(0, 5).join('\n\n') });
}

process.stdout.write(renderConsole(results));
const args = process.argv.slice(2).join(' ');
const document = renderDocument(
  { command: `npm run reliability${args === '' ? '' : ` -- ${args}`}`, date, commit: commit(), machine: machineInfo(), quick, seed, totalSeconds: (performance.now() - started) / 1000 },
  results,
);
await mkdir(dirname(out), { recursive: true });
await writeFile(out, document);
log(`reliability: wrote ${relative(process.cwd(), out)}`);
process.exitCode = results.every((r) => r.passed) ? 0 : 1;
