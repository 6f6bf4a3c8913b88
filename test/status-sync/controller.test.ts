/**
 * The controller (controller.ts) never hands a reconcile a read made while the
 * set's previous reconcile ran: an admitted change that becomes visible during a
 * reconcile starts the set over, and the next reconcile reads the set as that one left it
 * (a set read before the reconcile's status write would make the next write
 * conflict).
 */
import { describe, expect, it } from '@jest/globals';
import { admittedQueue } from '../../lib/status-sync/admitted-queue.ts';
import { runController } from '../../lib/status-sync/run-controller.ts';
import { podsOf } from '../rollout/fixtures.ts';
import { storedRolloutSet, world } from './rollout-world.ts';

const SET = 'test-sidecarset';

describe('the controller', () => {
  it('runs an admitted change made visible during a reconcile from the set as that reconcile left it, without a conflict', async () => {
    const set = storedRolloutSet();
    const w = world(set, podsOf(set, 3, 0, 0));
    const queue = admittedQueue();
    const patchStatus = w.deps.statuses.patchStatus.bind(w.deps.statuses);
    let writes = 0;
    w.deps.statuses = {
      ...w.deps.statuses,
      patchStatus: async (...args) => {
        if (writes++ === 0) {
          // Admitted against another version: visible at once, read while this reconcile still holds the set.
          queue.push({ sidecarSet: SET, uid: 'uid-1', operation: 'UPDATE', resourceVersion: '0' });
          await new Promise((resolve) => setTimeout(resolve, 150));
        }
        return patchStatus(...args);
      },
    };
    const summary = await runController([SET], w.deps, { intervalMs: 50, debounceMs: 0, stallMs: 400, visibleTimeoutMs: 2_000 }, AbortSignal.timeout(10_000), queue);
    expect(summary.errors).toEqual([]);
    expect(summary.reconciles).toBeGreaterThanOrEqual(2);
    expect(writes).toBeGreaterThanOrEqual(2);
  });
});
