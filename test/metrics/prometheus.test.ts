/**
 * The Prometheus text exposition: the renderer's escaping and layout
 * (golden text), and the registry's counters, gauges and histograms.
 */
import { describe, expect, it } from '@jest/globals';
import { escapeHelp, escapeLabelValue, formatValue, PrometheusFormatError, renderPrometheus } from '../../lib/metrics/prometheus.ts';
import { metricsRegistry } from '../../lib/metrics/registry.ts';

describe('renderPrometheus', () => {
  it('writes HELP and TYPE before each family, then its samples, ending with a line feed', () => {
    const text = renderPrometheus([
      {
        name: 'sidecarset_admission_reviews_total',
        help: 'Admission requests answered.',
        type: 'counter',
        samples: [
          { labels: [['function', 'pod-inject'], ['outcome', 'Patched']], value: 3 },
          { labels: [['function', 'pod-inject'], ['outcome', 'CannotDecide']], value: 1 },
        ],
      },
      { name: 'sidecarset_pods_not_injected', help: 'Pods without their sidecars.', type: 'gauge', samples: [{ labels: [], value: 0 }] },
    ]);
    expect(text).toBe(
      [
        '# HELP sidecarset_admission_reviews_total Admission requests answered.',
        '# TYPE sidecarset_admission_reviews_total counter',
        'sidecarset_admission_reviews_total{function="pod-inject",outcome="Patched"} 3',
        'sidecarset_admission_reviews_total{function="pod-inject",outcome="CannotDecide"} 1',
        '# HELP sidecarset_pods_not_injected Pods without their sidecars.',
        '# TYPE sidecarset_pods_not_injected gauge',
        'sidecarset_pods_not_injected 0',
        '',
      ].join('\n'),
    );
  });

  it('writes nothing for no families', () => {
    expect(renderPrometheus([])).toBe('');
  });

  it.each([
    { text: 'plain', help: 'plain', label: 'plain' },
    { text: 'back\\slash', help: 'back\\\\slash', label: 'back\\\\slash' },
    { text: 'a "quote"', help: 'a "quote"', label: 'a \\"quote\\"' },
    { text: 'two\nlines', help: 'two\\nlines', label: 'two\\nlines' },
    { text: '\\n is not a line feed', help: '\\\\n is not a line feed', label: '\\\\n is not a line feed' },
  ])('escapes $text in HELP as $help and in a label value as $label', ({ text, help, label }) => {
    expect(escapeHelp(text)).toBe(help);
    expect(escapeLabelValue(text)).toBe(label);
    const rendered = renderPrometheus([{ name: 'm', help: text, type: 'gauge', samples: [{ labels: [['l', text]], value: 1 }] }]);
    expect(rendered).toBe(`# HELP m ${help}\n# TYPE m gauge\nm{l="${label}"} 1\n`);
  });

  it.each([
    { value: 1.5, text: '1.5' },
    { value: 0, text: '0' },
    { value: -2, text: '-2' },
    { value: Infinity, text: '+Inf' },
    { value: -Infinity, text: '-Inf' },
    { value: Number.NaN, text: 'NaN' },
    { value: 1e21, text: '1e+21' },
  ])('writes $value as $text', ({ value, text }) => {
    expect(formatValue(value)).toBe(text);
  });

  it.each([
    { why: 'a metric name with a dash', family: { name: 'pod-inject', help: '', type: 'gauge' as const, samples: [] }, message: '"pod-inject" is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)' },
    { why: 'a metric name starting with a digit', family: { name: '1m', help: '', type: 'gauge' as const, samples: [] }, message: '"1m" is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)' },
    {
      why: 'a label name with a dot',
      family: { name: 'm', help: '', type: 'gauge' as const, samples: [{ labels: [['a.b', 'v'] as const], value: 1 }] },
      message: '"a.b" is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)',
    },
    {
      why: 'a reserved label name',
      family: { name: 'm', help: '', type: 'gauge' as const, samples: [{ labels: [['__name__', 'v'] as const], value: 1 }] },
      message: '"__name__" is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)',
    },
  ])('refuses $why', ({ family, message }) => {
    expect(() => renderPrometheus([family])).toThrow(new PrometheusFormatError(message));
  });
});

