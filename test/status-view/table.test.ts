import { describe, expect, it } from '@jest/globals';
import type { ViewRow } from '../../lib/status-view/rows.ts';
import { NO_SETS, printable, renderTable, STALE_NOTE, truncate } from '../../lib/status-view/table.ts';

const MAX_UNAVAILABLE = 'maxUnavailable 1 reached: the next pods wait until updated ones are ready (1 updated and not ready before this reconcile)';
const rolling: ViewRow = {
  name: 'log-agent',
  counts: { matchedPods: 10, updatedPods: 4, readyPods: 9, updatedReadyPods: 3 },
  staleCounts: ['updatedPods'],
  state: 'Progressing',
  why: MAX_UNAVAILABLE,
  rolling: true,
  path: 'policy',
};
const finished: ViewRow = {
  name: 'mesh-proxy',
  counts: { matchedPods: 3, updatedPods: 3, readyPods: 3, updatedReadyPods: 3 },
  staleCounts: [],
  state: 'Finished',
  why: 'finished: every matched pod runs the current sidecars',
  rolling: false,
  path: 'webhook',
};

describe('the table', () => {
  it('without a width (a pipe): one line per set, every column whole, the path that injects each set, the bar for the rollout under way, the stale count marked', () => {
    expect(renderTable([rolling, finished])).toEqual([
      'NAME         MATCHED   UPDATED   READY   UPDATED-READY   STATE         PATH      PROGRESS                      WHY',
      `log-agent    10        4*        9       3               Progressing   policy    [######++............]  30%   ${MAX_UNAVAILABLE}`,
      'mesh-proxy   3         3         3       3               Finished      webhook                                 finished: every matched pod runs the current sidecars',
      STALE_NOTE,
    ]);
  });

  it('on a wide terminal: the WHY column is cut to fit', () => {
    const lines = renderTable([rolling, finished], { width: 160 });
    expect(lines[1]).toBe('log-agent    10        4*        9       3               Progressing   policy    [######++............]  30%   maxUnavailable 1 reached: the next pods wait unt…');
    expect(lines.every((line) => line.length <= 160)).toBe(true);
  });

  it('on a narrower terminal: each set’s bar and WHY on an indented line of their own', () => {
    expect(renderTable([rolling, finished], { width: 80 })).toEqual([
      'NAME         MATCHED   UPDATED   READY   UPDATED-READY   STATE         PATH',
      'log-agent    10        4*        9       3               Progressing   policy',
      '  [######++............]  30%   maxUnavailable 1 reached: the next pods wait un…',
      'mesh-proxy   3         3         3       3               Finished      webhook',
      '  finished: every matched pod runs the current sidecars',
      '* not yet in the stored status (kubectl get sidecarsets): the reconciler has no…',
    ]);
  });

  it('never makes a line wider than the terminal, at any width', () => {
    for (let width = 1; width <= 220; width++) {
      for (const line of renderTable([rolling, finished, { ...finished, name: 'a-very-long-sidecarset-name-of-sixty-three-characters-at-most-x' }], { width })) {
        expect(Array.from(line).length).toBeLessThanOrEqual(width);
      }
    }
  });

  it('has no PROGRESS column when no rollout is under way, and no note when every count is stored', () => {
    expect(renderTable([finished])).toEqual([
      'NAME         MATCHED   UPDATED   READY   UPDATED-READY   STATE      PATH      WHY',
      'mesh-proxy   3         3         3       3               Finished   webhook   finished: every matched pod runs the current sidecars',
    ]);
  });

  it('shows a set it cannot decide with dashes and why', () => {
    const unknown: ViewRow = { name: 'scoped', staleCounts: [], state: 'Unknown', why: 'cannot decide: namespace "x" is unknown', rolling: false, path: 'webhook' };
    expect(renderTable([unknown])[1]).toBe('scoped   -         -         -       -               Unknown   webhook   cannot decide: namespace "x" is unknown');
  });

  it('says so when there is no SidecarSet', () => {
    expect(renderTable([])).toEqual([NO_SETS]);
  });

  it('prints no control character a stored object carries (an escape sequence would move the cursor)', () => {
    const hostile: ViewRow = { ...finished, why: 'cannot roll: partition "\u001b[2J\u009b31m\nx"' };
    const text = renderTable([hostile]).join('\n');
    const controls = Array.from(text).filter((c) => c !== '\n' && (c.charCodeAt(0) < 0x20 || (c.charCodeAt(0) >= 0x7f && c.charCodeAt(0) <= 0x9f)));
    expect(controls).toEqual([]);
    expect(text).toContain('cannot roll: partition "?[2J?31m?x"');
    expect(printable('a\u2028b')).toBe('a?b');
  });

  it('cuts text to a width with an ellipsis, by characters', () => {
    expect(truncate('abcdef', 6)).toBe('abcdef');
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('ééééé', 3)).toBe('éé…');
    expect(truncate('abc', 0)).toBe('');
  });
});
