/**
 * The pod-change webhook (validating, pods DELETE and pods/status UPDATE,
 * failurePolicy Ignore, timeout 1 s): it never decides anything. It
 * answers "allowed" to every review, after handing the reconciler a pod
 * trigger for each set the pod was injected with, when the change moves
 * that set's status counts (a pod going away, its readiness or its
 * containers' statuses): docs/RECONCILER.md, "A pod change starts a pass".
 *
 * The webhook's matchConditions (descriptors.ts) already keep every other
 * request at the API server; the same test here keeps an API server that
 * does not evaluate them (before Kubernetes 1.30) from costing a pass per
 * status write.
 */
import { allowed, skipped } from '../admission/responses.ts';
import type { AdmissionRequest } from '../admission/review.ts';
import { jsonEqual, objectOf } from '../kube/json.ts';
import { podsChange, setsOfPod } from '../status-sync/pod-trigger.ts';
import { neverThrows, type AdmissionHandler, type HandlerDeps } from './handler.ts';
import { onlyKind } from './skip.ts';
import { enqueueAdmitted, POD_ENQUEUE_TIMEOUT_MS } from './rollout-enqueue.ts';

/** The parts of a pod's status its sets' counts read: phase, conditions, container statuses. */
const COUNTED_STATUS = ['phase', 'conditions', 'containerStatuses', 'initContainerStatuses'] as const;

/**
 * Whether a review is a pod change that can move a set's counts: a DELETE of
 * a pod not already being deleted (it then leaves the matched pods), or an
 * UPDATE of pods/status that changes what the counts read. Anything else
 * (a pod's own UPDATE, the final DELETE of a terminating pod) is not.
 */
export function movesCounts(request: AdmissionRequest): boolean {
  if (request.operation === 'DELETE') {
    const metadata = objectOf(objectOf(request.oldObject)?.metadata);
    return metadata?.deletionTimestamp === undefined || metadata.deletionTimestamp === null;
  }
  if (request.operation !== 'UPDATE' || request.subResource !== 'status') return false;
  const now = objectOf(objectOf(request.object)?.status) ?? {};
  const before = objectOf(objectOf(request.oldObject)?.status) ?? {};
  return COUNTED_STATUS.some((field) => !jsonEqual(now[field], before[field]));
}

/** The pod as it was (DELETE) or is (UPDATE). */
function podOf(request: AdmissionRequest): unknown {
  return request.operation === 'DELETE' ? request.oldObject : request.object;
}

const handlePodChange = async (request: AdmissionRequest, deps: HandlerDeps) => {
  // A dry run writes nothing: there is nothing to follow (the webhook declares NoneOnDryRun).
  if (request.dryRun === true || !movesCounts(request)) return skipped();
  const sets = setsOfPod(podOf(request));
  if (sets.length === 0) return skipped();
  await enqueueAdmitted(sets.map(podsChange), deps, POD_ENQUEUE_TIMEOUT_MS, 'could not start the pass for a pod change now; the schedule will');
  return allowed();
};

/** Answers every review "allowed"; only pods reach it (a misconfigured rule sending other kinds is let through). */
export const podChangeHandler: AdmissionHandler = neverThrows(onlyKind('', 'Pod', handlePodChange));