describe('metricsRegistry', () => {
  it('counts, sets and observes, rendering histograms as cumulative buckets with +Inf, _sum and _count', () => {
    const registry = metricsRegistry();
    const reviews = registry.counter('reviews_total', 'Reviews.', ['function']);
    const sets = registry.gauge('matched_pods', 'Matched.', ['sidecarset']);
    const latency = registry.histogram('answer_seconds', 'Latency.', ['function'], [0.01, 0.1, 1]);
    reviews.inc(['pod-inject']);
    reviews.inc(['pod-inject'], 2);
    reviews.inc(['sidecarset-default']);
    sets.set(['log-agent'], 4);
    sets.set(['log-agent'], 5);
    for (const seconds of [0.005, 0.01, 0.05, 2]) latency.observe(['pod-inject'], seconds);
    expect(registry.render()).toBe(
      [
        '# HELP reviews_total Reviews.',
        '# TYPE reviews_total counter',
        'reviews_total{function="pod-inject"} 3',
        'reviews_total{function="sidecarset-default"} 1',
        '# HELP matched_pods Matched.',
        '# TYPE matched_pods gauge',
        'matched_pods{sidecarset="log-agent"} 5',
        '# HELP answer_seconds Latency.',
        '# TYPE answer_seconds histogram',
        'answer_seconds_bucket{function="pod-inject",le="0.01"} 2',
        'answer_seconds_bucket{function="pod-inject",le="0.1"} 3',
        'answer_seconds_bucket{function="pod-inject",le="1"} 3',
        'answer_seconds_bucket{function="pod-inject",le="+Inf"} 4',
        'answer_seconds_sum{function="pod-inject"} 2.065',
        'answer_seconds_count{function="pod-inject"} 4',
        '',
      ].join('\n'),
    );
  });

  it('forgets every series of a gauge on clear, and shows the family with no samples', () => {
    const registry = metricsRegistry();
    const sets = registry.gauge('matched_pods', 'Matched.', ['sidecarset']);
    sets.set(['gone'], 1);
    sets.clear();
    expect(registry.render()).toBe('# HELP matched_pods Matched.\n# TYPE matched_pods gauge\n');
  });

  it.each([
    { why: 'a counter going down', act: () => { metricsRegistry().counter('c_total', '', []).inc([], -1); }, error: new RangeError('counter c_total can only go up; got -1') },
    { why: 'the wrong number of label values', act: () => { metricsRegistry().counter('c_total', '', ['function']).inc([]); }, error: new PrometheusFormatError('metric c_total takes 1 label values (function); got 0') },
    {
      why: 'a family registered twice',
      act: () => {
        const registry = metricsRegistry();
        registry.gauge('g', '', []);
        registry.gauge('g', '', []);
      },
      error: new PrometheusFormatError('metric g is registered twice'),
    },
    { why: 'a histogram labelled le', act: () => metricsRegistry().histogram('h', '', ['le'], [1]), error: new PrometheusFormatError('histogram h cannot have a label named le') },
    { why: 'buckets out of order', act: () => metricsRegistry().histogram('h', '', [], [1, 0.5]), error: new PrometheusFormatError('histogram h needs finite buckets in increasing order') },
    { why: 'no buckets', act: () => metricsRegistry().histogram('h', '', [], []), error: new PrometheusFormatError('histogram h needs finite buckets in increasing order') },
    { why: 'a bad metric name', act: () => metricsRegistry().gauge('a-b', '', []), error: new PrometheusFormatError('"a-b" is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)') },
  ])('refuses $why', ({ act, error }) => {
    expect(act).toThrow(error);
  });
});
