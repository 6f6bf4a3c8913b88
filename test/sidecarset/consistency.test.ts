import { describe, expect, it } from '@jest/globals';
import { imageDigestParts, normalizeImageReference } from '../../lib/kube/image-reference.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { isPodReady, isPodStateConsistent, podHasSetContainers } from '../../lib/sidecarset/pod-state.ts';
import type { SidecarContainer, SidecarSet } from '../../lib/sidecarset/types.ts';

const D1 = 'sha256:' + '1'.repeat(64);
const D2 = 'sha256:' + '2'.repeat(64);

const setOf = (...containers: SidecarContainer[]): SidecarSet => ({ metadata: { name: 's' }, spec: { containers } });

function pod(containers: { name: string; image: string; statusImage?: string; imageID?: string }[], annotations: Record<string, string> = {}): Pod {
  return {
    metadata: { name: 'p', annotations },
    spec: { containers: containers.map((c) => ({ name: c.name, image: c.image })) },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: containers.map((c) => ({ name: c.name, image: c.statusImage ?? c.image, imageID: c.imageID ?? `id-${c.name}` })),
    },
  };
}

const state = (ids: Record<string, string>) => ({
  'kruise.io/sidecarset-inplace-update-state': JSON.stringify({ s: { revision: 'r', updateTimestamp: '2026-01-01T00:00:00Z', lastContainerStatuses: Object.fromEntries(Object.entries(ids).map(([k, v]) => [k, { imageID: v }])) } }),
});

describe('image references, normalised (sidecarset.md §7)', () => {
  it.each<[string, string]>([
    ['nginx', 'docker.io/library/nginx:latest'],
    ['nginx:1.23', 'docker.io/library/nginx:1.23'],
    ['docker.io/library/nginx:1.23', 'docker.io/library/nginx:1.23'],
    ['index.docker.io/library/nginx:1.23', 'docker.io/library/nginx:1.23'],
    ['user/app', 'docker.io/user/app:latest'],
    ['registry.example.com:5000/app', 'registry.example.com:5000/app:latest'],
    ['localhost/app:1', 'localhost/app:1'],
    [`nginx@${D1}`, `docker.io/library/nginx@${D1}`],
    [`nginx:1@${D1}`, `docker.io/library/nginx:1@${D1}`],
    ['Not A Reference', 'Not A Reference'],
  ])('%s → %s', (image, normalised) => {
    expect(normalizeImageReference(image)).toBe(normalised);
  });

  it('the digest parts of an imageID ignore its scheme and normalise the repository', () => {
    expect(imageDigestParts(`docker-pullable://nginx@${D1}`)).toEqual({ repository: 'docker.io/library/nginx', digest: D1 });
    expect(imageDigestParts('nginx:1')).toBeUndefined();
  });
});

