/**
 * The pod-change webhook (validating, pods DELETE and pods/status UPDATE,
 * failurePolicy Ignore, timeout 1 s): it never decides anything. It
 * answers "allowed" to every review, after handing the reconciler a pod
 * trigger for each set that injection recorded on the pod and that selects
 * it today, when the change moves that set's status counts (a pod going
 * away, its readiness or its containers' statuses): docs/RECONCILER.md, "A
 * pod change starts a reconcile". The pod's own annotations only propose names:
 * a pod's creator may edit them, and a set that does not select the pod
 * does not count it, so its reconcile would read the pods for nothing.
 *
 * The webhook's matchConditions (descriptors.ts) already keep every other
 * request at the API server; the same test here keeps an API server that
 * does not evaluate them (before Kubernetes 1.30) from costing a reconcile per
 * status write.
 *
 * The same function answers the pod-eviction webhook's reviews (the
 * reconciler's evictions, pods/eviction CREATE): those it judges, and may
 * refuse (pod-eviction.ts).
 */
import { allowed, skipped } from '../admission/responses.ts';
import type { AdmissionRequest } from '../admission/review.ts';
import { errorMessage } from '../errors.ts';
import { jsonEqual, objectOf, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { hasNamespaceSelector, labelsOf, type NamespaceLabels } from '../sidecarset/match.ts';
import { setsByName } from '../sidecarset/sets-by-name.ts';
import { podsChange, recordedSets, selectingSetNames, storedSets } from '../status-sync/pod-trigger.ts';
import { neverThrows, type AdmissionHandler, type HandlerDeps } from './handler.ts';
import { onlyKind } from './skip.ts';
import { enqueueAdmitted, POD_ENQUEUE_TIMEOUT_MS } from './rollout-enqueue.ts';
import { isEviction, podEvictionHandler } from './pod-eviction.ts';

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

const NOT_STARTED = 'could not start the reconcile for a pod change now; the schedule\'s resync will';

/** The pod as it was (DELETE) or is (UPDATE). */
function podOf(request: AdmissionRequest): unknown {
  return request.operation === 'DELETE' ? request.oldObject : request.object;
}

/**
 * The sets to trigger for the pod: those it records that are stored and
 * select it. Reads the sets (the sources' shared list) and, only when one of
 * them selects by namespace, the namespace's labels.
 */
async function triggeredSets(request: AdmissionRequest, pod: Pod, recorded: readonly string[], deps: HandlerDeps): Promise<string[]> {
  const candidates = storedSets(recorded, setsByName(await deps.sidecarSets.list(deps.signal)));
  if (candidates.length === 0) return [];
  const namespace = request.namespace ?? stringOf(objectOf(pod.metadata)?.namespace) ?? '';
  const namespaceLabels: NamespaceLabels = candidates.some(hasNamespaceSelector) ? await deps.namespaces.labels([namespace], deps.signal) : new Map();
  return selectingSetNames(candidates, { labels: labelsOf(pod), namespace, namespaceLabels });
}

const handlePodChange = async (request: AdmissionRequest, deps: HandlerDeps) => {
  // A dry run writes nothing: there is nothing to follow (the webhook declares NoneOnDryRun).
  if (request.dryRun === true || !movesCounts(request)) return skipped();
  const pod = podOf(request) as Pod;
  const recorded = recordedSets(pod);
  if (recorded.length === 0) return skipped();
  let sets: string[];
  try {
    sets = await triggeredSets(request, pod, recorded, deps);
  } catch (error) {
    // The answer never depends on the reconciler: without the sets, the schedule's resync shows the change.
    deps.logger?.warn(`${NOT_STARTED}: the SidecarSets could not be read`, { error: errorMessage(error) });
    return allowed();
  }
  if (sets.length === 0) return skipped();
  await enqueueAdmitted(sets.map(podsChange), deps, POD_ENQUEUE_TIMEOUT_MS, NOT_STARTED);
  return allowed();
};

const answerPodChange = onlyKind('', 'Pod', handlePodChange);

/**
 * Answers every pod change "allowed"; only pods reach it (a misconfigured rule
 * sending other kinds is let through). The same function, at the same URL, is
 * the pod-eviction webhook: an Eviction is judged there (pod-eviction.ts).
 */
export const podChangeHandler: AdmissionHandler = neverThrows((request, deps) => (isEviction(request) ? podEvictionHandler(request, deps) : answerPodChange(request, deps)));

