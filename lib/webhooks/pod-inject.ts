/** The Pod injection webhook (pod CREATE): the injection, as a JSON Patch written from its decisions. */
import { errorMessage } from '../errors.ts';
import { AnswerTooLargeError, patchBytesOverAnswerLimit, smallestAnswerBytes } from '../admission/answer-size.ts';
import { denied, patchedWith, type Verdict } from '../admission/responses.ts';
import { createPatchSharingValues } from '../admission/json-patch.ts';
import { withoutBookkeeping } from '../sidecarset/injection-bookkeeping.ts';
import { withoutPolicyInjection } from '../sidecarset/policy-record.ts';
import type { AdmissionRequest } from '../admission/review.ts';
import { objectOf, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { RevisionUnavailableError } from '../sidecarset/revision-pick.ts';
import { applyingSidecarSets, injectedPod, injectionChanges, InjectionTooLargeError, InvalidPodError, PatchPodMetadataError } from '../sidecarset/inject.ts';
import { hasNamespaceSelector, labelsOf, UnknownNamespaceError, type NamespaceLabels } from '../sidecarset/match.ts';
import { InvalidHashAnnotationError } from '../sidecarset/pod-annotations.ts';
import { ResourcesPolicyError } from '../sidecarset/resources-policy.ts';
import { memoisedStoredSetFacts, type StoredSetFactsOf } from '../sidecarset/stored-set-facts.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { failed, neverThrows, type AdmissionHandler, type HandlerDeps, type HandlerResult } from './handler.ts';
import { injectionRevisions, RevisionReadError } from './pinned-revisions.ts';
import { injectionPatch } from './pod-inject-patch.ts';
import { withoutForgedBookkeeping } from './pod-inject-fence.ts';
import { onlyKind, onlyOperations, skipDeleting, skipSubresources } from './skip.ts';
import { enqueueAdmitted, POD_ENQUEUE_TIMEOUT_MS } from './rollout-enqueue.ts';
import { MAX_TRIGGERED_SETS, podsChange } from '../status-sync/pod-trigger.ts';

/** The answer that turns the received pod into `pod`. */
function allowedAs(received: Pod, pod: Pod, warnings: string[]): Verdict {
  return patchedWith(createPatchSharingValues(received, pod), warnings);
}

/** The namespace the pod is created in: the request's (a pod made from generateName may not carry it). */
function podNamespace(request: AdmissionRequest): string {
  const fromRequest = request.namespace ?? '';
  if (fromRequest !== '') return fromRequest;
  // Kruise's fallback, for requests that carry no namespace at all.
  return stringOf(objectOf(objectOf(request.object)?.metadata)?.namespace) ?? 'default';
}

const handleInject = (draw: () => number, factsOf: StoredSetFactsOf) => async (request: AdmissionRequest, deps: HandlerDeps) => {
  const namespace = podNamespace(request);
  let sets: readonly SidecarSet[];
  let namespaceLabels: NamespaceLabels = new Map();
  try {
    sets = await deps.sidecarSets.list(deps.signal);
    if (sets.some(hasNamespaceSelector)) namespaceLabels = await deps.namespaces.labels([namespace], deps.signal);
  } catch (error) {
    return failed(503, `cannot decide the injection: ${errorMessage(error)}`, error);
  }
  try {
    const received = request.object as Pod;
    // What the injection policy added, undone: pod-inject injects every set itself (policy-record.ts).
    const pod = withoutPolicyInjection(received);
    const input = { pod, namespace, sidecarSets: sets, namespaceLabels };
    // The pinned revisions of the sets that apply (rollout.md §2.4); no read for a set that pins none.
    const applying = applyingSidecarSets(input);
    const revisions = await injectionRevisions(applying, labelsOf(pod), deps.revisions, draw, deps.signal);
    const changes = injectionChanges({ ...input, applying, revisions, factsOf, now: deps.clock.now(), maxGrowthBytes: patchBytesOverAnswerLimit - 1, sortSidecarsByName: deps.sortSidecarsByName === true });
    if (changes === undefined) return pod === received ? withoutForgedBookkeeping(pod) : allowedAs(received, withoutBookkeeping(pod), []);
    // Written from the decisions, not diffed from an injected pod (pod-inject-patch.ts); diffed from the pod received when the policy had written to it.
    const answer = pod === received ? patchedWith(injectionPatch(changes), changes.warnings, changes.stringTexts) : allowedAs(received, injectedPod(changes), changes.warnings);
    // The sets that injected it count one more pod: their reconciles start now (pod-trigger.ts), never on a dry run.
    if (request.dryRun !== true) await enqueueAdmitted(changes.applied.slice(0, MAX_TRIGGERED_SETS).map(podsChange), deps, POD_ENQUEUE_TIMEOUT_MS, 'could not start the reconcile for a pod change now; the schedule\'s resync will');
    return answer;
  } catch (error) {
    return injectionFailure(error);
  }
};

/** The answer for what injection threw: a failure (so failurePolicy decides) or a denial of a pod it cannot inject; anything else is rethrown. */
function injectionFailure(error: unknown): HandlerResult {
  if (error instanceof InjectionTooLargeError) {
    // What admission-review.ts answers for an answer over the limit, said before building it.
    const tooLarge = new AnswerTooLargeError(smallestAnswerBytes(error.growthBytes));
    return failed(500, tooLarge.message, tooLarge);
  }
  if (error instanceof UnknownNamespaceError) return failed(503, `cannot decide the injection: ${error.message}`, error);
  // Never the current set instead of a pinned revision: the webhook's failurePolicy decides.
  if (error instanceof RevisionReadError) return failed(503, `cannot decide the injection: ${error.message}`, error);
  if (error instanceof RevisionUnavailableError) return failed(500, `cannot decide the injection: ${error.message}`, error);
  if (error instanceof InvalidHashAnnotationError || error instanceof PatchPodMetadataError || error instanceof InvalidPodError || error instanceof ResourcesPolicyError) {
    return denied(400, error.message, 'BadRequest');
  }
  throw error;
}

/**
 * The pod webhook with its random draw for a `Partial` pinned revision's
 * percent partition (a number in [0, 1), as Go's rand.Float64); tests fix it.
 * `factsOf` gives what is derived from a stored set alone (its revision
 * name): by default a memo of this handler's own, so each stored version of
 * a set is worked out once per function instance, not once per pod.
 */
export function podInjectHandlerWith(draw: () => number, factsOf: StoredSetFactsOf = memoisedStoredSetFacts().factsOf): AdmissionHandler {
  return neverThrows(onlyKind('', 'Pod', skipSubresources(onlyOperations(['CREATE'], skipDeleting(handleInject(draw, factsOf))))));
}

export const podInjectHandler: AdmissionHandler = podInjectHandlerWith(Math.random);
