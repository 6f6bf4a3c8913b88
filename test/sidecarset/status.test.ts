import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../lib/kube/types.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import { UnknownNamespaceError } from '../../lib/sidecarset/match.ts';
import { computeStatus, summarizePod } from '../../lib/sidecarset/status.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { NOW, pod, sidecarSet } from '../../testkit/sidecarset-objects.ts';

const set = { ...sidecarSet('s'), status: { latestRevision: 'keep-me', collisionCount: 2 } };
const hash = set.metadata!.annotations!['kruise.io/sidecarset-hash']!;

/** A pod injected by `s` with the given recorded hash, running and ready unless told otherwise. */
function injectedPod(opts: { hash?: string; phase?: string; ready?: boolean; statuses?: number; deleting?: boolean; labels?: Record<string, string>; list?: string; containers?: string[]; oldForm?: boolean } = {}): Pod {
  const recorded = opts.hash ?? hash;
  const p = pod({
    labels: opts.labels ?? { app: 'web' },
    annotations: {
      'kruise.io/sidecarset-injected-list': opts.list ?? 's',
      'kruise.io/sidecarset-hash': opts.oldForm
        ? JSON.stringify({ s: recorded })
        : JSON.stringify({ s: { updateTimestamp: '2026-01-01T00:00:00Z', hash: recorded, sidecarSetName: 's', sidecarList: ['s-sidecar'] } }),
    },
    containers: (opts.containers ?? ['s-sidecar', 'app']).map((name) => ({ name, image: 'x' })),
  });
  if (opts.deleting) p.metadata!.deletionTimestamp = '2026-01-01T00:00:00Z';
  p.status = {
    phase: opts.phase ?? 'Running',
    conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
    containerStatuses: Array.from({ length: opts.statuses ?? 2 }, () => ({})),
  };
  return p;
}

function status(pods: Pod[], s: SidecarSet = set, namespaces = new Map<string, Record<string, string>>()) {
  return computeStatus(s, pods.map(summarizePod), namespaces);
}

