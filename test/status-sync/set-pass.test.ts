/**
 * One set's pass with the rollout's ports in memory: the order of its pod
 * writes. A pod restarts (and its batch moves on) as soon as its image patch
 * lands, so every image patch of the round goes out before the condition
 * patches, which only report.
 */
import { describe, expect, it } from '@jest/globals';
import { runSetPass } from '../../lib/status-sync/set-pass.ts';
import { memorySetPassDeps, recordingPodWriter } from '../../testkit/rollout-ports.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { listedPod, storedSet } from '../../testkit/status-sync-objects.ts';

const STRATEGY = { updateStrategy: { type: 'RollingUpdate' as const, maxUnavailable: 3 } };

/** A running, ready pod the set's older version injected. */
function injectedBy(old: ReturnType<typeof storedSet>, name: string): Pod {
  const plain: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
  const { pod } = injectPod({ pod: plain, namespace: 'default', sidecarSets: [old], namespaceLabels: new Map([['default', {}]]), now: new Date('2026-11-30T11:00:00Z') });
  return { ...pod, metadata: { ...pod.metadata, resourceVersion: '7' }, status: listedPod({ name, containers: ['log-agent-sidecar', 'app'] }).status };
}

describe('a set pass writing a round', () => {
  it('sends every pod\'s image patch before the SidecarSetUpgradable conditions of the pods it updated', async () => {
    const old = storedSet('log-agent', STRATEGY);
    const set = storedSet('log-agent', { ...STRATEGY, containers: [{ name: 'log-agent-sidecar', image: 'log-agent:2.0' }] });
    const pods = ['a', 'b', 'c', 'd'].map((name) => injectedBy(old, name));
    const writer = recordingPodWriter();
    const { deps } = memorySetPassDeps(set, pods, () => Promise.resolve('timeout'), writer);
    const result = await runSetPass(set, deps, { writeConcurrency: 1 });
    expect(result).toMatchObject({ podsUpdated: 3, conflicts: 0, errors: [], inFlight: true });
    const patches = writer.calls.filter((c) => c.startsWith('patch '));
    const conditions = writer.calls.filter((c) => c.startsWith('status '));
    expect(patches).toHaveLength(3);
    expect(conditions).toHaveLength(3);
    expect(writer.calls).toEqual([...patches, ...conditions]);
  });
});
