/**
 * Native sidecars (init containers with restartPolicy Always) rolled in
 * place (sidecarset.md "Native sidecars rolled in place"): planned, patched
 * and read back exactly as a container sidecar is. Pods are injected by the
 * real injector, run by the test kubelet's own status functions
 * (control-plane/kubelet-status.ts) and updated by applying the rollout's
 * own patch.
 */
import { describe, expect, it } from '@jest/globals';
import { defaultBadImage, nextStep, statusAfter, type KubeletStep } from '../../control-plane/kubelet-status.ts';
import { applyPatch } from '../../lib/admission/json-patch-apply.ts';
import type { JsonObject, Pod } from '../../lib/kube/types.ts';
import { planRollout, type RolloutPlan } from '../../lib/rollout/plan.ts';
import { podUpdatePatch } from '../../lib/rollout/pod-patch.ts';
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { computeStatus, summarizePod } from '../../lib/sidecarset/status.ts';
import type { SidecarContainer, SidecarSet, SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { validateSidecarSet } from '../../lib/sidecarset/validate.ts';
import { NO_NAMESPACES } from './fixtures.ts';

const NOW = new Date('2026-12-06T04:00:00Z');

interface Versions {
  proxy?: string;
  setup?: string;
  proxyCommand?: string[];
}

/**
 * The set `mesh`: a native sidecar `proxy` and a plain init container
 * `setup`, or (`asContainer`) the same `proxy` as a container sidecar, the
 * twin a native sidecar must roll exactly like.
 */
function meshSet(v: Versions, strategy: SidecarSetUpdateStrategy = {}, asContainer = false): SidecarSet {
  const proxy: SidecarContainer = { name: 'proxy', image: v.proxy ?? 'envoy:1', command: v.proxyCommand ?? ['envoy'] };
  const setup: SidecarContainer = { name: 'setup', image: v.setup ?? 'busybox:1', command: ['true'] };
  return defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'mesh', uid: 'uid-mesh', generation: 1, resourceVersion: '10' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      ...(asContainer ? { initContainers: [setup], containers: [proxy] } : { initContainers: [setup, { ...proxy, restartPolicy: 'Always' }] }),
      updateStrategy: { type: 'RollingUpdate', ...strategy },
    },
  });
}

/** Runs the test kubelet's steps on the pod until `until` is next (or nothing is). */
function kubelet(pod: Pod, until: KubeletStep['kind'] = 'none'): Pod {
  let current = pod;
  for (let i = 0; i < 10; i++) {
    const step = nextStep(current, defaultBadImage);
    if (step.kind === until || step.kind === 'none' || step.kind === 'delete') return current;
    current = { ...current, status: statusAfter(current, step, defaultBadImage, NOW) };
  }
  throw new Error('the kubelet did not settle');
}

/** A pod `name` created under `set`, injected and running ready. */
function runningPod(set: SidecarSet, name: string, labels: Record<string, string> = {}): Pod {
  const created: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: 'web', ...labels } },
    spec: { containers: [{ name: 'app', image: 'nginx:1' }] },
  };
  const { pod } = injectPod({ pod: created, namespace: 'default', sidecarSets: [set], namespaceLabels: NO_NAMESPACES, now: NOW });
  return kubelet({ ...pod, metadata: { ...pod.metadata, resourceVersion: '1' } });
}

function update(pod: Pod, set: SidecarSet): Pod {
  const ops = podUpdatePatch({ pod, set, latestRevision: 'mesh-rev', injectedList: 'mesh', now: NOW });
  return applyPatch(pod, ops) as Pod;
}

/** The plan of a reconcile, whose counts the status stream (pods reduced to summaries) must give too. */
function planOf(set: SidecarSet, pods: Pod[]): RolloutPlan {
  const plan = planRollout(set, pods, NO_NAMESPACES);
  expect(computeStatus(set, pods.map(summarizePod), NO_NAMESPACES).status).toMatchObject(plan.status);
  return plan;
}

