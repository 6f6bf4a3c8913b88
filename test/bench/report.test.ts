import { describe, expect, it } from '@jest/globals';
import { countDelta, requestCounts } from '../../scripts/bench/api-requests.ts';
import { withSpread } from '../../scripts/bench/format.ts';
import { BenchUsageError, parseBenchOptions } from '../../scripts/bench/options.ts';
import { missedTargets, renderConsole, renderDocument, type SectionReport } from '../../scripts/bench/report.ts';
import { summarize } from '../../testkit/bench/stats.ts';
import { renderMarkdownTable, renderTextTable } from '../../scripts/bench/table.ts';

const section: SectionReport = {
  id: 'admission',
  title: '1. Admission compute',
  method: ['Floor: parse and serialize.'],
  table: { headers: ['function', 'reviews/s'], rows: [['pod-inject', '600 /s'], ['sidecarset-default', '1,000 /s']] },
  verdicts: [{ target: 'pod-inject ≥ 0.5 × floor', figure: '0.05×', met: false }],
  notes: ['The hashes dominate.'],
};

describe('benchmark tables and document', () => {
  it('pads terminal columns to the widest cell', () => {
    expect(renderTextTable({ headers: ['a', 'bb'], rows: [['long', 'x']] })).toBe('a     bb\n----  --\nlong  x');
  });

  it('escapes pipes in Markdown cells', () => {
    expect(renderMarkdownTable({ headers: ['k', 'v'], rows: [['a|b', 'c']] })).toBe('| k | v |\n|---|---|\n| a\\|b | c |');
  });

  it('writes a median with its range', () => {
    expect(withSpread(summarize([1200, 1000, 1100]), 'ms', 0)).toBe('1,100 ms (1,000–1,200)');
  });

  it('puts the command, the machine, the date, every target and every section in the document', () => {
    const doc = renderDocument(
      { command: 'npm run bench', machine: { cpu: 'Test CPU', cores: 2, memoryGiB: 4, os: 'Linux 6', node: 'v22.23.3' }, date: new Date('2026-12-01T10:00:00Z'), quick: true, settings: 'admission 3 runs' },
      [section],
    );
    expect(doc).toContain('`npm run bench` on 2026-12-01');
    expect(doc).toContain('Test CPU, 2 cores, 4 GiB memory, Linux 6');
    expect(doc).toContain('--quick');
    expect(doc).toContain('| pod-inject ≥ 0.5 × floor | 0.05× | MISS |');
    expect(doc).toContain('## 1. Admission compute');
    expect(doc).toContain('- The hashes dominate.');
  });

  it('names every missed target with its section, and nothing when all are met', () => {
    const met: SectionReport = { ...section, title: '2. HTTP', verdicts: [{ target: 'p99 ≤ 10 ms', figure: '3 ms', met: true }] };
    expect(missedTargets([section, met])).toEqual(['1. Admission compute: pod-inject ≥ 0.5 × floor (0.05×)']);
    expect(missedTargets([met])).toEqual([]);
  });

  it('shows a target that could not be measured as SKIPPED, never PASS, and counts it as missed for --strict', () => {
    const skipped: SectionReport = { ...section, title: '1b. Kruise', verdicts: [{ target: 'pod-inject ≥ 5× faster than Kruise', figure: 'not measured (no Go)', met: false, skipped: true }] };
    const doc = renderDocument({ command: 'npm run bench', machine: { cpu: 'c', cores: 2, memoryGiB: 4, os: 'Linux', node: 'v22' }, date: new Date(0), quick: false, settings: '' }, [skipped]);
    expect(doc).toContain('| pod-inject ≥ 5× faster than Kruise | not measured (no Go) | SKIPPED |');
    expect(renderConsole([skipped])).toMatch(/not measured \(no Go\)\s+SKIPPED/);
    expect(missedTargets([skipped])).toEqual(['1b. Kruise: pod-inject ≥ 5× faster than Kruise (not measured (no Go))']);
  });

  it('prints each section with its verdicts on the terminal', () => {
    const out = renderConsole([section]);
    expect(out).toContain('== 1. Admission compute ==');
    expect(out).toMatch(/pod-inject ≥ 0\.5 × floor\s+0\.05×\s+MISS/);
  });
});

describe('benchmark options', () => {
  it('runs every section into docs/BENCHMARKS.md by default', () => {
    expect(parseBenchOptions([], '/p')).toEqual({
      sections: ['admission', 'kruise', 'http', 'cold-start', 'reconciler', 'freshness', 'reads', 'rollout', 'pod-triggers', 'controller', 'injection', 'sets-at-once'], quick: false, out: '/p/docs/BENCHMARKS.md', strict: false, help: false,
    });
  });

  it('fails on a missed target only with --strict, and writes where --out says', () => {
    expect(parseBenchOptions(['--strict', '--out', '/tmp/bench.md'], '/p')).toMatchObject({ strict: true, out: '/tmp/bench.md' });
    expect(() => parseBenchOptions(['--out'], '/p')).toThrow('--out needs a value');
  });

  it('asks for help with --help or -h', () => {
    expect(parseBenchOptions(['--help'], '/p').help).toBe(true);
    expect(parseBenchOptions(['-h'], '/p').help).toBe(true);
  });

  it('keeps the sections named by --only in their usual order', () => {
    expect(parseBenchOptions(['--only', 'reconciler,admission', '--quick'], '/p')).toMatchObject({ sections: ['admission', 'reconciler'], quick: true });
  });

  it('runs the 100,000-pod resync only when --only names it', () => {
    expect(parseBenchOptions([], '/p').sections).not.toContain('resync-100k');
    expect(parseBenchOptions(['--only', 'resync-100k'], '/p').sections).toEqual(['resync-100k']);
  });

  it('refuses an unknown section or argument', () => {
    expect(() => parseBenchOptions(['--only', 'disk'], '/p')).toThrow(BenchUsageError);
    expect(() => parseBenchOptions(['--fast'], '/p')).toThrow('unknown argument --fast');
  });
});

describe('API request counts from /metrics', () => {
  const before = requestCounts([
    '# TYPE apiserver_request_total counter',
    'apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 3',
    'apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="namespace",subresource="",verb="PUT",version="v1"} 9',
  ].join('\n'));
  const after = requestCounts([
    'apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 23',
    'apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps.kruise.io",resource="sidecarsets",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 4',
    'apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="namespace",subresource="",verb="PUT",version="v1"} 12',
  ].join('\n'));

  it('counts the reconciler\'s resources by verb and subresource, and nothing else', () => {
    expect(countDelta(before, after)).toEqual([['LIST pods', 20], ['PATCH sidecarsets/status', 4]]);
  });
});
