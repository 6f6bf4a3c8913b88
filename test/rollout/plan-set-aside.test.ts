/**
 * The batch's lazy filter (planRollout's `patchFor`): candidates are taken
 * in order, each planned once; one whose patch cannot be made is set aside
 * with why and the next takes its place, in one planning. And the stop rule,
 * written once, as the plan and the streamed counts both read it.
 */
import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import { decidedByCounts, planRollout, stopOf, type RolloutCounts } from '../../lib/rollout/plan.ts';
import type { SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { NO_NAMESPACES, rolloutPod, rolloutSet } from './fixtures.ts';

const nameOf = (pod: Pod) => pod.metadata?.name ?? '';

describe('a batch pod whose patch cannot be made', () => {
  it.each<[string, SidecarSetUpdateStrategy, number, string[], { planned: string[]; updates: string[]; setAside: string[]; waiting: string | undefined }]>([
    ['none broken: the first pod, planned alone', { maxUnavailable: 1 }, 4, [], { planned: ['a'], updates: ['a'], setAside: [], waiting: 'max-unavailable' }],
    ['broken first with maxUnavailable 1: set aside, the next takes its place', { maxUnavailable: 1 }, 4, ['a'], { planned: ['a', 'b'], updates: ['b'], setAside: ['a'], waiting: 'max-unavailable' }],
    ['broken in the middle of the batch: the pod after the batch takes its place', { maxUnavailable: 2 }, 4, ['b'], { planned: ['a', 'b', 'c'], updates: ['a', 'c'], setAside: ['b'], waiting: 'max-unavailable' }],
    ['every pod broken: nothing updated, nothing waiting', { maxUnavailable: 1 }, 3, ['a', 'b', 'c'], { planned: ['a', 'b', 'c'], updates: [], setAside: ['a', 'b', 'c'], waiting: 'nothing-waiting' }],
    ['held by partition: the held pods stay held, a broken one takes no slot', { maxUnavailable: 4, partition: 2 }, 4, ['a'], { planned: ['a', 'b'], updates: ['b'], setAside: ['a'], waiting: 'partition' }],
    ['six broken in a row: the seventh is still reached (no cap on replacements)', { maxUnavailable: 1 }, 8, ['a', 'b', 'c', 'd', 'e', 'f'], { planned: ['a', 'b', 'c', 'd', 'e', 'f', 'g'], updates: ['g'], setAside: ['a', 'b', 'c', 'd', 'e', 'f'], waiting: 'max-unavailable' }],
  ])('%s', (_d, strategy, count, broken, expected) => {
    const set = rolloutSet({ strategy: { type: 'RollingUpdate', ...strategy } });
    const pods = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].slice(0, count).map((name) => rolloutPod(set, { name }));
    const planned: string[] = [];
    const plan = planRollout(set, pods, NO_NAMESPACES, {
      patchFor: (pod) => {
        planned.push(nameOf(pod));
        if (broken.includes(nameOf(pod))) throw new Error(`annotation of ${nameOf(pod)} is not JSON`);
        return [{ op: 'test', path: '/metadata/name', value: nameOf(pod) }];
      },
    });
    // One planning: each pod the walk reaches is planned once, in order, and no other.
    expect(planned).toEqual(expected.planned);
    expect(plan.updates.map((u) => nameOf(u.pod))).toEqual(expected.updates);
    expect(plan.updates.map((u) => u.patch)).toEqual(expected.updates.map((name) => [{ op: 'test', path: '/metadata/name', value: name }]));
    expect((plan.setAside ?? []).map((s) => [nameOf(s.pod), s.why])).toEqual(expected.setAside.map((name) => [name, `annotation of ${name} is not JSON`]));
    expect(plan.waiting?.kind).toBe(expected.waiting);
  });

  it('counts the pods set aside as not selected when nothing else waits, as the plan made again without them did', () => {
    const set = rolloutSet({ strategy: { type: 'RollingUpdate', maxUnavailable: 1 } });
    const plan = planRollout(set, [rolloutPod(set, { name: 'a' })], NO_NAMESPACES, {
      patchFor: () => {
        throw new Error('no');
      },
    });
    expect(plan.waiting).toEqual({ kind: 'nothing-waiting', notUpgradable: 0, notSelected: 1, inFlight: 0 });
  });

  it('plans no patch and sets nothing aside without patchFor (the status view, the offline plan)', () => {
    const set = rolloutSet({ strategy: { type: 'RollingUpdate', maxUnavailable: 2 } });
    const plan = planRollout(set, [rolloutPod(set, { name: 'a' }), rolloutPod(set, { name: 'b' })], NO_NAMESPACES);
    expect(plan.updates.map((u) => [nameOf(u.pod), u.patch])).toEqual([
      ['a', undefined],
      ['b', undefined],
    ]);
    expect(plan.setAside).toBeUndefined();
  });
});

describe('the stop rule, written once', () => {
  const counts = (matchedPods: number, updatedPods: number, updatedReadyPods: number): RolloutCounts => ({ matchedPods, updatedPods, readyPods: matchedPods, updatedReadyPods });
  it.each<[string, SidecarSetUpdateStrategy, RolloutCounts, number, string | undefined, string | undefined]>([
    ['NotUpdate', { type: 'NotUpdate' }, counts(3, 0, 0), 0, 'not-update', 'not-update'],
    ['NotUpdate with a pod mid hot upgrade: nothing is flipped (Kruise 1.9; 1.8 flipped it)', { type: 'NotUpdate' }, counts(3, 0, 0), 1, 'not-update', 'not-update'],
    ['paused with a pod mid hot upgrade: nothing is flipped (Kruise 1.9; 1.8 flipped it)', { type: 'RollingUpdate', paused: true }, counts(3, 3, 2), 1, 'paused', 'paused'],
    ['every pod updated and ready', { type: 'RollingUpdate' }, counts(3, 3, 3), 0, 'finished', 'finished'],
    ['every pod updated, one not ready: the rollout goes on (its pods are named from its own list)', { type: 'RollingUpdate' }, counts(3, 3, 2), 0, 'updated-not-ready', undefined],
    ['every pod updated, one not ready, named by the counts: decided (the pods it waits for named as its own list names them)', { type: 'RollingUpdate' }, counts(3, 3, 2), 0, 'updated-not-ready', 'updated-not-ready'],
    ['paused, every pod updated, one not ready: paused comes first (Kruise 1.9’s order; 1.8 checked every pod updated first)', { type: 'RollingUpdate', paused: true }, counts(3, 3, 2), 0, 'paused', 'paused'],
    ['every pod updated, pods mid hot upgrade', { type: 'RollingUpdate' }, counts(3, 3, 3), 2, 'hot-swapping', undefined],
    ['paused with pods to update', { type: 'RollingUpdate', paused: true }, counts(3, 1, 1), 0, 'paused', 'paused'],
    ['pods to update', { type: 'RollingUpdate' }, counts(3, 1, 1), 0, undefined, undefined],
  ])('%s', (description, strategy, c, swapping, stop, decided) => {
    const set = rolloutSet({ strategy });
    expect(stopOf(set, c, swapping)).toBe(stop);
    const unavailable = description.includes('named by the counts') ? { count: 1, reasons: [{ reason: 'Restarting', count: 1, pods: ['default/p-2'] }], lastUpdateMs: 0 } : undefined;
    expect(decidedByCounts(set, c, swapping, unavailable)?.kind).toBe(decided);
  });
});
