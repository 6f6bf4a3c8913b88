/**
 * The SidecarSet validating webhook tells the reconciler about every change
 * it admits (never a dry run, never a denial), waits for the enqueue at
 * most ADMITTED_ENQUEUE_TIMEOUT_MS or the review's deadline, and answers "allowed"
 * whatever the trigger does. Served through the HTTP handler, as both entry points do.
 */
import { describe, expect, it } from '@jest/globals';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import type { AdmittedSidecarSet, RolloutTrigger, SidecarSetSource } from '../../lib/ports.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { DEFAULT_MAX_BODY_BYTES, serveAdmission, type HttpResponse } from '../../lib/webhooks/http-handler.ts';
import { ADMITTED_ENQUEUE_TIMEOUT_MS } from '../../lib/webhooks/sidecarset-validate.ts';
import { NOW } from '../../testkit/sidecarset-objects.ts';
import { capturingLogger, SECRET, sidecarSetReview, userSidecarSet } from '../../testkit/reviews.ts';

interface Told {
  change: AdmittedSidecarSet;
  signal: AbortSignal | undefined;
}

/** A trigger that records what it was told and then does what `then` says. */
function recordingTrigger(then: (signal: AbortSignal | undefined) => Promise<void> = () => Promise.resolve()): { trigger: RolloutTrigger; told: Told[] } {
  const told: Told[] = [];
  return {
    told,
    trigger: {
      admitted(changes, signal) {
        for (const change of changes) told.push({ change, signal });
        return then(signal);
      },
    },
  };
}

/** A SidecarSet as the validating webhook sees it: defaulted, named, with a uid (and a resourceVersion on UPDATE). */
function storedShape(extra: Record<string, unknown> = {}, spec?: Record<string, unknown>): SidecarSet {
  const set = userSidecarSet('dns');
  return defaultSidecarSet({ ...set, ...(spec !== undefined ? { spec } : {}), metadata: { ...(set.metadata as Record<string, unknown>), uid: '7c9e6679-7425-40de-944b-e07fc1f90ae7', ...extra } });
}

function createReview(overrides: Record<string, unknown> = {}, object: unknown = storedShape()): Record<string, unknown> {
  const review = sidecarSetReview('uid-create', object);
  return { ...review, request: { ...(review.request as Record<string, unknown>), ...overrides } };
}