const names = (plan: RolloutPlan) => plan.updates.map((u) => u.pod.metadata?.name);
const initImage = (pod: Pod, name: string) => pod.spec?.initContainers?.find((c) => c.name === name)?.image;
const initStatus = (pod: Pod, name: string) => (pod.status?.initContainerStatuses as JsonObject[] | undefined)?.find((s) => s.name === name);

describe('validation', () => {
  it('admits the set under RollingUpdate, which Kruise refuses', () => {
    expect(validateSidecarSet(meshSet({ proxy: 'envoy:2' }), { operation: 'CREATE', others: [], namespaceLabels: NO_NAMESPACES })).toEqual([]);
  });
});

describe('a native sidecar rolls in the order and number a container sidecar does', () => {
  const at = (zone: string, rank: string) => ({ zone, rank });
  const labels: Record<string, Record<string, string>> = { a: at('x', '1'), b: at('x', '2'), c: { ...at('y', '3'), tier: 'gold' }, d: at('y', '7'), e: { ...at('x', '4'), canary: 'yes' } };
  it.each<[string, SidecarSetUpdateStrategy, string[], string]>([
    ['maxUnavailable 1 (the default)', {}, ['a'], 'max-unavailable'],
    ['maxUnavailable 2', { maxUnavailable: 2 }, ['a', 'b'], 'max-unavailable'],
    ['maxUnavailable 40%', { maxUnavailable: '40%' }, ['a', 'b'], 'max-unavailable'],
    ['partition 4 of 5', { partition: 4, maxUnavailable: 5 }, ['a'], 'partition'],
    ['partition 100%', { partition: '100%', maxUnavailable: 5 }, [], 'partition'],
    ['selector', { selector: { matchLabels: { canary: 'yes' } }, maxUnavailable: 5 }, ['e'], ''],
    ['paused', { paused: true }, [], 'paused'],
    ['weightPriority', { priorityStrategy: { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { tier: 'gold' } } }] } }, ['c'], 'max-unavailable'],
    ['orderPriority', { priorityStrategy: { orderPriority: [{ orderedKey: 'rank' }] }, maxUnavailable: 2 }, ['d', 'e'], 'max-unavailable'],
    ['scatter', { scatterStrategy: [{ key: 'zone', value: 'y' }], maxUnavailable: 5 }, ['c', 'a', 'b', 'e', 'd'], ''],
  ])('%s', (_d, strategy, expected, waiting) => {
    const plans = [false, true].map((asContainer) => {
      const old = meshSet({}, strategy, asContainer);
      const pods = Object.keys(labels).map((n) => runningPod(old, n, labels[n]));
      return planRollout(meshSet({ proxy: 'envoy:2' }, strategy, asContainer), pods, NO_NAMESPACES);
    });
    const [native, container] = plans as [RolloutPlan, RolloutPlan];
    // The same pods, in the same order, as its container twin; every one to get the new proxy image.
    expect(names(native)).toEqual(names(container));
    expect(native.updates.map((u) => u.images)).toEqual(native.updates.map(() => ({ proxy: 'envoy:2' })));
    expect(native.waiting?.kind ?? '').toBe(waiting);
    expect(native.waiting).toEqual(container.waiting);
    expect(native.status).toEqual(container.status);
    expect(names(native)).toEqual(expected);
  });
});

