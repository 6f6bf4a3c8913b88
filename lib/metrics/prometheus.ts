/**
 * The Prometheus text exposition format (version 0.0.4), what a Prometheus
 * server scrapes and `curl` shows: per family a `# HELP` and a `# TYPE` line,
 * then one line per sample, `name{label="value",...} number`.
 *
 * Escaping, as the format defines it: in HELP text a backslash is `\\` and a
 * line feed `\n`; in a label value a backslash, a double quote and a line
 * feed are `\\`, `\"` and `\n`. Infinite and missing values are `+Inf`,
 * `-Inf` and `NaN`.
 */

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type FamilyType = 'counter' | 'gauge' | 'histogram';

export interface Sample {
  /** Appended to the family name: `_bucket`, `_sum`, `_count` for a histogram's series. */
  suffix?: string;
  labels: readonly (readonly [string, string])[];
  value: number;
}

export interface FamilySnapshot {
  name: string;
  help: string;
  type: FamilyType;
  samples: readonly Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A family or label that the format cannot carry. */
export class PrometheusFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PrometheusFormatError';
  }
}

export function checkMetricName(name: string): void {
  if (!METRIC_NAME.test(name)) throw new PrometheusFormatError(`"${name}" is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)`);
}

export function checkLabelName(name: string): void {
  if (!LABEL_NAME.test(name) || name.startsWith('__')) throw new PrometheusFormatError(`"${name}" is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)`);
}

export function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

function sampleLine(name: string, sample: Sample): string {
  const labels = sample.labels.map(([label, value]) => `${label}="${escapeLabelValue(value)}"`).join(',');
  return `${name}${sample.suffix ?? ''}${labels === '' ? '' : `{${labels}}`} ${formatValue(sample.value)}`;
}

/**
 * The exposition of `families`, in the order given, ending with a line feed.
 * @throws PrometheusFormatError for a metric or label name the format cannot carry.
 */
export function renderPrometheus(families: readonly FamilySnapshot[]): string {
  const lines: string[] = [];
  for (const family of families) {
    checkMetricName(family.name);
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) {
      for (const [label] of sample.labels) checkLabelName(label);
      lines.push(sampleLine(family.name, sample));
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
