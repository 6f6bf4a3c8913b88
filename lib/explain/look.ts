/**
 * One look at the cluster for `npm run -s explain POD`: the pod, the
 * SidecarSets, the pods of each scope of the sets that injected it (as the
 * reconciler lists a set's pods, lib/rollout/pod-scope.ts), and the labels of
 * the namespaces a namespaceSelector needs; then the explanation. A few
 * reads, none per pod.
 */
import type { Pod } from '../kube/types.ts';
import type { NamespaceSource, SetPodSource, SidecarSetWatchSource } from '../ports.ts';
import { podScope } from '../rollout/pod-scope.ts';
import { hasNamespaceSelector, labelsOf, sidecarSetName, type NamespaceLabels } from '../sidecarset/match.ts';
import { isInjectedBy } from '../sidecarset/pod-state.ts';
import { namespacesNeeded, scopeKey } from '../status-view/rows.ts';
import { explainPod, mismatchText, type PodExplanation } from './explain.ts';
import { webhookSelectorMismatch } from './webhook-selector-match.ts';

export interface ExplainDeps {
  /** The pod by namespace and name; undefined when there is none. */
  getPod: (namespace: string, name: string, signal?: AbortSignal) => Promise<Pod | undefined>;
  sets: SidecarSetWatchSource;
  pods: SetPodSource;
  namespaces: NamespaceSource;
  /**
   * The MutatingWebhookConfiguration the pod webhook is registered in, as
   * stored; undefined when there is none (or it cannot be read: the check is
   * then left out, the explanation still made).
   */
  webhookConfiguration?: (signal?: AbortSignal) => Promise<unknown>;
  /** The reconciler's stall threshold and the wall clock, as the status view takes them: explain then says a stalled rollout. */
  stall?: { stallMs: number; nowMs: () => number };
}

/**
 * The explanation of the live pod `namespace/name`, or undefined when there is no such pod.
 * @throws whatever a read throws (the caller says it), or UnknownNamespaceError when the pod's Namespace is gone while a set's namespaceSelector needs it.
 */
export async function lookAtPod(deps: ExplainDeps, namespace: string, name: string, signal?: AbortSignal): Promise<PodExplanation | undefined> {
  const pod = await deps.getPod(namespace, name, signal);
  if (pod === undefined) return undefined;
  const { sets } = await deps.sets.list(signal);
  const scopePods = new Map<string, readonly Pod[]>();
  const byScope = new Map<string, readonly Pod[]>();
  for (const set of sets.filter((s) => isInjectedBy(pod, s))) {
    const scope = podScope(set);
    if (scope === undefined) {
      scopePods.set(sidecarSetName(set), [pod]);
      continue;
    }
    const key = scopeKey(scope);
    let listed = byScope.get(key);
    if (listed === undefined) {
      listed = (await deps.pods.list(scope, signal)).pods;
      byScope.set(key, listed);
    }
    // The pod as read above stands for itself in the list (it may be newer): the explanation finds it by identity.
    const mine = `${namespace}/${name}`;
    scopePods.set(sidecarSetName(set), [...listed.filter((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}` !== mine), pod]);
  }
  const configuration = await deps.webhookConfiguration?.(signal);
  const needed = new Set(namespacesNeeded(sets, byScope));
  if (sets.some(hasNamespaceSelector) || configuration !== undefined) needed.add(namespace);
  const namespaceLabels: NamespaceLabels = needed.size === 0 ? new Map() : await deps.namespaces.labels([...needed], signal);
  const notCalled = configuration === undefined ? undefined : webhookSelectorMismatch(configuration, labelsOf(pod), namespaceLabels.get(namespace) ?? {});
  const skipped = notCalled === undefined ? undefined : `the API server does not call the pod webhook ${notCalled.webhook} for this pod: its ${notCalled.selector}: ${mismatchText(notCalled.mismatch, notCalled.selector === 'objectSelector' ? 'pod' : `namespace ${namespace}`)}`;
  const stall = deps.stall === undefined ? undefined : { stallMs: deps.stall.stallMs, nowMs: deps.stall.nowMs() };
  return explainPod({ pod, namespace, sets, namespaceLabels, scopePods, ...(skipped === undefined ? {} : { skipped }), ...(stall === undefined ? {} : { stall }) });
}
