/**
 * What each benchmark section hands back, and the two renderings of a run:
 * the table printed to the terminal and docs/BENCHMARKS.md.
 */
import type { MachineInfo } from './machine.ts';
import { renderMarkdownTable, renderTextTable, type Table } from './table.ts';

export const SECTIONS = ['admission', 'kruise', 'http', 'cold-start', 'reconciler', 'resync-100k', 'freshness', 'reads', 'rollout', 'pod-triggers', 'controller', 'injection', 'sets-at-once'] as const;
export type SectionId = (typeof SECTIONS)[number];
/** Sections a run leaves out unless `--only` names them: they take many minutes (100,000 pods to create). */
export const OPT_IN_SECTIONS: readonly SectionId[] = ['resync-100k'];

/** One target of the issue, with the figure it is judged on. */
export interface Verdict {
  target: string;
  figure: string;
  met: boolean;
  /** Not measured here (a tool it needs is missing): shown as SKIPPED, and a miss under --strict. */
  skipped?: boolean;
}

export interface SectionReport {
  id: SectionId;
  title: string;
  /** What was measured and what the floor is, one paragraph per entry. */
  method: string[];
  table: Table;
  verdicts: Verdict[];
  /** Findings: why a target was missed, what would fix it, caveats of this run. */
  notes: string[];
}

export interface RunInfo {
  command: string;
  machine: MachineInfo;
  date: Date;
  quick: boolean;
  /** Repetitions and durations used, said in one line. */
  settings: string;
}

function verdictTable(verdicts: readonly Verdict[]): Table {
  return { headers: ['target', 'figure', 'result'], rows: verdicts.map((v) => [v.target, v.figure, v.skipped === true ? 'SKIPPED' : v.met ? 'PASS' : 'MISS']) };
}

/** The targets a run missed, each named with its section: what `--strict` fails on. */
export function missedTargets(sections: readonly SectionReport[]): string[] {
  return sections.flatMap((s) => s.verdicts.filter((v) => !v.met).map((v) => `${s.title}: ${v.target} (${v.figure})`));
}

/** The terminal rendering: every section's table and its verdicts. */
export function renderConsole(sections: readonly SectionReport[]): string {
  const parts: string[] = [];
  for (const section of sections) {
    parts.push(`\n== ${section.title} ==\n`, renderTextTable(section.table), '');
    if (section.verdicts.length > 0) parts.push(renderTextTable(verdictTable(section.verdicts)), '');
    for (const note of section.notes) parts.push(`note: ${note}`);
  }
  return `${parts.join('\n')}\n`;
}

/** docs/BENCHMARKS.md: how the run was made, on what, then each section. */
export function renderDocument(run: RunInfo, sections: readonly SectionReport[], preface: readonly string[] = []): string {
  const m = run.machine;
  const lines = [
    '# Benchmarks',
    '',
    ...preface.flatMap((p) => [p, '']),
    `Written by \`${run.command}\` on ${run.date.toISOString().slice(0, 10)} (${run.date.toISOString()}).`,
    '',
    `- Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB memory, ${m.os}`,
    `- Node: ${m.node}`,
    `- Settings: ${run.settings}${run.quick ? ' (**--quick**: fewer repetitions and shorter runs, a smoke test; re-run without it for the figures to quote)' : ''}`,
    '',
    'Every figure is the median of repeated runs with the spread (min–max) in brackets. The measured',
    'runs and their floor runs alternate, so drift on a shared machine hits both; the ratio is of the medians.',
    '',
  ];
  if (sections.some((s) => s.verdicts.length > 0)) {
    lines.push('## Targets', '', renderMarkdownTable(verdictTable(sections.flatMap((s) => s.verdicts))), '');
  }
  for (const section of sections) {
    lines.push(`## ${section.title}`, '', ...section.method.flatMap((p) => [p, '']), renderMarkdownTable(section.table), '');
    if (section.notes.length > 0) lines.push(...section.notes.map((n) => `- ${n}`), '');
  }
  return lines.join('\n');
}
