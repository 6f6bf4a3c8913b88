/**
 * The annotations only injection writes (pod-annotations.ts
 * INJECTION_ANNOTATIONS: Kruise's `kruise.io/sidecarset-hash`,
 * `-hash-without-image` and `-injected-list`, and the rollout fence) on a
 * pod no set injects: removed, whoever wrote them. Kruise's would otherwise
 * name sets the pod never received (pod-change starts a reconcile for each set a
 * pod's injected-list names, and the resync reads the hash entries),
 * and the fence would widen what the reconciler may change in the pod
 * (rollout-fence.ts). A pod that carries none is left as it is.
 */
import { withoutAnnotations } from '../kube/annotations.ts';
import { objectOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { INJECTION_ANNOTATIONS } from './pod-annotations.ts';

/** The injection annotations the pod carries, in INJECTION_ANNOTATIONS' order. */
export function bookkeepingKeysOn(pod: Pod): string[] {
  const annotations = objectOf(objectOf(pod.metadata)?.annotations);
  return annotations === undefined ? [] : INJECTION_ANNOTATIONS.filter((key) => Object.hasOwn(annotations, key));
}

/** The pod without its injection annotations (the pod itself when it carries none), for a pod no set injects. */
export function withoutBookkeeping(pod: Pod): Pod {
  return withoutAnnotations(pod, INJECTION_ANNOTATIONS);
}

/**
 * The warning of an answer that removed them: their prefixes only, as
 * warnings are cut at 120 characters and all five keys do not fit.
 */
export function removedBookkeepingWarning(keys: readonly string[]): string {
  const families = [...new Set(keys.map((key) => (key.startsWith('kruise.io/') ? 'kruise.io/sidecarset-*' : 'serverless-sidecarset/rollout-*')))];
  return `removed ${keys.length} injection annotation(s) from a pod no set injects: ${families.join(', ')}`;
}
