import { describe, expect, it } from '@jest/globals';
import { alternate, median, quantile, ratioOfMedians, summarize } from '../../testkit/bench/stats.ts';

describe('benchmark statistics', () => {
  it('takes the middle value of an odd count and the mean of the middle two of an even count', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('interpolates quartiles between order statistics', () => {
    expect(quantile([1, 2, 3, 4, 5], 0.25)).toBe(2);
    expect(quantile([10, 20], 0.75)).toBe(17.5);
  });

  it('summarizes without reordering the caller\'s values', () => {
    const values = [9, 1, 5, 3, 7];
    expect(summarize(values)).toEqual({ n: 5, median: 5, min: 1, max: 9, q1: 3, q3: 7 });
    expect(values).toEqual([9, 1, 5, 3, 7]);
  });

  it('refuses to summarize nothing', () => {
    expect(() => summarize([])).toThrow(RangeError);
  });

  it('states ratios as measured median over floor median', () => {
    expect(ratioOfMedians(summarize([10, 30, 20]), summarize([40, 40, 80]))).toBe(0.5);
  });

  it('alternates which of measured and floor runs first in each round', async () => {
    const order: string[] = [];
    const result = await alternate(
      3,
      () => Promise.resolve(order.push('m')),
      () => Promise.resolve(order.push('f')),
    );
    expect(order).toEqual(['m', 'f', 'f', 'm', 'm', 'f']);
    expect(result.measured).toHaveLength(3);
    expect(result.floor).toHaveLength(3);
  });
});
