import { describe, expect, it } from '@jest/globals';
import { DEFAULT_SIDECARSET_WORKERS, RENAMED_VARIABLES, repairMaxEvictionsFromEnv, requeueAfterFromEnv, sidecarSetWorkersFromEnv } from '../../functions/status-sync/compose.ts';
import { deprecatedVariableWarning, type RenamedVariable } from '../../lib/adapters/renamed-variable.ts';

describe('SIDECARSET_WORKERS', () => {
  it.each<[string | undefined, number]>([
    [undefined, DEFAULT_SIDECARSET_WORKERS],
    ['', DEFAULT_SIDECARSET_WORKERS],
    ['1', 1],
    [' 8 ', 8],
    ['64', 64],
  ])('%p gives %i workers', (value, workers) => {
    expect(sidecarSetWorkersFromEnv(value === undefined ? {} : { SIDECARSET_WORKERS: value })).toBe(workers);
  });

  it.each(['0', '65', '3 workers', '2.5', '-1', '1e1'])('refuses %p, naming the variable and the range', (value) => {
    expect(() => sidecarSetWorkersFromEnv({ SIDECARSET_WORKERS: value })).toThrow(/SIDECARSET_WORKERS.*must be a whole number of workers from 1 to 64; got "/);
  });

  it("is Kruise's --sidecarset-workers default", () => {
    expect(DEFAULT_SIDECARSET_WORKERS).toBe(3);
  });
});

describe('REPAIR_MAX_EVICTIONS_PER_RESYNC', () => {
  it('reads a whole number, 0 included, and refuses anything else', () => {
    expect(repairMaxEvictionsFromEnv({})).toBe(5);
    expect(repairMaxEvictionsFromEnv({ REPAIR_MAX_EVICTIONS_PER_RESYNC: '0' })).toBe(0);
    expect(() => repairMaxEvictionsFromEnv({ REPAIR_MAX_EVICTIONS_PER_RESYNC: '5 pods' })).toThrow(/^REPAIR_MAX_EVICTIONS_PER_RESYNC must be a whole number of pods \(0 evicts none\); got "5 pods"/);
  });
});

describe('REQUEUE_AFTER_MS', () => {
  it('reads whole milliseconds of at least 100, 5 s when unset', () => {
    expect(requeueAfterFromEnv({})).toBe(5_000);
    expect(requeueAfterFromEnv({ REQUEUE_AFTER_MS: '250' })).toBe(250);
    expect(() => requeueAfterFromEnv({ REQUEUE_AFTER_MS: '99' })).toThrow(/^REQUEUE_AFTER_MS must be a whole number of milliseconds, at least 100; got "99"/);
  });
});

/** Each renamed variable, read through its parser: the new name, the old one, both, neither. */
const RENAMED = [
  { parse: requeueAfterFromEnv, renamed: RENAMED_VARIABLES.requeueAfter, fallback: 5_000, bad: '2s' },
  { parse: repairMaxEvictionsFromEnv, renamed: RENAMED_VARIABLES.repairMaxEvictions, fallback: 5, bad: 'many' },
] as const;

describe.each(RENAMED)('$renamed.name, formerly $renamed.deprecated', ({ parse, renamed, fallback, bad }) => {
  const { name, deprecated } = renamed;
  it.each<[string, Record<string, string>, number, number]>([
    ['neither set: the default, no warning', {}, fallback, 0],
    ['the new name alone: its value, no warning', { [name]: '700' }, 700, 0],
    ['the old name alone: its value, one warning', { [deprecated]: '700' }, 700, 1],
    ['the old name empty: unset', { [name]: '700', [deprecated]: '' }, 700, 0],
    ['both set to the same value: that value, no warning', { [name]: '700', [deprecated]: ' 700 ' }, 700, 0],
  ])('%s', (_case, env, value, warnings) => {
    const told: RenamedVariable[] = [];
    expect(parse(env, (r) => told.push(r))).toBe(value);
    expect(told).toEqual(Array.from({ length: warnings }, () => renamed));
  });

  it('both set to different values: a configuration error naming both', () => {
    expect(() => parse({ [name]: '700', [deprecated]: '800' }, () => undefined)).toThrow(new RegExp(`^${name} is "700" but ${deprecated}, its deprecated name, is "800": unset ${deprecated}$`));
  });

  it('a bad value under the old name is refused naming the old name, the one that was set', () => {
    expect(() => parse({ [deprecated]: bad }, () => undefined)).toThrow(new RegExp(`^${deprecated} must be`));
  });

  it("the warning names the variable to set instead", () => {
    expect(deprecatedVariableWarning(renamed)).toEqual({
      message: `${deprecated} is deprecated: set ${name} instead (the old name is read until the next minor release)`,
      fields: { variable: deprecated, replacement: name },
    });
  });
});
