/**
 * pod-inject's answer for a pod no set injects: the annotations only
 * injection writes (lib/sidecarset/injection-bookkeeping.ts: Kruise's three
 * and the rollout fence) removed when the pod's creator wrote them. Only
 * pod-inject may say which containers and annotation keys the reconciler may
 * change (a copied manifest, or a creator naming its own application
 * container, would otherwise widen what a stolen reconciler credential can
 * re-image), and a pod may name only the sets that injected it (pod-change
 * starts a reconcile for each set its injected-list names). A pod without them is
 * allowed unchanged, as before. The core's injectPod gives the same pod.
 */
import { pointer, type JsonPatchOperation } from '../admission/json-patch.ts';
import { allowed, patchedWith, type Verdict } from '../admission/responses.ts';
import type { Pod } from '../kube/types.ts';
import { bookkeepingKeysOn, removedBookkeepingWarning } from '../sidecarset/injection-bookkeeping.ts';

/** Allowed, with the injection annotations the pod carries removed (and a warning saying so). */
export function withoutForgedBookkeeping(pod: Pod): Verdict {
  const keys = bookkeepingKeysOn(pod);
  if (keys.length === 0) return allowed();
  const ops: JsonPatchOperation[] = keys.map((key) => ({ op: 'remove', path: pointer(['metadata', 'annotations', key]) }));
  return patchedWith(ops, [removedBookkeepingWarning(keys)]);
}
