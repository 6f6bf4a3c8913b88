/** Tables for the terminal (aligned columns) and for Markdown. */

export interface Table {
  headers: string[];
  rows: string[][];
}

/** Characters as a terminal counts them (code points: '–' and '×' are one column, not one UTF-16 unit each). */
function columns(text: string): number {
  return Array.from(text).length;
}

/** Columns padded to their widest cell, a rule under the header. */
export function renderTextTable(table: Table): string {
  const width = (i: number) => Math.max(...[table.headers, ...table.rows].map((row) => columns(row[i] ?? '')));
  const widths = table.headers.map((_, i) => width(i));
  const line = (row: readonly string[]) =>
    widths
      .map((w, i) => {
        const cell = row[i] ?? '';
        return cell + ' '.repeat(w - columns(cell));
      })
      .join('  ')
      .trimEnd();
  return [line(table.headers), widths.map((w) => '-'.repeat(w)).join('  '), ...table.rows.map(line)].join('\n');
}

/** A cell's text made safe inside a Markdown table. */
function markdownCell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function renderMarkdownTable(table: Table): string {
  const row = (cells: readonly string[]) => `| ${table.headers.map((_, i) => markdownCell(cells[i] ?? '')).join(' | ')} |`;
  return [row(table.headers), `|${table.headers.map(() => '---').join('|')}|`, ...table.rows.map(row)].join('\n');
}
