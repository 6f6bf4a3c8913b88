/**
 * The rollout view's table text, like `kubectl get`: a header, one line per
 * SidecarSet, columns three spaces apart. Given a width (the terminal's),
 * every line fits it: the WHY column is cut with `…` (or moves to a line of
 * its own under the set when it would keep too little), and as a last
 * resort a line is cut, so nothing ever wraps.
 */
import { BAR_DECORATION, progressBar } from './bar.ts';
import type { CountField, ViewRow } from './rows.ts';

export interface TableOptions {
  /** The columns to fit, e.g. process.stdout.columns; undefined: no limit (a pipe or a file). */
  width?: number;
}

/** The mark after a count that differs from the stored status, and the line that explains it. */
export const STALE_MARK = '*';
export const STALE_NOTE = `${STALE_MARK} not yet in the stored status (kubectl get sidecarsets): the reconciler has not written it`;
export const NO_SETS = 'No SidecarSets found.';

const GAP = '   ';
/** The second line of a set, in the narrow layout. */
const INDENT = '  ';
const BAR_CELLS = 20;
/** The least the WHY column keeps in the one-line layout. */
const WHY_ROOM = 40;
const ELLIPSIS = '…';

const COUNT_COLUMNS: readonly [string, CountField][] = [
  ['MATCHED', 'matchedPods'],
  ['UPDATED', 'updatedPods'],
  ['READY', 'readyPods'],
  ['UPDATED-READY', 'updatedReadyPods'],
];

/**
 * Text safe to print on a terminal: control characters (an escape sequence
 * in a set stored before validation, quoted in a message) become `?`, so a
 * cell can neither move the cursor nor break a line.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '?');
}

/** `text` in at most `width` characters, ending in `…` when cut. */
export function truncate(text: string, width: number): string {
  const chars = Array.from(text);
  if (chars.length <= width) return text;
  if (width <= 0) return '';
  return `${chars.slice(0, width - 1).join('')}${ELLIPSIS}`;
}

function countCell(row: ViewRow, field: CountField): string {
  if (row.counts === undefined) return '-';
  return `${row.counts[field]}${row.staleCounts.includes(field) ? STALE_MARK : ''}`;
}

/** Characters, not UTF-16 units: a cut never splits one. */
const length = (text: string): number => Array.from(text).length;

/**
 * The table's lines (no line breaks in them). One line per set when the
 * width leaves the WHY column {@link WHY_ROOM} characters (or there is no
 * width); otherwise each set's line ends at STATE and a second, indented
 * line holds its progress bar and WHY, so that narrower terminals still
 * read why a rollout waits.
 */
export function renderTable(rows: readonly ViewRow[], options: TableOptions = {}): string[] {
  const width = options.width;
  const fit = (text: string): string => (width === undefined ? text : truncate(text, width));
  if (rows.length === 0) return [fit(NO_SETS)];
  const fixedColumns: string[][] = [
    ['NAME', ...rows.map((r) => printable(r.name))],
    ...COUNT_COLUMNS.map(([header, field]) => [header, ...rows.map((r) => countCell(r, field))]),
    ['STATE', ...rows.map((r) => r.state)],
    // Which path injects the set (policy or webhook), as `explain` names it for a pod.
    ['PATH', ...rows.map((r) => r.path)],
  ];
  const widths = fixedColumns.map((column) => Math.max(...column.map(length)));
  const fixed = widths.reduce((a, b) => a + b, 0) + GAP.length * (widths.length - 1);
  const withBar = rows.some(hasBar);
  const barWidth = withBar ? BAR_CELLS + BAR_DECORATION : 0;
  const beforeWhy = fixed + GAP.length + (withBar ? barWidth + GAP.length : 0);
  const oneLine = width === undefined || width - beforeWhy >= WHY_ROOM;

  const cellsOf = (i: number): string[] => fixedColumns.map((column, c) => (column[i] ?? '').padEnd(widths[c] ?? 0));
  const lines: string[] = [];
  if (oneLine) {
    const whyWidth = width === undefined ? undefined : width - beforeWhy;
    const line = (i: number, progress: string, why: string): string => {
      const parts = cellsOf(i);
      if (withBar) parts.push(progress.padEnd(barWidth));
      parts.push(whyWidth === undefined ? why : truncate(why, whyWidth));
      return parts.join(GAP).trimEnd();
    };
    lines.push(line(0, 'PROGRESS', 'WHY'));
    rows.forEach((row, i) => lines.push(line(i + 1, barOf(row), printable(row.why))));
  } else {
    lines.push(fit(cellsOf(0).join(GAP).trimEnd()));
    rows.forEach((row, i) => {
      lines.push(fit(cellsOf(i + 1).join(GAP).trimEnd()));
      const detail = [barOf(row), printable(row.why)].filter((part) => part !== '').join(GAP);
      if (detail !== '') lines.push(fit(`${INDENT}${detail}`));
    });
  }
  if (rows.some((r) => r.staleCounts.length > 0)) lines.push(fit(STALE_NOTE));
  return lines;
}

function hasBar(row: ViewRow): row is ViewRow & { counts: NonNullable<ViewRow['counts']> } {
  return row.rolling && row.counts !== undefined;
}

function barOf(row: ViewRow): string {
  return hasBar(row) ? progressBar(row.counts, BAR_CELLS) : '';
}
