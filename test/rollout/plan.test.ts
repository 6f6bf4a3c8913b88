import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import { planRollout } from '../../lib/rollout/plan.ts';
import { UnknownNamespaceError } from '../../lib/sidecarset/match.ts';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { NO_NAMESPACES, rolloutPod, rolloutSet, type PodOptions } from './fixtures.ts';

const names = (items: readonly ({ pod: Pod } | Pod)[]) => items.map((p) => ((p as { pod?: Pod }).pod ?? (p as Pod)).metadata!.name);
const setWith = (strategy: SidecarSetUpdateStrategy) => rolloutSet({ strategy: { type: 'RollingUpdate', ...strategy } });
const plan = (set: SidecarSet, pods: PodOptions[]) => planRollout(set, pods.map((o) => rolloutPod(set, o)), NO_NAMESPACES);

describe('the reconcile’s exits (rollout.md §0 steps 7-9)', () => {
  it.each<[string, SidecarSetUpdateStrategy, PodOptions[], string]>([
    ['NotUpdate', { type: 'NotUpdate' }, [{ name: 'a' }], 'not-update'],
    ['finished: every matched pod updated', {}, [{ name: 'a', updated: true }], 'finished'],
    ['finished: no matched pod at all', {}, [], 'finished'],
    ['paused', { paused: true }, [{ name: 'a' }], 'paused'],
  ])('%s updates nothing', (_d, strategy, pods, kind) => {
    const p = plan(setWith(strategy), pods);
    expect(p.updates).toEqual([]);
    expect(p.waiting?.kind).toBe(kind);
  });

  it('every pod updated is not finished while updated pods are not ready: it names what the kubelet says of them', () => {
    const set = setWith({});
    const pulling = rolloutPod(set, { name: 'b', updated: true, ready: false });
    const sidecar = pulling.status!.containerStatuses![0]!;
    pulling.status!.containerStatuses![0] = { ...sidecar, ready: false, state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } } };
    const p = planRollout(set, [rolloutPod(set, { name: 'a', updated: true }), pulling, rolloutPod(set, { name: 'c', updated: true, inconsistent: true })], NO_NAMESPACES);
    expect(p.updates).toEqual([]);
    expect(p.waiting).toEqual({
      kind: 'updated-not-ready',
      stuck: {
        count: 2,
        reasons: [
          { reason: 'ImagePullBackOff', count: 1, pods: ['default/b'] },
          { reason: 'Restarting', count: 1, pods: ['default/c'] },
        ],
        lastUpdateMs: Date.parse('2025-01-01T00:00:00Z'),
      },
    });
    expect(plan(set, [{ name: 'a', updated: true }]).waiting).toEqual({ kind: 'finished' });
  });

  it('a garbage in-place update state on an updated pod that runs its spec image holds no maxUnavailable slot', () => {
    const set = setWith({ maxUnavailable: 1 });
    const forged = rolloutPod(set, { name: 'a', updated: true });
    forged.metadata!.annotations!['kruise.io/sidecarset-inplace-update-state'] = 'garbage';
    const p = planRollout(set, [forged, rolloutPod(set, { name: 'b' })], NO_NAMESPACES);
    expect(p.status).toMatchObject({ updatedPods: 1, updatedReadyPods: 1 });
    expect(names(p.updates)).toEqual(['b']);
  });

  it('names the fields other than the image that changed on not-upgradable pods', () => {
    const set = setWith({});
    set.spec!.containers = set.spec!.containers!.map((c) => ({ ...c, env: [{ name: 'LEVEL', value: 'debug' }] }));
    const pod = rolloutPod(set, { name: 'a', otherFields: true });
    const sidecar = set.spec!.containers[0]!;
    // Injected from the set's earlier spec: everything as now but the env.
    pod.spec!.containers[0] = { ...sidecar, image: pod.spec!.containers[0]!.image, env: [{ name: 'LEVEL', value: 'info' }, { name: 'IS_INJECTED', value: 'true' }] };
    const p = planRollout(set, [pod], NO_NAMESPACES);
    expect(p.waiting).toEqual({ kind: 'nothing-waiting', notUpgradable: 1, notSelected: 0, inFlight: 0, changed: ['env'] });
  });

  it('not-upgradable pods are reported only when the round runs (not when paused)', () => {
    expect(plan(setWith({ paused: true }), [{ name: 'a', otherFields: true }]).notUpgradable).toEqual([]);
    expect(names(plan(setWith({}), [{ name: 'a', otherFields: true }]).notUpgradable)).toEqual(['a']);
  });
});

