import { describe, expect, it } from '@jest/globals';
import { DEFAULT_SIDECARSET_WORKERS, repairMaxEvictionsFromEnv, sidecarSetWorkersFromEnv } from '../../functions/status-sync/compose.ts';

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

describe('REPAIR_MAX_EVICTIONS_PER_PASS', () => {
  it('reads a whole number, 0 included, and refuses anything else', () => {
    expect(repairMaxEvictionsFromEnv({})).toBe(5);
    expect(repairMaxEvictionsFromEnv({ REPAIR_MAX_EVICTIONS_PER_PASS: '0' })).toBe(0);
    expect(() => repairMaxEvictionsFromEnv({ REPAIR_MAX_EVICTIONS_PER_PASS: '5 pods' })).toThrow(/must be a whole number of pods \(0 evicts none\); got "5 pods"/);
  });
});
