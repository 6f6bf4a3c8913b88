/**
 * The HotUpgrade swap (rollout.md §3.3, §3.4): which container takes the new
 * image, the one-write upgrade, the flip once the new container runs ready,
 * and the next upgrade flipping back, checked against the annotations
 * Kruise 1.8.2 wrote for the same steps.
 */
import { describe, expect, it } from '@jest/globals';
import { applyPatch } from '../../lib/admission/json-patch-apply.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { dueFlips, hotUpgradeChanges } from '../../lib/rollout/hot-swap.ts';
import { planRollout } from '../../lib/rollout/plan.ts';
import { podFlipPatch, podUpdatePatch } from '../../lib/rollout/pod-patch.ts';
import { batchWrites } from '../../lib/rollout/batch.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { NO_NAMESPACES } from './fixtures.ts';
import { EMPTY, hotSet, imageIdOf, injected, kubelet } from './hot-fixtures.ts';

const WORKING = 'kruise.io/sidecarset-working-hotupgrade-container';
const STATE = 'kruise.io/sidecarset-inplace-update-state';
const HASH = 'kruise.io/sidecarset-hash';
/** The run rollout.md §3.4 shows; its hash is kept as the set's so the in-place state compares byte for byte. */
const EXAMPLE_HASH = '8ddwxzdwx248w798xvbv2z2b494wb79d94ffx57vz255zz5fbvx2b5fx4cx64dd4';
const LATER = new Date('2026-12-01T01:32:49Z');

function images(p: Pod): Record<string, string> {
  return Object.fromEntries(p.spec!.containers.map((c) => [c.name, c.image!]));
}

function hotAnnotations(p: Pod): Record<string, string> {
  return Object.fromEntries(Object.entries(p.metadata!.annotations!).filter(([k]) => k === WORKING || k === STATE || k.includes('version')));
}

/** One reconcile's writes to the one pod, applied: the flip first, else the update. */
function reconcile(set: SidecarSet, p: Pod, now = LATER): Pod {
  const plan = planRollout(set, [p], NO_NAMESPACES);
  const writes = batchWrites(set, plan, 'hot-set-rev', () => 'hot-set', now);
  const patch = writes.flips[0]?.patch ?? writes.updates[0]?.patch;
  if (patch === undefined) return p;
  const out = applyPatch(p, patch) as Pod;
  out.metadata!.resourceVersion = String(Number(out.metadata!.resourceVersion) + 1);
  return out;
}

describe('which container takes the new image (rollout.md §3.3)', () => {
  const set = hotSet('mesh:v2');
  const withImages = (one: string, two: string, working: string, ready: { one: boolean; two: boolean }): Pod => {
    const p = injected('mesh:v1');
    p.spec!.containers.find((c) => c.name === 'mesh-1')!.image = one;
    p.spec!.containers.find((c) => c.name === 'mesh-2')!.image = two;
    p.metadata!.annotations![WORKING] = `{"mesh":"${working}"}`;
    p.status!.containerStatuses = p.spec!.containers.map((c) => ({
      name: c.name,
      image: c.image,
      imageID: imageIdOf(c.image!),
      ready: c.name === 'mesh-1' ? ready.one : c.name === 'mesh-2' ? ready.two : true,
    }));
    return p;
  };
  it.each<[string, Pod, string | undefined]>([
    ['mesh-1 holds the empty image', withImages(EMPTY, 'mesh:v1', 'mesh-2', { one: true, two: true }), 'mesh-1'],
    ['mesh-2 holds the empty image', withImages('mesh:v1', EMPTY, 'mesh-1', { one: true, two: true }), 'mesh-2'],
    ['an unfinished swap: the not-ready one (a failed image) takes the fix', withImages('mesh:v1', 'mesh:bad', 'mesh-2', { one: true, two: false }), 'mesh-2'],
    ['an unfinished swap: the not-ready mesh-1', withImages('mesh:bad', 'mesh:v1', 'mesh-1', { one: false, two: true }), 'mesh-1'],
    ['both ready: the one not working', withImages('mesh:v0', 'mesh:v1', 'mesh-2', { one: true, two: true }), 'mesh-1'],
    ['both unready: the one not working', withImages('mesh:v0', 'mesh:v1', 'mesh-1', { one: false, two: false }), 'mesh-2'],
    // Kruise compares the set's image with the partner's: that one already serves it.
    ['the partner already runs the set’s image', withImages(EMPTY, 'mesh:v2', 'mesh-2', { one: true, two: true }), undefined],
  ])('%s', (_d, p, container) => {
    const changes = hotUpgradeChanges(p, set);
    expect(changes.map((c) => c.container)[0]).toBe(container);
    if (container !== undefined) expect(changes[0]?.image).toBe('mesh:v2');
  });
});