describe('how many this round (rollout.md §1.4)', () => {
  it('maxUnavailable defaults to 1', () => {
    expect(names(plan(setWith({}), [{ name: 'a' }, { name: 'b' }]).updates)).toEqual(['a']);
  });

  it('a not-ready pod is always taken and uses no budget', () => {
    const p = plan(setWith({ maxUnavailable: 1 }), [{ name: 'a' }, { name: 'b', ready: false }, { name: 'c', ready: false }]);
    expect(names(p.updates)).toEqual(['b', 'c', 'a']);
  });

  it('the walk stops at the first ready pod that does not fit, even before not-ready pods (Kruise’s break)', () => {
    // c is not ready, so it would sort first; a priority puts the ready a and b before it (their tie keeps the
    // active-pods order, a then b, as Kruise 1.9 does, #2107).
    const set = setWith({ maxUnavailable: 1, priorityStrategy: { weightPriority: [{ weight: 10, matchSelector: { matchLabels: { first: 'y' } } }] } });
    const p = plan(set, [{ name: 'a', labels: { first: 'y' } }, { name: 'b', labels: { first: 'y' } }, { name: 'c', ready: false }]);
    expect(names(p.updates)).toEqual(['a']);
    expect(p.waiting).toEqual({ kind: 'max-unavailable', unavailable: 0, maxUnavailable: 1 });
  });

  it('the unavailable count is updated pods that are inconsistent or not ready; old-hash not-ready pods do not count', () => {
    const p = plan(setWith({ maxUnavailable: 2 }), [
      { name: 'u1', updated: true, inconsistent: true, sidecarReady: false },
      { name: 'u2', updated: true, ready: false },
      { name: 'w1' },
    ]);
    expect(p.updates).toEqual([]);
    expect(p.waiting).toMatchObject({ kind: 'max-unavailable', unavailable: 2, maxUnavailable: 2 });
    const q = plan(setWith({ maxUnavailable: 1 }), [{ name: 'o1', ready: false, otherFields: true }, { name: 'w1' }]);
    expect(names(q.updates)).toEqual(['w1']);
  });

  it('partition holds back the last pods in update order', () => {
    const p = plan(setWith({ maxUnavailable: 10, partition: 2 }), [{ name: 'a' }, { name: 'b' }, { name: 'c' }, { name: 'd', ready: false }]);
    // d is not ready so it sorts first; the last two in order (b, c) are held back.
    expect(names(p.updates)).toEqual(['d', 'a']);
    expect(p.waiting).toEqual({ kind: 'partition', held: 2 });
  });

  it('partition at least the waiting pods updates nothing', () => {
    expect(plan(setWith({ partition: '100%' }), [{ name: 'a' }, { name: 'b' }]).waiting).toEqual({ kind: 'partition', held: 2 });
  });

  it('maxUnavailable 0 blocks every ready pod', () => {
    expect(plan(setWith({ maxUnavailable: 0 }), [{ name: 'a' }]).updates).toEqual([]);
  });

  it('a malformed partition or maxUnavailable updates nothing and says why', () => {
    const p = plan(setWith({ maxUnavailable: '5' }), [{ name: 'a' }]);
    expect(p.updates).toEqual([]);
    expect(p.waiting).toEqual({ kind: 'invalid-strategy', message: 'updateStrategy.maxUnavailable must be a non-negative integer or a percentage such as "20%", not "5"' });
  });
});

