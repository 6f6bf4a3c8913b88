/**
 * The EMF document builder against CloudWatch's specification: the shape it
 * writes (golden), and every document CloudWatch would drop refused with a
 * message naming the problem.
 */
import { describe, expect, it } from '@jest/globals';
import { ADMISSION_METRICS, DIMENSIONS, type MetricSpec } from '../../lib/metrics/catalogue.ts';
import { emfDocument, EmfError, MAX_DIMENSIONS_PER_SET, MAX_METRICS_PER_DIRECTIVE, roundMs } from '../../lib/metrics/emf.ts';
import { checkEmfDocument } from './emf-check.ts';

const NS = 'ServerlessSidecarSet';
const TS = 1_796_000_000_000;

describe('emfDocument', () => {
  it('writes one directive per dimension set, dimension values and metric values as top-level members', () => {
    const document = emfDocument(NS, TS, { Function: 'pod-inject', Outcome: 'Patched' }, [
      { spec: ADMISSION_METRICS.reviews, value: 1 },
      { spec: ADMISSION_METRICS.answerLatency, value: 12.5 },
      { spec: ADMISSION_METRICS.listLatency, value: 3.25 },
    ]);
    expect(JSON.stringify(document)).toBe(
      '{"_aws":{"Timestamp":1796000000000,"CloudWatchMetrics":[' +
        '{"Namespace":"ServerlessSidecarSet","Dimensions":[["Function","Outcome"]],"Metrics":[{"Name":"Reviews","Unit":"Count"}]},' +
        '{"Namespace":"ServerlessSidecarSet","Dimensions":[["Function"]],"Metrics":[{"Name":"AnswerLatency","Unit":"Milliseconds"},{"Name":"SidecarSetListLatency","Unit":"Milliseconds"}]}]},' +
        '"Function":"pod-inject","Outcome":"Patched","Reviews":1,"AnswerLatency":12.5,"SidecarSetListLatency":3.25}',
    );
    expect(checkEmfDocument(JSON.stringify(document))).toEqual([]);
  });

  const latency = (name: string): MetricSpec => ({ name, unit: 'Milliseconds', dimensions: [DIMENSIONS.function], help: '' });
  const fn = { Function: 'pod-inject' };

  it.each([
    { why: 'an empty namespace', build: () => emfDocument('', TS, fn, [{ spec: latency('A'), value: 1 }]), message: 'the namespace is empty' },
    { why: 'a timestamp that is not whole milliseconds', build: () => emfDocument(NS, 1.5, fn, [{ spec: latency('A'), value: 1 }]), message: 'the timestamp 1.5 is not whole milliseconds since the epoch' },
    { why: 'no metric', build: () => emfDocument(NS, TS, fn, []), message: 'a document needs at least one metric' },
    { why: 'a value that is not finite', build: () => emfDocument(NS, TS, fn, [{ spec: latency('A'), value: Number.NaN }]), message: 'metric A has the value NaN, which is not a finite number' },
    { why: 'an infinite value', build: () => emfDocument(NS, TS, fn, [{ spec: latency('A'), value: Infinity }]), message: 'metric A has the value Infinity, which is not a finite number' },
    { why: 'a metric given twice', build: () => emfDocument(NS, TS, fn, [{ spec: latency('A'), value: 1 }, { spec: latency('A'), value: 2 }]), message: 'metric A is given twice' },
    { why: 'a dimension without a value', build: () => emfDocument(NS, TS, {}, [{ spec: latency('A'), value: 1 }]), message: 'metric A needs a value for dimension Function' },
    { why: 'an empty dimension value', build: () => emfDocument(NS, TS, { Function: '' }, [{ spec: latency('A'), value: 1 }]), message: 'dimension Function has the value "", which must be 1 to 1024 characters' },
    { why: 'a metric named as a dimension', build: () => emfDocument(NS, TS, fn, [{ spec: latency('Function'), value: 1 }]), message: 'Function is both a metric and a dimension' },
    { why: 'a metric named _aws', build: () => emfDocument(NS, TS, fn, [{ spec: latency('_aws'), value: 1 }]), message: '"_aws" cannot be a metric name' },
    {
      why: `more than ${MAX_DIMENSIONS_PER_SET} dimensions`,
      build: () => {
        const keys = Array.from({ length: MAX_DIMENSIONS_PER_SET + 1 }, (_, i) => `D${i}`);
        return emfDocument(NS, TS, Object.fromEntries(keys.map((k) => [k, 'v'])), [{ spec: { name: 'A', unit: 'Count', dimensions: keys }, value: 1 }]);
      },
      message: `metric A has ${MAX_DIMENSIONS_PER_SET + 1} dimensions; at most ${MAX_DIMENSIONS_PER_SET}`,
    },
    {
      why: `more than ${MAX_METRICS_PER_DIRECTIVE} metrics in one directive`,
      build: () => emfDocument(NS, TS, fn, Array.from({ length: MAX_METRICS_PER_DIRECTIVE + 1 }, (_, i) => ({ spec: latency(`M${i}`), value: i }))),
      message: `more than ${MAX_METRICS_PER_DIRECTIVE} metrics share the dimensions ["Function"]`,
    },
  ])('refuses $why', ({ build, message }) => {
    expect(build).toThrow(new EmfError(message));
  });

  it(`accepts exactly ${MAX_METRICS_PER_DIRECTIVE} metrics and ${MAX_DIMENSIONS_PER_SET} dimensions`, () => {
    const keys = Array.from({ length: MAX_DIMENSIONS_PER_SET }, (_, i) => `D${i}`);
    const values = Array.from({ length: MAX_METRICS_PER_DIRECTIVE }, (_, i) => ({ spec: { name: `M${i}`, unit: 'Count' as const, dimensions: keys, help: '' }, value: i }));
    const document = emfDocument(NS, TS, Object.fromEntries(keys.map((k) => [k, 'v'])), values);
    expect(checkEmfDocument(JSON.stringify(document))).toEqual([]);
  });

  it('rounds milliseconds to the microsecond', () => {
    expect(roundMs(1.23456789)).toBe(1.235);
    expect(roundMs(0)).toBe(0);
  });
});

describe('checkEmfDocument (the test oracle) finds what CloudWatch rejects', () => {
  it.each([
    { line: 'not json', problem: 'not a JSON object' },
    { line: '{"Reviews":1}', problem: '_aws is missing' },
    { line: '{"_aws":{"CloudWatchMetrics":[]}}', problem: '_aws.Timestamp is not a number' },
    {
      line: '{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["Function"]],"Metrics":[{"Name":"Reviews","Unit":"Count"}]}]},"Reviews":"1"}',
      problem: 'dimension Function has no string value',
    },
    {
      line: '{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"Reviews","Unit":"Count"}]}]},"Reviews":"1"}',
      problem: 'metric Reviews has no numeric value',
    },
    {
      line: '{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"Reviews","Unit":"Parsecs"}]}]},"Reviews":1}',
      problem: 'metric Reviews has the unit "Parsecs", which CloudWatch does not know',
    },
  ])('$problem', ({ line, problem }) => {
    expect(checkEmfDocument(line)).toContain(problem);
  });
});
