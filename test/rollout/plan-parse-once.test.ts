import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import { planRollout } from '../../lib/rollout/plan.ts';
import { NO_NAMESPACES, hashOf, podsOf, rolloutSet } from './fixtures.ts';

const HASH = 'kruise.io/sidecarset-hash';
const WITHOUT_IMAGE = 'kruise.io/sidecarset-hash-without-image';

/** Each pod's annotation made distinct (its own update time), so a parse can be told apart per pod. */
function distinct(pods: Pod[]): Pod[] {
  pods.forEach((pod, i) => {
    const annotations = pod.metadata!.annotations!;
    for (const key of [HASH, WITHOUT_IMAGE]) annotations[key] = annotations[key]!.replace('2025-01-01T00:00:00Z', `2025-01-01T00:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`);
  });
  return pods;
}

/** How often JSON.parse was handed each text during `run`. */
function parsesDuring(run: () => void): Map<string, number> {
  const parse = JSON.parse;
  const seen = new Map<string, number>();
  const spy = jest.spyOn(JSON, 'parse').mockImplementation((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    seen.set(text, (seen.get(text) ?? 0) + 1);
    return parse(text, reviver) as unknown;
  });
  try {
    run();
  } finally {
    spy.mockRestore();
  }
  return seen;
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe('the plan reads each pod’s hash annotations from one parse', () => {
  it('parses each pod’s kruise.io/sidecarset-hash and hash-without-image at most once per plan, stalled pods and waiting pods included', () => {
    const set = rolloutSet({ strategy: { type: 'RollingUpdate', maxUnavailable: 3 } });
    // 12 pods: 4 updated (2 of them still restarting: unavailable, read for the stall clock), 8 waiting.
    const pods = distinct(podsOf(set, 12, 4, 2));
    const seen = parsesDuring(() => {
      const plan = planRollout(set, pods, NO_NAMESPACES);
      expect(plan.updates).toHaveLength(1);
      expect(plan.unavailable?.count).toBe(2);
    });
    for (const pod of pods) {
      const annotations = pod.metadata!.annotations!;
      expect([pod.metadata!.name, HASH, seen.get(annotations[HASH]!) ?? 0]).toEqual([pod.metadata!.name, HASH, 1]);
      // Updated pods never need their without-image hash; a waiting pod's is read once.
      expect(seen.get(annotations[WITHOUT_IMAGE]!) ?? 0).toBeLessThanOrEqual(1);
    }
  });

  it('judges a pod changed in place between two plans by its new annotation, never by the earlier parse', () => {
    const set = rolloutSet({ strategy: { type: 'RollingUpdate', maxUnavailable: 1 } });
    const pods = podsOf(set, 2, 0, 0);
    const first = planRollout(set, pods, NO_NAMESPACES);
    expect(first.status.updatedPods).toBe(0);
    expect(first.updates.map((u) => u.pod.metadata!.name)).toEqual(['p-00000']);
    // The same pod object now records the set's hash (its update landed) and runs the new image.
    const pod = pods[0]!;
    const annotations = pod.metadata!.annotations!;
    annotations[HASH] = JSON.stringify({ 'test-sidecarset': { updateTimestamp: '2025-01-03T00:00:00Z', hash: hashOf(set), sidecarSetName: 'test-sidecarset', sidecarList: ['sidecar1'] } });
    pod.spec!.containers[0]!.image = set.spec!.containers![0]!.image;
    Object.assign(pod.status!.containerStatuses![0]!, { image: set.spec!.containers![0]!.image, imageID: 'id-new' });
    const second = planRollout(set, pods, NO_NAMESPACES);
    expect(second.status.updatedPods).toBe(1);
    expect(second.status.updatedReadyPods).toBe(1);
    expect(second.updates.map((u) => u.pod.metadata!.name)).toEqual(['p-00001']);
  });
});
