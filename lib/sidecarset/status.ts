/**
 * SidecarSet status from a set and the cluster's pods (spec section 6).
 * Pods are first reduced to a small summary so a reconciler can stream a
 * large pod list without keeping whole objects.
 */
import { arrayOf, isObject, objectOf, stringMapOf, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { isInjectionPaused, sidecarSetName, sidecarSetSelectsPod, type NamespaceLabels } from './match.ts';
import { parseInjectedList, recordedHash } from './pod-annotations.ts';
import { ANNOTATION_HASH, ANNOTATION_INJECTED_LIST, type SidecarSet, type SidecarSetStatus } from './types.ts';

/** What status needs to know about one pod. */
export interface PodSummary {
  namespace: string;
  labels: Readonly<Record<string, string>>;
  /** Terminal (Succeeded/Failed) or being deleted. */
  inactive: boolean;
  /** Running, Ready=True, and a container status for every container. */
  ready: boolean;
  containerNames: ReadonlySet<string>;
  injectedSets: ReadonlySet<string>;
  /** The raw `kruise.io/sidecarset-hash` annotation, parsed only for sets that match. */
  hashAnnotation: string | undefined;
}

/** Reduces a pod to its {@link PodSummary}. */
export function summarizePod(pod: Pod): PodSummary {
  const metadata = objectOf(pod.metadata) ?? {};
  const annotations = stringMapOf(metadata.annotations);
  const status = objectOf(pod.status) ?? {};
  const phase = stringOf(status.phase);
  const containers = arrayOf(objectOf(pod.spec)?.containers).filter(isObject);
  const readyCondition = arrayOf(status.conditions).some(
    (c) => isObject(c) && c.type === 'Ready' && c.status === 'True',
  );
  const deleting = metadata.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null;
  return {
    namespace: stringOf(metadata.namespace) ?? '',
    labels: stringMapOf(metadata.labels),
    inactive: deleting || phase === 'Succeeded' || phase === 'Failed',
    ready: phase === 'Running' && readyCondition && arrayOf(status.containerStatuses).length === containers.length,
    containerNames: new Set(containers.map((c) => stringOf(c.name) ?? '')),
    injectedSets: new Set(parseInjectedList(annotations[ANNOTATION_INJECTED_LIST])),
    hashAnnotation: annotations[ANNOTATION_HASH],
  };
}

/** The counts of section 6 plus what the user should hear about. */
export interface StatusComputation {
  status: SidecarSetStatus;
  /** Active pods the set applies to that carry no injection by it (created while the webhook was down). */
  notInjectedPods: number;
}

/**
 * The set's new status. Fields this project does not compute yet
 * (latestRevision, collisionCount) are carried over from the stored status.
 * @throws UnknownNamespaceError when a pod's namespace labels are needed but unknown.
 */
export function computeStatus(
  set: SidecarSet,
  pods: Iterable<PodSummary>,
  namespaceLabels: NamespaceLabels,
): StatusComputation {
  const name = sidecarSetName(set);
  const currentHash = stringOf(objectOf(set.metadata?.annotations)?.[ANNOTATION_HASH]);
  const containerNames = arrayOf(set.spec?.containers)
    .filter(isObject)
    .map((c) => stringOf(c.name) ?? '');
  const paused = isInjectionPaused(set);
  let matched = 0;
  let updated = 0;
  let ready = 0;
  let updatedReady = 0;
  let notInjected = 0;
  for (const pod of pods) {
    if (pod.inactive || !sidecarSetSelectsPod(set, pod.labels, pod.namespace, namespaceLabels)) continue;
    if (!pod.injectedSets.has(name)) {
      if (!paused) notInjected++;
      continue;
    }
    if (!containerNames.every((c) => pod.containerNames.has(c))) continue;
    matched++;
    const isUpdated = currentHash !== undefined && recordedHash(pod.hashAnnotation, name) === currentHash;
    if (isUpdated) updated++;
    if (pod.ready) ready++;
    if (isUpdated && pod.ready) updatedReady++;
  }
  const previous = objectOf(set.status) ?? {};
  const status: SidecarSetStatus = {
    ...previous,
    observedGeneration: typeof set.metadata?.generation === 'number' ? set.metadata.generation : 0,
    matchedPods: matched,
    updatedPods: updated,
    readyPods: ready,
    updatedReadyPods: updatedReady,
  };
  return { status, notInjectedPods: notInjected };
}
