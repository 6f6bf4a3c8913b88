/**
 * How the rollout view reaches the screen. On a terminal each table
 * replaces the previous one in place (the cursor moves up over it, every
 * line is rewritten and cleared to its end, anything below is cleared), only
 * when its text changed, and fitted to the terminal: never wider than it
 * (a wrapped line would break the count of lines to move up over) nor
 * taller. Anywhere else (a pipe, a file) each table that differs from the
 * last is appended after a blank line, as `kubectl get -w` appends.
 */
import { renderTable, truncate, type TableOptions } from './table.ts';
import type { ViewRow } from './rows.ts';

/** Where the view writes: process.stdout, or a test's recorder. */
export interface ViewOutput {
  write(text: string): void;
  isTTY: boolean;
  /** The terminal's size, when it is one. */
  columns?: number;
  rows?: number;
}

export interface Display<Rows = readonly ViewRow[]> {
  /** Shows the rows (nothing is written when the text is what is shown). */
  show(rows: Rows): void;
  /** The terminal changed size: draws the last rows again to fit it. */
  resized(): void;
}

const ESC = '\u001b[';
/** Cursor up `n` lines, to their first column. */
export const cursorUp = (n: number): string => `${ESC}${n}A\r`;
export const CLEAR_LINE_END = `${ESC}K`;
export const CLEAR_SCREEN_END = `${ESC}J`;
export const CLEAR_SCREEN = `${ESC}H${ESC}2J`;

/** At most `rows - 1` lines (the last row holds the cursor), the cut ones counted on the last. */
export function fitHeight(lines: readonly string[], rows: number | undefined, width: number | undefined): string[] {
  if (rows === undefined || rows < 2 || lines.length <= rows - 1) return [...lines];
  const keep = Math.max(1, rows - 2);
  const note = `… ${lines.length - keep} more line(s): the terminal is too short`;
  return [...lines.slice(0, keep), width === undefined ? note : truncate(note, width)];
}

/** What to write to replace a frame of `previousHeight` lines, drawn from the cursor's line, by `lines`. */
export function redrawInPlace(previousHeight: number, lines: readonly string[]): string {
  return `${previousHeight > 0 ? cursorUp(previousHeight) : ''}${lines.map((line) => `${line}${CLEAR_LINE_END}\n`).join('')}${CLEAR_SCREEN_END}`;
}

/**
 * @param live whether tables will follow (--watch): on a terminal they then
 *   replace each other in place; a single table is printed plainly (fitted to
 *   the width, not the height: the terminal scrolls).
 * @param render the rows' lines for a width (default: the rollout view's table).
 */
export function viewDisplay<Rows = readonly ViewRow[]>(
  out: ViewOutput,
  live = true,
  render: (rows: Rows, options: TableOptions) => string[] = renderTable as unknown as (rows: Rows, options: TableOptions) => string[],
): Display<Rows> {
  let lastRows: Rows | undefined;
  let shown: string | undefined;
  let height = 0;
  let drawnColumns: number | undefined;

  /**
   * The table for the terminal as it is now. One column is left free: a line
   * that fills the last column leaves the cursor waiting to wrap, and
   * clearing to the line's end there erases its last character.
   */
  const frame = (rows: Rows): string[] => {
    const width = out.isTTY && out.columns !== undefined && out.columns > 1 ? out.columns - 1 : undefined;
    const table = render(rows, { width });
    return live && out.isTTY ? fitHeight(table, out.rows, width) : table;
  };

  const draw = (rows: Rows, force: boolean): void => {
    lastRows = rows;
    const lines = frame(rows);
    const text = lines.join('\n');
    if (!force && text === shown) return;
    if (!out.isTTY || !live) out.write(`${shown === undefined ? '' : '\n'}${text}\n`);
    else if (force && drawnColumns !== undefined && out.columns !== undefined && out.columns < drawnColumns) {
      // A narrower terminal may have re-wrapped what was drawn, so the lines to move up over are unknown: start afresh.
      out.write(`${CLEAR_SCREEN}${redrawInPlace(0, lines)}`);
    } else out.write(redrawInPlace(height, lines));
    shown = text;
    height = lines.length;
    drawnColumns = out.columns;
  };

  return {
    show: (rows) => { draw(rows, false); },
    resized: () => {
      if (lastRows !== undefined && out.isTTY && live) draw(lastRows, true);
    },
  };
}