function updateReview(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const old = storedShape({ resourceVersion: '4711' });
  const changed = storedShape({ resourceVersion: '4711' }, { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'dns-f', image: 'dns:1.1' }] });
  return createReview({ uid: 'uid-update', operation: 'UPDATE', oldObject: old, options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' }, ...overrides }, changed);
}

async function validate(review: unknown, setup: { rollout?: RolloutTrigger; timeout?: string; sidecarSets?: SidecarSetSource } = {}) {
  const { logger, entries } = capturingLogger();
  const body = JSON.stringify(review);
  const response = await serveAdmission(
    { method: 'POST', path: `/${SECRET}`, headers: { 'content-type': 'application/json' }, timeout: setup.timeout ?? '10s', body, bodyBytes: Buffer.byteLength(body) },
    { fn: 'sidecarset-validate', secrets: { current: SECRET }, maxBodyBytes: DEFAULT_MAX_BODY_BYTES },
    {
      sidecarSets: setup.sidecarSets ?? memorySidecarSetSource([]),
      namespaces: memoryNamespaceSource([]),
      clock: { now: () => NOW },
      logger,
      ...(setup.rollout !== undefined ? { rollout: setup.rollout } : {}),
    },
  );
  return { response, logs: entries() };
}

function allowedOf(response: HttpResponse): unknown {
  expect(response.statusCode).toBe(200);
  return (JSON.parse(response.body) as { response: { allowed: unknown } }).response.allowed;
}

const warnings = (logs: Record<string, unknown>[]) => logs.filter((line) => line.level === 'warn');

describe('sidecarset-validate: an admitted change starts the set’s reconcile', () => {
  it('tells the trigger about an admitted CREATE: name, uid, operation and an empty resourceVersion', async () => {
    const { trigger, told } = recordingTrigger();
    const { response, logs } = await validate(createReview(), { rollout: trigger });
    expect(allowedOf(response)).toBe(true);
    expect(told.map((t) => t.change)).toEqual([{ sidecarSet: 'dns', uid: '7c9e6679-7425-40de-944b-e07fc1f90ae7', operation: 'CREATE', resourceVersion: '' }]);
    expect(told[0]?.signal).toBeInstanceOf(AbortSignal);
    expect(warnings(logs)).toEqual([]);
  });

  it('tells the trigger about an admitted UPDATE with the resourceVersion it replaces', async () => {
    const { trigger, told } = recordingTrigger();
    const { response } = await validate(updateReview(), { rollout: trigger });
    expect(allowedOf(response)).toBe(true);
    expect(told.map((t) => t.change)).toEqual([{ sidecarSet: 'dns', uid: '7c9e6679-7425-40de-944b-e07fc1f90ae7', operation: 'UPDATE', resourceVersion: '4711' }]);
  });

  it('sends an empty uid when the object carries none', async () => {
    const { trigger, told } = recordingTrigger();
    const noUid = { ...storedShape(), metadata: { name: 'dns' } };
    const { response } = await validate(createReview({}, noUid), { rollout: trigger });
    expect(allowedOf(response)).toBe(true);
    expect(told.map((t) => t.change)).toEqual([{ sidecarSet: 'dns', uid: '', operation: 'CREATE', resourceVersion: '' }]);
  });

  it.each([
    { what: 'a dry-run CREATE', review: () => createReview({ dryRun: true }) },
    { what: 'a dry-run UPDATE', review: () => updateReview({ dryRun: true }) },
  ])('admits $what without telling the trigger (nothing was written)', async ({ review }) => {
    const { trigger, told } = recordingTrigger();
    const { response } = await validate(review(), { rollout: trigger });
    expect(allowedOf(response)).toBe(true);
    expect(told).toEqual([]);
  });

  it('does not tell the trigger about a denied change', async () => {
    const { trigger, told } = recordingTrigger();
    const invalid = storedShape({}, { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'Bad_Name', image: 'dns:1.0' }] });
    const { response } = await validate(createReview({}, invalid), { rollout: trigger });
    expect(allowedOf(response)).toBe(false);
    expect(told).toEqual([]);
  });

  it('does not tell the trigger when it cannot decide (the cluster is unreachable)', async () => {
    const { trigger, told } = recordingTrigger();
    const down: SidecarSetSource = { list: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6443')) };
    const { response } = await validate(createReview(), { rollout: trigger, sidecarSets: down });
    expect(response.statusCode).toBe(503);
    expect(told).toEqual([]);
  });

  it('admits as before when no trigger is configured', async () => {
    const { response, logs } = await validate(createReview());
    expect(allowedOf(response)).toBe(true);
    expect(warnings(logs)).toEqual([]);
  });

  it('still admits when the trigger fails, and warns naming the set', async () => {
    const { trigger } = recordingTrigger(() => Promise.reject(new Error('Rate Exceeded.')));
    const { response, logs } = await validate(createReview(), { rollout: trigger });
    expect(allowedOf(response)).toBe(true);
    expect(warnings(logs)).toEqual([expect.objectContaining({ sidecarSet: 'dns', operation: 'CREATE', error: 'Rate Exceeded.' })]);
  });

  it('still admits when the trigger throws instead of rejecting', async () => {
    const { trigger } = recordingTrigger(() => {
      throw new Error('not a promise');
    });
    const { response, logs } = await validate(createReview(), { rollout: trigger });
    expect(allowedOf(response)).toBe(true);
    expect(warnings(logs)).toEqual([expect.objectContaining({ sidecarSet: 'dns', error: 'not a promise' })]);
  });

  it(`stops waiting for a trigger that never answers after ${ADMITTED_ENQUEUE_TIMEOUT_MS} ms, aborting its signal, and admits`, async () => {
    // Ignores its signal on purpose: the webhook must not rely on it.
    const { trigger, told } = recordingTrigger(() => new Promise<void>(() => undefined));
    const started = performance.now();
    const { response, logs } = await validate(createReview(), { rollout: trigger });
    const elapsed = performance.now() - started;
    expect(allowedOf(response)).toBe(true);
    expect(told[0]?.signal?.aborted).toBe(true);
    expect(warnings(logs)).toEqual([expect.objectContaining({ sidecarSet: 'dns', error: `no answer within ${ADMITTED_ENQUEUE_TIMEOUT_MS} ms` })]);
    // Answered in time for a 10 s webhook timeout (the HTTP handler's own 503 would come after 9 s).
    expect(elapsed).toBeGreaterThanOrEqual(ADMITTED_ENQUEUE_TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(8_000);
  });

  it('stops waiting at the review deadline when that comes first, and admits', async () => {
    const { trigger, told } = recordingTrigger(() => new Promise<void>(() => undefined));
    // A 1 s webhook timeout leaves the handler the 100 ms minimum deadline.
    const { response, logs } = await validate(createReview(), { rollout: trigger, timeout: '1s' });
    expect(allowedOf(response)).toBe(true);
    expect(told[0]?.signal?.aborted).toBe(true);
    expect(warnings(logs)).toEqual([expect.objectContaining({ sidecarSet: 'dns', error: expect.stringMatching(/deadline passed/) as unknown })]);
  });
});