describe('computeStatus', () => {
  it.each<[string, Pod, { matchedPods: number; updatedPods: number; readyPods: number; updatedReadyPods: number }]>([
    ['an updated ready pod counts everywhere', injectedPod(), { matchedPods: 1, updatedPods: 1, readyPods: 1, updatedReadyPods: 1 }],
    ['an old hash is matched but not updated', injectedPod({ hash: 'old' }), { matchedPods: 1, updatedPods: 0, readyPods: 1, updatedReadyPods: 0 }],
    ['the old annotation form is read', injectedPod({ oldForm: true }), { matchedPods: 1, updatedPods: 1, readyPods: 1, updatedReadyPods: 1 }],
    ['a pod not Ready is not ready', injectedPod({ ready: false }), { matchedPods: 1, updatedPods: 1, readyPods: 0, updatedReadyPods: 0 }],
    ['a Pending pod is not ready', injectedPod({ phase: 'Pending' }), { matchedPods: 1, updatedPods: 1, readyPods: 0, updatedReadyPods: 0 }],
    ['missing container statuses mean not ready', injectedPod({ statuses: 1 }), { matchedPods: 1, updatedPods: 1, readyPods: 0, updatedReadyPods: 0 }],
    ['a Succeeded pod is not matched', injectedPod({ phase: 'Succeeded' }), { matchedPods: 0, updatedPods: 0, readyPods: 0, updatedReadyPods: 0 }],
    ['a Failed pod is not matched', injectedPod({ phase: 'Failed' }), { matchedPods: 0, updatedPods: 0, readyPods: 0, updatedReadyPods: 0 }],
    ['a deleting pod is not matched', injectedPod({ deleting: true }), { matchedPods: 0, updatedPods: 0, readyPods: 0, updatedReadyPods: 0 }],
    ['a pod the selector misses is not matched', injectedPod({ labels: { app: 'db' } }), { matchedPods: 0, updatedPods: 0, readyPods: 0, updatedReadyPods: 0 }],
    ['a pod whose injected list lacks the set is not matched', injectedPod({ list: 'other' }), { matchedPods: 0, updatedPods: 0, readyPods: 0, updatedReadyPods: 0 }],
    ['a pod missing a sidecar container is not matched', injectedPod({ containers: ['app'], statuses: 1 }), { matchedPods: 0, updatedPods: 0, readyPods: 0, updatedReadyPods: 0 }],
  ])('%s', (_name, p, counts) => {
    expect(status([p]).status).toMatchObject(counts);
  });

  it('counts a pod whose sidecar has not restarted since its in-place update as not ready (rollout.md §1.8, §1.9)', () => {
    const p = injectedPod();
    p.spec!.containers[0]!.image = 'agent:2';
    p.metadata!.annotations!['kruise.io/sidecarset-inplace-update-state'] = JSON.stringify({ s: { revision: hash, updateTimestamp: '2026-01-01T00:00:00Z', lastContainerStatuses: { 's-sidecar': { imageID: 'agent@sha256:1' } } } });
    p.status!.containerStatuses = [{ name: 's-sidecar', image: 'agent:1', imageID: 'agent@sha256:1' }, { name: 'app', image: 'x', imageID: 'x@sha256:2' }];
    expect(status([p]).status).toMatchObject({ matchedPods: 1, updatedPods: 1, readyPods: 0, updatedReadyPods: 0 });
    // Once the runtime reports the new image (and a new imageID), it is ready.
    p.status!.containerStatuses[0] = { name: 's-sidecar', image: 'docker.io/library/agent:2', imageID: 'agent@sha256:3' };
    expect(status([p]).status).toMatchObject({ matchedPods: 1, updatedPods: 1, readyPods: 1, updatedReadyPods: 1 });
  });

  it('matches a HotUpgrade sidecar as its two containers and the working-container entry (rollout.md §1.1)', () => {
    const hot = sidecarSet('s', { containers: [{ name: 's-sidecar', image: 'agent:1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } }] });
    const p = injectedPod({ containers: ['s-sidecar-1', 's-sidecar-2', 'app'], statuses: 3, hash: hot.metadata!.annotations!['kruise.io/sidecarset-hash']! });
    expect(status([p], hot).status).toMatchObject({ matchedPods: 0 });
    p.metadata!.annotations!['kruise.io/sidecarset-working-hotupgrade-container'] = JSON.stringify({ 's-sidecar': 's-sidecar-1' });
    p.spec!.containers[1]!.image = 'empty:1';
    expect(status([p], hot).status).toMatchObject({ matchedPods: 1, readyPods: 1 });
    // Ready needs the empty container to hold the empty image.
    p.spec!.containers[1]!.image = 'agent:2';
    expect(status([p], hot).status).toMatchObject({ matchedPods: 1, readyPods: 0 });
  });

  it('matches a pod HotUpgrade injection produced, and counts it ready only while the idle copy holds the empty image', () => {
    const hot = sidecarSet('s', { containers: [{ name: 'mesh', image: 'mesh:1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } }] });
    const injected = injectPod({ pod: pod(), namespace: 'default', sidecarSets: [hot], namespaceLabels: new Map(), now: NOW }).pod;
    const running = (p: Pod): Pod => ({
      ...p,
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: p.spec!.containers.map((c) => ({ name: c.name, image: c.image, imageID: `${c.image}@sha256:${'a'.repeat(64)}`, ready: true })),
      },
    });
    expect(status([running(injected)], hot).status).toMatchObject({ matchedPods: 1, updatedPods: 1, readyPods: 1, updatedReadyPods: 1 });
    // Mid-swap: the idle copy (by the annotation, mesh-2) runs a real image, so the pod is not ready.
    const swapping = structuredClone(injected);
    swapping.spec!.containers.find((c) => c.name === 'mesh-2')!.image = 'mesh:2';
    expect(status([running(swapping)], hot).status).toMatchObject({ matchedPods: 1, readyPods: 0 });
    // Without the working-container entry the pod does not carry the set's sidecars (rollout.md §1.1).
    const unmarked = structuredClone(injected);
    delete unmarked.metadata!.annotations!['kruise.io/sidecarset-working-hotupgrade-container'];
    expect(status([running(unmarked)], hot).status).toMatchObject({ matchedPods: 0 });
  });

  it('sets observedGeneration and keeps the fields it does not compute', () => {
    const s = { ...set, metadata: { ...set.metadata, generation: 7 } };
    expect(status([], s).status).toEqual({
      latestRevision: 'keep-me', collisionCount: 2, observedGeneration: 7, matchedPods: 0, updatedPods: 0, readyPods: 0, updatedReadyPods: 0,
    });
  });

  it('counts a paused set pods too', () => {
    const paused = { ...set, spec: { ...set.spec, injectionStrategy: { paused: true } } };
    expect(status([injectedPod()], paused).status.matchedPods).toBe(1);
  });

  it('counts pods it applies to that were never injected', () => {
    const bare = pod();
    expect(status([bare, injectedPod()]).notInjectedPods).toBe(1);
  });

  describe('reports only uninjected pods created after the set (spec section 8)', () => {
    const at = (metadata: Record<string, unknown>, creationTimestamp: unknown) => (creationTimestamp === undefined ? metadata : { ...metadata, creationTimestamp });
    it.each<[string, unknown, unknown, number]>([
      ['a pod created a second after the set', '2026-03-01T10:00:00Z', '2026-03-01T10:00:01Z', 1],
      ['a pod created a day after the set', '2026-03-01T10:00:00Z', '2026-03-02T10:00:00Z', 1],
      ['a pod created before the set', '2026-03-01T10:00:00Z', '2026-03-01T09:59:59Z', 0],
      ['a pod created in the same second (timestamps cannot order them)', '2026-03-01T10:00:00Z', '2026-03-01T10:00:00Z', 0],
      ['offsets are compared as instants: 11:00+01:00 is 10:00Z', '2026-03-01T10:00:00Z', '2026-03-01T11:00:00+01:00', 0],
      ['fractional seconds are read', '2026-03-01T10:00:00Z', '2026-03-01T10:00:00.5Z', 1],
      ['a pod without a creationTimestamp counts', '2026-03-01T10:00:00Z', undefined, 1],
      ['a set without a creationTimestamp counts every uninjected pod', undefined, '2020-01-01T00:00:00Z', 1],
      ['an unreadable pod timestamp counts', '2026-03-01T10:00:00Z', 'yesterday', 1],
      ['a timestamp that is not a string counts', '2026-03-01T10:00:00Z', 1_772_000_000, 1],
    ])('%s', (_name, setCreated, podCreated, expected) => {
      const s = { ...set, metadata: at(set.metadata!, setCreated) };
      const bare = pod();
      bare.metadata = at(bare.metadata!, podCreated);
      expect(status([bare], s).notInjectedPods).toBe(expected);
    });

    it('still matches injected pods that predate the set', () => {
      const s = { ...set, metadata: { ...set.metadata, creationTimestamp: '2026-03-01T10:00:00Z' } };
      const p = injectedPod();
      p.metadata = { ...p.metadata, creationTimestamp: '2026-01-01T00:00:00Z' };
      expect(status([p], s).status.matchedPods).toBe(1);
    });
  });

  it('does not report uninjected pods for a paused set', () => {
    const paused = { ...set, spec: { ...set.spec, injectionStrategy: { paused: true } } };
    expect(status([pod()], paused).notInjectedPods).toBe(0);
  });

  it('uses namespace labels for a namespaceSelector and refuses to guess when they are unknown', () => {
    const s = sidecarSet('s', { namespaceSelector: { matchLabels: { env: 'prod' } } });
    const p = injectedPod({ hash: s.metadata!.annotations!['kruise.io/sidecarset-hash']! });
    expect(status([p], s, new Map([['default', { env: 'prod' }]])).status.matchedPods).toBe(1);
    expect(status([p], s, new Map([['default', { env: 'dev' }]])).status.matchedPods).toBe(0);
    expect(() => status([p], s)).toThrow(UnknownNamespaceError);
  });
});
