/**
 * An in-process registry of counters, gauges and histograms, the local
 * server's view of the same facts the Lambda functions write as EMF lines
 * (fed by review.ts and pass.ts), rendered as Prometheus text on `/metrics`.
 * Pure: nothing here reads a clock or does I/O.
 */
import { checkLabelName, checkMetricName, PrometheusFormatError, renderPrometheus, type FamilySnapshot, type FamilyType, type Sample } from './prometheus.ts';

export interface Counter {
  inc(labels: readonly string[], by?: number): void;
}

export interface Gauge {
  set(labels: readonly string[], value: number): void;
  /** Forgets every series (the sets of the last pass replace those of the one before). */
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

interface Family {
  name: string;
  help: string;
  type: FamilyType;
  labelNames: readonly string[];
  /** Series by their label values (JSON of the array). */
  series: Map<string, { labels: readonly string[]; value: number; buckets?: number[]; sum?: number }>;
  buckets?: readonly number[];
}

function labelPairs(names: readonly string[], values: readonly string[]): [string, string][] {
  return names.map((name, i) => [name, values[i] ?? '']);
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

  const seriesOf = (family: Family, labels: readonly string[]) => {
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
  };

  const samplesOf = (family: Family): Sample[] => {
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
  };

  const registry: MetricsRegistry = {
    counter(name, help, labelNames) {
      const family = make(name, help, 'counter', labelNames);
      return {
        inc(labels, by = 1) {
          if (!(by >= 0)) throw new RangeError(`counter ${name} can only go up; got ${by}`);
          seriesOf(family, labels).value += by;
        },
      };
    },
    gauge(name, help, labelNames) {
      const family = make(name, help, 'gauge', labelNames);
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
    },
    histogram(name, help, labelNames, buckets) {
      if (labelNames.includes('le')) throw new PrometheusFormatError(`histogram ${name} cannot have a label named le`);
      const sorted = [...buckets];
      if (sorted.length === 0 || sorted.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= (sorted[i - 1] ?? b)))) {
        throw new PrometheusFormatError(`histogram ${name} needs finite buckets in increasing order`);
      }
      const family = make(name, help, 'histogram', labelNames, sorted);
      return {
        observe(labels, value) {
          if (Number.isNaN(value)) return;
          const series = seriesOf(family, labels);
          series.value += 1;
          series.sum = (series.sum ?? 0) + value;
          sorted.forEach((bound, i) => {
            if (value <= bound && series.buckets !== undefined) series.buckets[i] = (series.buckets[i] ?? 0) + 1;
          });
        },
      };
    },
    snapshot: () => families.map((family) => ({ name: family.name, help: family.help, type: family.type, samples: samplesOf(family) })),
    render: () => renderPrometheus(registry.snapshot()),
  };
  return registry;
}
