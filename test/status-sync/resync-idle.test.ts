/**
 * A resync over sets with nothing to roll, in the state the scale bench makes
 * (its section `--only resync-100k`): every pod injected by pod-inject with the
 * set's current sidecars, none ready (no kubelet). The resync's streamed
 * counts decide them: no pod list of their own and, in a process that has
 * not seen them before, no Event; and they are decided exactly as from
 * their own pod lists.
 */
import { describe, expect, it } from '@jest/globals';
import { applyPatch, decodePatch } from '../../lib/admission/json-patch-apply.ts';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { memoryPods, memoryRevisionStore } from '../../lib/adapters/memory-rollout.ts';
import { memoryPodEventSink, memoryPodPages, memoryStatusWriter, memoryRecordedStalls } from '../../lib/adapters/memory-status-sync.ts';
import type { Namespace, Pod } from '../../lib/kube/types.ts';
import type { SetPodSource, SidecarSetEvent } from '../../lib/ports.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { notInjectedEvents } from '../../lib/status-sync/not-injected.ts';
import { runResync, type ResyncDeps } from '../../lib/status-sync/resync.ts';
import { rolloutStateEvents } from '../../lib/status-sync/rollout-state.ts';
import { reconcileSet } from '../../lib/status-sync/set-reconcile.ts';
import { runReview } from '../../lib/webhooks/registry.ts';
import { storedSidecarSet, userSidecarSet } from '../../testkit/bench/admission-inputs.ts';
import { podReview } from '../../testkit/reviews.ts';

const SETS = 100;
const PODS_PER_SET = 4;
const INJECTED = new Date('2026-12-01T00:00:00Z');

const namespaces: Namespace[] = ['prod', 'staging'].map((env) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `fleet-${env}`, labels: { env } } }));

/** The bench's sets: set j selects app-j; every tenth also by namespace labels. */
function benchSets(): SidecarSet[] {
  return Array.from({ length: SETS }, (_, j) => {
    const set = userSidecarSet(`scale-${String(j).padStart(4, '0')}`, 1, { app: `app-${j}` }, j);
    if (j % 10 === 0 && set.spec) set.spec.namespaceSelector = { matchLabels: { env: 'prod' } };
    return storedSidecarSet(set, j + 1);
  });
}

/** Each app's pods as pod-inject makes them at `INJECTED`, with no status: never scheduled, so never ready. */
async function injectedPods(sets: SidecarSet[]): Promise<Pod[]> {
  const deps = { sidecarSets: memorySidecarSetSource(sets), namespaces: memoryNamespaceSource(namespaces), clock: { now: () => INJECTED } };
  const pods: Pod[] = [];
  for (let i = 0; i < SETS * PODS_PER_SET; i++) {
    const namespace = i % 2 === 0 ? 'fleet-prod' : 'fleet-staging';
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `pod-${i}`, namespace, uid: `uid-${i}`, labels: { app: `app-${Math.floor(i / PODS_PER_SET)}`, tier: 'backend' } },
      spec: { containers: [{ name: 'app', image: 'registry.example.com/app:1.0.0' }] },
    };
    const review = podReview(`seed-${i}`, pod) as { request: Record<string, unknown> };
    review.request.namespace = namespace;
    const outcome = await runReview('pod-inject', review, deps);
    if (outcome.kind !== 'review') throw new Error(`injecting pod ${i}: ${JSON.stringify(outcome)}`);
    const patch = outcome.review.response.patch;
    pods.push(patch === undefined ? pod : (applyPatch(pod, decodePatch(patch)) as Pod));
  }
  // In the API server's order (namespace, then name), as both the full list and a set's own list come.
  const key = (pod: Pod) => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
  return pods.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/**
 * The cluster in memory; each resync is a fresh process (as the bench's child, or a cold start): nothing reported yet
 * in its memory. With `stored`, its Events are kept across resyncs and a new process reads the stalls told (kubeRecordedStalls).
 */
