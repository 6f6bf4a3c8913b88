/** docs/RELIABILITY.md and the terminal summary, from the cases' results. */
import type { MachineInfo } from '../bench/machine.ts';
import { renderMarkdownTable, renderTextTable, type Table } from '../bench/table.ts';
import type { CaseOutput, SectionId } from './cases.ts';
import { APPENDIX, CASE_NOTES } from './hand-notes.ts';

export interface CaseResult {
  section: SectionId;
  name: string;
  claim: string;
  passed: boolean;
  durationSeconds: number;
  output?: CaseOutput;
  failure?: string;
}

export interface ReliabilityRun {
  command: string;
  date: Date;
  commit: string;
  machine: MachineInfo;
  quick: boolean;
  seed: number;
  totalSeconds: number;
}

const SECTION_TITLES: Record<SectionId, string> = {
  'bad-input': 'Bad input',
  adversarial: 'Adversarial input',
  faults: 'Faults (against the real control plane)',
  load: 'Load',
};

/** What a reader needs before a section's figures, where the figures alone would mislead. */
const SECTION_NOTES: Partial<Record<SectionId, string>> = {
  adversarial:
    'Inputs built to make a review\'s work grow faster than its body. The figure to read is the ratio: a step whose cost grows with the square of its input shows as a ratio that grows from 1 to 6 MB. One input stays above the 20-times target while growing linearly: long strings made of characters Go escapes (`<`, `>`, `&`) in every hashed field. JSON.parse copies such a string at memory speed, while defaulting must write each character as a six-byte escape for the Go encoding both hashes are computed over and digest the result twice; the time is bounded by that output, far inside the deadline.',
};

const cell = (value: unknown): string => (typeof value === 'number' ? value.toLocaleString('en-US') : String(value));

/** Figures as a two-column table; rows (an array) as a table with their keys as headers. */
export function outputTable(output: CaseOutput): Table {
  if (!Array.isArray(output)) return { headers: ['figure', 'value'], rows: Object.entries(output).map(([k, v]) => [k, cell(v)]) };
  const headers = [...new Set(output.flatMap((row) => Object.keys(row)))];
  return { headers, rows: output.map((row) => headers.map((h) => (row[h] === undefined ? '' : cell(row[h])))) };
}

function summaryTable(results: readonly CaseResult[]): Table {
  return {
    headers: ['section', 'case', 'result', 'seconds'],
    rows: results.map((r) => [SECTION_TITLES[r.section], r.name, r.passed ? 'PASS' : 'FAIL', r.durationSeconds.toFixed(0)]),
  };
}

export function renderConsole(results: readonly CaseResult[]): string {
  const failures = results.filter((r) => !r.passed).map((r) => `\nFAIL ${r.name}:\n${r.failure ?? ''}`);
  return `${renderTextTable(summaryTable(results))}\n${failures.join('\n')}\n`;
}

export function renderDocument(run: ReliabilityRun, results: readonly CaseResult[]): string {
  const passed = results.filter((r) => r.passed).length;
  const lines = [
    '# Reliability',
    '',
    `Produced by \`${run.command}\` (rerun it to refresh this file; \`--quick\` runs a short version, \`--only\` one section).`,
    `Every case here also runs, shorter and seeded, in \`npm test\`.`,
    '',
    `- Date: ${run.date.toISOString()}`,
    `- Commit: ${run.commit}`,
    `- Machine: ${run.machine.cpu}, ${run.machine.cores} cores, ${run.machine.memoryGiB} GiB, ${run.machine.os}, Node ${run.machine.node}`,
    `- Fuzz seed: ${run.seed}${run.quick ? ' · quick run (short durations: not the document\'s full figures)' : ''}`,
    `- Result: ${passed} of ${results.length} cases passed in ${Math.round(run.totalSeconds)} s`,
    '',
    renderMarkdownTable(summaryTable(results)),
  ];
  for (const section of Object.keys(SECTION_TITLES) as SectionId[]) {
    const cases = results.filter((r) => r.section === section);
    if (cases.length === 0) continue;
    lines.push('', `## ${SECTION_TITLES[section]}`);
    const note = SECTION_NOTES[section];
    if (note !== undefined) lines.push('', note);
    for (const result of cases) {
      lines.push('', `### ${result.name}: ${result.passed ? 'PASS' : 'FAIL'}`, '', result.claim, '');
      const note = CASE_NOTES[result.name];
      if (note !== undefined) lines.push(note, '');
      if (result.output !== undefined) lines.push(renderMarkdownTable(outputTable(result.output)));
      if (result.failure !== undefined) lines.push('', '```', result.failure.slice(0, 4000), '```');
    }
  }
  // Measured or written outside the cases (hand-notes.ts): kept by every rerun.
  for (const section of APPENDIX) lines.push('', section);
  return `${lines.join('\n')}\n`;
}