describe('IsPodStateConsistent (rollout.md §1.8, §1.8a)', () => {
  const cold = setOf({ name: 'a', image: 'x' }, { name: 'b', image: 'x' });

  it('a container-status count different from the container count is inconsistent', () => {
    const p = pod([{ name: 'a', image: 'x:1' }]);
    p.status!.containerStatuses = [];
    expect(isPodStateConsistent(p, cold)).toBe(false);
  });

  it('digest images: the status imageID must name the same repository and digest', () => {
    expect(isPodStateConsistent(pod([{ name: 'a', image: `nginx@${D1}`, imageID: `docker-pullable://docker.io/library/nginx@${D1}` }]), setOf({ name: 'a' }))).toBe(true);
    expect(isPodStateConsistent(pod([{ name: 'a', image: `nginx@${D1}`, imageID: `docker-pullable://nginx@${D2}` }]), setOf({ name: 'a' }))).toBe(false);
    expect(isPodStateConsistent(pod([{ name: 'a', image: `nginx@${D1}`, imageID: '' }]), setOf({ name: 'a' }))).toBe(false);
  });

  it('tag images without the in-place state are consistent; with unreadable or empty state, the containers decide', () => {
    expect(isPodStateConsistent(pod([{ name: 'a', image: 'x:2' }]), cold)).toBe(true);
    // Kruise: inconsistent for ever. Any pod writer can set the annotation: a container running its spec image has no
    // update in flight, whatever it says, so a garbage value cannot hold maxUnavailable (docs/ROLLOUT.md).
    for (const garbage of ['', '{', '[]', 'not json']) {
      expect(isPodStateConsistent(pod([{ name: 'a', image: 'x:2' }], { 'kruise.io/sidecarset-inplace-update-state': garbage }), cold)).toBe(true);
      expect(isPodStateConsistent(pod([{ name: 'a', image: 'x:2', statusImage: 'x:1' }], { 'kruise.io/sidecarset-inplace-update-state': garbage }), cold)).toBe(false);
    }
    // Go decodes null into an empty map: nothing recorded, consistent.
    expect(isPodStateConsistent(pod([{ name: 'a', image: 'x:2' }], { 'kruise.io/sidecarset-inplace-update-state': 'null' }), cold)).toBe(true);
  });

  it('tag images: inconsistent while the recorded imageID is still current and the status image is not the spec image', () => {
    expect(isPodStateConsistent(pod([{ name: 'a', image: 'x:2', statusImage: 'x:1', imageID: 'old' }], state({ a: 'old' })), cold)).toBe(false);
    expect(isPodStateConsistent(pod([{ name: 'a', image: 'x:2', statusImage: 'x:2', imageID: 'new' }], state({ a: 'old' })), cold)).toBe(true);
  });

  it('a new tag with the same imageID, reported normalised, is consistent (Kruise #1270/#1493 hang forever here)', () => {
    expect(isPodStateConsistent(pod([{ name: 'a', image: 'nginx:1.23', statusImage: 'docker.io/library/nginx:1.23', imageID: 'same' }], state({ a: 'same' })), cold)).toBe(true);
  });

  it('mixed digest and tag sidecars: a bad digest before the first tag sidecar counts, one after it is never checked', () => {
    const bad = { name: 'a', image: `nginx@${D1}`, imageID: `nginx@${D2}` };
    const tag = { name: 'b', image: 'x:1' };
    expect(isPodStateConsistent(pod([bad, tag]), cold)).toBe(false);
    expect(isPodStateConsistent(pod([tag, bad]), cold)).toBe(true);
  });

  it('a pod carrying none of the set’s sidecars is consistent', () => {
    expect(isPodStateConsistent(pod([{ name: 'app', image: 'x' }]), cold)).toBe(true);
  });
});

describe('HotUpgrade presence and readiness (rollout.md §1.1, §1.4, §1.8a)', () => {
  const hot = setOf({ name: 'h', image: 'x', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } });
  const working = (v: string) => ({ 'kruise.io/sidecarset-working-hotupgrade-container': JSON.stringify({ h: v }) });

  it('matched only with h-1, h-2 and a working-container entry', () => {
    expect(podHasSetContainers(pod([{ name: 'h-1', image: 'x' }, { name: 'h-2', image: 'empty:1' }], working('h-1')), hot)).toBe(true);
    expect(podHasSetContainers(pod([{ name: 'h-1', image: 'x' }, { name: 'h-2', image: 'empty:1' }]), hot)).toBe(false);
    expect(podHasSetContainers(pod([{ name: 'h-1', image: 'x' }], working('h-1')), hot)).toBe(false);
    expect(podHasSetContainers(pod([{ name: 'h', image: 'x' }]), hot)).toBe(false);
  });

  it('ready needs the empty container at hotUpgradeEmptyImage; working is h-1 only when the annotation says exactly h-1', () => {
    const containers = [{ name: 'h-1', image: 'x' }, { name: 'h-2', image: 'empty:1' }];
    expect(isPodReady(pod(containers, working('h-1')), hot)).toBe(true);
    expect(isPodReady(pod(containers, working('h-2')), hot)).toBe(false);
    expect(isPodReady(pod(containers, working('anything')), hot)).toBe(false);
    const noEmpty = setOf({ name: 'h', image: 'x', upgradeStrategy: { upgradeType: 'HotUpgrade' } });
    expect(isPodReady(pod(containers, working('h-2')), noEmpty)).toBe(true);
  });

  it('ready needs Running, Ready=True and no deletionTimestamp', () => {
    const p = pod([{ name: 'a', image: 'x' }]);
    expect(isPodReady(p, setOf({ name: 'a' }))).toBe(true);
    expect(isPodReady({ ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, setOf({ name: 'a' }))).toBe(false);
    expect(isPodReady({ ...p, status: { ...p.status, phase: 'Pending' } }, setOf({ name: 'a' }))).toBe(false);
  });
});
