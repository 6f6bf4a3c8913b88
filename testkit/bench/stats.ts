/**
 * Statistics of repeated measurements. Medians and quartiles, not means: on a
 * shared machine one descheduled run would drag a mean far from the typical
 * run, while the median stays put and the spread shows how noisy it was.
 */

export interface Summary {
  n: number;
  median: number;
  min: number;
  max: number;
  /** First and third quartiles (linear interpolation between order statistics). */
  q1: number;
  q3: number;
}

/** The q-quantile (0..1) of values sorted ascending, interpolating linearly between neighbours. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) throw new RangeError('no values');
  const at = (sorted.length - 1) * Math.min(1, Math.max(0, q));
  const lower = Math.floor(at);
  const low = sorted[lower] ?? Number.NaN;
  const high = sorted[Math.ceil(at)] ?? low;
  return low + (high - low) * (at - lower);
}

export function median(values: readonly number[]): number {
  return quantile([...values].sort((a, b) => a - b), 0.5);
}

/** Median, extremes and quartiles of at least one value. */
export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) throw new RangeError('cannot summarize no values');
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    median: quantile(sorted, 0.5),
    min: sorted[0] ?? Number.NaN,
    max: sorted.at(-1) ?? Number.NaN,
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
  };
}

/** The ratio of two medians; the figure every target is stated in. */
export function ratioOfMedians(measured: Summary, floor: Summary): number {
  return measured.median / floor.median;
}

/**
 * Runs `runs` rounds of measured-then-floor, swapping the order every other
 * round, so that drift (thermal, a neighbour's load) hits both series alike.
 */
export async function alternate<T>(runs: number, measured: () => Promise<T>, floor: () => Promise<T>): Promise<{ measured: T[]; floor: T[] }> {
  const out = { measured: [] as T[], floor: [] as T[] };
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      out.measured.push(await measured());
      out.floor.push(await floor());
    } else {
      out.floor.push(await floor());
      out.measured.push(await measured());
    }
  }
  return out;
}
