/**
 * The HTTP handler's observing wrapper: one log line and one metric fact per
 * request, both from the outcome the wrapped parts return, with the time
 * from arrival and the time spent listing SidecarSets.
 */
import { describe, expect, it } from '@jest/globals';
import { memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import type { ReviewFact } from '../../lib/metrics/facts.ts';
import { observe, reviewFactOf } from '../../lib/webhooks/request-observer.ts';
import type { RequestOutcome } from '../../lib/webhooks/request-outcome.ts';
import { sidecarSet } from '../../testkit/sidecarset-objects.ts';
import { capturingLogger } from '../../testkit/reviews.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function observers(withMetrics = true) {
  const facts: ReviewFact[] = [];
  const { logger, entries } = capturingLogger();
  const metrics = withMetrics ? { review: (fact: ReviewFact) => facts.push(fact), staleServed: () => undefined } : undefined;
  return { observers: { logger, metrics }, facts, entries };
}

describe('observe', () => {
  it('logs the outcome once, after the common fields, and counts it once', async () => {
    const { observers: o, facts, entries } = observers();
    const outcome: RequestOutcome = { kind: 'answered', uid: 'u1', verdict: 'patched', body: '{}' };
    await expect(observe({ fn: 'pod-inject', requestId: 'req-1' }, o, () => Promise.resolve(outcome))).resolves.toBe(outcome);
    const logs = entries();
    expect(logs).toHaveLength(1);
    expect(Object.keys(logs[0] ?? {})).toEqual(['time', 'level', 'message', 'function', 'outcome', 'durationMs', 'requestId', 'uid', 'statusCode']);
    expect(logs[0]).toMatchObject({ level: 'info', message: 'admission', function: 'pod-inject', outcome: 'patched', requestId: 'req-1', uid: 'u1', statusCode: 200 });
    expect(facts).toEqual([{ outcome: 'Patched', latencyMs: expect.any(Number) }]);
  });

  it('logs a failure at error level as "admission failed", and leaves out a request id it was not given', async () => {
    const { observers: o, facts, entries } = observers();
    await observe({ fn: 'sidecarset-validate' }, o, () => Promise.resolve<RequestOutcome>({ kind: 'failed', uid: 'u2', status: 503, message: 'down' }));
    expect(entries()).toEqual([expect.objectContaining({ level: 'error', message: 'admission failed', outcome: 'failed', uid: 'u2', statusCode: 503, error: 'down' })]);
    expect(entries()[0]).not.toHaveProperty('requestId');
    expect(facts).toEqual([{ outcome: 'CannotDecide', latencyMs: expect.any(Number) }]);
  });

  it('times the request from its arrival to its outcome, in the log and the metric alike', async () => {
    const { observers: o, facts, entries } = observers();
    await observe({ fn: 'pod-inject' }, o, async () => {
      await sleep(60);
      return { kind: 'rejected', why: 'content-type' };
    });
    expect(facts[0]?.latencyMs).toBeGreaterThanOrEqual(55);
    expect(entries()[0]?.durationMs).toBe(Math.round(facts[0]?.latencyMs ?? -1));
  });

  it('counts a refused caller without a latency', async () => {
    const { observers: o, facts, entries } = observers();
    await observe({ fn: 'pod-inject' }, o, () => Promise.resolve<RequestOutcome>({ kind: 'refused-caller' }));
    expect(facts).toEqual([{ outcome: 'RefusedCaller' }]);
    expect(entries()).toEqual([expect.objectContaining({ outcome: 'unauthenticated', statusCode: 404 })]);
  });

  it('adds up the time of every list the review made through the timed source', async () => {
    const { observers: o, facts } = observers();
    const slow = { list: async (signal?: AbortSignal) => (await sleep(30), memorySidecarSetSource([sidecarSet('a')]).list(signal)) };
    await observe({ fn: 'pod-inject' }, o, async (observation) => {
      const source = observation.timedSidecarSets(slow);
      await source.list();
      await source.list();
      return { kind: 'answered', uid: 'u', verdict: 'allowed', body: '{}' };
    });
    expect(facts[0]?.listMs).toBeGreaterThanOrEqual(55);
    expect(facts[0]?.latencyMs).toBeGreaterThanOrEqual(facts[0]?.listMs ?? Infinity);
  });

  it('has no list time for a review that did not list', async () => {
    const { observers: o, facts } = observers();
    await observe({ fn: 'sidecarset-default' }, o, () => Promise.resolve<RequestOutcome>({ kind: 'answered', uid: 'u', verdict: 'allowed', body: '{}' }));
    expect(facts[0]).not.toHaveProperty('listMs');
  });

  it('without metrics, logs alone and hands the source over untimed', async () => {
    const { observers: o, entries } = observers(false);
    const source = memorySidecarSetSource([]);
    let handed: unknown;
    await observe({ fn: 'pod-inject' }, o, (observation) => {
      handed = observation.timedSidecarSets(source);
      return Promise.resolve<RequestOutcome>({ kind: 'rejected', why: 'method', method: 'GET' });
    });
    expect(handed).toBe(source);
    expect(entries()).toEqual([expect.objectContaining({ outcome: 'rejected', statusCode: 405, reason: 'method GET' })]);
  });
});

describe('reviewFactOf', () => {
  it('names the outcome as the Outcome dimension does, and keeps the timings it is given', () => {
    expect(reviewFactOf({ kind: 'rejected', why: 'not-json', error: 'x' }, 3.5, 1.25)).toEqual({ outcome: 'BadRequest', latencyMs: 3.5, listMs: 1.25 });
    expect(reviewFactOf({ kind: 'refused-caller' }, 3.5)).toEqual({ outcome: 'RefusedCaller' });
    expect(reviewFactOf({ kind: 'refused-caller' })).toEqual({ outcome: 'RefusedCaller' });
  });
});
