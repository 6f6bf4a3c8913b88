import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import { offlinePlan } from '../../lib/rollout/offline-plan.ts';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { NEW_IMAGE, NO_NAMESPACES, rolloutPod, rolloutSet, type PodOptions } from './fixtures.ts';
import { hotSet, injected, kubelet } from './hot-fixtures.ts';
import { podUpdatePatch } from '../../lib/rollout/pod-patch.ts';
import { applyPatch } from '../../lib/admission/json-patch-apply.ts';

const setNamed = (name: string, strategy: SidecarSetUpdateStrategy = {}) => rolloutSet({ name, strategy: { type: 'RollingUpdate', ...strategy } });
const podsFor = (set: SidecarSet, pods: PodOptions[]): Pod[] => pods.map((o) => rolloutPod(set, o));

describe('the offline plan’s JSON (invoke rollout)', () => {
  it('lists hot upgrades with the container that takes the image, and the flips due, one per container', () => {
    const set = hotSet('mesh:v2', '999', { type: 'RollingUpdate', maxUnavailable: 2 });
    const upgraded = kubelet(applyPatch(injected('mesh:v1', 'a'), podUpdatePatch({ pod: injected('mesh:v1', 'a'), set, latestRevision: 'r', injectedList: 'hot-set', now: new Date() })) as Pod);
    const { plan } = offlinePlan([set], [upgraded, injected('mesh:v1', 'b')], NO_NAMESPACES);
    expect(plan.flips).toEqual([{ sidecarSet: 'hot-set', namespace: 'default', name: 'a', container: 'mesh-1' }]);
    // A reconcile that flips updates no pod (Kruise 1.9): b is taken by the next reconcile.
    expect(plan.updates).toEqual([]);
    const next = offlinePlan([set], [injected('mesh:v1', 'b')], NO_NAMESPACES).plan;
    expect(next.updates).toEqual([{ sidecarSet: 'hot-set', namespace: 'default', name: 'b', images: { 'mesh-2': 'mesh:v2' } }]);
  });

  it('maps each update to the set, the pod and the images it gets', () => {
    const set = setNamed('logs');
    const { plan, undecided } = offlinePlan([set], podsFor(set, [{ name: 'a' }]), NO_NAMESPACES);
    expect(undecided).toEqual([]);
    expect(plan).toEqual({ flips: [], updates: [{ sidecarSet: 'logs', namespace: 'default', name: 'a', images: { sidecar1: NEW_IMAGE } }], notUpgradable: [], waiting: [] });
  });

  it.each<[string, SidecarSetUpdateStrategy, PodOptions[], string, RegExp]>([
    ['NotUpdate', { type: 'NotUpdate' }, [{ name: 'a' }], 'not-update', /NotUpdate/],
    ['finished', {}, [{ name: 'a', updated: true }], 'finished', /^finished/],
    ['paused', { paused: true }, [{ name: 'a' }], 'paused', /^paused/],
    ['partition holds every waiting pod', { partition: 2 }, [{ name: 'a' }, { name: 'b' }], 'partition', /2 pod\(s\) held back by partition/],
    ['an updated pod not ready uses maxUnavailable', {}, [{ name: 'a', updated: true, ready: false }, { name: 'b' }], 'max-unavailable', /maxUnavailable 1/],
    ['invalid maxUnavailable', { maxUnavailable: 'lots' }, [{ name: 'a' }], 'invalid-strategy', /^cannot roll: updateStrategy.maxUnavailable/],
  ])('a set that updates nothing is in waiting with the plan’s reason: %s', (_d, strategy, pods, reason, message) => {
    const set = setNamed('logs', strategy);
    const { plan } = offlinePlan([set], podsFor(set, pods), NO_NAMESPACES);
    expect(plan.updates).toEqual([]);
    expect(plan.waiting).toEqual([{ sidecarSet: 'logs', reason, message: expect.stringMatching(message) }]);
  });

  it('a set updating some pods and stopped by maxUnavailable lists both its updates and why it waits', () => {
    const set = setNamed('logs');
    const { plan } = offlinePlan([set], podsFor(set, [{ name: 'a' }, { name: 'b' }, { name: 'c' }]), NO_NAMESPACES);
    expect(plan.updates.map((u) => u.name)).toEqual(['a']);
    expect(plan.waiting.map((w) => w.reason)).toEqual(['max-unavailable']);
  });

  it('a set updating without reaching a limit has no waiting entry', () => {
    const set = setNamed('logs', { maxUnavailable: 5 });
    const { plan } = offlinePlan([set], podsFor(set, [{ name: 'a' }, { name: 'b' }]), NO_NAMESPACES);
    expect(plan.updates.map((u) => u.name)).toEqual(['a', 'b']);
    expect(plan.waiting).toEqual([]);
  });

  it('keeps the write order within a set (not-ready pods first), not the pod names', () => {
    const set = setNamed('logs');
    const { plan } = offlinePlan([set], podsFor(set, [{ name: 'a' }, { name: 'b', ready: false }]), NO_NAMESPACES);
    expect(plan.updates.map((u) => u.name)).toEqual(['b', 'a']);
  });

  it('orders the sets by name whatever the input order', () => {
    const zeta = setNamed('zeta', { maxUnavailable: 5 });
    const alpha = setNamed('alpha', { maxUnavailable: 5 });
    const pods = [...podsFor(zeta, [{ name: 'z1' }]), ...podsFor(alpha, [{ name: 'a1' }])];
    const { plan } = offlinePlan([zeta, alpha], pods, NO_NAMESPACES);
    expect(plan.updates.map((u) => `${u.sidecarSet}:${u.name}`)).toEqual(['alpha:a1', 'zeta:z1']);
  });

  it('lists not-upgradable pods with their set and namespace', () => {
    const set = setNamed('logs');
    const { plan } = offlinePlan([set], podsFor(set, [{ name: 'a', namespace: 'shop', otherFields: true }]), NO_NAMESPACES);
    expect(plan.notUpgradable).toEqual([{ sidecarSet: 'logs', namespace: 'shop', name: 'a' }]);
    expect(plan.waiting.map((w) => w.reason)).toEqual(['nothing-waiting']);
  });

  it('names a set whose namespaceSelector needs a Namespace not given as undecided and still plans the others', () => {
    const scoped = rolloutSet({ name: 'scoped' });
    scoped.spec!.namespaceSelector = { matchLabels: { env: 'prod' } };
    const plain = setNamed('plain');
    const pods = [...podsFor(scoped, [{ name: 's', namespace: 'shop' }]), ...podsFor(plain, [{ name: 'p' }])];
    const { plan, undecided } = offlinePlan([scoped, plain], pods, NO_NAMESPACES);
    expect(undecided).toEqual([{ sidecarSet: 'scoped', message: expect.stringContaining('namespace "shop" is unknown') }]);
    expect(plan.updates.map((u) => `${u.sidecarSet}:${u.name}`)).toEqual(['plain:p']);
    const labels = new Map([['shop', { env: 'prod' }]]);
    expect(offlinePlan([scoped], pods, labels).plan.updates.map((u) => u.name)).toEqual(['s']);
  });
});
