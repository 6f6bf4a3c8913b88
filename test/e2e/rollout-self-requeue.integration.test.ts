/**
 * A rollout still in flight when an invocation's controller budget ends goes on
 * in the self-requeue that invocation sends itself, not at the next
 * scheduled tick: the real control plane with the test kubelet, the
 * status-sync Lambda composed as on AWS, its self-requeues run one at a
 * time as Lambda runs them (reserved concurrency 1). A self-requeue
 * delivered again after a later invocation started is dropped.
 */
import { expect, it } from '@jest/globals';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { statusSyncLambda, type InvocationResult } from '../../functions/status-sync/lambda.ts';
import { admittedEvent, type ContinueEvent } from '../../lib/status-sync/admitted-event.ts';
import { budgetOf } from '../../testkit/faults/rollout-faults.ts';
import { NEW_IMAGE, SIDECAR, seedRollout, startRolloutCluster, updateSidecarImage } from '../../testkit/faults/rollout-fixture.ts';
import { recordRollout } from '../../testkit/faults/rollout-recorder.ts';
import { capturingLogger } from '../../testkit/reviews.ts';

describeWithControlPlane('a rollout that outlasts one invocation', () => {
  it('continues in the invocation\'s own self-requeue until done, with no scheduled tick; a stale self-requeue is dropped', async () => {
    const cluster = await startRolloutCluster({ readyDelayMs: 1_000 });
    try {
      const pods = 12;
      const seeded = await seedRollout(cluster, { name: 'cont', pods, maxUnavailable: 2 });
      const sent: ContinueEvent[] = [];
      const handler = await statusSyncLambda({
        env: { KUBECONFIG_CONTENT: cluster.cp.kubeconfig('functions') },
        overrides: { logger: capturingLogger().logger },
        continueWith: (event) => {
          sent.push(event);
          return Promise.resolve();
        },
        controllerBudgetMs: 2_500,
      });
      const context = (id: string) => ({ awsRequestId: id, getRemainingTimeInMillis: () => 120_000 });
      const target = await updateSidecarImage(cluster.cp, seeded.set, NEW_IMAGE);
      const recorder = await recordRollout(cluster.cp, seeded.namespace, target, budgetOf(2, pods), SIDECAR);
      const results: InvocationResult[] = [await handler(admittedEvent({ sidecarSet: 'cont', uid: target.metadata?.uid ?? '', operation: 'UPDATE', resourceVersion: seeded.set.metadata?.resourceVersion ?? '' }), context('admitted'))];
      // Six batches of a second's restart each cannot fit one budget of 2.5 s: the invocation handed the set on.
      expect(results[0]?.continued).toEqual(['cont']);
      const done = () => recorder.updatedNow() === pods && recorder.unavailableNow().length === 0;
      for (let i = 0; i < 30 && !done(); i++) {
        const next = sent[i];
        if (next === undefined) break;
        results.push(await handler(next, context(`continue-${i}`)));
      }
      for (let i = 0; i < 100 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(done()).toBe(true);
      expect(recorder.violations).toEqual([]);
      // Lambda may deliver an event twice: the first selfRequeue, again, after later invocations started here.
      const stale = sent[0];
      expect(stale).toBeDefined();
      if (stale !== undefined) expect(await handler(stale, context('again'))).toEqual({ skipped: 'superseded self-requeue' });
      expect(results.every((r) => r.errors === undefined && (r.controller?.errors ?? []).length === 0)).toBe(true);
      await recorder.stop();
    } finally {
      await cluster.stop();
    }
  }, 300_000);
});