describe('candidates (rollout.md §1.2)', () => {
  it('a pod whose ready sidecar still runs an earlier update is skipped (in flight), not counted as waiting', () => {
    const set = setWith({ maxUnavailable: 5 });
    // An earlier rollout set centos:6.6; the sidecar still runs 6.7 (same imageID as recorded) and reports ready.
    const inFlight = rolloutPod(set, { name: 'a', inconsistent: true });
    inFlight.spec!.containers[0]!.image = 'centos:6.6';
    const p = planRollout(set, [inFlight], NO_NAMESPACES);
    expect(p.updates).toEqual([]);
    expect(p.waiting).toEqual({ kind: 'nothing-waiting', notUpgradable: 0, notSelected: 0, inFlight: 1 });
  });

  it('pods outside updateStrategy.selector are left alone; an invalid selector selects nothing', () => {
    expect(names(plan(setWith({ maxUnavailable: 5, selector: { matchLabels: { canary: 'y' } } }), [{ name: 'a' }, { name: 'b', labels: { canary: 'y' } }]).updates)).toEqual(['b']);
    expect(plan(setWith({ selector: { matchExpressions: [{ key: 'k', operator: 'Bogus' }] } }), [{ name: 'a' }]).updates).toEqual([]);
  });

  it('each update carries only the images that change', () => {
    expect(plan(setWith({}), [{ name: 'a' }]).updates[0]!.images).toEqual({ sidecar1: 'centos:6.8' });
  });
});

describe('matched pods and status (rollout.md §1.1, §1.9)', () => {
  it('pods being deleted, finished, not injected by the set, missing its sidecar or outside its namespace are invisible', () => {
    const set = rolloutSet();
    const base = (name: string) => rolloutPod(set, { name });
    const deleting = base('deleting');
    deleting.metadata!.deletionTimestamp = '2026-01-01T00:00:00Z';
    const done = base('done');
    done.status!.phase = 'Succeeded';
    const other = base('other');
    other.metadata!.annotations!['kruise.io/sidecarset-injected-list'] = 'another-set';
    const bare = base('bare');
    bare.spec!.containers = bare.spec!.containers.filter((c) => c.name !== 'sidecar1');
    const unlabelled = base('unlabelled');
    unlabelled.metadata!.labels = {};
    const p = planRollout(set, [deleting, done, other, bare, unlabelled, base('kept')], NO_NAMESPACES);
    expect(p.status.matchedPods).toBe(1);
    expect(names(p.updates)).toEqual(['kept']);
  });

  it('e2e "failed image, only update one pod": {matched 2, updated 1, ready 1, updatedReady 0}', () => {
    const set = rolloutSet();
    const p = plan(set, [{ name: 'a', updated: true, inconsistent: true, sidecarReady: false }, { name: 'b' }]);
    expect(p.status).toEqual({ matchedPods: 2, updatedPods: 1, readyPods: 1, updatedReadyPods: 0 });
  });

  it('e2e "more than image field": {matched 1, updated 0, ready 1}', () => {
    expect(plan(rolloutSet(), [{ name: 'a', otherFields: true }]).status).toEqual({ matchedPods: 1, updatedPods: 0, readyPods: 1, updatedReadyPods: 0 });
  });

  it('a namespaceSelector without the namespace’s labels is an error naming the namespace', () => {
    const set = rolloutSet();
    set.spec!.namespaceSelector = { matchLabels: { env: 'prod' } };
    expect(() => plan(set, [{ name: 'a' }])).toThrow(UnknownNamespaceError);
  });

  it('the plan does not depend on the input order of pods', () => {
    const set = setWith({ maxUnavailable: 3 });
    const pods = ['c', 'a', 'b', 'e', 'd'].map((name) => rolloutPod(set, { name }));
    expect(names(planRollout(set, pods, NO_NAMESPACES).updates)).toEqual(['a', 'b', 'c']);
    expect(names(planRollout(set, [...pods].reverse(), NO_NAMESPACES).updates)).toEqual(['a', 'b', 'c']);
  });
});
