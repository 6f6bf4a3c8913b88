/**
 * pod-inject's matchConditions on the policy path (docs/INJECTION-POLICY.md):
 * the API server evaluates them on the pod as the mutating admission
 * policies left it, and calls pod-inject only when the injection policy
 * marked the pod, or when the pod carries injection bookkeeping (Kruise's
 * annotations, the rollout fence) without the policy's record: a creator's
 * forged fence on a pod no set selects still reaches pod-inject, which
 * removes it as it always has.
 */
import { ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD } from '../sidecarset/policy-record.ts';
import { INJECTION_ANNOTATIONS } from '../sidecarset/pod-annotations.ts';

const keys = INJECTION_ANNOTATIONS.map((key) => `'${key}'`).join(', ');

export const POD_INJECT_MATCH_CONDITIONS: readonly { name: string; expression: string }[] = [
  {
    name: 'needs-pod-inject',
    expression: `has(object.metadata.annotations) && ('${ANNOTATION_INJECT_MARK}' in object.metadata.annotations ||
      (!('${ANNOTATION_POLICY_RECORD}' in object.metadata.annotations) && [${keys}].exists(k, k in object.metadata.annotations)))`,
  },
];
