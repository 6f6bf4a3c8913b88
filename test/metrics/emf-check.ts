/**
 * What CloudWatch Logs checks before it extracts metrics from an EMF line
 * (its specification's MUSTs), as a test oracle: every problem, in words;
 * an empty list means CloudWatch would accept the line.
 */
const UNITS = new Set([
  'Seconds', 'Microseconds', 'Milliseconds', 'Bytes', 'Kilobytes', 'Megabytes', 'Gigabytes', 'Terabytes',
  'Bits', 'Kilobits', 'Megabits', 'Gigabits', 'Terabits', 'Percent', 'Count', 'Bytes/Second', 'Kilobytes/Second',
  'Megabytes/Second', 'Gigabytes/Second', 'Terabytes/Second', 'Bits/Second', 'Kilobits/Second', 'Megabits/Second',
  'Gigabits/Second', 'Terabits/Second', 'Count/Second', 'None',
]);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function checkEmfDocument(line: string): string[] {
  let root: unknown;
  try {
    root = JSON.parse(line);
  } catch {
    return ['not a JSON object'];
  }
  if (!isObject(root)) return ['not a JSON object'];
  const aws = root._aws;
  if (!isObject(aws)) return ['_aws is missing'];
  const problems: string[] = [];
  if (typeof aws.Timestamp !== 'number' || !Number.isInteger(aws.Timestamp)) problems.push('_aws.Timestamp is not a number');
  const directives = aws.CloudWatchMetrics;
  if (!Array.isArray(directives) || directives.length === 0) return [...problems, '_aws.CloudWatchMetrics is not a non-empty array'];
  for (const directive of directives) {
    if (!isObject(directive)) {
      problems.push('a directive is not an object');
      continue;
    }
    if (typeof directive.Namespace !== 'string' || directive.Namespace.length < 1 || directive.Namespace.length > 255) problems.push('Namespace is not 1 to 255 characters');
    const sets = directive.Dimensions;
    if (!Array.isArray(sets)) problems.push('Dimensions is not an array');
    else {
      for (const set of sets) {
        if (!Array.isArray(set) || set.length > 30) {
          problems.push('a dimension set is not an array of at most 30 keys');
          continue;
        }
        for (const key of set) if (typeof key !== 'string' || typeof root[key] !== 'string') problems.push(`dimension ${String(key)} has no string value`);
      }
    }
    const metrics = directive.Metrics;
    if (!Array.isArray(metrics) || metrics.length > 100) {
      problems.push('Metrics is not an array of at most 100 metrics');
      continue;
    }
    for (const metric of metrics) {
      if (!isObject(metric) || typeof metric.Name !== 'string' || metric.Name === '') {
        problems.push('a metric has no name');
        continue;
      }
      const value = root[metric.Name];
      const numeric = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
      if (!(numeric(value) || (Array.isArray(value) && value.length > 0 && value.length <= 100 && value.every(numeric)))) problems.push(`metric ${metric.Name} has no numeric value`);
      if (metric.Unit !== undefined && (typeof metric.Unit !== 'string' || !UNITS.has(metric.Unit))) problems.push(`metric ${metric.Name} has the unit ${JSON.stringify(metric.Unit)}, which CloudWatch does not know`);
    }
  }
  return problems;
}

/** The metrics a line carries, by name, with their dimension sets: what CloudWatch would extract. */
export function extractedMetrics(line: string): { name: string; unit: string; dimensions: Record<string, string>; value: number }[] {
  const root = JSON.parse(line) as Record<string, unknown> & { _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] } };
  return root._aws.CloudWatchMetrics.flatMap((directive) =>
    directive.Dimensions.flatMap((set) =>
      directive.Metrics.map((metric) => ({
        name: metric.Name,
        unit: metric.Unit,
        dimensions: Object.fromEntries(set.map((key) => [key, root[key] as string])),
        value: root[metric.Name] as number,
      })),
    ),
  );
}
