/**
 * The pace loop's waiting between passes of a set in flight, with the
 * rollout's ports in memory: a watch that fails (the API server is down or
 * restarting, a connection reset) must not wake the loop at once, or it
 * spins passes as fast as the failures come back.
 */
import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import type { SetPodSource } from '../../lib/ports.ts';
import { followSets } from '../../lib/status-sync/pace.ts';
import { memorySetPassDeps } from '../../testkit/rollout-ports.ts';
import { hashOf, listedPod, storedSet } from '../../testkit/status-sync-objects.ts';

/** One set whose only pod is updated but not ready: in flight, with nothing to write. */
function inFlight(changed: SetPodSource['changed']) {
  const set = storedSet('log-agent');
  const pods: Pod[] = [listedPod({ name: 'restarting', injected: { 'log-agent': hashOf(set) }, ready: false })];
  return memorySetPassDeps(set, pods, changed);
}

describe('following a set in flight', () => {
  it('waits out the interval when the watch fails at once, rather than passing again and again', async () => {
    const { deps, lists } = inFlight(() => Promise.resolve('error'));
    // 1 s at a 200 ms interval: about 6 passes; a loop woken by every failure makes thousands.
    const summary = await followSets(['log-agent'], deps, { intervalMs: 200, settleMs: 0, stallMs: 5_000 }, AbortSignal.timeout(1_000));
    expect(summary.unfinished).toEqual(['log-agent']);
    expect(lists()).toBeGreaterThanOrEqual(1);
    expect(lists()).toBeLessThanOrEqual(12);
  });

  it('passes again as soon as the watch sees a change', async () => {
    let watched = 0;
    const { deps, lists } = inFlight(() => {
      watched++;
      return Promise.resolve('changed');
    });
    // A 60 s interval never ends within the second: every pass after the first is the watch's doing.
    await followSets(['log-agent'], deps, { intervalMs: 60_000, settleMs: 0 }, AbortSignal.timeout(1_000));
    expect(watched).toBeGreaterThan(3);
    expect(lists()).toBeGreaterThan(3);
  });
});
