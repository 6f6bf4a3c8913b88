import { describe, expect, it } from '@jest/globals';
import { deadlineFromTimeout, InvalidDurationError, parseGoDuration } from '../../lib/webhooks/timeout.ts';

describe('parseGoDuration', () => {
  it.each([
    ['10s', 10_000],
    ['2500ms', 2_500],
    ['1m', 60_000],
    ['1m0s', 60_000],
    ['1m30s', 90_000],
    ['2.5s', 2_500],
    ['.5s', 500],
    ['1h', 3_600_000],
    ['1500us', 1.5],
    ['1500µs', 1.5],
    ['1500μs', 1.5],
    ['2000000ns', 2],
    ['0', 0],
    ['+3s', 3_000],
    ['-3s', -3_000],
  ])('reads %j as %d ms', (text, ms) => {
    expect(parseGoDuration(text)).toBeCloseTo(ms, 9);
  });

  it.each(['', '10', 's', '10 s', '10sec', '1.2.3s', 'ten seconds', '10s ', '--1s', '1d'])('refuses %j', (text) => {
    expect(() => parseGoDuration(text)).toThrow(InvalidDurationError);
    expect(() => parseGoDuration(text)).toThrow(`"${text}" is not a Go duration`);
  });
});

describe('deadlineFromTimeout', () => {
  it.each([
    { timeout: '10s', deadline: 9_000, why: 'the default timeout leaves 1 s for the answer' },
    { timeout: '30s', deadline: 29_000, why: 'the largest configurable timeout' },
    { timeout: '5s', deadline: 4_000, why: 'a shorter configured timeout' },
    { timeout: '2500ms', deadline: 1_500, why: 'milliseconds' },
    { timeout: '1m0s', deadline: 29_000, why: 'more than a webhook can be given is capped at 30 s' },
    { timeout: '1.05s', deadline: 100, why: 'never less than 100 ms' },
    { timeout: '1s', deadline: 100, why: 'a 1 s timeout still gets 100 ms' },
    { timeout: '0', deadline: 100, why: 'zero still gets 100 ms' },
    { timeout: '-5s', deadline: 100, why: 'a negative value still gets 100 ms' },
    { timeout: '1500500us', deadline: 500, why: 'fractions of a millisecond are dropped' },
    { timeout: undefined, deadline: 9_000, why: 'no timeout means the API server default of 10 s' },
    { timeout: '', deadline: 9_000, why: 'an empty timeout means the default' },
    { timeout: 'soon', deadline: 9_000, why: 'an unreadable timeout means the default' },
  ])('gives $deadline ms for timeout=$timeout: $why', ({ timeout, deadline }) => {
    expect(deadlineFromTimeout(timeout)).toBe(deadline);
  });
});
