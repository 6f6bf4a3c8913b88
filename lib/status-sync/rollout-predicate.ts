/**
 * The predicate of the controller's pod watch (controller.ts): a pod added or
 * gone, or Ready after the change, calls for a reconcile. A pod not Ready frees
 * no slot for the next batch; every reconcile reads the pods afresh, so a change
 * filtered out is seen at the set's next requeue at the latest.
 */
import type { PodPredicate } from '../ports.ts';
import { hasReadyCondition } from '../sidecarset/pod-state.ts';

export const rolloutPredicate: PodPredicate = (type, pod) => type !== 'MODIFIED' || hasReadyCondition(pod);
