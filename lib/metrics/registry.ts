/**
 * An in-process registry of counters, gauges and histograms, the local
 * server's view of the same facts the Lambda functions write as EMF lines
 * (fed by review.ts and resync.ts), rendered as Prometheus text on `/metrics`.
 * Pure: nothing here reads a clock or does I/O.
 */
import { checkLabelName, checkMetricName, PrometheusFormatError, renderPrometheus, type FamilySnapshot, type FamilyType, type Sample } from './prometheus.ts';

export interface Counter {
  inc(labels: readonly string[], by?: number): void;
}

export interface Gauge {
  set(labels: readonly string[], value: number): void;
  /** Forgets every series (the sets of the last resync replace those of the one before). */
  clear(): void;
  /** Drops the series whose first label values are `prefix` (one SidecarSet's, say). */
  remove(prefix: readonly string[]): void;
}

export interface Histogram {
  observe(labels: readonly string[], value: number): void;
}

export interface MetricsRegistry {
  counter(name: string, help: string, labelNames: readonly string[]): Counter;
  gauge(name: string, help: string, labelNames: readonly string[]): Gauge;
  histogram(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]): Histogram;
  /** Every family as it stands, in the order they were made. */
  snapshot(): FamilySnapshot[];
  /** The Prometheus text exposition of {@link snapshot}. */
  render(): string;
}

/** One series: its label values, its value (a histogram's count) and a histogram's buckets and sum. */
interface Series {
  labels: readonly string[];
  value: number;
  buckets?: number[];
  sum?: number;
}

interface Family {
  name: string;
  help: string;
  type: FamilyType;
  labelNames: readonly string[];
  /** Series by their label values (JSON of the array). */
  series: Map<string, Series>;
  buckets?: readonly number[];
}

function labelPairs(names: readonly string[], values: readonly string[]): [string, string][] {
  return names.map((name, i) => [name, values[i] ?? '']);
}

/** The series of `labels` in `family`, made at zero the first time. */
function seriesOf(family: Family, labels: readonly string[]): Series {
  if (labels.length !== family.labelNames.length) {
    throw new PrometheusFormatError(`metric ${family.name} takes ${family.labelNames.length} label values (${family.labelNames.join(', ')}); got ${labels.length}`);
  }
  const key = JSON.stringify(labels);
  let series = family.series.get(key);
  if (series === undefined) {
    series = { labels: [...labels], value: 0, ...(family.buckets !== undefined ? { buckets: family.buckets.map(() => 0), sum: 0 } : {}) };
    family.series.set(key, series);
  }
  return series;
}

function samplesOf(family: Family): Sample[] {
  const samples: Sample[] = [];
  for (const series of family.series.values()) {
    const labels = labelPairs(family.labelNames, series.labels);
    if (family.buckets === undefined) {
      samples.push({ labels, value: series.value });
      continue;
    }
    // Buckets are cumulative: each counts every observation at or under its bound.
    family.buckets.forEach((bound, i) => {
      samples.push({ suffix: '_bucket', labels: [...labels, ['le', String(bound)]], value: series.buckets?.[i] ?? 0 });
    });
    samples.push({ suffix: '_bucket', labels: [...labels, ['le', '+Inf']], value: series.value });
    samples.push({ suffix: '_sum', labels, value: series.sum ?? 0 });
    samples.push({ suffix: '_count', labels, value: series.value });
  }
  return samples;
}

function counterOf(family: Family): Counter {
  return {
    inc(labels, by = 1) {
      if (!(by >= 0)) throw new RangeError(`counter ${family.name} can only go up; got ${by}`);
      seriesOf(family, labels).value += by;
    },
  };
}

function gaugeOf(family: Family): Gauge {
  return {
    set(labels, value) {
      seriesOf(family, labels).value = value;
    },
    clear() {
      family.series.clear();
    },
    remove(prefix) {
      for (const [key, series] of family.series) if (prefix.every((v, i) => series.labels[i] === v)) family.series.delete(key);
    },
  };
}

/** A histogram's buckets as given, checked: finite, in increasing order, at least one. */
function checkedBuckets(name: string, labelNames: readonly string[], buckets: readonly number[]): number[] {
  if (labelNames.includes('le')) throw new PrometheusFormatError(`histogram ${name} cannot have a label named le`);
  const sorted = [...buckets];
  if (sorted.length === 0 || sorted.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= (sorted[i - 1] ?? b)))) {
    throw new PrometheusFormatError(`histogram ${name} needs finite buckets in increasing order`);
  }
  return sorted;
}

function histogramOf(family: Family, bounds: readonly number[]): Histogram {
  return {
    observe(labels, value) {
      if (Number.isNaN(value)) return;
      const series = seriesOf(family, labels);
      series.value += 1;
      series.sum = (series.sum ?? 0) + value;
      bounds.forEach((bound, i) => {
        if (value <= bound && series.buckets !== undefined) series.buckets[i] = (series.buckets[i] ?? 0) + 1;
      });
    },
  };
}

export function metricsRegistry(): MetricsRegistry {
  const families: Family[] = [];
  const byName = new Map<string, Family>();
  const make = (name: string, help: string, type: FamilyType, labelNames: readonly string[], buckets?: readonly number[]): Family => {
    checkMetricName(name);
    for (const label of labelNames) checkLabelName(label);
    if (byName.has(name)) throw new PrometheusFormatError(`metric ${name} is registered twice`);
    const family: Family = { name, help, type, labelNames, series: new Map(), ...(buckets !== undefined ? { buckets } : {}) };
    families.push(family);
    byName.set(name, family);
    return family;
  };
  const registry: MetricsRegistry = {
    counter: (name, help, labelNames) => counterOf(make(name, help, 'counter', labelNames)),
    gauge: (name, help, labelNames) => gaugeOf(make(name, help, 'gauge', labelNames)),
    histogram(name, help, labelNames, buckets) {
      const bounds = checkedBuckets(name, labelNames, buckets);
      return histogramOf(make(name, help, 'histogram', labelNames, bounds), bounds);
    },
    snapshot: () => families.map((family) => ({ name: family.name, help: family.help, type: family.type, samples: samplesOf(family) })),
    render: () => renderPrometheus(registry.snapshot()),
  };
  return registry;
}
