/**
 * The admission functions' metrics as Lambda writes them: a Function URL
 * event reviewed by a function composed as on Lambda (its cluster sources
 * reading a local stand-in for the Kubernetes API over HTTPS) writes EMF
 * lines that CloudWatch would accept, and a function writes them to
 * standard output unless its caller took the output over.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { emfRecorder } from '../../lib/metrics/emf-recorder.ts';
import { admissionLambda } from '../../functions/shared/admission-lambda.ts';
import { clusterSources } from '../../functions/shared/cluster.ts';
import { ConfigurationError, lambdaMetrics } from '../../functions/shared/compose.ts';
import { sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { capturingLogger, functionUrlEvent, podReview, STRANGER_SECRET } from '../../testkit/reviews.ts';
import { apiStatus, startFakeApiServer, type FakeApiServer, type Route } from '../adapters/fake-api-server.ts';
import { checkEmfDocument, extractedMetrics } from '../metrics/emf-check.ts';
import { secretEnv, structured } from './function-url-result.ts';

const sidecarSetList = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSetList', metadata: { resourceVersion: '7' }, items: [sidecarSet('log-agent')] };

/** Every metric of every line, as `Function[/Outcome] Name` (values vary with timing). */
const named = (lines: readonly string[]) => lines.flatMap((l) => extractedMetrics(l).map((m) => `${Object.values(m.dimensions).join('/')} ${m.name}`));

describe('pod-inject on Lambda writes its metrics as EMF lines', () => {
  let answer: () => ReturnType<Route> = () => ({ status: 200, body: sidecarSetList });
  let api: FakeApiServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    api = await startFakeApiServer();
    api.route = (req) => (req.url.startsWith('/apis/apps.kruise.io/v1alpha1/sidecarsets') ? answer() : apiStatus(404, 'NotFound', 'not found'));
    env = { ...secretEnv, KUBECONFIG_CONTENT: api.kubeconfig(), METRICS_NAMESPACE: 'Test/SidecarSet' };
  });
  afterAll(async () => {
    await api.close();
  });

  async function handler(extraEnv: Record<string, string> = {}) {
    const lines: string[] = [];
    const { logger, entries } = capturingLogger();
    const metrics = emfRecorder({ namespace: 'Test/SidecarSet', write: (line) => lines.push(line) });
    const handle = await admissionLambda('pod-inject', { env: { ...env, ...extraEnv }, overrides: { logger, metrics }, cluster: clusterSources });
    return { handle, lines, entries };
  }

  it('a review: one line CloudWatch accepts, with Reviews by {Function, Outcome} and both latencies by {Function}', async () => {
    answer = () => ({ status: 200, body: sidecarSetList });
    const { handle, lines, entries } = await handler();
    const result = structured(await handle(functionUrlEvent({ body: JSON.stringify(podReview('uid-metrics')) })));
    expect(result.statusCode).toBe(200);
    expect(lines).toHaveLength(1);
    const line = lines[0] ?? '';
    expect(checkEmfDocument(line)).toEqual([]);
    const metrics = extractedMetrics(line);
    expect(metrics.map((m) => [m.name, m.unit, m.dimensions])).toEqual([
      ['Reviews', 'Count', { Function: 'pod-inject', Outcome: 'Patched' }],
      ['AnswerLatency', 'Milliseconds', { Function: 'pod-inject' }],
      ['SidecarSetListLatency', 'Milliseconds', { Function: 'pod-inject' }],
    ]);
    expect(JSON.parse(line)).toMatchObject({ _aws: { CloudWatchMetrics: [{ Namespace: 'Test/SidecarSet' }, { Namespace: 'Test/SidecarSet' }] }, Reviews: 1 });
    // The list went over HTTPS to the stand-in: it took time, and less than the whole answer.
    const [, latency, list] = metrics;
    expect(list?.value).toBeGreaterThan(0);
    expect(list?.value).toBeLessThanOrEqual(latency?.value ?? 0);
    expect(Math.round(latency?.value ?? -1)).toBe(entries()[0]?.durationMs);
  });

  it('a stranger: Reviews RefusedCaller and nothing else', async () => {
    const { handle, lines } = await handler();
    const result = structured(await handle(functionUrlEvent({ body: JSON.stringify(podReview('uid-stranger')), path: `/${STRANGER_SECRET}` })));
    expect(result.statusCode).toBe(404);
    expect(named(lines)).toEqual(['pod-inject/RefusedCaller Reviews']);
  });

  it('the API server failing: Reviews CannotDecide (what the pod-inject alarm watches)', async () => {
    answer = () => apiStatus(500, 'InternalError', 'etcd is down');
    const { handle, lines } = await handler({ SIDECARSET_CACHE_MAX_STALENESS_MS: '0' });
    const result = structured(await handle(functionUrlEvent({ body: JSON.stringify(podReview('uid-503')) })));
    expect(result.statusCode).toBe(503);
    expect(named(lines)).toEqual(['pod-inject/CannotDecide Reviews', 'pod-inject AnswerLatency', 'pod-inject SidecarSetListLatency']);
  });

  it('a stale list served: a StaleListAge line as well, then the review', async () => {
    answer = () => ({ status: 200, body: sidecarSetList });
    const { handle, lines } = await handler({ SIDECARSET_CACHE_MAX_STALENESS_MS: '600000' });
    expect(structured(await handle(functionUrlEvent({ body: JSON.stringify(podReview('uid-fresh')) }))).statusCode).toBe(200);
    answer = () => apiStatus(500, 'InternalError', 'etcd is down');
    expect(structured(await handle(functionUrlEvent({ body: JSON.stringify(podReview('uid-stale')) }))).statusCode).toBe(200);
    for (const line of lines) expect(checkEmfDocument(line)).toEqual([]);
    expect(named(lines.slice(1))).toEqual(['pod-inject StaleListAge', 'pod-inject/Patched Reviews', 'pod-inject AnswerLatency', 'pod-inject SidecarSetListLatency']);
    const [stale] = extractedMetrics(lines[1] ?? '');
    expect(stale?.value).toBeGreaterThan(0);
  });
});

