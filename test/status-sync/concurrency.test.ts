/** forEachLimited: every item once, started in order, never more than the limit at a time. */
import { describe, expect, it } from '@jest/globals';
import { forEachLimited } from '../../lib/status-sync/concurrency.ts';

describe('forEachLimited', () => {
  it.each([1, 3, 8, 50])('runs every item once, started in order, at most %i at a time', async (limit) => {
    const items = Array.from({ length: 20 }, (_, i) => i);
    const started: number[] = [];
    let active = 0;
    let most = 0;
    await forEachLimited(items, limit, async (item) => {
      started.push(item);
      active++;
      most = Math.max(most, active);
      // Uneven durations, so a worker that finishes early takes the next item.
      await new Promise((resolve) => setTimeout(resolve, (item * 7) % 5));
      active--;
    });
    expect(started).toEqual(items);
    expect(most).toBe(Math.min(limit, items.length));
  });

  it('treats a limit below 1 as 1 and does nothing for no items', async () => {
    let most = 0;
    let active = 0;
    await forEachLimited([1, 2, 3], 0, async () => {
      most = Math.max(most, ++active);
      await Promise.resolve();
      active--;
    });
    expect(most).toBe(1);
    await expect(forEachLimited([], 4, () => Promise.reject(new Error('never called')))).resolves.toBeUndefined();
  });

  it('rejects with the first failure', async () => {
    await expect(forEachLimited([1, 2], 2, (item) => (item === 2 ? Promise.reject(new Error('item 2 failed')) : Promise.resolve()))).rejects.toThrow('item 2 failed');
  });
});
