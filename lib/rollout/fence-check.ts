/**
 * What a rollout may write to a pod under the pod policy's rollout fence
 * (lib/sidecarset/rollout-fence.ts; infra/k8s/rbac.yaml): nothing at all in
 * a pod without the fence, its bookkeeping included (bookkeeping a stolen
 * credential forged on an unfenced pod is what `migrate fence` would then
 * trust); in a fenced pod, re-image only the containers pod-inject
 * recorded, add or change only the annotation keys it recorded, besides the
 * SidecarSet bookkeeping. The reconciler checks this
 * itself before it writes, so that a pod the policy would refuse (422) is
 * set aside and reported (its SidecarSetUpgradable condition and a Warning Event
 * on the set, lib/status-sync/set-reconcile.ts) rather than tried again and
 * refused every reconcile, and a patchPodMetadata key named after the pod was
 * created is left out of the pod's update and reported, not made to fail it.
 * The same rules as the policy's CEL, which stays the authority.
 */
import { podAnnotations } from '../sidecarset/pod-state.ts';
import { patchPodMetadata } from '../sidecarset/inject.ts';
import { ANNOTATION_FENCE_CONTAINERS, rolloutFenceOf, type RolloutFence } from '../sidecarset/rollout-fence.ts';
import type { Pod } from '../kube/types.ts';
import type { SidecarSet } from '../sidecarset/types.ts';

/** The rollout's bookkeeping keys, which the policy lets the reconciler add, change and remove (its `bookkeeping` variable). */
const BOOKKEEPING = /^(kruise\.io\/sidecarset-|version\.sidecarset\.kruise\.io\/|versionalt\.sidecarset\.kruise\.io\/)/;
/** Keys the system reads, which the policy refuses whatever the fence lists (its `systemDomain` variable). */
const SYSTEM_DOMAIN = /^([^/]*\.)?(kubernetes\.io|k8s\.io)\//;

/** A pod the rollout may not update in place: the policy would refuse the write. */
export class FencedPodError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FencedPodError';
  }
}

/** Whether the policy lets the reconciler add or change `key` in a pod with `fence` (nothing in a pod without one). */
export function fenceAllowsKey(fence: RolloutFence | undefined, key: string): boolean {
  return fence !== undefined && (BOOKKEEPING.test(key) || (fence.keys.has(key) && !SYSTEM_DOMAIN.test(key)));
}

/**
 * Throws {@link FencedPodError} unless `pod` carries the fence and every
 * container of `names` is one pod-inject recorded as injected into it: a
 * rollout's write always changes bookkeeping, which the policy admits on
 * fenced pods only.
 */
export function assertFenceAdmitsRollout(pod: Pod, names: readonly string[]): void {
  const fence = rolloutFenceOf(pod);
  if (fence === undefined) {
    throw new FencedPodError(
      `the pod carries no ${ANNOTATION_FENCE_CONTAINERS} annotation (created before pod-inject wrote it, or not injected by it), so the pod policy lets the reconciler change nothing in it, neither an image nor the SidecarSet bookkeeping: recreate the pod, or have an administrator record its sidecars with migrate fence (docs/OPERATIONS.md, "What the pod policy cannot see, and the rollout fence")`,
    );
  }
  const outside = names.filter((n) => !fence.containers.has(n));
  if (outside.length > 0) {
    throw new FencedPodError(`container(s) ${outside.join(', ')} of the pod were not injected by pod-inject (its ${ANNOTATION_FENCE_CONTAINERS} annotation lists ${[...fence.containers].join(', ') || 'none'}), so the pod policy refuses their new image: recreate the pod`);
  }
}

/**
 * The annotation keys the set's `patchPodMetadata` would add or change in
 * the pod that its fence does not allow (named after the pod was created,
 * or a pod without a fence), sorted.
 */
export function heldPatchPodMetadataKeys(pod: Pod, set: SidecarSet): string[] {
  const before = podAnnotations(pod);
  const after = { ...before };
  patchPodMetadata(after, set);
  return heldKeys(pod, before, after);
}

/** The keys `after` adds or changes from `before` that the pod's fence does not allow, sorted. */
export function heldKeys(pod: Pod, before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>): string[] {
  const fence = rolloutFenceOf(pod);
  const held: string[] = [];
  for (const [key, value] of Object.entries(after)) {
    if (Object.hasOwn(before, key) && before[key] === value) continue;
    if (!fenceAllowsKey(fence, key)) held.push(key);
  }
  return held.sort();
}
