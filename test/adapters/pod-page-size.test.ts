/**
 * The page size of pod lists (lib/adapters/pod-page-size.ts): chosen from
 * the bytes per pod of the last page so a page lands near the target, never
 * above 500 nor below 1, and shrunk to an eighth after a page passed the cap.
 * What a resync holds of a list at once is then bounded by bytes, whatever the
 * pods weigh.
 */
import { describe, expect, it } from '@jest/globals';
import { MAX_POD_PAGE_SIZE, nextPageSize, PAGE_MAX_BYTES, PAGE_TARGET_BYTES, shrunkPageSize } from '../../lib/adapters/pod-page-size.ts';

const KB = 1024;
const MB = 1024 * KB;

describe('nextPageSize', () => {
  it.each([
    ['pods of 4 KB (the usual): the most the API server recommends', 2 * MB, 500, MAX_POD_PAGE_SIZE],
    ['pods of 1 MB: four to a page', 8 * MB, 8, 4],
    ['pods of 1.5 MB (etcd refuses more): two', 3 * MB, 2, 2],
    ['pods of 3 MB: still one at a time, never none', 3 * MB, 1, 1],
    ['pods of 40 KB: about a hundred', 40 * KB * 100, 100, 102],
    ['an empty page says nothing: back to the most', 0, 0, MAX_POD_PAGE_SIZE],
  ])('%s', (_name, bytes, pods, expected) => {
    expect(nextPageSize(bytes, pods)).toBe(expected);
  });

  it('never plans a page above the target, so a page of somewhat larger pods still fits the cap', () => {
    for (const perPod of [1 * KB, 10 * KB, 100 * KB, 700 * KB, 1 * MB, 1.4 * MB]) {
      const size = nextPageSize(perPod * 10, 10);
      expect(size * perPod).toBeLessThanOrEqual(Math.max(PAGE_TARGET_BYTES, perPod));
      // Even pods four times larger than the last page's fit under the cap.
      expect(size * perPod * 4).toBeLessThanOrEqual(Math.max(PAGE_MAX_BYTES, perPod * 4));
    }
  });

  it('keeps a caller\'s smaller maximum', () => {
    expect(nextPageSize(10 * KB, 10, 50)).toBe(50);
  });
});

describe('shrunkPageSize', () => {
  it.each([
    [500, 62],
    [62, 7],
    [7, 1],
    [2, 1],
  ])('%i pods passed the cap: ask again for %i', (size, expected) => {
    expect(shrunkPageSize(size)).toBe(expected);
  });

  it('gives up when a single pod passed the cap (the caller says so)', () => {
    expect(shrunkPageSize(1)).toBeUndefined();
  });
});
