/** A HotUpgrade SidecarSet `hot-set` (sidecar `mesh`) and pods injected by it, with a kubelet's restarts, for the swap tables. */
import type { Pod } from '../../lib/kube/types.ts';
import { injectPod } from '../../lib/sidecarset/inject.ts';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { NOW, pod as bare, sidecarSet } from '../../testkit/sidecarset-objects.ts';

export const EMPTY = 'empty:1';

export function hotSet(image: string, resourceVersion = '999', strategy: SidecarSetUpdateStrategy = { type: 'RollingUpdate' }): SidecarSet {
  const set = sidecarSet('hot-set', { updateStrategy: strategy, containers: [{ name: 'mesh', image, upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: EMPTY } }] });
  set.metadata = { ...set.metadata, resourceVersion, uid: 'uid-hot' };
  return set;
}

/** The imageIDs of the example run in rollout.md §3.4 (`mesh@sha256:v1`, `empty@sha256:e1`). */
export function imageIdOf(image: string): string {
  if (image === EMPTY) return 'empty@sha256:e1';
  const [repo, tag] = image.split(':');
  return `${repo}@sha256:${tag}`;
}

/** A pod injected by the set at `image`, running and ready. */
export function injected(image: string, name = 'p'): Pod {
  const p = injectPod({ pod: bare(), namespace: 'default', sidecarSets: [hotSet(image, '5')], namespaceLabels: new Map(), now: NOW }).pod;
  p.metadata = { ...p.metadata, name, resourceVersion: '100', uid: `uid-${name}` };
  p.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [] };
  return kubelet(p);
}

/**
 * What a kubelet does: every container whose status image differs from its
 * spec restarts on the spec image (ready unless its image is `failing`); the
 * pod is Ready when every container is. The result is a new object.
 */
export function kubelet(p: Pod, failing: readonly string[] = []): Pod {
  const out = structuredClone(p);
  const before = new Map((p.status?.containerStatuses ?? []).map((s) => [s.name, s]));
  out.status!.containerStatuses = out.spec!.containers.map((c) => {
    const old = before.get(c.name);
    if (old !== undefined && old.image === c.image) return old;
    return failing.includes(c.image!) ? { name: c.name, image: c.image, imageID: '', ready: false } : { name: c.name, image: c.image, imageID: imageIdOf(c.image!), ready: true };
  });
  const ready = out.status!.containerStatuses.every((s) => s.ready === true);
  out.status!.conditions = [{ type: 'Ready', status: ready ? 'True' : 'False' }];
  out.metadata!.resourceVersion = String(Number(out.metadata!.resourceVersion) + 1);
  return out;
}
