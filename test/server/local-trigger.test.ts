/**
 * functions/server/local-trigger.ts: the local server hands an admitted
 * change to the status loop by a direct call, relying on its
 * `admitted(change)` method only.
 */
import { describe, expect, it } from '@jest/globals';
import { admittedListenerOf, localRolloutTrigger, statusLoopTrigger } from '../../functions/server/local-trigger.ts';
import type { AdmittedSidecarSet } from '../../lib/ports.ts';

const change: AdmittedSidecarSet = { sidecarSet: 'log-agent', uid: 'u-1', operation: 'CREATE', resourceVersion: '' };

/** A stand-in for the status loop: what the server may use of it, and more it must not need. */
class LoopLike {
  readonly told: AdmittedSidecarSet[] = [];
  admitted(c: AdmittedSidecarSet): void {
    // `this` must be the loop: the method is called on it, not detached.
    this.told.push(c);
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
}

describe('the local rollout trigger', () => {
  it('hands the change to the listener at once and resolves', async () => {
    const told: AdmittedSidecarSet[] = [];
    const pending = localRolloutTrigger({ admitted: (c) => told.push(c) }).admitted([change]);
    // Told synchronously: nothing waits on a queue or the network.
    expect(told).toEqual([change]);
    await expect(pending).resolves.toBeUndefined();
  });

  it('rejects, rather than throws, when the listener throws', async () => {
    const trigger = localRolloutTrigger({
      admitted: () => {
        throw new Error('the status loop is stopping');
      },
    });
    await expect(trigger.admitted([change])).rejects.toThrow('the status loop is stopping');
  });

  it('tells a status loop through its admitted method, called on the loop', async () => {
    const loop = new LoopLike();
    const trigger = statusLoopTrigger(loop);
    expect(trigger).toBeDefined();
    await trigger?.admitted([change]);
    expect(loop.told).toEqual([change]);
  });

  it.each([
    { what: 'no loop (STATUS_SYNC_INTERVAL_MS=0)', loop: undefined },
    { what: 'a loop without an admitted method', loop: { stop: () => Promise.resolve() } },
    { what: 'a loop whose admitted is not a function', loop: { admitted: true } },
  ])('configures no trigger for $what', ({ loop }) => {
    expect(admittedListenerOf(loop)).toBeUndefined();
    expect(statusLoopTrigger(loop)).toBeUndefined();
  });
});
