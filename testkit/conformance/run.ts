/**
 * One differential run: `runs` seeded cases of a Kruise release, each
 * answered by this project and by that release's own code, compared, and
 * summed up per class.
 */
import { compareVerdicts, type Comparison } from './compare.ts';
import { expectedBy, unexplainedErrors } from './expected-mismatches.ts';
import { CASE_CLASSES, generateCases, type CaseClass, type ConformanceCase } from './generator.ts';
import { startKruiseReference, type KruiseLine, type KruiseReference } from './kruise-reference.ts';
import { ourVerdict } from './ours.ts';
import { releaseDifferenceOf } from './release-differences.ts';
import type { ReferenceAnswer } from './reference-protocol.ts';
import { conversionReview, kruiseVerdict, referenceRequest, sourceAPIVersion } from './verdict.ts';

export interface Mismatch {
  index: number;
  case: ConformanceCase;
  comparison: Comparison;
  /** The issue items that explain it, when it is a known bug. */
  expected?: string[];
  /** A side that could not decide says why here (not compared, only shown). */
  failures?: { ours?: string; kruise?: string };
}

export interface ClassTally {
  agree: number;
  total: number;
  /** Known bugs (expected-mismatches.ts), counted apart from agreement. */
  expected: number;
  /** Unexpected mismatches. */
  mismatches: Mismatch[];
  /** Per issue item: how many mismatches it explained, and the first, for the report. */
  expectedExamples: Map<string, { count: number; first: Mismatch }>;
  /** Documented differences between this project and the release (release-differences.ts), counted apart from agreement. */
  differences: number;
  /** Per difference: how many cases it explained, and the first, for the report. */
  differenceExamples: Map<string, { count: number; first: Mismatch }>;
}

export interface RunReport {
  /** The release compared with. */
  line: KruiseLine;
  seed: number;
  runs: number;
  byClass: Record<CaseClass, ClassTally>;
  /** Unexpected mismatches of all classes. */
  unexpected: number;
}

/**
 * Kruise's answer to a case; for a conversion round trip, its answer to
 * its own first answer converted back (the second leg goes out once the
 * first is back: other cases' answers may come in between).
 */
export async function askKruise(reference: KruiseReference, c: ConformanceCase): Promise<ReferenceAnswer> {
  const first = await reference.ask(referenceRequest(c));
  if (c.class !== 'convert' || !c.roundTrip) return first;
  const there = kruiseVerdict(c, first);
  if (there.kind !== 'converted') return first;
  return reference.ask({ op: 'convert', object: conversionReview(there.objects, sourceAPIVersion(c)) });
}

export async function runConformance(line: KruiseLine, binary: string, runs: number, seed: number): Promise<RunReport> {
  const cases = generateCases(runs, seed, line);
  const tally = (): ClassTally => ({ agree: 0, total: 0, expected: 0, mismatches: [], expectedExamples: new Map(), differences: 0, differenceExamples: new Map() });
  const byClass = Object.fromEntries(CASE_CLASSES.map((k) => [k, tally()])) as Record<CaseClass, ClassTally>;
  const reference = startKruiseReference(binary);
  try {
    // All cases are sent at once: the reference answers in order while ours are computed.
    const theirs = cases.map((c) => askKruise(reference, c));
    for (const [index, c] of cases.entries()) {
      const [ours, answer] = await Promise.all([ourVerdict(c), theirs[index] as Promise<Awaited<(typeof theirs)[number]>>]);
      const theirVerdict = kruiseVerdict(c, answer);
      const comparison = compareVerdicts(c, ours, theirVerdict);
      const counts = byClass[c.class];
      counts.total++;
      if (comparison.agree) {
        counts.agree++;
        continue;
      }
      const difference = releaseDifferenceOf(line, c, comparison, ours, theirVerdict);
      if (difference !== undefined) {
        counts.differences++;
        const seen = counts.differenceExamples.get(difference);
        if (seen === undefined) counts.differenceExamples.set(difference, { count: 1, first: { index, case: c, comparison } });
        else seen.count++;
        continue;
      }
      const expected = expectedBy(c, comparison);
      if (expected === undefined) {
        const failures = {
          ...(ours.kind === 'failed' ? { ours: ours.message } : {}),
          ...(theirVerdict.kind === 'failed' ? { kruise: theirVerdict.message } : {}),
        };
        counts.mismatches.push(Object.keys(failures).length === 0 ? { index, case: c, comparison } : { index, case: c, comparison, failures });
        continue;
      }
      counts.expected++;
      for (const entry of expected) {
        const seen = counts.expectedExamples.get(entry.item);
        if (seen === undefined) counts.expectedExamples.set(entry.item, { count: 1, first: { index, case: c, comparison, expected: expected.map((e) => e.item) } });
        else seen.count++;
      }
    }
  } finally {
    await reference.close();
  }
  const unexpected = CASE_CLASSES.reduce((n, k) => n + byClass[k].mismatches.length, 0);
  return { line, seed, runs, byClass, unexpected };
}

