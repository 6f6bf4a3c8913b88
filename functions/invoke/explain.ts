/**
 * `invoke explain -f POD --sidecarsets FILE [--namespaces FILE] [--revisions FILE] [--pods FILE] [--namespace NS] [-o json]`:
 * the explanation (lib/explain/) of a pod on files. The pod goes through
 * pod-inject exactly as `invoke pod-inject` sends it (the same review, the
 * same handler, the same --revisions), and what each set injects is read
 * from the pod it returns; a pod that already carries injections (from
 * `kubectl get pod -o yaml`) also gets its rollout standing, planned over
 * itself and the pods of --pods.
 */
import type { AdmissionReviewResponse } from '../../lib/admission/review.ts';
import { isObject, stringOf } from '../../lib/kube/json.ts';
import type { JsonObject, Pod } from '../../lib/kube/types.ts';
import { explainPod } from '../../lib/explain/explain.ts';
import { explanationText } from '../../lib/explain/text.ts';
import { sidecarSetName } from '../../lib/sidecarset/match.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import type { HandlerDeps } from '../../lib/webhooks/handler.ts';
import { POD_INJECT } from '../../lib/webhooks/descriptors.ts';
import { runReview, type ReviewOutcome } from '../../lib/webhooks/registry.ts';
import { isDeleting } from '../../lib/webhooks/skip.ts';
import type { NamespacesWithHint } from './namespace-hint.ts';

/** The command that explains a pod on files. */
export const EXPLAIN = 'explain';

/** Exit code when pod-inject would refuse the pod (as invoke's denial with -o). */
const EXIT_DENIED = 3;

/** What `invoke explain` has read and how it reaches pod-inject: the same readers and request as `invoke pod-inject`. */
export interface ExplainFiles {
  sets: readonly SidecarSet[];
  pods: readonly Pod[];
  namespaces: NamespacesWithHint;
  deps: HandlerDeps;
  /** The review pod-inject gets for the pod of -f. */
  event: JsonObject;
  /** The object the answer leaves (the patch applied). */
  resulting: (event: JsonObject, review: AdmissionReviewResponse) => unknown;
  output: 'text' | 'json';
  stdout(text: string): void;
  stderr(text: string): void;
}

/** `; ` and what to do, when there is something to do. */
const whatToDo = (hint: string | undefined): string => (hint === undefined ? '' : `; ${hint}`);

/** Why pod-inject's skip rules (lib/webhooks/skip.ts) let this review through untouched; undefined when they do not. */
function skipReason(request: JsonObject, pod: Pod): string | undefined {
  if (request.operation !== 'CREATE') return `pod-inject injects only at CREATE; the review is ${JSON.stringify(request.operation)}`;
  if (typeof request.subResource === 'string' && request.subResource !== '') return `pod-inject lets a subresource (${request.subResource}) through untouched`;
  if (isDeleting({ object: pod })) return 'pod-inject lets a pod being deleted (metadata.deletionTimestamp) through untouched';
  return undefined;
}

/** Explains the pod of the review; the exit code. */
export async function runExplainFiles(files: ExplainFiles): Promise<number> {
  const { event, deps } = files;
  const outcome: ReviewOutcome = await runReview(POD_INJECT.name, event, deps);
  if (outcome.kind === 'invalid') {
    files.stderr(`invoke: ${outcome.message}\n`);
    return 2;
  }
  if (outcome.kind === 'failed') {
    files.stderr(`invoke: ${EXPLAIN}: pod-inject could not decide (a webhook answers HTTP ${outcome.status}): ${outcome.message}${whatToDo(files.namespaces.hint())}\n`);
    return 1;
  }
  const request = isObject(event.request) ? event.request : {};
  const pod = request.object as Pod;
  const namespace = stringOf(request.namespace) ?? 'default';
  const { response } = outcome.review;
  const injected = response.allowed ? (files.resulting(event, outcome.review) as Pod) : pod;
  const problem = response.allowed ? undefined : `refuses the pod (${response.status?.code ?? 403}): ${response.status?.message ?? 'no reason given'}`;
  const podNamespaces = [...new Set([namespace, ...files.pods.map((p) => stringOf(p.metadata?.namespace) ?? '')])].filter((n) => n !== '');
  const namespaceLabels = await files.namespaces.source.labels(podNamespaces);
  // The pod of -f among the pods of --pods (replacing its own entry there, by name).
  const key = `${namespace}/${stringOf(pod.metadata?.name) ?? ''}`;
  const fleet = [...files.pods.filter((p) => `${stringOf(p.metadata?.namespace) ?? ''}/${stringOf(p.metadata?.name) ?? ''}` !== key), { ...pod, metadata: { ...pod.metadata, namespace } }];
  const asListed = fleet[fleet.length - 1] as Pod;
  // The skip rules pod-inject is wrapped in that a pod's creation can meet (the review is a CREATE of a pod, not of a subresource).
  const skipped = skipReason(request, pod);
  const explanation = explainPod({
    ...(skipped === undefined ? {} : { skipped }),
    pod: asListed,
    namespace,
    sets: files.sets,
    namespaceLabels,
    injected,
    ...(problem === undefined ? {} : { problem }),
    scopePods: new Map(files.sets.map((set) => [sidecarSetName(set), fleet])),
  });
  files.stdout(files.output === 'json' ? `${JSON.stringify(explanation, null, 2)}\n` : explanationText(explanation, false));
  return problem === undefined ? 0 : EXIT_DENIED;
}
