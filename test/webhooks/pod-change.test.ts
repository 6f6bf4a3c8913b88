/**
 * The pod-change webhook and pod-inject's pod triggers
 * (docs/RECONCILER.md, "A pod change starts a reconcile"): they answer as they
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

/** A trigger that records each hand-over's changes. */
function recording(then: () => Promise<void> = () => Promise.resolve()): { trigger: RolloutTrigger; told: AdmittedSidecarSet[]; handOvers: AdmittedSidecarSet[][] } {
  const told: AdmittedSidecarSet[] = [];
  const handOvers: AdmittedSidecarSet[][] = [];
  return {
    told,
    handOvers,
    trigger: {
      admitted(changes) {
        told.push(...changes);
        handOvers.push([...changes]);
        return then();
      },
    },
  };
}

/** Sets named a, b, c selecting the test pods (app=web). */
const SELECTING = ['a', 'b', 'c'].map((name) => defaultSidecarSet(userSidecarSet(name)));

async function serve(fn: FunctionName, review: unknown, rollout: RolloutTrigger, sets: SidecarSet[] = SELECTING) {
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
  it('triggers each set of the pod\'s injected list when its readiness changes, in one hand-over, and answers allowed', async () => {
    const { trigger, handOvers } = recording();
    const result = await serve('pod-change', podStatusReview('u1', injected('a,b', ready('False')), injected('a,b', ready('True'))), trigger);
    expect(result).toMatchObject({ status: 200, answer: { allowed: true } });
    expect(handOvers).toEqual([
      [
        { sidecarSet: 'a', uid: '', operation: 'PODS', resourceVersion: '' },
        { sidecarSet: 'b', uid: '', operation: 'PODS', resourceVersion: '' },
      ],
    ]);
  });

  it('hands over at most 10 sets in one hand-over for a pod that 40 selecting sets injected', async () => {
    const { trigger, handOvers } = recording();
    const many = Array.from({ length: 40 }, (_, i) => defaultSidecarSet(userSidecarSet(`s${String(i).padStart(2, '0')}`)));
    const names = many.map((s) => s.metadata?.name ?? '').join(',');
    await serve('pod-change', podStatusReview('u14', injected(names, ready('False')), injected(names, ready('True'))), trigger, many);
    expect(handOvers.map((h) => h.length)).toEqual([10]);
  });

  it('triggers only the sets of the list that are stored and select the pod, and none for a pod that names only others', async () => {
    const { trigger, told } = recording();
    const elsewhere = defaultSidecarSet({ ...userSidecarSet('d'), spec: { ...(userSidecarSet('d').spec as Record<string, unknown>), selector: { matchLabels: { app: 'db' } } } });
    await serve('pod-change', podStatusReview('u11', injected('a,d,gone', ready('False')), injected('a,d,gone', ready('True'))), trigger, [...SELECTING, elsewhere]);
    expect(told.map((c) => c.sidecarSet)).toEqual(['a']);
    const result = await serve('pod-change', podStatusReview('u12', injected('d,gone', ready('False')), injected('d,gone', ready('True'))), trigger, [...SELECTING, elsewhere]);
    expect(result).toMatchObject({ status: 200, answer: { allowed: true } });
    expect(told.map((c) => c.sidecarSet)).toEqual(['a']);
  });

  it('answers allowed with a warning and no trigger when the sets cannot be read', async () => {
    const { trigger, told } = recording();
    const { logger, entries } = capturingLogger();
    const body = JSON.stringify(podStatusReview('u13', injected('a', ready('False')), injected('a', ready('True'))));
    const response = await serveAdmission(
      { method: 'POST', path: `/${SECRET}`, headers: { 'content-type': 'application/json' }, timeout: '1s', body, bodyBytes: Buffer.byteLength(body) },
      { fn: 'pod-change', secrets: { current: SECRET }, maxBodyBytes: DEFAULT_MAX_BODY_BYTES },
      { sidecarSets: { list: () => Promise.reject(new Error('API server down')) }, namespaces: memoryNamespaceSource([]), clock: { now: () => NOW }, rollout: trigger, logger },
    );
    expect(response.statusCode).toBe(200);
    expect((JSON.parse(response.body) as { response: { allowed: boolean } }).response.allowed).toBe(true);
    expect(told).toEqual([]);
    expect(entries().filter((e) => e.level === 'warn')).toEqual([expect.objectContaining({ message: expect.stringContaining('the SidecarSets could not be read'), error: 'API server down' })]);
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
    expect(result.warnings).toEqual([expect.objectContaining({ message: 'could not start the reconcile for a pod change now; the schedule\'s resync will', sidecarSet: 'a' })]);
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