/**
 * The kinds of disagreement in a mismatch, so that a long run lists each kind
 * once: each field error only one side gave that no known bug explains, or
 * else the place of the first difference; indexes and quoted values blanked.
 */
export function mismatchKinds(c: ConformanceCase, comparison: Comparison): string[] {
  const shape = (text: string) => text.replace(/\[\d+\]/g, '[]').replace(/\/\d+(?=\/|:|$)/g, '/#').replace(/"(?:[^"\\]|\\.)*"/g, '"…"');
  const unexplained = unexplainedErrors(comparison);
  const only = [...unexplained.oursOnly.map((e) => `ours only: ${shape(e)}`), ...unexplained.kruiseOnly.map((e) => `Kruise only: ${shape(e)}`)];
  if (only.length > 0) return [...new Set(only)].map((k) => `${c.class}: ${k}`);
  const where = comparison.difference?.split(': ')[0] ?? '?';
  return [`${c.class}: differ at ${shape(where)}`];
}

const SHOWN = 1_500;

function compact(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}... (${text.length} chars)` : text;
}

function describeMismatch(m: Mismatch): string {
  const lines = [`  case #${m.index}: ${compact(m.case)}`];
  if (m.comparison.oursOnly !== undefined || m.comparison.kruiseOnly !== undefined) {
    lines.push(`  only ours:   ${compact(m.comparison.oursOnly ?? [])}`, `  only Kruise: ${compact(m.comparison.kruiseOnly ?? [])}`);
  }
  if (m.comparison.difference !== undefined) lines.push(`  first difference (ours vs Kruise): ${m.comparison.difference.slice(0, SHOWN)}`);
  lines.push(`  ours:   ${compact(m.comparison.ours)}`, `  Kruise: ${compact(m.comparison.kruise)}`);
  if (m.failures !== undefined) lines.push(`  failed: ${compact(m.failures)}`);
  return lines.join('\n');
}

/** The report `npm run conformance` prints: `agree X/Y` per class and overall, the documented differences by name, then the first mismatch of each class. */
export function formatReport(report: RunReport, verbose = false): string {
  const lines = [`conformance with OpenKruise ${report.line}: ${report.runs} cases, seed ${report.seed}`];
  let agree = 0;
  let total = 0;
  let expected = 0;
  let differences = 0;
  const extras = (t: { expected: number; differences: number }) =>
    [t.differences > 0 ? `+${t.differences} documented differences` : '', t.expected > 0 ? `+${t.expected} known bugs` : ''].filter((x) => x !== '').join(', ');
  for (const k of CASE_CLASSES) {
    const t = report.byClass[k];
    if (t.total === 0) continue;
    agree += t.agree;
    total += t.total;
    expected += t.expected;
    differences += t.differences;
    const extra = extras(t);
    lines.push(`  ${k.padEnd(9)} agree ${t.agree}/${t.total}${extra === '' ? '' : ` (${extra})`}${t.mismatches.length > 0 ? `, ${t.mismatches.length} MISMATCHES` : ''}`);
  }
  const extra = extras({ expected, differences });
  lines.push(`  overall   agree ${agree}/${total}${extra === '' ? '' : ` (${extra})`}${report.unexpected > 0 ? `, ${report.unexpected} MISMATCHES` : ''}`);
  const named = new Map<string, number>();
  for (const k of CASE_CLASSES) for (const [name, { count }] of report.byClass[k].differenceExamples) named.set(`${k}: ${name}`, count);
  for (const [name, count] of named) lines.push(`  documented difference ${name}: ${count}`);
  for (const k of CASE_CLASSES) {
    const t = report.byClass[k];
    const first = t.mismatches[0];
    if (first !== undefined) lines.push('', `first ${k} mismatch (of ${t.mismatches.length}):`, describeMismatch(first));
  }
  if (verbose) {
    const kinds = new Map<string, { count: number; first: Mismatch }>();
    for (const k of CASE_CLASSES) {
      for (const m of report.byClass[k].mismatches) {
        for (const kind of mismatchKinds(m.case, m.comparison)) {
          const seen = kinds.get(kind);
          if (seen === undefined) kinds.set(kind, { count: 1, first: m });
          else seen.count++;
        }
      }
    }
    for (const [kind, { count, first }] of kinds) lines.push('', `mismatch kind (${count}x) ${kind}:`, describeMismatch(first));
    for (const k of CASE_CLASSES) {
      for (const [item, { count, first }] of report.byClass[k].expectedExamples) lines.push('', `known bug in ${k} (${count}x), ${item}:`, describeMismatch(first));
      for (const [name, { count, first }] of report.byClass[k].differenceExamples) lines.push('', `documented difference in ${k} (${count}x), ${name}:`, describeMismatch(first));
    }
  }
  return lines.join('\n');
}
