import { describe, expect, it } from '@jest/globals';
import { assertFlat, flatness, sampleMemory, type MemorySample } from '../../testkit/load/memory.ts';

const LIMITS = { maxHeapGrowthMiB: 4, maxRssGrowthMiB: 1024 };

describe('the memory flatness check', () => {
  it('catches a process that keeps 2 KiB per call', () => {
    const kept: number[][] = [];
    const samples: MemorySample[] = [];
    for (let call = 1; call <= 10_000; call++) {
      // 256 small integers: 2 KiB of elements on the V8 heap.
      kept.push(Array.from({ length: 256 }, (_, i) => i + call));
      if (call % 1000 === 0) samples.push(sampleMemory(call));
    }
    const result = flatness(samples);
    expect(result.heapSlopeBytes).toBeGreaterThan(1500);
    expect(() => {
      assertFlat('a leaky loop', result, LIMITS);
    }).toThrow(/a leaky loop: memory is not flat: the reachable heap grew/);
    expect(kept).toHaveLength(10_000);
  });

  it('passes a process that lets go of what each call made', () => {
    const samples: MemorySample[] = [];
    let made = 0;
    for (let call = 1; call <= 10_000; call++) {
      made += Array.from({ length: 256 }, (_, i) => i + call).length;
      if (call % 1000 === 0) samples.push(sampleMemory(call));
    }
    expect(made).toBe(2_560_000);
    expect(() => {
      assertFlat('a clean loop', flatness(samples), LIMITS);
    }).not.toThrow();
  });

  it('counts listeners left on the process', () => {
    const before = sampleMemory(0);
    const listener = () => undefined;
    process.on('SIGUSR2', listener);
    try {
      const after = sampleMemory(1);
      const growth = flatness([before, before, after]);
      expect(growth.processListenersGrowth).toBe(1);
      expect(() => {
        assertFlat('a listener per call', growth, LIMITS);
      }).toThrow(/1 more process listeners/);
    } finally {
      process.off('SIGUSR2', listener);
    }
  });

  it('allows a pooled connection to come and go, but not a handle kept per call', () => {
    const base = sampleMemory(0);
    const at = (handles: number, n: number): MemorySample => ({ ...base, at: n, activeResources: base.activeResources + handles });
    expect(() => {
      assertFlat('a pool', flatness([at(0, 1), at(2, 2), at(1, 3)]), LIMITS);
    }).not.toThrow();
    expect(() => {
      assertFlat('a handle per call', flatness([at(0, 1), at(50, 2), at(100, 3)]), LIMITS);
    }).toThrow(/100 more active handles/);
  });
});
