/**
 * The pod-eviction webhook (validating, pods/eviction CREATE, failurePolicy
 * Fail): the reconciler's evictions only (its matchConditions), answered by
 * the pod-change function at its own URL. The eviction policy in
 * infra/k8s/rbac.yaml sees only the Eviction, never the pod it names; this
 * reads that pod (one GET, with the webhooks' read-only identity) and
 * refuses unless it is the pod the Eviction's uid precondition names and it
 * has a controller to recreate it. The reconciler evicts only such pods
 * (its repair of pods the pod webhook missed), so this holds a stolen
 * reconciler credential to the same: no pod gone for good.
 * Fails closed: a pod that cannot be read is refused, with the reason.
 */
import { allowed, denied, skipped, type Verdict } from '../admission/responses.ts';
import type { AdmissionRequest } from '../admission/review.ts';
import { errorMessage } from '../errors.ts';
import { arrayOf, objectOf, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { controllerOf } from '../sidecarset/pod-state.ts';
import type { HandlerDeps, HandlerResult } from './handler.ts';

/** The reconciler, as the webhook's matchConditions and rbac.yaml's policies know it: by username or by group. */
export const RECONCILER_USER = 'sidecarset-status-sync';

/** What reading the pod an Eviction names gave. */
export type EvictedPodRead = { found: Pod } | { gone: true } | { unreadable: string };

/** Whether a review is an Eviction (a CREATE of pods/eviction): the pod-change function answers it as the pod-eviction webhook. */
export function isEviction(request: AdmissionRequest): boolean {
  return request.subResource === 'eviction' && request.operation === 'CREATE';
}

/** Whether the reconciler's identity sent the request (the username, or the group, as the policies match it). */
export function isReconciler(request: AdmissionRequest): boolean {
  const user = objectOf(request.userInfo);
  return stringOf(user?.username) === RECONCILER_USER || arrayOf(user?.groups).includes(RECONCILER_USER);
}

/** The uid precondition of the Eviction's deleteOptions; undefined when it has none. */
function preconditionUid(eviction: unknown): string | undefined {
  const uid = stringOf(objectOf(objectOf(objectOf(eviction)?.deleteOptions)?.preconditions)?.uid);
  return uid === '' ? undefined : uid;
}

const refused = (pod: string, why: string): Verdict => denied(403, `${RECONCILER_USER} may not evict pod ${pod}: ${why}`, 'Forbidden');

/**
 * The decision on one of the reconciler's evictions, given what reading the
 * pod gave: allowed only for the pod the uid precondition names (so the pod
 * checked is the pod evicted) when it has a controller.
 */
export function evictionVerdict(request: AdmissionRequest, read: EvictedPodRead): Verdict {
  const pod = `${request.namespace ?? ''}/${request.name ?? ''}`;
  const uid = preconditionUid(request.object);
  if (uid === undefined) return refused(pod, 'the eviction has no uid precondition, so the pod checked might not be the pod evicted');
  if ('unreadable' in read) return refused(pod, `it could not be read to check its controller (${read.unreadable}); refused rather than risk a pod nothing recreates`);
  if ('gone' in read) return refused(pod, 'there is no such pod');
  const actual = stringOf(read.found.metadata?.uid) ?? '';
  if (actual !== uid) return refused(pod, `the eviction names uid ${uid}, the pod of that name is uid ${actual}`);
  // The reconciler's repair evicts only pods controllerOf finds; the same test holds its credential.
  if (controllerOf(read.found) === undefined) return refused(pod, 'it has no controller (no ownerReference with controller: true), so nothing would recreate it');
  return allowed();
}

/** Reads the pod an Eviction names: one GET, bounded by the review's deadline. */
async function readEvictedPod(request: AdmissionRequest, deps: HandlerDeps): Promise<EvictedPodRead> {
  if (deps.pods === undefined) return { unreadable: 'this function has no pod reads configured' };
  try {
    const pod = await deps.pods.get(request.namespace ?? '', request.name ?? '', deps.signal);
    return pod === undefined ? { gone: true } : { found: pod };
  } catch (error) {
    return { unreadable: errorMessage(error) };
  }
}

/**
 * Answers an Eviction review. Another identity's eviction is let through
 * unread: the webhook's matchConditions keep those at the API server, and an
 * API server that does not evaluate them (before Kubernetes 1.30) must not
 * hold an administrator's drain to the reconciler's rule.
 */
export async function podEvictionHandler(request: AdmissionRequest, deps: HandlerDeps): Promise<HandlerResult> {
  if (!isReconciler(request)) return skipped();
  if (request.name === undefined || request.name === '' || request.namespace === undefined || request.namespace === '') {
    return refused(`${request.namespace ?? ''}/${request.name ?? ''}`, 'the review names no pod');
  }
  return evictionVerdict(request, await readEvictedPod(request, deps));
}