describe('the update of one pod', () => {
  const v1 = meshSet({});
  const v2 = meshSet({ proxy: 'envoy:2' });

  it('writes the native sidecar’s image at its index among the init containers and records its imageID', () => {
    const pod = runningPod(v1, 'a');
    const index = pod.spec?.initContainers?.findIndex((c) => c.name === 'proxy');
    const ops = podUpdatePatch({ pod, set: v2, latestRevision: 'mesh-rev', injectedList: 'mesh', now: NOW });
    expect(ops.filter((o) => o.path.endsWith('/image'))).toEqual([{ op: 'replace', path: `/spec/initContainers/${index}/image`, value: 'envoy:2' }]);
    const updated = applyPatch(pod, ops) as Pod;
    expect(initImage(updated, 'setup')).toBe('busybox:1');
    const state = JSON.parse(updated.metadata?.annotations?.['kruise.io/sidecarset-inplace-update-state'] ?? '{}');
    expect(state.mesh.lastContainerStatuses).toEqual({ proxy: { imageID: initStatus(pod, 'proxy')?.imageID } });
  });

  it('reads consistency from initContainerStatuses, in the plan and the status stream: in flight until the kubelet restarts the sidecar, unavailable until it is ready', () => {
    const [a, b] = [runningPod(v1, 'a'), runningPod(v1, 'b')];
    const patched = update(a, v2);

    // Written, not yet restarted: updated, not consistent, and it holds maxUnavailable's one slot.
    let plan = planOf(v2, [patched, b]);
    expect(plan.status).toMatchObject({ matchedPods: 2, updatedPods: 1, readyPods: 1, updatedReadyPods: 0 });
    expect(plan.waiting).toMatchObject({ kind: 'max-unavailable', unavailable: 1, stuck: { reasons: [{ reason: 'Restarting', pods: ['default/a'] }] } });

    // Restarted by the kubelet with the new image, not ready yet.
    const restarted = kubelet(patched, 'ready');
    expect(initStatus(restarted, 'proxy')).toMatchObject({ image: 'envoy:2', restartCount: 1, ready: false });
    plan = planOf(v2, [restarted, b]);
    expect(plan.status).toMatchObject({ updatedPods: 1, updatedReadyPods: 0 });
    expect(plan.updates).toEqual([]);

    // Ready: the slot is free and the next pod goes.
    const ready = kubelet(restarted);
    plan = planOf(v2, [ready, b]);
    expect(plan.status).toMatchObject({ matchedPods: 2, updatedPods: 1, readyPods: 2, updatedReadyPods: 1 });
    expect(names(plan)).toEqual(['b']);

    const done = kubelet(update(b, v2));
    expect(planOf(v2, [ready, done])).toMatchObject({ status: { updatedPods: 2, updatedReadyPods: 2 }, waiting: { kind: 'finished' } });
  });

  it('never writes a plain init container: its image change only records the new hash', () => {
    const pod = runningPod(v1, 'a');
    const plainChanged = meshSet({ setup: 'busybox:2' });
    const [planned] = planRollout(plainChanged, [pod], NO_NAMESPACES).updates;
    expect(planned?.images).toEqual({});
    const ops = podUpdatePatch({ pod, set: plainChanged, latestRevision: 'mesh-rev', injectedList: 'mesh', now: NOW });
    expect(ops.filter((o) => o.path.startsWith('/spec'))).toEqual([]);
    const updated = applyPatch(pod, ops) as Pod;
    expect(initImage(updated, 'setup')).toBe('busybox:1');
    expect(planRollout(plainChanged, [kubelet(updated)], NO_NAMESPACES)).toMatchObject({ status: { updatedPods: 1, updatedReadyPods: 1 }, waiting: { kind: 'finished' } });
  });

  it('leaves a pod whose native sidecar changed in more than its image, and names the field', () => {
    const changed = meshSet({ proxy: 'envoy:2', proxyCommand: ['envoy', '--debug'] });
    const plan = planRollout(changed, [runningPod(v1, 'a')], NO_NAMESPACES);
    expect(plan.updates).toEqual([]);
    expect(plan.waiting).toEqual({ kind: 'nothing-waiting', notUpgradable: 1, notSelected: 0, inFlight: 0, changed: ['command'] });
  });

  it('judges a digest-pinned native sidecar by its status imageID', () => {
    const digest = 'docker.io/library/envoy@sha256:' + 'a'.repeat(64);
    const pinned = meshSet({ proxy: digest });
    const pod = update(runningPod(v1, 'a'), pinned);
    expect(planOf(pinned, [pod]).status).toMatchObject({ updatedPods: 1, updatedReadyPods: 0 });
    expect(planOf(pinned, [kubelet(pod)]).status).toMatchObject({ updatedPods: 1, updatedReadyPods: 1 });
  });
});
