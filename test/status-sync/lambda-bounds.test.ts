/**
 * What the status-sync Lambda does with events it may receive more than once
 * or that it sent itself (docs/RECONCILER.md, "While a rollout is in flight"
 * and "A SidecarSet change starts a reconcile at once"): the same admitted
 * change again costs no API request; a self-requeue follows the sets it
 * names; a malformed one is refused without a request.
 */
import { describe, expect, it } from '@jest/globals';
import { statusSyncLambda } from '../../functions/status-sync/lambda.ts';
import { CONTINUE_EVENT_KIND, MAX_CONTINUED_SETS } from '../../lib/status-sync/admitted-event.ts';
import { capturingLogger } from '../../testkit/reviews.ts';
import { fakeOneSetCluster } from './fake-cluster.ts';
import { hashOf, listedPod, storedSet } from '../../testkit/status-sync-objects.ts';

const context = { awsRequestId: 'req-1', getRemainingTimeInMillis: () => 60_000 };
const set = storedSet('log-agent');
const fake = fakeOneSetCluster(set, [listedPod({ name: 'a', injected: { 'log-agent': hashOf(set) } })]);

const handlerFor = async () => {
  const { logger, entries } = capturingLogger();
  const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger }, continueWith: () => Promise.resolve() });
  return { handler, entries };
};

describe('the status-sync Lambda, events it may see twice', () => {
  it('answers the same admitted change again without a single API request', async () => {
    const { handler } = await handlerFor();
    const admitted = { kind: 'SidecarSetAdmitted', sidecarSet: 'log-agent', uid: '', operation: 'UPDATE' as const, resourceVersion: '0' };
    expect((await handler(admitted, context)).controller).toMatchObject({ reconciles: 1 });
    fake.seen.length = 0;
    expect(await handler(admitted, context)).toEqual({ skipped: 'repeated trigger' });
    expect(fake.seen).toEqual([]);
    // Another change of the same set is not a repeat.
    expect((await handler({ ...admitted, resourceVersion: '1' }, context)).skipped).toBeUndefined();
  });

  it('answers a forged CREATE of a set that is not there with one read and no reconcile', async () => {
    const { handler } = await handlerFor();
    const result = await handler({ kind: 'SidecarSetAdmitted', sidecarSet: 'nowhere', uid: 'forged', operation: 'CREATE', resourceVersion: '' }, context);
    expect(result.controller).toMatchObject({ reconciles: 0, errors: [] });
    // Which version is served (none but v1alpha1 here), then the one read.
    expect(fake.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /apis/apps.kruise.io/v1beta1', 'GET /apis/apps.kruise.io/v1alpha1/sidecarsets/nowhere']);
  });
});

describe('the status-sync Lambda, self-requeues', () => {
  it('follows the sets a self-requeue names, without a resync of every set', async () => {
    const { handler } = await handlerFor();
    const result = await handler({ kind: CONTINUE_EVENT_KIND, sets: ['log-agent'], from: 'another-container', sentAt: Date.now() }, context);
    expect(result.controller).toMatchObject({ reconciles: 1, errors: [] });
    expect(result.continued).toEqual([]);
    expect(fake.seen.some((r) => r.url === '/apis/apps.kruise.io/v1alpha1/sidecarsets')).toBe(false);
  });

  it.each([
    ['a name that is not a SidecarSet name', { sets: ['../pods'], from: 'x', sentAt: 1 }],
    [`more than ${MAX_CONTINUED_SETS} sets`, { sets: Array.from({ length: MAX_CONTINUED_SETS + 1 }, (_, i) => `s${i}`), from: 'x', sentAt: 1 }],
    ['no sentAt', { sets: ['log-agent'], from: 'x' }],
  ])('refuses a self-requeue with %s, without an API request', async (_name, fields) => {
    const { handler, entries } = await handlerFor();
    expect(await handler({ kind: CONTINUE_EVENT_KIND, ...fields }, context)).toEqual({});
    expect(fake.seen).toEqual([]);
    expect(entries()).toEqual([expect.objectContaining({ level: 'error', message: 'status-sync event refused' })]);
  });
});
