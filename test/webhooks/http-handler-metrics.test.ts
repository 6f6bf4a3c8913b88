/**
 * The HTTP handler's metrics: one review fact per request, from the same moment and
 * facts as its log line (outcome, latency, time spent listing SidecarSets).
 */
import { describe, expect, it } from '@jest/globals';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import type { ReviewFact } from '../../lib/metrics/facts.ts';
import type { Clock, SidecarSetSource } from '../../lib/ports.ts';
import { DEFAULT_MAX_BODY_BYTES, serveAdmission, type HttpRequest } from '../../lib/webhooks/http-handler.ts';
import type { AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { NOW, sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { appPod, capturingLogger, podReview, SECRET, sidecarSetReview, STRANGER_SECRET, userSidecarSet } from '../../testkit/reviews.ts';

const fixedClock: Clock = { now: () => NOW };

function httpRequest(review: unknown, overrides: Partial<HttpRequest> = {}): HttpRequest {
  const body = overrides.body ?? JSON.stringify(review);
  return { method: 'POST', path: `/${SECRET}`, headers: { 'content-type': 'application/json' }, timeout: '10s', body, bodyBytes: Buffer.byteLength(body), ...overrides };
}

/** Serves one request and returns what the HTTP handler reported as metrics and as log lines. */
async function serve(fn: AdmissionFunctionName, request: HttpRequest, sidecarSets: SidecarSetSource = memorySidecarSetSource([sidecarSet('log-agent')])) {
  const facts: ReviewFact[] = [];
  const stale: number[] = [];
  const { logger, entries } = capturingLogger();
  const response = await serveAdmission(
    request,
    { fn, secrets: { current: SECRET }, maxBodyBytes: DEFAULT_MAX_BODY_BYTES },
    {
      sidecarSets,
      namespaces: memoryNamespaceSource([]),
      clock: fixedClock,
      logger,
      metrics: { review: (fact) => facts.push(fact), staleServed: (ms) => stale.push(ms) },
    },
  );
  return { response, facts, logs: entries() };
}

const invalidSet = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'broken' }, spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'Bad_Name' }] } };

function statusUpdate(uid: string): Record<string, unknown> {
  const review = podReview(uid) as { request: Record<string, unknown> };
  review.request.operation = 'UPDATE';
  review.request.subResource = 'status';
  review.request.oldObject = appPod();
  return review;
}

describe('the HTTP handler reports one review fact per request', () => {
  it.each([
    { outcome: 'Patched', fn: 'pod-inject' as const, request: httpRequest(podReview('uid-1')), lists: true },
    { outcome: 'Patched', fn: 'sidecarset-default' as const, request: httpRequest(sidecarSetReview('uid-2')), lists: false },
    { outcome: 'Allowed', fn: 'sidecarset-validate' as const, request: httpRequest(sidecarSetReview('uid-3', defaultSidecarSet(userSidecarSet() as SidecarSet))), lists: true },
    // A set with field errors is denied before the stored sets are read.
    { outcome: 'Denied', fn: 'sidecarset-validate' as const, request: httpRequest(sidecarSetReview('uid-4', invalidSet)), lists: false },
    { outcome: 'Skipped', fn: 'pod-inject' as const, request: httpRequest(statusUpdate('uid-5')), lists: false },
    { outcome: 'BadRequest', fn: 'pod-inject' as const, request: httpRequest(undefined, { body: 'not json' }), lists: false },
  ])('$outcome from $fn, with its latency, and the list latency when it listed SidecarSets', async ({ outcome, fn, request, lists }) => {
    const { facts, logs } = await serve(fn, request);
    expect(facts).toHaveLength(1);
    const [fact] = facts;
    expect(fact?.outcome).toBe(outcome);
    // The log line and the metric are the same moment: the metric is not rounded, the line is.
    expect(Math.round(fact?.latencyMs ?? -1)).toBe(logs[0]?.durationMs);
    expect(fact?.listMs !== undefined).toBe(lists);
    if (fact?.listMs !== undefined) expect(fact.listMs).toBeLessThanOrEqual(fact.latencyMs ?? 0);
  });

  it('a stranger is counted as RefusedCaller, without a latency', async () => {
    const { response, facts } = await serve('pod-inject', httpRequest(podReview('uid-6'), { path: `/${STRANGER_SECRET}` }));
    expect(response.statusCode).toBe(404);
    expect(facts).toEqual([{ outcome: 'RefusedCaller' }]);
  });

  it('a source that cannot list is CannotDecide, with the time the list took', async () => {
    const failing: SidecarSetSource = {
      list: async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('the API server answered 503');
      },
    };
    const { response, facts } = await serve('pod-inject', httpRequest(podReview('uid-7')), failing);
    expect(response.statusCode).toBe(503);
    expect(facts).toHaveLength(1);
    expect(facts[0]?.outcome).toBe('CannotDecide');
    // 20 ms of waiting, measured with a wide margin for a busy machine (timers may fire a little early).
    expect(facts[0]?.listMs).toBeGreaterThanOrEqual(15);
  });

  it('an HTTP handler without metrics serves as before', async () => {
    const { logger } = capturingLogger();
    const response = await serveAdmission(
      httpRequest(podReview('uid-8')),
      { fn: 'pod-inject', secrets: { current: SECRET }, maxBodyBytes: DEFAULT_MAX_BODY_BYTES },
      { sidecarSets: memorySidecarSetSource([sidecarSet('log-agent')]), namespaces: memoryNamespaceSource([]), clock: fixedClock, logger },
    );
    expect(response.statusCode).toBe(200);
  });
});
