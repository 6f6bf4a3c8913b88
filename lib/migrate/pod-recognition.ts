/**
 * Whether this project reads a pod's SidecarSet bookkeeping as Kruise wrote
 * it. Kruise has written the hash annotations in two forms: the current one
 * (`{"set":{"hash":…,"sidecarSetName":…,…}}`) and the one of its early
 * releases (`{"set":"<hash>"}`); both are read here as Kruise reads them
 * (lib/sidecarset/pod-annotations.ts). Anything else (not JSON, not an
 * object, the two forms mixed) is not recognised: the pod webhook refuses
 * such a pod, and the reconciler counts it as not updated, so a rollout
 * would update it (a restart) although Kruise may consider it current.
 */
import { stringMapOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { parseHashAnnotation } from '../sidecarset/pod-annotations.ts';
import { ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE } from '../sidecarset/types.ts';

export type Recognition =
  | { kind: 'none' }
  | { kind: 'current' }
  /** The early `{"set":"<hash>"}` form, in at least one of the two annotations. */
  | { kind: 'old-form' }
  | { kind: 'unrecognised'; annotation: string; problem: string };

export function recognisePod(pod: Pod): Recognition {
  const annotations = stringMapOf(pod.metadata?.annotations);
  let seen = false;
  let old = false;
  for (const key of [ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE]) {
    const value = annotations[key];
    if (value === undefined) continue;
    seen = true;
    try {
      parseHashAnnotation(key, value);
    } catch (error) {
      return { kind: 'unrecognised', annotation: key, problem: (error as Error).message };
    }
    // Parsed, so a JSON object whose entries are all strings (the early form) or all objects.
    const parsed = value === '' ? {} : (JSON.parse(value) as Record<string, unknown>);
    if (Object.values(parsed).some((v) => typeof v === 'string')) old = true;
  }
  if (!seen) return { kind: 'none' };
  return old ? { kind: 'old-form' } : { kind: 'current' };
}
