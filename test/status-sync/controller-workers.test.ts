/**
 * The controller with more than one worker (ControllerOptions.workers): sets are
 * reconciled side by side, and the queue still never hands one set to two
 * workers at once (client-go's rule, work-queue.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { memoryNamespaceSource } from '../../lib/adapters/memory.ts';
import { memoryPods, memoryRevisionStore } from '../../lib/adapters/memory-rollout.ts';
import { memoryEventSink, memoryPodEventSink, memoryStatusWriter } from '../../lib/adapters/memory-status-sync.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { runController } from '../../lib/status-sync/run-controller.ts';
import { rolloutStateEvents } from '../../lib/status-sync/rollout-state.ts';
import type { ReconcileDeps } from '../../lib/status-sync/set-reconcile.ts';
import { rolloutPod } from '../rollout/fixtures.ts';
import { NOW, storedRolloutSet } from './rollout-world.ts';

const NAMES = ['a', 'b', 'c', 'd'];

/** Four sets of four pods each, none updated; each set's reads take 20 ms and are tallied while they run. */
function fourSets() {
  const sets = NAMES.map((name): SidecarSet => {
    const set = storedRolloutSet();
    return { ...set, metadata: { ...set.metadata, name, uid: `uid-${name}` }, spec: { ...set.spec, selector: { matchLabels: { app: name } } } };
  });
  const pods = sets.flatMap((set) => Array.from({ length: 4 }, (_, i) => rolloutPod(set, { name: `${set.metadata?.name ?? ''}-${i}`, labels: { app: set.metadata?.name ?? '' } })));
  const statuses = memoryStatusWriter(sets);
  const cluster = memoryPods(pods);
  const running = new Map<string, number>();
  const most = { perSet: 0, overall: 0 };
  const deps: ReconcileDeps = {
    statuses: {
      ...statuses,
      get: async (name, signal) => {
        running.set(name, (running.get(name) ?? 0) + 1);
        most.perSet = Math.max(most.perSet, running.get(name) ?? 0);
        most.overall = Math.max(most.overall, [...running.values()].reduce((a, b) => a + b, 0));
        await new Promise((resolve) => setTimeout(resolve, 20));
        running.set(name, (running.get(name) ?? 1) - 1);
        return statuses.get(name, signal);
      },
    },
    events: memoryEventSink(),
    namespaces: memoryNamespaceSource([]),
    rollout: { revisions: memoryRevisionStore(), setPods: cluster.source, pods: cluster.writer, podEvents: memoryPodEventSink(), clock: { now: () => NOW }, states: rolloutStateEvents() },
  };
  return { deps, most, cluster };
}

const OPTIONS = { intervalMs: 50, debounceMs: 0, stallMs: 300, visibleTimeoutMs: 1_000 };

describe('the controller with several workers', () => {
  it.each([
    [1, 1],
    [2, 2],
    [4, 4],
  ])('with %i worker(s) reconciles up to %i sets at once, never one set twice at once, and rolls each', async (workers, atOnce) => {
    const { deps, most } = fourSets();
    const summary = await runController(NAMES, deps, { ...OPTIONS, workers }, AbortSignal.timeout(10_000));
    expect(summary.errors).toEqual([]);
    expect(most.perSet).toBe(1);
    expect(most.overall).toBe(atOnce);
    // maxUnavailable 2 of each set's 4 pods, and no kubelet to make them ready: 2 pods each, then the sets stall out.
    expect(summary.podsUpdated).toBe(NAMES.length * 2);
    expect([...summary.stalled].sort()).toEqual(NAMES);
  });
});
