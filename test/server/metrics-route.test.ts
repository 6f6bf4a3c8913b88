/**
 * `/metrics` on the local server (app.inject()): the same caller check as
 * the webhooks, the Prometheus text exposition, and counters that move with
 * the reviews the server answers.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { PROMETHEUS_CONTENT_TYPE } from '../../lib/metrics/prometheus.ts';
import { ADMISSION_FUNCTIONS } from '../../lib/webhooks/registry.ts';
import { buildApp } from '../../functions/server/app.ts';
import { localMetrics } from '../../functions/server/local-metrics.ts';
import { admissionRuntime } from '../../functions/shared/compose.ts';
import { sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { capturingLogger, podReview, PREVIOUS_SECRET, SECRET, STRANGER_SECRET } from '../../testkit/reviews.ts';

// See test/server/app.test.ts: light-my-request's `cookie` is ESM-only.
const cookie = await import('cookie');
jest.mock('cookie', () => cookie);

const json = { 'content-type': 'application/json' };

function app(withMetrics: boolean): { app: FastifyInstance; render: () => string } {
  const metrics = localMetrics();
  const sources = { sidecarSets: memorySidecarSetSource([sidecarSet('log-agent')]), namespaces: memoryNamespaceSource([]) };
  const logger = capturingLogger().logger;
  const runtimes = Object.fromEntries(
    ADMISSION_FUNCTIONS.map((fn) => [fn, admissionRuntime(fn, { current: SECRET, previous: PREVIOUS_SECRET }, sources, logger, undefined, undefined, undefined, metrics.recorder.admission(fn))]),
  );
  return {
    app: buildApp({ runtimes, readiness: () => Promise.resolve({ ready: true, message: '' }), ...(withMetrics ? { metrics: metrics.registry } : {}) }),
    render: () => metrics.registry.render(),
  };
}

describe('/metrics', () => {
  let server: ReturnType<typeof app>;

  beforeAll(async () => {
    server = app(true);
    await server.app.ready();
  });
  afterAll(async () => {
    await server.app.close();
  });

  it.each([
    { why: 'no credentials', url: '/metrics', headers: {} },
    { why: 'a wrong secret in the path', url: `/metrics/${STRANGER_SECRET}`, headers: {} },
    { why: 'a wrong Bearer token', url: '/metrics', headers: { authorization: `Bearer ${STRANGER_SECRET}` } },
    { why: 'the secret below another segment', url: `/metrics/x/${SECRET}`, headers: {} },
  ])('answers a caller with $why 404, as for any unknown path, and closes the connection', async ({ url, headers }) => {
    const response = await server.app.inject({ method: 'GET', url, headers });
    expect(response.statusCode).toBe(404);
    expect(response.body).toBe('{"message":"Not Found"}');
    expect(response.headers.connection).toBe('close');
  });

  it.each([
    { why: 'the secret in the path', url: `/metrics/${SECRET}`, headers: {} },
    { why: 'the previous secret in the path', url: `/metrics/${PREVIOUS_SECRET}`, headers: {} },
    { why: 'a Bearer token', url: '/metrics', headers: { authorization: `Bearer ${SECRET}` } },
  ])('serves Prometheus text to a caller with $why', async ({ url, headers }) => {
    const response = await server.app.inject({ method: 'GET', url, headers });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe(PROMETHEUS_CONTENT_TYPE);
    expect(response.body).toContain('# TYPE sidecarset_admission_reviews_total counter\n');
  });

  it('shows the counters moving with the reviews the server answers', async () => {
    const scrape = async () => (await server.app.inject({ method: 'GET', url: `/metrics/${SECRET}` })).body;
    const reviews = (text: string, outcome: string) => Number(new RegExp(`^sidecarset_admission_reviews_total\\{function="pod-inject",outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    const before = await scrape();
    for (const uid of ['m-1', 'm-2']) {
      const answer = await server.app.inject({ method: 'POST', url: `/pod-inject/${SECRET}?timeout=10s`, headers: json, payload: podReview(uid) });
      expect(answer.statusCode).toBe(200);
    }
    const stranger = await server.app.inject({ method: 'POST', url: `/pod-inject/${STRANGER_SECRET}`, headers: json, payload: podReview('m-3') });
    expect(stranger.statusCode).toBe(404);
    const after = await scrape();
    expect(reviews(after, 'Patched') - reviews(before, 'Patched')).toBe(2);
    expect(after).toMatch(/^sidecarset_admission_answer_duration_seconds_count\{function="pod-inject"\} [1-9]/m);
    expect(after).toMatch(/^sidecarset_admission_sidecarset_list_duration_seconds_count\{function="pod-inject"\} [1-9]/m);
    // Turned away before its body is read, and counted as the Lambda handler counts it.
    expect(reviews(after, 'RefusedCaller') - reviews(before, 'RefusedCaller')).toBe(1);
    expect(after).toBe(server.render());
  });

  it('answers a POST from a caller with the secret 404: /metrics is read-only', async () => {
    const response = await server.app.inject({ method: 'POST', url: `/metrics/${SECRET}`, headers: json, payload: '{}' });
    expect(response.statusCode).toBe(404);
  });

  it('is an unknown path on a server built without metrics', async () => {
    const bare = app(false);
    await bare.app.ready();
    try {
      const response = await bare.app.inject({ method: 'GET', url: `/metrics/${SECRET}` });
      expect(response.statusCode).toBe(404);
    } finally {
      await bare.app.close();
    }
  });
});