async function benchWorld(nowMs: number, stored = false) {
  const sets = benchSets();
  const pods = await injectedPods(sets);
  const statuses = memoryStatusWriter(sets);
  const cluster = memoryPods(pods);
  const revisions = memoryRevisionStore();
  let podLists = 0;
  const events: SidecarSetEvent[] = [];
  const kept: SidecarSetEvent[] = [];
  const told = stored ? memoryRecordedStalls({ events: kept }) : undefined;
  const setPods: SetPodSource = {
    ...cluster.source,
    list: (scope, signal) => {
      podLists++;
      return cluster.source.list(scope, signal);
    },
  };
  const rollout = () => ({ revisions, setPods, pods: cluster.writer, podEvents: memoryPodEventSink(), clock: { now: () => new Date(nowMs) }, states: rolloutStateEvents(told) });
  const resync = async () => {
    podLists = 0;
    events.length = 0;
    const deps: ResyncDeps = {
      sidecarSets: memorySidecarSetSource(statuses.sets()),
      pods: memoryPodPages(pods, 100),
      namespaces: memoryNamespaceSource(namespaces),
      statuses,
      events: {
        record: (event) => {
          events.push(event);
          kept.push(event);
          return Promise.resolve();
        },
      },
      notices: notInjectedEvents(),
      rollout: rollout(),
    };
    const result = await runResync(deps);
    return { result, podLists, events: [...events] };
  };
  /** One set decided from its own pod list, as the controller decides it. */
  const ownList = async (name: string) => {
    const set = await statuses.get(name);
    if (set === undefined) throw new Error(`no set ${name}`);
    return reconcileSet(set, { statuses, events: { record: () => Promise.resolve() }, namespaces: memoryNamespaceSource(namespaces), rollout: rollout() });
  };
  return { resync, ownList, cluster };
}

describe('a resync over sets whose pods are all updated but not ready (the scale bench)', () => {
  it('decides them from its one pod list: no list per set, and in a new process no Event, resync after resync', async () => {
    const world = await benchWorld(INJECTED.getTime() + 5_000);
    for (let n = 0; n < 2; n++) {
      const { result, podLists, events } = await world.resync();
      expect(result.errors).toEqual([]);
      expect(result.setsSeen).toBe(SETS);
      expect(result.sets?.['scale-0001']).toEqual({ matchedPods: PODS_PER_SET, updatedPods: PODS_PER_SET, readyPods: 0, updatedReadyPods: 0 });
      expect({ podLists, setsRolled: result.rollout?.setsRolled, events: events.map((e) => `${e.sidecarSet.name} ${e.reason}`) }).toEqual({ podLists: 0, setsRolled: 0, events: [] });
    }
    expect(world.cluster.writes).toEqual([]);
  });

  it.each([
    ['restarting', 5_000],
    ['stalled', 120_000],
  ])('decides each set (%s) as its own pod list decides it', async (_d, afterMs) => {
    const world = await benchWorld(INJECTED.getTime() + afterMs);
    const { result } = await world.resync();
    for (const name of ['scale-0000', 'scale-0001', 'scale-0042']) {
      const own = await world.ownList(name);
      expect(own.errors).toEqual([]);
      expect(result.sets?.[name]).toEqual(own.counts);
      expect(result.unavailable?.[name]).toEqual(own.unavailable);
      expect(result.rollout?.inFlight.includes(name)).toBe(own.inFlight);
      expect(result.rollout?.states[name]).toBe(own.stateChange);
    }
    expect(result.unavailable?.['scale-0001']).toEqual({ Pending: PODS_PER_SET }); // no kubelet reported their containers: Pending, not Restarting
  });

  it('tells each stalled set once: a resync in a new process finds the stalls told (the stored Events) and records none', async () => {
    const world = await benchWorld(INJECTED.getTime() + 120_000, true);
    const first = await world.resync();
    expect(first.result.errors).toEqual([]);
    expect(first.events.map((e) => e.reason)).toEqual(Array.from({ length: SETS }, () => 'RolloutStalled'));
    for (let n = 0; n < 2; n++) {
      const again = await world.resync();
      expect(again.result.errors).toEqual([]);
      expect({ podLists: again.podLists, events: again.events.map((e) => `${e.sidecarSet.name} ${e.reason}`) }).toEqual({ podLists: 0, events: [] });
      expect(again.result.rollout?.inFlight).toEqual([]);
    }
  });
});
