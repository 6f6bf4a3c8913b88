import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { timeOf } from '../../lib/sidecarset/pod-annotations.ts';

/**
 * timeOf reads the API server's `YYYY-MM-DDTHH:MM:SSZ` by arithmetic (the
 * plan reads two times of every pod) and leaves every other text to
 * Date.parse: its value must be Date.parse's for every text, 0 where that
 * is NaN. Fields run past their ranges (month 13, day 32, hour 24, second
 * 60) and days past a month's end, where Date.parse rolls over or refuses.
 */
const expected = (s: string): number => {
  const t = Date.parse(s);
  return Number.isNaN(t) ? 0 : t;
};
const pad = (n: number, width: number): string => String(n).padStart(width, '0');

describe('timeOf', () => {
  it("is Date.parse's value for every second-precision UTC time, valid or not", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 13 }),
        fc.integer({ min: 0, max: 32 }),
        fc.integer({ min: 0, max: 25 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 60 }),
        (year, month, day, hour, minute, second) => {
          const s = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}Z`;
          expect(timeOf(s)).toBe(expected(s));
        },
      ),
      { numRuns: 20_000, seed: 23 },
    );
  });

  it.each([
    '2026-02-29T00:00:00Z',
    '2024-02-29T12:34:56Z',
    '2026-02-31T23:59:59Z',
    '2026-04-31T00:00:00Z',
    '2000-02-29T00:00:00Z',
    '1900-03-01T00:00:00Z',
    '1000-01-01T00:00:00Z',
    '0999-12-31T23:59:59Z',
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '1969-12-31T23:59:59Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01t00:00:00z',
    '2026-01-01 00:00:00Z',
    '2026-01-01T00:00:00.5Z',
    '2026-01-01T00:00:00+02:00',
    '2026-1-01T00:00:00Z0',
    '+02026-01-01T00:00:0',
    '2026-01-01T0a:00:00Z',
    '２０２６-01-01T00:00:00Z',
    'garbage',
    '',
  ])('reads %j as Date.parse does', (s) => {
    expect(timeOf(s)).toBe(expected(s));
  });

  it('is 0 for what is not a string', () => {
    for (const value of [undefined, null, 0, 1767225600000, {}, ['2026-01-01T00:00:00Z']]) expect(timeOf(value)).toBe(0);
  });
});
