/**
 * pod-inject's answer for a pod no set injects: the rollout fence
 * (lib/sidecarset/rollout-fence.ts) removed when the pod's creator wrote
 * it, since only pod-inject may say which containers and annotation keys
 * the reconciler may change (a copied manifest, or a creator naming its own
 * application container, would otherwise widen what a stolen reconciler
 * credential can re-image). A pod without them is allowed unchanged, as before.
 * The core's injectPod gives the same pod (rollout-fence.ts withoutFence).
 */
import { pointer, type JsonPatchOperation } from '../admission/json-patch.ts';
import { allowed, patchedWith, type Verdict } from '../admission/responses.ts';
import type { Pod } from '../kube/types.ts';
import { fenceKeysOn, forgedFenceWarning } from '../sidecarset/rollout-fence.ts';

/** Allowed, with the fence annotations the pod carries removed (and a warning saying so). */
export function withoutForgedFence(pod: Pod): Verdict {
  const keys = fenceKeysOn(pod);
  if (keys.length === 0) return allowed();
  const ops: JsonPatchOperation[] = keys.map((key) => ({ op: 'remove', path: pointer(['metadata', 'annotations', key]) }));
  return patchedWith(ops, [forgedFenceWarning(keys)]);
}
