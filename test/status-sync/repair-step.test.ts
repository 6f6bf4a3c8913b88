import { describe, expect, it } from '@jest/globals';
import { memoryNamespaceSource } from '../../lib/adapters/memory.ts';
import { memoryPods } from '../../lib/adapters/memory-rollout.ts';
import type { Pod } from '../../lib/kube/types.ts';
import type { EvictionOutcome, PodEvent, PodEvictor } from '../../lib/ports.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import type { ReconcileError } from '../../lib/status-sync/errors.ts';
import { REASON_EVICTED, REASON_EVICTION_REFUSED, repairMemory, repairMissingPods, type RepairMemory } from '../../lib/status-sync/repair-step.ts';

const SETS = ['a', 'b'];

function sidecarSet(ns: string): SidecarSet {
  return defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: `${ns}-agent`, creationTimestamp: '2026-01-01T00:00:00Z', annotations: { 'serverless-sidecarset/repair-missing': 'Evict' } },
    spec: { namespace: ns, selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'agent', image: 'agent:1' }], updateStrategy: { type: 'RollingUpdate', maxUnavailable: 10 } },
  });
}

function pod(ns: string, i: number): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${ns}-${i}`, namespace: ns, uid: `${ns}-${i}-uid`, labels: { app: 'web' }, creationTimestamp: `2026-01-01T00:0${i + 1}:00Z`, ownerReferences: [{ kind: 'ReplicaSet', name: 'web', controller: true }] },
    spec: { containers: [{ name: 'app', image: 'app:1' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

/** The step over two sets of three uninjected pods each, with `answer` deciding each eviction. */
async function run(answer: (pod: string) => EvictionOutcome | Error, maxPerResync: number, memory: RepairMemory = repairMemory()) {
  const evicted: string[] = [];
  const events: PodEvent[] = [];
  const errors: ReconcileError[] = [];
  const evictions: PodEvictor = {
    evict(target) {
      evicted.push(target.name);
      const outcome = answer(target.name);
      return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
    },
  };
  const sets = SETS.map(sidecarSet);
  const pods = SETS.flatMap((ns) => [0, 1, 2].map((i) => pod(ns, i)));
  const summary = await repairMissingPods(
    sets,
    { 'a-agent': 3, 'b-agent': 3 },
    {
      evictions,
      podWebhook: { selectors: () => Promise.resolve({}) },
      setPods: memoryPods(pods).source,
      podEvents: { record: (event) => Promise.resolve(void events.push(event)) },
      namespaces: memoryNamespaceSource(SETS.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }))),
      maxPerResync,
      memory,
    },
    errors,
  );
  return { summary, evicted, events, errors };
}

const evict = (): EvictionOutcome => ({ outcome: 'evicted' });

describe('the repair step over several sets', () => {
  it('shares the resync’s limit over the sets, taking them by name and each set’s oldest pods first', async () => {
    const { summary, evicted, events } = await run(evict, 4);
    expect(evicted).toEqual(['a-0', 'a-1', 'a-2', 'b-0']);
    expect(summary).toEqual({ sets: 2, evicted: 4, refused: 0, ownerless: 0, held: 2 });
    expect(events.map((e) => [e.pod.name, e.type, e.reason])).toEqual(evicted.map((name) => [name, 'Normal', REASON_EVICTED]));
  });

  it('ends a set’s evictions at its first refusal (its budget is spent), and goes on with the next set', async () => {
    const { summary, evicted, events, errors } = await run((name) => (name === 'a-0' ? { outcome: 'refused', message: 'Cannot evict pod as it would violate the pod’s disruption budget.' } : { outcome: 'evicted' }), 10);
    expect(evicted).toEqual(['a-0', 'b-0', 'b-1', 'b-2']);
    expect(summary).toEqual({ sets: 2, evicted: 3, refused: 1, ownerless: 0, held: 2 });
    expect(errors).toEqual([]);
    expect(events[0]).toMatchObject({ pod: { name: 'a-0' }, type: 'Warning', reason: REASON_EVICTION_REFUSED });
  });

  it('tells a refusal once while it stays the same, however many resyncs it lasts', async () => {
    const memory = repairMemory();
    const refuse = (): EvictionOutcome => ({ outcome: 'refused', message: 'budget' });
    const first = await run(refuse, 10, memory);
    const second = await run(refuse, 10, memory);
    expect(first.events.map((e) => e.pod.name)).toEqual(['a-0', 'b-0']);
    expect(second.events).toEqual([]);
    expect(second.summary.refused).toBe(2);
  });

  it('counts a pod already gone as neither evicted nor refused', async () => {
    const { summary, events } = await run((name) => (name.endsWith('-0') ? { outcome: 'gone' } : { outcome: 'evicted' }), 10);
    expect(summary).toMatchObject({ evicted: 4, refused: 0 });
    expect(events.map((e) => e.pod.name)).toEqual(['a-1', 'a-2', 'b-1', 'b-2']);
  });

  it('makes an eviction the API server refuses otherwise an error of the resync, and goes on with the next pod', async () => {
    const { summary, errors } = await run((name) => (name === 'a-1' ? new Error('evict pod "a/a-1": the API server answered 500') : { outcome: 'evicted' }), 10);
    expect(errors).toEqual([{ sidecarSet: 'a-agent', operation: 'evict pod', message: 'evict pod "a/a-1": the API server answered 500' }]);
    expect(summary.evicted).toBe(5);
  });

  it('evicts nothing with a limit of 0', async () => {
    const { summary, evicted } = await run(evict, 0);
    expect(evicted).toEqual([]);
    expect(summary).toEqual({ sets: 2, evicted: 0, refused: 0, ownerless: 0, held: 6 });
  });
});
