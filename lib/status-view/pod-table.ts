/**
 * The per-pod view's text: the set's line of the rollout view (its counts,
 * state, bar and why, as `npm run -s status` shows it), a blank line, then
 * one line per matched pod, like `kubectl get pods`. Given a width (the
 * terminal's), every line fits it as in the rollout view: the WHY column is
 * cut with `…`, or moves to an indented line under its pod when it would
 * keep too little (with what the kubelet says and the working container),
 * and as a last resort a line is cut, so nothing wraps.
 */
import type { PodRow, PodView } from './pod-rows.ts';
import { printable, renderTable, truncate, type TableOptions } from './table.ts';

const GAP = '   ';
const INDENT = '  ';
/** The columns kept on a pod's line in the narrow layout: POD, UPDATED, READY, STATE. */
const FIXED = 4;
/** The least the WHY column keeps in the one-line layout. */
const WHY_ROOM = 30;

/** What the view says instead of a table when the set is not there (it may come back while --watch runs). */
export const setNotFound = (name: string): string => `SidecarSet ${JSON.stringify(name)} not found.`;
export const noPodsMatch = (name: string): string => `No pods match SidecarSet ${JSON.stringify(name)}.`;

const yesNo = (value: boolean): string => (value ? 'yes' : 'no');
const listCell = (items: readonly string[]): string => (items.length === 0 ? '-' : printable(items.join(', ')));
/** Characters, not UTF-16 units. */
const length = (text: string): number => Array.from(text).length;

/** The pod table's lines, without the set's summary. */
export function renderPodRows(rows: readonly PodRow[], hot: boolean, width: number | undefined): string[] {
  const fit = (text: string): string => (width === undefined ? text : truncate(text, width));
  const columns: string[][] = [
    ['POD', ...rows.map((r) => printable(r.pod))],
    ['UPDATED', ...rows.map((r) => yesNo(r.updated))],
    ['READY', ...rows.map((r) => yesNo(r.ready))],
    ['STATE', ...rows.map((r) => r.state)],
    ['KUBELET', ...rows.map((r) => listCell(r.waiting))],
    ...(hot ? [['WORKING', ...rows.map((r) => listCell(r.working))]] : []),
  ];
  const widths = columns.map((column) => Math.max(...column.map(length)));
  const beforeWhy = widths.reduce((a, b) => a + b, 0) + GAP.length * widths.length;
  const cells = (i: number): string => columns.map((column, c) => (column[i] ?? '').padEnd(widths[c] ?? 0)).join(GAP);
  const oneLine = width === undefined || width - beforeWhy >= WHY_ROOM;
  const whys = rows.map((r) => printable(r.why));
  if (oneLine) {
    const cut = (why: string): string => (width === undefined ? why : truncate(why, width - beforeWhy));
    return [`${cells(0)}${GAP}WHY`.trimEnd(), ...rows.map((_, i) => fit(`${cells(i + 1)}${GAP}${cut(whys[i] ?? '')}`.trimEnd()))];
  }
  // Narrow: POD to STATE on the pod's line; what the kubelet says, the working container and WHY on one under it.
  const narrow = columns.slice(0, FIXED);
  const narrowWidths = widths.slice(0, FIXED);
  const head = (i: number): string => narrow.map((column, c) => (column[i] ?? '').padEnd(narrowWidths[c] ?? 0)).join(GAP).trimEnd();
  const lines = [fit(head(0))];
  rows.forEach((row, i) => {
    lines.push(fit(head(i + 1)));
    const detail = [row.waiting.length === 0 ? '' : listCell(row.waiting), hot ? listCell(row.working) : '', whys[i] ?? ''].filter((part) => part !== '').join(GAP);
    if (detail !== '') lines.push(fit(`${INDENT}${detail}`));
  });
  return lines;
}

/** The whole per-pod view, fitted to `options.width` when given. */
export function renderPodView(view: PodView, options: TableOptions = {}): string[] {
  const fit = (text: string): string => (options.width === undefined ? text : truncate(text, options.width));
  if (view.summary === undefined) return [fit(setNotFound(view.set))];
  const summary = renderTable([view.summary], options);
  if (view.problem !== undefined) return summary;
  const pods = view.rows.length === 0 ? [fit(noPodsMatch(view.set))] : renderPodRows(view.rows, view.hot, options.width);
  return [...summary, '', ...pods];
}
