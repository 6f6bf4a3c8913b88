import { describe, expect, it } from '@jest/globals';
import { BAR_DECORATION, progressBar } from '../../lib/status-view/bar.ts';

const bar = (matchedPods: number, updatedPods: number, updatedReadyPods: number, width = 10) => progressBar({ matchedPods, updatedPods, updatedReadyPods }, width);

describe('the progress bar', () => {
  it.each<[string, number, number, number, string]>([
    ['nothing updated', 10, 0, 0, '[..........]   0%'],
    ['three updated and ready, one restarting', 10, 4, 3, '[###+......]  30%'],
    ['every pod updated, one restarting', 10, 10, 9, '[#########+]  90%'],
    ['done', 10, 10, 10, '[##########] 100%'],
    ['one of a thousand still shows', 1000, 1, 1, '[#.........]   0%'],
    ['999 of a thousand is not full', 1000, 999, 999, '[#########.]  99%'],
    ['updated and not ready shows apart from ready', 3, 2, 0, '[++++++....]   0%'],
    ['no pod: nothing to do', 0, 0, 0, '[..........] 100%'],
  ])('%s', (_d, matched, updated, ready, expected) => {
    expect(bar(matched, updated, ready)).toBe(expected);
  });

  it('is its cells plus the decoration wide, whatever the counts', () => {
    for (const width of [2, 8, 20]) for (const [m, u, r] of [[7, 3, 1], [1, 1, 1], [100, 0, 0]] as const) expect(bar(m, u, r, width)).toHaveLength(width + BAR_DECORATION);
  });
});
