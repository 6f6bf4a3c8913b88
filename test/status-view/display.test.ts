import { describe, expect, it } from '@jest/globals';
import { CLEAR_LINE_END, CLEAR_SCREEN, CLEAR_SCREEN_END, cursorUp, fitHeight, redrawInPlace, viewDisplay, type ViewOutput } from '../../lib/status-view/display.ts';
import type { ViewRow } from '../../lib/status-view/rows.ts';
import { renderTable } from '../../lib/status-view/table.ts';

const row = (name: string, updated: number): ViewRow => ({
  name,
  counts: { matchedPods: 4, updatedPods: updated, readyPods: 4, updatedReadyPods: updated },
  staleCounts: [],
  state: updated === 4 ? 'Finished' : 'Progressing',
  why: updated === 4 ? 'finished: every matched pod runs the current sidecars' : '1 pod(s) due for update',
  rolling: updated !== 4,
  path: 'policy',
});

function recorder(tty: Partial<ViewOutput> & { isTTY: boolean }): ViewOutput & { writes: string[] } {
  const writes: string[] = [];
  return { ...tty, writes, write: (text) => writes.push(text) };
}

describe('on a terminal', () => {
  it('draws the first table, then replaces it in place: up over its lines, each line cleared to its end, the rest of the screen cleared', () => {
    const out = recorder({ isTTY: true, columns: 200, rows: 50 });
    const display = viewDisplay(out);
    display.show([row('a', 1)]);
    display.show([row('a', 2), row('b', 4)]);
    const first = renderTable([row('a', 1)], { width: 199 });
    const second = renderTable([row('a', 2), row('b', 4)], { width: 199 });
    expect(out.writes).toEqual([redrawInPlace(0, first), redrawInPlace(first.length, second)]);
    expect(out.writes[1]).toBe(`${cursorUp(2)}${second.map((l) => `${l}${CLEAR_LINE_END}\n`).join('')}${CLEAR_SCREEN_END}`);
  });

  it('writes nothing when the table did not change', () => {
    const out = recorder({ isTTY: true, columns: 200, rows: 50 });
    const display = viewDisplay(out);
    display.show([row('a', 1)]);
    display.show([row('a', 1)]);
    expect(out.writes).toHaveLength(1);
  });

  it('leaves the last column free, so that clearing a full line’s end never erases its last character', () => {
    const out = recorder({ isTTY: true, columns: 60, rows: 50 });
    viewDisplay(out).show([row('a-long-name-that-fills-the-line-and-more', 1)]);
    for (const line of (out.writes[0] ?? '').split('\n')) expect(line.replaceAll(CLEAR_LINE_END, '').replaceAll(CLEAR_SCREEN_END, '').length).toBeLessThanOrEqual(59);
  });

  it('fits the terminal’s height, saying how many lines it left out', () => {
    expect(fitHeight(['1', '2', '3', '4', '5'], 4, 80)).toEqual(['1', '2', '… 3 more line(s): the terminal is too short']);
    expect(fitHeight(['1', '2', '3'], 4, 80)).toEqual(['1', '2', '3']);
    const out = recorder({ isTTY: true, columns: 200, rows: 5 });
    viewDisplay(out).show(['a', 'b', 'c', 'd', 'e', 'f'].map((n) => row(n, 4)));
    expect((out.writes[0] ?? '').split('\n').filter((l) => l !== CLEAR_SCREEN_END)).toHaveLength(4);
  });

  it('redraws after a resize: in place when wider, from a cleared screen when narrower (the terminal may have re-wrapped the old lines)', () => {
    const out = recorder({ isTTY: true, columns: 200, rows: 50 });
    const display = viewDisplay(out);
    display.show([row('a', 1)]);
    out.columns = 220;
    display.resized();
    expect(out.writes[1]?.startsWith(cursorUp(2))).toBe(true);
    out.columns = 70;
    display.resized();
    expect(out.writes[2]?.startsWith(CLEAR_SCREEN)).toBe(true);
    expect(out.writes[2]).toContain('  [#####...............]  25%');
  });
});

describe('a single table (no --watch)', () => {
  it('is printed plainly on a terminal, fitted to its width, not its height', () => {
    const out = recorder({ isTTY: true, columns: 80, rows: 3 });
    viewDisplay(out, false).show([row('a', 1), row('b', 4)]);
    expect(out.writes).toEqual([`${renderTable([row('a', 1), row('b', 4)], { width: 79 }).join('\n')}\n`]);
    expect(out.writes.join('')).not.toContain('\u001b');
  });
});

describe('not on a terminal (a pipe, a file)', () => {
  it('appends each table that differs, after a blank line, never moving the cursor or cutting a line', () => {
    const out = recorder({ isTTY: false });
    const display = viewDisplay(out);
    display.show([row('a', 1)]);
    display.show([row('a', 1)]);
    display.show([row('a', 4)]);
    display.resized();
    expect(out.writes).toEqual([`${renderTable([row('a', 1)]).join('\n')}\n`, `\n${renderTable([row('a', 4)]).join('\n')}\n`]);
    expect(out.writes.join('')).not.toContain('\u001b');
  });
});
