/**
 * Memory samples that can show a leak: the heap after a full garbage
 * collection (what is still reachable), RSS, and the process's listeners and
 * handles. A sample without a collection first would mostly measure when the
 * collector last ran.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { median } from '../bench/stats.ts';

const MIB = 1024 * 1024;

let gcFunction: (() => void) | undefined;

/** A full collection, exposing `gc` on the fly when the process was started without --expose-gc. */
export function fullGc(): void {
  if (gcFunction === undefined) {
    setFlagsFromString('--expose-gc');
    // A new context sees the flag; the current one was created before it.
    gcFunction = runInNewContext('gc') as () => void;
  }
  // Twice: the first pass may only move objects with finalizers to the next.
  gcFunction();
  gcFunction();
}

export interface MemorySample {
  /** When, in the run's own unit (invocations, seconds). */
  at: number;
  heapUsedMiB: number;
  rssMiB: number;
  /** Active handles and requests (sockets, timers): process.getActiveResourcesInfo(). */
  activeResources: number;
  /** Listeners on the process object, summed over its events. */
  processListeners: number;
}

export function sampleMemory(at: number): MemorySample {
  fullGc();
  const usage = process.memoryUsage();
  const processListeners = process.eventNames().reduce((sum, name) => sum + process.listenerCount(name), 0);
  return {
    at,
    heapUsedMiB: usage.heapUsed / MIB,
    rssMiB: usage.rss / MIB,
    activeResources: process.getActiveResourcesInfo().filter((kind) => kind !== 'Immediate').length,
    processListeners,
  };
}

export interface Flatness {
  /** Reachable heap growth: median of the last third of the samples minus that of the first third. */
  heapGrowthMiB: number;
  /** Least-squares slope of the reachable heap, in bytes per unit of `at`. */
  heapSlopeBytes: number;
  rssGrowthMiB: number;
  activeResourcesGrowth: number;
  processListenersGrowth: number;
}

/** Growth between samples taken after warm-up (the first sample is the baseline). */
export function flatness(samples: readonly MemorySample[]): Flatness {
  const first = samples[0];
  const last = samples.at(-1);
  if (first === undefined || last === undefined || samples.length < 3) throw new Error(`need at least 3 memory samples, got ${samples.length}`);
  const n = samples.length;
  const meanX = samples.reduce((s, x) => s + x.at, 0) / n;
  const meanY = samples.reduce((s, x) => s + x.heapUsedMiB, 0) / n;
  const sxy = samples.reduce((s, x) => s + (x.at - meanX) * (x.heapUsedMiB - meanY), 0);
  const sxx = samples.reduce((s, x) => s + (x.at - meanX) ** 2, 0);
  // Thirds, not single samples: the heap swings by megabytes as cached lists
  // are replaced, which would read as growth (or shrinkage) between two points.
  const third = Math.ceil(n / 3);
  const early = median(samples.slice(0, third).map((x) => x.heapUsedMiB));
  const late = median(samples.slice(n - third).map((x) => x.heapUsedMiB));
  return {
    heapGrowthMiB: late - early,
    heapSlopeBytes: sxx === 0 ? 0 : (sxy / sxx) * MIB,
    rssGrowthMiB: last.rssMiB - first.rssMiB,
    activeResourcesGrowth: last.activeResources - first.activeResources,
    processListenersGrowth: last.processListeners - first.processListeners,
  };
}

export interface FlatLimits {
  /** Largest allowed reachable-heap growth over the run. */
  maxHeapGrowthMiB: number;
  /** Largest allowed RSS growth over the run (RSS moves with the allocator, so it gets more room). */
  maxRssGrowthMiB: number;
}

/** Handles that may come and go between samples: a kept-alive connection to the API server, its TLS wrap, its timer. */
const MAX_HANDLE_DRIFT = 4;

/** Throws naming every figure that grew beyond its limit. */
export function assertFlat(what: string, result: Flatness, limits: FlatLimits): void {
  const problems: string[] = [];
  if (result.heapGrowthMiB > limits.maxHeapGrowthMiB) problems.push(`the reachable heap grew ${result.heapGrowthMiB.toFixed(2)} MiB (limit ${limits.maxHeapGrowthMiB} MiB, slope ${Math.round(result.heapSlopeBytes)} bytes per unit)`);
  if (result.rssGrowthMiB > limits.maxRssGrowthMiB) problems.push(`RSS grew ${result.rssGrowthMiB.toFixed(1)} MiB (limit ${limits.maxRssGrowthMiB} MiB)`);
  // A pooled keep-alive connection (and its TLS wrap) may be open at one
  // sample and not another; a handle leaked per call would show thousands.
  if (result.activeResourcesGrowth > MAX_HANDLE_DRIFT) problems.push(`${result.activeResourcesGrowth} more active handles than after warm-up (${MAX_HANDLE_DRIFT} allowed for pooled connections)`);
  if (result.processListenersGrowth > 0) problems.push(`${result.processListenersGrowth} more process listeners than after warm-up`);
  if (problems.length > 0) throw new Error(`${what}: memory is not flat: ${problems.join('; ')}`);
}

export const round = (value: number, digits = 1): number => Number(value.toFixed(digits));
