/**
 * Pod triggers on the status-sync Lambda (docs/RECONCILER.md, "A pod change
 * starts a reconcile"): each pod change is its own queued invoke, so a warm
 * container ends one that a reconcile already covered without an API request,
 * and runs a reconcile for one sent after that reconcile began reading.
 */
import { describe, expect, it } from '@jest/globals';
import { statusSyncLambda } from '../../functions/status-sync/lambda.ts';
import { admittedEvent } from '../../lib/status-sync/admitted-event.ts';
import { podsChange, POD_DEBOUNCE_MS } from '../../lib/status-sync/pod-trigger.ts';
import { capturingLogger } from '../../testkit/reviews.ts';
import { fakeOneSetCluster } from './fake-cluster.ts';
import { hashOf, listedPod, storedSet } from '../../testkit/status-sync-objects.ts';

const context = { awsRequestId: 'req-1', getRemainingTimeInMillis: () => 60_000 };
const set = storedSet('log-agent');
const fake = fakeOneSetCluster(set, [listedPod({ name: 'a', injected: { 'log-agent': hashOf(set) } })]);

describe('the status-sync Lambda, pod triggers', () => {
  it('reconciles the set once for a burst of pod triggers sent before its reconcile began reading, and ends the rest without a request', async () => {
    const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger: capturingLogger().logger }, continueWith: () => Promise.resolve() });
    // A burst: every trigger sent now, queued one behind the other (reserved concurrency 1).
    const sentAt = Date.now() - POD_DEBOUNCE_MS;
    const burst = Array.from({ length: 20 }, () => admittedEvent(podsChange('log-agent'), sentAt));
    const first = await handler(burst[0]!, context);
    expect(first.controller).toMatchObject({ reconciles: 1, errors: [] });
    fake.seen.length = 0;
    for (const event of burst.slice(1)) expect(await handler(event, context)).toEqual({ skipped: 'covered pod change' });
    expect(fake.seen).toEqual([]);
    // A change sent after that reconcile began reading is not covered: its own reconcile.
    const later = await handler(admittedEvent(podsChange('log-agent')), context);
    expect(later.skipped).toBeUndefined();
    expect(later.controller).toMatchObject({ reconciles: 1 });
  });

  it('takes a pod trigger of a set that is not there for one read and no reconcile', async () => {
    const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger: capturingLogger().logger }, continueWith: () => Promise.resolve() });
    fake.seen.length = 0;
    const result = await handler(admittedEvent(podsChange('nowhere'), Date.now() - POD_DEBOUNCE_MS), context);
    expect(result.controller).toMatchObject({ reconciles: 0, errors: [] });
    expect(fake.seen.filter((r) => r.url.includes('/sidecarsets/'))).toHaveLength(1);
  });

  it('refuses a pod trigger whose sentAt is not a number, without a request', async () => {
    const { logger, entries } = capturingLogger();
    const handler = await statusSyncLambda({ env: { KUBECONFIG_CONTENT: fake.kubeconfig() }, overrides: { logger }, continueWith: () => Promise.resolve() });
    fake.seen.length = 0;
    expect(await handler({ ...admittedEvent(podsChange('log-agent')), sentAt: 'soon' } as never, context)).toEqual({});
    expect(fake.seen).toEqual([]);
    expect(entries()).toEqual([expect.objectContaining({ level: 'error', message: 'status-sync event refused', error: 'SidecarSetAdmitted event: sentAt must be a number' })]);
  });
});
