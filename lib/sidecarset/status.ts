/**
 * SidecarSet status from a set and the cluster's pods (spec section 6).
 * Pods are first reduced to a small summary so a reconciler can stream a
 * large pod list without keeping whole objects.
 */
import { arrayOf, isObject, objectOf, stringMapOf, stringOf } from '../kube/json.ts';
import type { JsonObject, Pod } from '../kube/types.ts';
import { canariesOf } from './canary.ts';
import { injectingSets } from './injecting-sets.ts';
import { isActivePod, isInjectionPaused, sidecarSetName, sidecarSetSelectsPod, type NamespaceLabels } from './match.ts';
import { ANNOTATION_INPLACE_UPDATE_STATE, ANNOTATION_WORKING_HOTUPGRADE, isHotUpgrade, isPodReady, isPodStateConsistent, podHasSetContainers, podNativeSidecars, setContainers, setHash, sidecarContainerNames, unavailableReason } from './pod-state.ts';
import { swappingContainers } from './hot-swapping.ts';
import { parseInjectedList, parseRecordedEntries } from './pod-annotations.ts';
import { unavailableTally, type UnavailablePods } from './unavailable-pods.ts';
import { ANNOTATION_HASH, ANNOTATION_INJECTED_LIST, type SidecarSet, type SidecarSetStatus } from './types.ts';

/** What status needs to know about one pod. */
export interface PodSummary {
  /** For reports naming pods; not used in counting. */
  name: string;
  namespace: string;
  /** For events on the pod; '' or absent when unknown. */
  uid?: string;
  labels: Readonly<Record<string, string>>;
  /** Terminal (Succeeded/Failed) or being deleted. */
  inactive: boolean;
  /**
   * The pod reduced to what matching, readiness and consistency read
   * (rollout.md §1.1, §1.4, §1.8): container names and images, container
   * statuses, phase, the Ready condition and the rollout's annotations.
   */
  slim: Pod;
  injectedSets: ReadonlySet<string>;
  /** The raw `kruise.io/sidecarset-hash` annotation, parsed only for sets that match. */
  hashAnnotation: string | undefined;
  /** metadata.creationTimestamp in epoch milliseconds; undefined when absent or unreadable. */
  createdAtMs: number | undefined;
}

/** The annotations the rollout's readiness and consistency rules read. */
const SLIM_ANNOTATIONS = [ANNOTATION_INPLACE_UPDATE_STATE, ANNOTATION_WORKING_HOTUPGRADE];

/**
 * A copy of the pod with only what {@link PodSummary.slim} promises, so a
 * streamed page of whole pods is not kept alive by its summaries.
 */
export function slimPod(pod: Pod): Pod {
  const metadata = objectOf(pod.metadata) ?? {};
  const annotations = objectOf(metadata.annotations) ?? {};
  const kept: Record<string, string> = {};
  for (const key of SLIM_ANNOTATIONS) {
    const value = annotations[key];
    if (typeof value === 'string') kept[key] = value;
  }
  const status = objectOf(pod.status) ?? {};
  const ready = arrayOf(status.conditions).find((c) => isObject(c) && c.type === 'Ready');
  const natives = podNativeSidecars(pod);
  const nativeNames = new Set<unknown>(natives.map((c) => c.name));
  return {
    // Any deletionTimestamp value makes the pod inactive and not ready; its type does not matter.
    metadata: { ...(metadata.deletionTimestamp == null ? {} : { deletionTimestamp: stringOf(metadata.deletionTimestamp) ?? 'set' }), annotations: kept },
    spec: {
      containers: arrayOf(objectOf(pod.spec)?.containers).filter(isObject).map(slimContainer),
      // Native sidecars roll in place too; a plain init container is never read.
      ...(natives.length > 0 ? { initContainers: natives.map((c) => ({ ...slimContainer(c), restartPolicy: 'Always' })) } : {}),
    },
    status: {
      ...(typeof status.phase === 'string' ? { phase: status.phase } : {}),
      conditions: ready === undefined ? [] : [{ type: 'Ready', status: stringOf(objectOf(ready)?.status) ?? '' }],
      containerStatuses: arrayOf(status.containerStatuses).filter(isObject).map(slimStatus),
      ...(natives.length > 0
        ? { initContainerStatuses: arrayOf(status.initContainerStatuses).filter((c) => isObject(c) && nativeNames.has(c.name)).map((c) => slimStatus(c as JsonObject)) }
        : {}),
    },
  };
}

function slimContainer(c: JsonObject): { name: string; image: string } {
  return { name: stringOf(c.name) ?? '', image: stringOf(c.image) ?? '' };
}