describe('where a Lambda function writes its metric lines', () => {
  it('standard output, in METRICS_NAMESPACE, when nothing took the output over', () => {
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      lambdaMetrics({ METRICS_NAMESPACE: 'Mine' }, {}, capturingLogger().logger).admission('sidecarset-default').review({ outcome: 'Allowed', latencyMs: 1 });
      expect(write).toHaveBeenCalledTimes(1);
      const line = String(write.mock.calls[0]?.[0]);
      expect(line.endsWith('}\n')).toBe(true);
      expect(checkEmfDocument(line.trim())).toEqual([]);
      expect(JSON.parse(line)).toMatchObject({ _aws: { CloudWatchMetrics: [{ Namespace: 'Mine' }, { Namespace: 'Mine' }] }, Function: 'sidecarset-default', Outcome: 'Allowed' });
    } finally {
      write.mockRestore();
    }
  });

  it('nowhere when the caller gave its own logger and no recorder (a test, a tool)', () => {
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      lambdaMetrics({}, { logger: capturingLogger().logger }, capturingLogger().logger).admission('pod-inject').review({ outcome: 'Allowed' });
      expect(write).not.toHaveBeenCalled();
    } finally {
      write.mockRestore();
    }
  });

  it('a METRICS_NAMESPACE CloudWatch would refuse fails the cold start, naming it', async () => {
    const start = admissionLambda('sidecarset-default', { env: { ...secretEnv, METRICS_NAMESPACE: ':bad' } });
    await expect(start).rejects.toThrow(ConfigurationError);
    await expect(start).rejects.toThrow(/^METRICS_NAMESPACE must be 1 to 255 printable ASCII characters/);
  });
});
