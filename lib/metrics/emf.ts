/**
 * CloudWatch embedded metric format (EMF): a JSON log line from which
 * CloudWatch Logs extracts metrics, so a Lambda function publishes them by
 * writing to standard output, with no call on the request path. The shape,
 * per CloudWatch's specification:
 *
 *   {"_aws": {"Timestamp": <ms since the epoch>,
 *             "CloudWatchMetrics": [{"Namespace": "...",
 *                                    "Dimensions": [["Function", "Outcome"]],
 *                                    "Metrics": [{"Name": "Reviews", "Unit": "Count"}]}]},
 *    "Function": "pod-inject", "Outcome": "Patched", "Reviews": 1}
 *
 * Every dimension named must be a top-level string member and every metric
 * a top-level number. A directive holds at most 100 metrics and a dimension
 * set at most 30 dimensions; CloudWatch drops a document that breaks a rule
 * without a word, so the builder refuses it instead.
 */
import type { MetricSpec, MetricUnit } from './catalogue.ts';

export const MAX_METRICS_PER_DIRECTIVE = 100;
export const MAX_DIMENSIONS_PER_SET = 30;
/** CloudWatch's limits on a metric name and a dimension value. */
const MAX_NAME_LENGTH = 1024;
const MAX_DIMENSION_VALUE_LENGTH = 1024;

/** A document CloudWatch would not accept. */
export class EmfError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmfError';
  }
}

/** One value of one metric. */
export interface MetricValue {
  spec: Pick<MetricSpec, 'name' | 'unit' | 'dimensions'>;
  value: number;
}

export interface EmfDirective {
  Namespace: string;
  Dimensions: string[][];
  Metrics: { Name: string; Unit: MetricUnit }[];
}

export interface EmfDocument {
  _aws: { Timestamp: number; CloudWatchMetrics: EmfDirective[] };
  [member: string]: unknown;
}

/**
 * One EMF document: `values` grouped into one directive per dimension set,
 * `dimensions` the value of every dimension they name.
 * @throws EmfError naming the problem: a dimension without a value, a value
 *   that is not a finite number, a metric given twice, too many metrics or
 *   dimensions, a name clash between a metric and a dimension.
 */
export function emfDocument(namespace: string, timestampMs: number, dimensions: Readonly<Record<string, string>>, values: readonly MetricValue[]): EmfDocument {
  if (namespace === '') throw new EmfError('the namespace is empty');
  if (!Number.isSafeInteger(timestampMs) || timestampMs < 0) throw new EmfError(`the timestamp ${timestampMs} is not whole milliseconds since the epoch`);
  if (values.length === 0) throw new EmfError('a document needs at least one metric');
  const document: EmfDocument = { _aws: { Timestamp: timestampMs, CloudWatchMetrics: [] } };
  const directives = new Map<string, EmfDirective>();
  const used = new Set<string>();
  for (const [key, value] of Object.entries(dimensions)) {
    if (value === '' || value.length > MAX_DIMENSION_VALUE_LENGTH) throw new EmfError(`dimension ${key} has the value "${value.slice(0, 40)}", which must be 1 to ${MAX_DIMENSION_VALUE_LENGTH} characters`);
    document[key] = value;
  }
  for (const { spec, value } of values) {
    const { name } = spec;
    if (name === '' || name.length > MAX_NAME_LENGTH || name === '_aws') throw new EmfError(`"${name.slice(0, 40)}" cannot be a metric name`);
    if (!Number.isFinite(value)) throw new EmfError(`metric ${name} has the value ${value}, which is not a finite number`);
    if (used.has(name)) throw new EmfError(`metric ${name} is given twice`);
    if (name in dimensions) throw new EmfError(`${name} is both a metric and a dimension`);
    if (spec.dimensions.length > MAX_DIMENSIONS_PER_SET) throw new EmfError(`metric ${name} has ${spec.dimensions.length} dimensions; at most ${MAX_DIMENSIONS_PER_SET}`);
    for (const key of spec.dimensions) if (dimensions[key] === undefined) throw new EmfError(`metric ${name} needs a value for dimension ${key}`);
    used.add(name);
    document[name] = value;
    const key = JSON.stringify(spec.dimensions);
    let directive = directives.get(key);
    if (directive === undefined) {
      directive = { Namespace: namespace, Dimensions: [[...spec.dimensions]], Metrics: [] };
      directives.set(key, directive);
      document._aws.CloudWatchMetrics.push(directive);
    }
    if (directive.Metrics.length >= MAX_METRICS_PER_DIRECTIVE) throw new EmfError(`more than ${MAX_METRICS_PER_DIRECTIVE} metrics share the dimensions ${key}`);
    directive.Metrics.push({ Name: name, Unit: spec.unit });
  }
  return document;
}

/** Milliseconds with the precision CloudWatch keeps worth having (a microsecond). */
export function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