describe('a hot upgrade, reconcile by reconcile (rollout.md §3.4)', () => {
  const v2 = hotSet('mesh:v2', '999');
  v2.metadata!.annotations![HASH] = EXAMPLE_HASH;

  it('reconcile N writes the new image into the empty container and switches the working container at once, as Kruise wrote it', () => {
    const p = injected('mesh:v1');
    const plan = planRollout(v2, [p], NO_NAMESPACES);
    expect(plan.updates.map((u) => u.images)).toEqual([{ 'mesh-2': 'mesh:v2' }]);
    const after = reconcile(v2, p);
    expect(images(after)).toMatchObject({ 'mesh-1': 'mesh:v1', 'mesh-2': 'mesh:v2' });
    // rollout.md §3.4, "Pod annotations after pass N", byte for byte (its timestamp is this run's clock).
    expect(hotAnnotations(after)).toEqual({
      'kruise.io/sidecarset-working-hotupgrade-container': '{"mesh":"mesh-2"}',
      'version.sidecarset.kruise.io/mesh-1': '1',
      'versionalt.sidecarset.kruise.io/mesh-1': '999',
      'version.sidecarset.kruise.io/mesh-2': '999',
      'versionalt.sidecarset.kruise.io/mesh-2': '1',
      'kruise.io/sidecarset-inplace-update-state':
        '{"hot-set":{"revision":"8ddwxzdwx248w798xvbv2z2b494wb79d94ffx57vz255zz5fbvx2b5fx4cx64dd4","updateTimestamp":"2026-12-01T01:32:49Z","lastContainerStatuses":{"mesh-2":{"imageID":"empty@sha256:e1"}}}}',
    });
    expect(JSON.parse(after.metadata!.annotations![HASH]!)['hot-set']).toMatchObject({ hash: EXAMPLE_HASH, sidecarList: ['mesh'] });
  });

  it('between reconciles the pod is updated and unavailable, and no flip is due before the new container restarted', () => {
    const upgraded = reconcile(v2, injected('mesh:v1'));
    const plan = planRollout(v2, [upgraded], NO_NAMESPACES);
    expect(plan.status).toEqual({ matchedPods: 1, updatedPods: 1, readyPods: 0, updatedReadyPods: 0 });
    expect(plan.flips).toEqual([]);
    expect(plan.swapping).toBe(1);
    expect(plan.waiting).toEqual({ kind: 'hot-swapping', pods: 1 });
  });

  it('once the new container runs ready, the flip resets the old one to the empty image, versions to "0", and leaves the hash alone', () => {
    const upgraded = reconcile(v2, injected('mesh:v1'));
    const restarted = kubelet(upgraded);
    expect(dueFlips(restarted, v2)).toEqual([{ sidecar: 'mesh', container: 'mesh-1', working: 'mesh-2', emptyImage: EMPTY }]);
    const flipped = reconcile(v2, restarted, new Date('2026-12-01T01:33:00Z'));
    expect(images(flipped)).toMatchObject({ 'mesh-1': EMPTY, 'mesh-2': 'mesh:v2' });
    expect(hotAnnotations(flipped)).toEqual({
      'kruise.io/sidecarset-working-hotupgrade-container': '{"mesh":"mesh-2"}',
      'version.sidecarset.kruise.io/mesh-1': '0',
      'versionalt.sidecarset.kruise.io/mesh-1': '999',
      'version.sidecarset.kruise.io/mesh-2': '999',
      'versionalt.sidecarset.kruise.io/mesh-2': '0',
      // The entry keeps its first timestamp and gains mesh-1's pre-flip imageID.
      'kruise.io/sidecarset-inplace-update-state':
        '{"hot-set":{"revision":"8ddwxzdwx248w798xvbv2z2b494wb79d94ffx57vz255zz5fbvx2b5fx4cx64dd4","updateTimestamp":"2026-12-01T01:32:49Z","lastContainerStatuses":{"mesh-1":{"imageID":"mesh@sha256:v1"},"mesh-2":{"imageID":"empty@sha256:e1"}}}}',
    });
    expect(flipped.metadata!.annotations![HASH]).toBe(restarted.metadata!.annotations![HASH]);
    const done = kubelet(flipped);
    const plan = planRollout(v2, [done], NO_NAMESPACES);
    expect(plan.status).toEqual({ matchedPods: 1, updatedPods: 1, readyPods: 1, updatedReadyPods: 1 });
    expect(plan).toMatchObject({ flips: [], swapping: 0, waiting: { kind: 'finished' } });
  });

  it('a paused or NotUpdate set flips nothing (Kruise 1.9 checks them before the flips; 1.8 flipped anyway)', () => {
    const restarted = kubelet(reconcile(v2, injected('mesh:v1')));
    for (const [strategy, kind] of [[{ type: 'RollingUpdate', paused: true }, 'paused'], [{ type: 'NotUpdate' }, 'not-update']] as const) {
      const set = hotSet('mesh:v2', '999', strategy);
      const plan = planRollout(set, [restarted], NO_NAMESPACES);
      expect(plan.flips).toEqual([]);
      expect(plan.updates).toEqual([]);
      expect(plan.swapping).toBe(0);
      expect(plan.waiting).toEqual({ kind });
    }
    // Unpaused, the same pod is flipped.
    expect(planRollout(v2, [restarted], NO_NAMESPACES).flips.map((f) => f.flips.map((x) => x.container))).toEqual([['mesh-1']]);
  });

  it('the next upgrade goes into mesh-1 and switches back to it, versioned from the set’s new resourceVersion', () => {
    const atV2 = kubelet(reconcile(v2, kubelet(reconcile(v2, injected('mesh:v1')))));
    const v3 = hotSet('mesh:v3', '1234');
    const after = reconcile(v3, atV2);
    expect(images(after)).toMatchObject({ 'mesh-1': 'mesh:v3', 'mesh-2': 'mesh:v2' });
    expect(hotAnnotations(after)).toMatchObject({
      [WORKING]: '{"mesh":"mesh-1"}',
      'version.sidecarset.kruise.io/mesh-1': '1234',
      'versionalt.sidecarset.kruise.io/mesh-1': '999',
      'version.sidecarset.kruise.io/mesh-2': '999',
      'versionalt.sidecarset.kruise.io/mesh-2': '1234',
    });
    // And back to v1 (the e2e's v1, v2, v1): the working container flips to mesh-1, then mesh-2 is emptied.
    const final = kubelet(reconcile(v3, kubelet(after)));
    expect(images(final)).toMatchObject({ 'mesh-1': 'mesh:v3', 'mesh-2': EMPTY });
    expect(planRollout(v3, [final], NO_NAMESPACES).status).toEqual({ matchedPods: 1, updatedPods: 1, readyPods: 1, updatedReadyPods: 1 });
  });

  it('a failed image is fixed in the container that failed, then flipped (the e2e "hot failed image")', () => {
    const bad = hotSet('mesh:bad', '2000');
    const failing = kubelet(reconcile(bad, injected('mesh:v1')), ['mesh:bad']);
    const stuck = planRollout(bad, [failing], NO_NAMESPACES);
    expect(stuck.status).toEqual({ matchedPods: 1, updatedPods: 1, readyPods: 0, updatedReadyPods: 0 });
    expect(stuck.flips).toEqual([]);
    const fixed = hotSet('mesh:v2', '2100');
    const plan = planRollout(fixed, [failing], NO_NAMESPACES);
    expect(plan.updates.map((u) => u.images)).toEqual([{ 'mesh-2': 'mesh:v2' }]);
    const after = reconcile(fixed, failing);
    expect(hotAnnotations(after)).toMatchObject({ [WORKING]: '{"mesh":"mesh-2"}', 'version.sidecarset.kruise.io/mesh-2': '2100', 'versionalt.sidecarset.kruise.io/mesh-1': '2100' });
    const final = kubelet(reconcile(fixed, kubelet(after)));
    expect(images(final)).toMatchObject({ 'mesh-1': EMPTY, 'mesh-2': 'mesh:v2' });
    expect(planRollout(fixed, [final], NO_NAMESPACES).status).toEqual({ matchedPods: 1, updatedPods: 1, readyPods: 1, updatedReadyPods: 1 });
  });

  it('a pod whose Ready condition lags still flips when every container but the old one is ready (isHotUpgradingReady)', () => {
    const restarted = kubelet(reconcile(v2, injected('mesh:v1')));
    restarted.status!.conditions = [{ type: 'Ready', status: 'False' }];
    expect(dueFlips(restarted, v2).map((f) => f.container)).toEqual(['mesh-1']);
    restarted.status!.containerStatuses!.find((s) => s.name === 'app')!.ready = false;
    expect(dueFlips(restarted, v2)).toEqual([]);
  });

  it('mid-swap pods take maxUnavailable slots: the next batch waits for their flip and restart', () => {
    const set = hotSet('mesh:v2', '999', { type: 'RollingUpdate', maxUnavailable: 1 });
    const first = reconcile(set, injected('mesh:v1', 'a'));
    const plan = planRollout(set, [first, injected('mesh:v1', 'b')], NO_NAMESPACES);
    expect(plan.updates).toEqual([]);
    expect(plan.waiting).toMatchObject({ kind: 'max-unavailable', unavailable: 1, maxUnavailable: 1, stuck: { count: 1, reasons: [{ reason: 'Restarting', count: 1, pods: ['default/a'] }] } });
  });

  it('both writes are guarded by the listed resourceVersion, and a set without a resourceVersion cannot version a hot upgrade', () => {
    const p = injected('mesh:v1');
    expect(podUpdatePatch({ pod: p, set: v2, latestRevision: 'r', injectedList: 'hot-set', now: LATER })[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: p.metadata!.resourceVersion });
    const restarted = kubelet(reconcile(v2, p));
    expect(podFlipPatch({ pod: restarted, set: v2, flips: dueFlips(restarted, v2), now: LATER })[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: restarted.metadata!.resourceVersion });
    const unversioned = hotSet('mesh:v2');
    delete unversioned.metadata!.resourceVersion;
    expect(() => podUpdatePatch({ pod: p, set: unversioned, latestRevision: 'r', injectedList: 'hot-set', now: LATER })).toThrow(/SidecarSet has no metadata\.resourceVersion/);
  });
});
