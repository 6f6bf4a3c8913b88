/**
 * The pod-change webhook and pod-inject's pod triggers
 * (docs/RECONCILER.md, "A pod change starts a pass"): they answer as they
 * would without a reconciler, whatever the trigger does; they trigger the
 * sets the pod was (or is being) injected with, and only for changes that
 * move those sets' counts; never on a dry run.
 */
import { describe, expect, it } from '@jest/globals';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import type { AdmittedSidecarSet, RolloutTrigger } from '../../lib/ports.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { DEFAULT_MAX_BODY_BYTES, serveAdmission } from '../../lib/webhooks/http-handler.ts';
import { POD_ENQUEUE_TIMEOUT_MS } from '../../lib/webhooks/rollout-enqueue.ts';
import type { FunctionName } from '../../lib/webhooks/descriptors.ts';
import { NOW } from '../../testkit/sidecarset-objects.ts';
import { appPod, capturingLogger, podReview, podStatusReview, SECRET, userSidecarSet } from '../../testkit/reviews.ts';

function recording(then: () => Promise<void> = () => Promise.resolve()): { trigger: RolloutTrigger; told: AdmittedSidecarSet[] } {
  const told: AdmittedSidecarSet[] = [];
  return {
    told,
    trigger: {
      admitted(change) {
        told.push(change);
        return then();
      },
    },
  };
}

async function serve(fn: FunctionName, review: unknown, rollout: RolloutTrigger, sets: SidecarSet[] = []) {
  const { logger, entries } = capturingLogger();
  const body = JSON.stringify(review);
  const response = await serveAdmission(
    { method: 'POST', path: `/${SECRET}`, headers: { 'content-type': 'application/json' }, timeout: '1s', body, bodyBytes: Buffer.byteLength(body) },
    { fn, secrets: { current: SECRET }, maxBodyBytes: DEFAULT_MAX_BODY_BYTES },
    { sidecarSets: memorySidecarSetSource(sets), namespaces: memoryNamespaceSource([]), clock: { now: () => NOW }, rollout, logger },
  );
  return { status: response.statusCode, answer: (JSON.parse(response.body) as { response: { allowed: boolean; patch?: string } }).response, warnings: entries().filter((e) => e.level === 'warn') };
}

const injected = (sets: string, status: Record<string, unknown>) => ({ ...appPod(), metadata: { ...(appPod().metadata as Record<string, unknown>), name: 'web-0', annotations: { 'kruise.io/sidecarset-injected-list': sets } }, status });
const ready = (value: string) => ({ phase: 'Running', conditions: [{ type: 'Ready', status: value }] });
const withRequest = (review: Record<string, unknown>, extra: Record<string, unknown>) => ({ ...review, request: { ...(review.request as Record<string, unknown>), ...extra } });

describe('the pod-change webhook', () => {
  it('triggers each set of the pod\'s injected list when its readiness changes, and answers allowed', async () => {
    const { trigger, told } = recording();
    const result = await serve('pod-change', podStatusReview('u1', injected('a,b', ready('False')), injected('a,b', ready('True'))), trigger);
    expect(result).toMatchObject({ status: 200, answer: { allowed: true } });
    expect(told).toEqual([
      { sidecarSet: 'a', uid: '', operation: 'PODS', resourceVersion: '' },
      { sidecarSet: 'b', uid: '', operation: 'PODS', resourceVersion: '' },
    ]);
  });

  it.each([
    ['a status write that changes nothing counted (only the pod IP)', podStatusReview('u2', injected('a', { ...ready('True'), podIP: '10.0.0.1' }), injected('a', { ...ready('True'), podIP: '10.0.0.2' }))],
    ['a pod no set injected', podStatusReview('u3', { ...appPod(), status: ready('False') }, { ...appPod(), status: ready('True') })],
    ['a dry run', withRequest(podStatusReview('u4', injected('a', ready('False')), injected('a', ready('True'))), { dryRun: true })],
    ['the final DELETE of a pod already terminating', withRequest(podReview('u5', null), { operation: 'DELETE', oldObject: { ...injected('a', ready('False')), metadata: { name: 'web-0', deletionTimestamp: '2026-12-01T00:00:00Z', annotations: { 'kruise.io/sidecarset-injected-list': 'a' } } } })],
  ])('answers allowed without a trigger for %s', async (_, review) => {
    const { trigger, told } = recording();
    const result = await serve('pod-change', review, trigger);
    expect(result).toMatchObject({ status: 200, answer: { allowed: true } });
    expect(told).toEqual([]);
  });

  it('triggers the sets of a pod deleted (the first DELETE, of a pod not yet terminating)', async () => {
    const { trigger, told } = recording();
    await serve('pod-change', withRequest(podReview('u6', null), { operation: 'DELETE', oldObject: injected('a', ready('True')) }), trigger);
    expect(told.map((c) => c.sidecarSet)).toEqual(['a']);
  });

  it(`answers allowed within ${POD_ENQUEUE_TIMEOUT_MS} ms and a warning when the enqueue never answers`, async () => {
    const { trigger } = recording(() => new Promise(() => undefined));
    const started = performance.now();
    const result = await serve('pod-change', podStatusReview('u7', injected('a', ready('False')), injected('a', ready('True'))), trigger);
    expect(result.answer.allowed).toBe(true);
    expect(performance.now() - started).toBeLessThan(POD_ENQUEUE_TIMEOUT_MS + 500);
    expect(result.warnings).toEqual([expect.objectContaining({ message: 'could not start the pass for a pod change now; the schedule will', sidecarSet: 'a' })]);
  });

  it('answers allowed when the enqueue fails', async () => {
    const { trigger } = recording(() => Promise.reject(new Error('throttled')));
    const result = await serve('pod-change', podStatusReview('u8', injected('a', ready('False')), injected('a', ready('True'))), trigger);
    expect(result).toMatchObject({ status: 200, answer: { allowed: true } });
    expect(result.warnings).toEqual([expect.objectContaining({ sidecarSet: 'a', error: 'throttled' })]);
  });
});

describe('pod-inject\'s pod triggers', () => {
  const set = defaultSidecarSet(userSidecarSet('dns'));

  it('triggers the sets it injected, and patches the pod as without a trigger', async () => {
    const { trigger, told } = recording(() => Promise.reject(new Error('down')));
    const result = await serve('pod-inject', podReview('u9'), trigger, [set]);
    expect(result.answer.allowed).toBe(true);
    expect(result.answer.patch).toEqual(expect.any(String));
    expect(told).toEqual([{ sidecarSet: 'dns', uid: '', operation: 'PODS', resourceVersion: '' }]);
  });

  it('does not trigger on a dry run', async () => {
    const { trigger, told } = recording();
    const result = await serve('pod-inject', withRequest(podReview('u10'), { dryRun: true }), trigger, [set]);
    expect(result.answer.patch).toEqual(expect.any(String));
    expect(told).toEqual([]);
  });
});