/** The state's reason only: what an updated pod not ready is waiting for (unavailableReason). */
function slimStatus(c: JsonObject): JsonObject {
  return { name: c.name, image: c.image, imageID: c.imageID, ready: c.ready, ...stateReasonOf(c.state) };
}

/** A container state reduced to its waiting or terminated reason (the kubelet's word), or nothing. */
function stateReasonOf(state: unknown): { state?: Record<string, { reason: string }> } {
  const object = objectOf(state);
  for (const key of ['waiting', 'terminated']) {
    const reason = stringOf(objectOf(object?.[key])?.reason);
    if (reason !== undefined) return { state: { [key]: { reason } } };
  }
  return {};
}

/**
 * A creationTimestamp (RFC 3339, as the API server writes it, to the second)
 * in epoch milliseconds; undefined when absent or not a timestamp.
 */
export function creationTimeMs(metadata: unknown): number | undefined {
  const text = stringOf(objectOf(metadata)?.creationTimestamp);
  if (text === undefined || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Reduces a pod to its {@link PodSummary}. */
export function summarizePod(pod: Pod): PodSummary {
  const metadata = objectOf(pod.metadata) ?? {};
  const annotations = stringMapOf(metadata.annotations);
  return {
    name: stringOf(metadata.name) ?? '',
    namespace: stringOf(metadata.namespace) ?? '',
    uid: stringOf(metadata.uid) ?? '',
    labels: stringMapOf(metadata.labels),
    inactive: !isActivePod(pod),
    slim: slimPod(pod),
    injectedSets: new Set(parseInjectedList(annotations[ANNOTATION_INJECTED_LIST])),
    hashAnnotation: annotations[ANNOTATION_HASH],
    createdAtMs: creationTimeMs(metadata),
  };
}

/** The counts of section 6 plus what the user should hear about. */
export interface StatusComputation {
  status: SidecarSetStatus;
  /**
   * Active pods the set applies to that carry no injection by it and were
   * created after it (created while the webhook was down); see
   * {@link StatusAccumulator.notInjectedPods}.
   */
  notInjectedPods: number;
}

/** What one pod counted as for one set. */
export type PodOutcome =
  /** Matched (section 6): counted in matchedPods and possibly the other counts. */
  | 'matched'
  /** The set applies to the pod but never injected it (created while the webhook was down). */
  | 'not-injected'
  /** Inactive, not selected, missing one of the set's containers, or uninjected but not created after the set. */
  | 'ignored';

/** Matched pods that carry one recorded hash for the set. */
interface HashCounts {
  matched: number;
  ready: number;
}

/** The pod counts of a set's status (rollout.md §1.9). */
export type StatusCounts = Required<Pick<SidecarSetStatus, 'matchedPods' | 'updatedPods' | 'readyPods' | 'updatedReadyPods'>>;

/** One matched pod as the counts read it. */
export interface CountedPod {
  /** The hash the pod records for the set; undefined when none is readable. */
  hash: string | undefined;
  /** Kruise's IsPodReady, and the sidecars consistent with their spec images (rollout.md §1.9). */
  ready: boolean;
}

/**
 * The status counts, the one place they are made (the streamed resync's
 * accumulator and the rollout's plan both count with it): matched pods per
 * recorded hash, so the counts can answer for a newer version of the set
 * whose hash changed (an image update that raced the resync) without seeing
 * the pods again.
 */
export interface PodCounts {
  count(pod: CountedPod): void;
  /** The counts for `set`: its hash annotation decides which pods are updated (none without one). */
  of(set: SidecarSet): StatusCounts;
}

/** Starts counting matched pods. */
export function podCounts(): PodCounts {
  // Keyed by the hash the pod records for this set (undefined when none is readable).
  const byHash = new Map<string | undefined, HashCounts>();
  return {
    count(pod) {
      let counts = byHash.get(pod.hash);
      if (counts === undefined) {
        counts = { matched: 0, ready: 0 };
        byHash.set(pod.hash, counts);
      }
      counts.matched++;
      if (pod.ready) counts.ready++;
    },
    of(set) {
      const currentHash = stringOf(objectOf(set.metadata?.annotations)?.[ANNOTATION_HASH]);
      let matched = 0;
      let ready = 0;
      for (const counts of byHash.values()) {
        matched += counts.matched;
        ready += counts.ready;
      }
      // A set without a hash annotation has no current version, so no pod is updated.
      const updated = currentHash === undefined ? undefined : byHash.get(currentHash);
      return { matchedPods: matched, updatedPods: updated?.matched ?? 0, readyPods: ready, updatedReadyPods: updated?.ready ?? 0 };
    },
  };
}

/**
 * One set's status built one pod at a time, so that a reconciler can stream
 * a paged pod list and keep only counts. Matched pods are counted per
 * recorded hash: {@link StatusAccumulator.status} can then answer for a newer
 * version of the set whose hash changed (an image update that raced the
 * resync) without seeing the pods again.
 */
export interface StatusAccumulator {
  /**
   * Counts one pod.
   * @throws UnknownNamespaceError when the set's namespaceSelector needs labels of a namespace not in `namespaceLabels`.
   */
  add(pod: PodSummary, namespaceLabels: NamespaceLabels): PodOutcome;
  /**
   * The status for `current`, a version of the set with the same
   * {@link statusInputsKey} (by default the set the accumulator was made
   * for): its hash decides updatedPods, its generation observedGeneration,
   * and its stored status supplies the fields this project does not compute.
   */
  status(current?: SidecarSet): SidecarSetStatus;
  /** The counts of {@link StatusAccumulator.status} alone, for `current` (by default the set the accumulator was made for). */
  counts(current?: SidecarSet): StatusCounts;
  /**
   * Active pods the set applies to that it never injected (0 while injection
   * is paused). Only pods created strictly after the set count: the webhook
   * injects at creation, so a pod that existed before the set (or was created
   * in the same second, which timestamps cannot order) was never the set's to
   * inject (spec section 8). When the pod or the set has no readable
   * creationTimestamp (hand-written files; the API server always sets one),
   * the pod counts: nothing shows it predates the set.
   */
  readonly notInjectedPods: number;
  /**
   * The `controllerRevision` names matched pods record for the set: revisions
   * in use, which trimming the history keeps (rollout.md §2.1).
   */
  readonly revisionsInUse: ReadonlySet<string>;
  /**
   * Matched pods mid hot upgrade (a HotUpgrade sidecar's non-working
   * container does not hold the empty image): their flip is rollout work
   * even when every pod is updated, the set paused or NotUpdate.
   */
  readonly hotSwappingPods: number;
  /**
   * The updated pods (by the hash of the set the accumulator was made for)
   * not available, as the rollout's plan tells them from the set's own list:
   * a set whose every pod is updated is decided from the counts with them.
   */
  unavailablePods(): UnavailablePods | undefined;
  /**
   * Per canary of the set (canary.ts), the active pods the set selects that
   * the canary injected in its place: the pods it took (empty when none).
   */
  readonly canaryPods: ReadonlyMap<string, number>;
}

/** The set's container names, as the user wrote them (a HotUpgrade sidecar by its own name). */
function containerNamesOf(set: SidecarSet): string[] {
  return arrayOf(set.spec?.containers)
    .filter(isObject)
    .map((c) => stringOf(c.name) ?? '');
}

/**
 * Starts counting pods for `set`. `clusterSets` (the cluster's SidecarSets)
 * gives the set's canaries: a pod one of them injected, or would inject
 * now, is not a pod this set failed to inject (injecting-sets.ts), as in
 * Kruise, whose base counts only the pods it injected.
 */
export function statusAccumulator(set: SidecarSet, clusterSets: readonly SidecarSet[] = []): StatusAccumulator {
  return new SetPodCounter(set, clusterSets);
}

/** The counts of one set's pods as they are added (see {@link StatusAccumulator}). */
class SetPodCounter implements StatusAccumulator {
  readonly revisionsInUse = new Set<string>();
  notInjectedPods = 0;
  hotSwappingPods = 0;
  readonly canaryPods = new Map<string, number>();
  private readonly set: SidecarSet;
  private readonly name: string;
  private readonly paused: boolean;
  private readonly takenByCanary: ReturnType<typeof canaryTest>;
  private readonly canaryNames: readonly string[];
  private readonly setCreatedAtMs: number | undefined;
  // Per-set inputs of the readiness rule, once rather than per pod.
  private readonly sidecarNames: ReturnType<typeof sidecarContainerNames>;
  private readonly hotContainers: ReturnType<typeof setContainers>;
  private readonly hash: ReturnType<typeof setHash>;
  private readonly tally = podCounts();
  private readonly unavailable = unavailableTally();

  constructor(set: SidecarSet, clusterSets: readonly SidecarSet[]) {
    this.set = set;
    this.name = sidecarSetName(set);
    this.paused = isInjectionPaused(set);
    const canaries = canariesOf(this.name, clusterSets);
    this.canaryNames = canaries.map(sidecarSetName);
    this.takenByCanary = canaryTest(set, canaries);
    this.setCreatedAtMs = creationTimeMs(set.metadata);
    this.sidecarNames = sidecarContainerNames(set);
    this.hotContainers = setContainers(set).filter(isHotUpgrade);
    this.hash = setHash(set);
  }

  add(pod: PodSummary, namespaceLabels: NamespaceLabels): PodOutcome {
    const { set, name } = this;
    if (pod.inactive || !sidecarSetSelectsPod(set, pod.labels, pod.namespace, namespaceLabels)) return 'ignored';
    if (!pod.injectedSets.has(name)) return this.notInjected(pod, namespaceLabels);
    if (!podHasSetContainers(pod.slim, set)) return 'ignored';
    const recorded = parseRecordedEntries(pod.hashAnnotation);
    const entry = recorded.entry(name);
    if (entry?.controllerRevision) this.revisionsInUse.add(entry.controllerRevision);
    // rollout.md §1.9: ready is Kruise's IsPodReady and the sidecars consistent with their spec images.
    const consistent = isPodStateConsistent(pod.slim, set, this.sidecarNames);
    const ready = isPodReady(pod.slim, set, this.hotContainers) && consistent;
    this.tally.count({ hash: entry?.hash, ready });
    if (!ready && entry?.hash !== undefined && entry.hash === this.hash) {
      this.unavailable.add(`${pod.namespace}/${pod.name}`, unavailableReason(pod.slim, this.sidecarNames, consistent), recorded.updateTime(name));
    }
    if (swappingContainers(pod.slim, set, this.hotContainers).length > 0) this.hotSwappingPods++;
    return 'matched';
  }

  /** A selected pod the set did not inject: a canary's (counted per canary), or counted unless paused, older than the set, or one a canary would take. */
  private notInjected(pod: PodSummary, namespaceLabels: NamespaceLabels): PodOutcome {
    const canary = this.canaryNames.find((n) => pod.injectedSets.has(n));
    if (canary !== undefined) {
      this.canaryPods.set(canary, (this.canaryPods.get(canary) ?? 0) + 1);
      return 'ignored';
    }
    if (this.paused) return 'ignored';
    if (this.setCreatedAtMs !== undefined && pod.createdAtMs !== undefined && pod.createdAtMs <= this.setCreatedAtMs) return 'ignored';
    if (this.takenByCanary(pod, namespaceLabels)) return 'ignored';
    this.notInjectedPods++;
    return 'not-injected';
  }

  status(current = this.set): SidecarSetStatus {
    const previous = objectOf(current.status) ?? {};
    return {
      ...previous,
      observedGeneration: typeof current.metadata?.generation === 'number' ? current.metadata.generation : 0,
      ...this.tally.of(current),
    };
  }

  counts(current = this.set): StatusCounts {
    return this.tally.of(current);
  }

  unavailablePods(): ReturnType<StatusAccumulator['unavailablePods']> {
    return this.unavailable.result();
  }
}

/**
 * Whether one of the base's canaries would take a pod the base selects and
 * that no canary injected: the canary injects such a pod today (it may have
 * been created before the canary's own injection ran, as a pod of an
 * earlier webhook outage: the base would not inject it now).
 * @throws UnknownNamespaceError when a canary's namespaceSelector needs labels of a namespace not in `namespaceLabels`.
 */
function canaryTest(base: SidecarSet, canaries: readonly SidecarSet[]): (pod: PodSummary, namespaceLabels: NamespaceLabels) => boolean {
  if (canaries.length === 0) return () => false;
  const candidates = [base, ...canaries];
  return (pod, namespaceLabels) => !injectingSets(candidates, { labels: pod.labels, namespace: pod.namespace, namespaceLabels }).includes(base);
}

/**
 * What decides which pods a set matches: two versions of a set with the same
 * key match the same pods, so counts made for one serve the other (a
 * reconciler that lost a write race re-reads the set and checks this).
 * The hash and generation are not part of it: {@link StatusAccumulator.status}
 * takes them from whichever version it is given.
 */
export function statusInputsKey(set: SidecarSet): string {
  const spec = objectOf(set.spec) ?? {};
  return JSON.stringify([sidecarSetName(set), spec.selector ?? null, spec.namespace ?? null, spec.namespaceSelector ?? null, containerNamesOf(set)]);
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
  clusterSets: readonly SidecarSet[] = [],
): StatusComputation {
  const accumulator = statusAccumulator(set, clusterSets);
  for (const pod of pods) accumulator.add(pod, namespaceLabels);
  return { status: accumulator.status(), notInjectedPods: accumulator.notInjectedPods };
}
