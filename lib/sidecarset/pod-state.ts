/**
 * What the rollout reads from one pod for one SidecarSet (rollout.md §1.1,
 * §1.4, §1.8, §1.8a): the set's sidecar container names on the pod, whether it
 * is matched, its recorded hashes, readiness and consistency.
 */
import { imageDigestParts, normalizeImageReference } from '../kube/image-reference.ts';
import { arrayOf, isObject, objectOf, parseJsonObject, stringMapOf, stringOf } from '../kube/json.ts';
import type { Container, JsonObject, Pod } from '../kube/types.ts';
import { hotUpgradeContainerNames, hotUpgradeEmptyImage } from './hot-upgrade.ts';
import { sidecarSetName } from './match.ts';
import { parseInjectedList, parseRecordedEntries, timeOf, type RecordedEntries } from './pod-annotations.ts';
import {
  ANNOTATION_HASH,
  ANNOTATION_HASH_WITHOUT_IMAGE,
  ANNOTATION_INJECTED_LIST,
  type SidecarContainer,
  type SidecarSet,
} from './types.ts';

/** Per pod, which of a HotUpgrade sidecar's two containers is working (`{"<sidecar>":"<sidecar>-1"}`). */
export const ANNOTATION_WORKING_HOTUPGRADE = 'kruise.io/sidecarset-working-hotupgrade-container';
/** Per pod and set, the in-place update record (rollout.md §5). */
export const ANNOTATION_INPLACE_UPDATE_STATE = 'kruise.io/sidecarset-inplace-update-state';

/** The pod's annotations, `{}` when absent. */
export function podAnnotations(pod: Pod): Record<string, string> {
  return stringMapOf(objectOf(pod.metadata)?.annotations);
}

/**
 * One annotation of the pod, read in place (no copy of the map: a plan reads
 * several annotations of every pod of a large set).
 */
export function podAnnotation(pod: Pod, key: string): string | undefined {
  const annotations = objectOf(objectOf(pod.metadata)?.annotations);
  if (annotations === undefined || !Object.hasOwn(annotations, key)) return undefined;
  const value = annotations[key];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The pod's labels (string values only), read only. Listed pods hold string
 * labels: the map itself is returned rather than a copy per pod, and nothing
 * is kept per pod object (a cache keyed by 100,000 pods cost the collector
 * more than the check it saved).
 */
export function podLabels(pod: Pod): Record<string, string> {
  const raw = objectOf(objectOf(pod.metadata)?.labels);
  if (raw === undefined) return {};
  // for-in rather than Object.keys, which makes an array per call (per pod, twice a plan). It also sees
  // inherited enumerable keys: one that is not a string makes the copy of the own ones, which is still the answer.
  for (const key in raw) if (typeof raw[key] !== 'string') return stringMapOf(raw);
  return raw as Record<string, string>;
}

/** `namespace/name`, for reports and tie-breaking. */
export function podKey(pod: Pod): string {
  const m = objectOf(pod.metadata);
  return `${stringOf(m?.namespace) ?? ''}/${stringOf(m?.name) ?? ''}`;
}

/** The pod's controller, as Kubernetes marks it (metav1.GetControllerOf); undefined when it has none. */
export function controllerOf(pod: Pod): { kind: string; name: string } | undefined {
  for (const ref of arrayOf(objectOf(pod.metadata)?.ownerReferences)) {
    if (isObject(ref) && ref.controller === true) return { kind: stringOf(ref.kind) ?? '', name: stringOf(ref.name) ?? '' };
  }
  return undefined;
}

/** The pod's namespace, name and uid, as a write or an eviction names it. */
export function podRef(pod: Pod): { namespace: string; name: string; uid: string } {
  const m = objectOf(pod.metadata);
  return { namespace: stringOf(m?.namespace) ?? '', name: stringOf(m?.name) ?? '', uid: stringOf(m?.uid) ?? '' };
}

/** The set's `spec.containers` (named ones only). */
export function setContainers(set: SidecarSet): SidecarContainer[] {
  return arrayOf<SidecarContainer>(objectOf(set.spec)?.containers).filter((c) => isObject(c) && typeof c.name === 'string');
}

export function isHotUpgrade(container: SidecarContainer): boolean {
  return objectOf(container.upgradeStrategy)?.upgradeType === 'HotUpgrade';
}

/**
 * The set's native sidecars that roll in place (sidecarset.md "Native
 * sidecars rolled in place", a deliberate difference from Kruise, which
 * rolls none): its named init containers with `restartPolicy: Always`, not
 * HotUpgrade (validation refuses a HotUpgrade one under RollingUpdate; a
 * NotUpdate set's is injected split and never rolled). A plain init
 * container is never one: it ran once, and a new image would not run again.
 */
export function setNativeSidecars(set: SidecarSet): SidecarContainer[] {
  const init = objectOf(set.spec)?.initContainers;
  // Most sets have none: no array made for them.
  if (!Array.isArray(init) || init.length === 0) return [];
  return arrayOf<SidecarContainer>(init).filter((c) => isObject(c) && typeof c.name === 'string' && c.restartPolicy === 'Always' && !isHotUpgrade(c));
}

/** The pod container names the set's sidecars occupy: `x` (Cold) or `x-1`, `x-2` (Hot), and its rolled native sidecars' (rollout.md §1.8). */
export function sidecarContainerNames(set: SidecarSet): Set<string> {
  const out = new Set<string>();
  for (const c of setContainers(set)) {
    if (isHotUpgrade(c)) for (const name of hotUpgradeContainerNames(c.name)) out.add(name);
    else out.add(c.name);
  }
  for (const c of setNativeSidecars(set)) out.add(c.name);
  return out;
}

/** The pod's working HotUpgrade containers, `{}` when absent or unreadable. */
export function workingHotUpgradeContainers(pod: Pod): Record<string, string> {
  return stringMapOf(parseJsonObject(podAnnotation(pod, ANNOTATION_WORKING_HOTUPGRADE)));
}

/** The pod's containers (objects only), read only. */
export function podContainers(pod: Pod): readonly Container[] {
  return objectsOf(objectOf(pod.spec)?.containers) as readonly Container[];
}

function containerStatuses(pod: Pod): readonly JsonObject[] {
  return objectsOf(objectOf(pod.status)?.containerStatuses);
}

/**
 * The pod's native sidecars (init containers with `restartPolicy: Always`),
 * read only: the only init containers the rollout updates or reads.
 */
export function podNativeSidecars(pod: Pod): readonly Container[] {
  const init = objectOf(pod.spec)?.initContainers;
  if (!Array.isArray(init) || init.length === 0) return NONE;
  return objectsOf(init).filter((c) => c.restartPolicy === 'Always') as Container[];
}

const NONE: readonly never[] = Object.freeze([]);

/**
 * The statuses of the containers a sidecar may be: `containerStatuses`, then
 * `initContainerStatuses` (a native sidecar's, the kubelet's report of its
 * restart). Names are unique across both lists (the API server refuses a pod
 * otherwise), so a lookup by name finds one. The list itself when the pod
 * has no init statuses, the usual case.
 */
function sidecarStatuses(pod: Pod): readonly JsonObject[] {
  const statuses = containerStatuses(pod);
  const init = objectOf(pod.status)?.initContainerStatuses;
  if (!Array.isArray(init) || init.length === 0) return statuses;
  return [...statuses, ...objectsOf(init)];
}

/**
 * The objects of an array, read only: the array itself when all of its items
 * are (a listed pod's always are), so a plan reading every pod's containers
 * and statuses copies none.
 */
function objectsOf(value: unknown): readonly JsonObject[] {
  const items = arrayOf(value);
  for (const item of items) if (!isObject(item)) return items.filter(isObject);
  return items as JsonObject[];
}

/** The pod carries every sidecar of the set, with the HotUpgrade rule (rollout.md §1.1 IsPodConsistentWithSidecarSet). */
export function podHasSetContainers(pod: Pod, set: SidecarSet, sidecars: readonly SidecarContainer[] = setContainers(set)): boolean {
  const containers = podContainers(pod);
  // Parsed only when the set has a HotUpgrade sidecar.
  let working: Record<string, string> | undefined;
  for (const c of sidecars) {
    const ok = isHotUpgrade(c)
      ? hasContainer(containers, `${c.name}-1`) && hasContainer(containers, `${c.name}-2`) && Object.hasOwn((working ??= workingHotUpgradeContainers(pod)), c.name)
      : hasContainer(containers, c.name);
    if (!ok) return false;
  }
  return true;
}

/** A pod has a few containers: a scan per name beats building a set per pod of a large list. */
function hasContainer(containers: readonly Container[], name: string): boolean {
  for (const c of containers) if (c.name === name) return true;
  return false;
}

/** The pod's injected-list names the set. */
export function isInjectedBy(pod: Pod, set: SidecarSet): boolean {
  const list = podAnnotation(pod, ANNOTATION_INJECTED_LIST);
  const name = sidecarSetName(set);
  // The usual list is this one set: no split needed to see it.
  if (list === undefined || list === name) return list === name && name !== '';
  return parseInjectedList(list).includes(name);
}

/** The set's current hash (its `kruise.io/sidecarset-hash` annotation). */
export function setHash(set: SidecarSet): string {
  return stringMapOf(set.metadata?.annotations)[ANNOTATION_HASH] ?? '';
}

/** The set's current without-image hash. */
export function setHashWithoutImage(set: SidecarSet): string {
  return stringMapOf(set.metadata?.annotations)[ANNOTATION_HASH_WITHOUT_IMAGE] ?? '';
}

/**
 * A hash annotation of the pod, parsed once for every set and field read
 * from it: a plan parses each pod's annotations once per reconcile and hands the
 * result to every check rather than reading the text again.
 */
export function podRecordedEntries(pod: Pod, annotation: typeof ANNOTATION_HASH | typeof ANNOTATION_HASH_WITHOUT_IMAGE): RecordedEntries {
  return parseRecordedEntries(podAnnotation(pod, annotation));
}

/**
 * Hash annotations parsed once per text for a walk over many pods: the pods
 * of one workload, injected in the same second or updated by the same reconcile,
 * carry the same text byte for byte, so each pod of a run costs a lookup
 * rather than a parse. Bounded: it forgets every text once it holds
 * {@link MEMO_TEXTS}, so a list of all-distinct texts keeps no parse alive.
 */
export class RecordedEntriesMemo {
  private readonly parsed = new Map<string, RecordedEntries>();

  /** The pod's annotation as {@link podRecordedEntries} parses it. */
  of(pod: Pod, annotation: typeof ANNOTATION_HASH | typeof ANNOTATION_HASH_WITHOUT_IMAGE): RecordedEntries {
    const text = podAnnotation(pod, annotation);
    if (text === undefined) return parseRecordedEntries(text);
    let entries = this.parsed.get(text);
    if (entries === undefined) {
      if (this.parsed.size >= MEMO_TEXTS) this.parsed.clear();
      entries = parseRecordedEntries(text);
      this.parsed.set(text, entries);
    }
    return entries;
  }
}

/** Texts a {@link RecordedEntriesMemo} keeps: more than the workloads interleaved in a list's usual run of pods. */
const MEMO_TEXTS = 64;

/** The hash the pod records for the set in `kruise.io/sidecarset-hash` (see {@link recordedHash}). */
export function podRecordedHash(pod: Pod, set: SidecarSet): string | undefined {
  return podRecordedEntries(pod, ANNOTATION_HASH).hash(sidecarSetName(set));
}

/** IsPodSidecarUpdated: the hash recorded for the set equals the set's (rollout.md §1.2). */
export function isPodSidecarUpdated(pod: Pod, set: SidecarSet, currentHash = setHash(set)): boolean {
  const recorded = podRecordedHash(pod, set);
  return recorded !== undefined && recorded === currentHash;
}

/** The without-image hash recorded for the set; '' when none or unreadable (Kruise then sees a difference). Parsed on each call. */
export function recordedHashWithoutImage(pod: Pod, set: SidecarSet): string {
  return podRecordedEntries(pod, ANNOTATION_HASH_WITHOUT_IMAGE).hash(sidecarSetName(set)) ?? '';
}

function conditionOf(pod: Pod, type: string): JsonObject | undefined {
  for (const c of arrayOf(objectOf(pod.status)?.conditions)) if (isObject(c) && c.type === type) return c;
  return undefined;
}

/** The pod's (first) Ready condition, which {@link hasReadyCondition} reads: for a reader of its status and its time, one scan. */
export function readyCondition(pod: Pod): JsonObject | undefined {
  return conditionOf(pod, 'Ready');
}

/** PodReady condition True (k8s podutil.IsPodReady). */
export function hasReadyCondition(pod: Pod): boolean {
  return conditionOf(pod, 'Ready')?.status === 'True';
}

export { timeOf };

/** Kruise's util.IsRunningAndReady: phase Running, Ready=True, not being deleted. */
export function isRunningAndReady(pod: Pod): boolean {
  const deletion: unknown = objectOf(pod.metadata)?.deletionTimestamp;
  return stringOf(objectOf(pod.status)?.phase) === 'Running' && hasReadyCondition(pod) && (deletion === undefined || deletion === null);
}

/**
 * The working and the other ("empty") container of a hot sidecar on a pod, by
 * its working-container map: `x-1` works only when the map says so, as in
 * Kruise (GetPodHotUpgradeContainers), so a missing entry means `x-2`.
 */
export function hotContainersOf(pod: Pod, sidecar: string, working: Readonly<Record<string, string>> = workingHotUpgradeContainers(pod)): { working: string; other: string } {
  const [one, two] = hotUpgradeContainerNames(sidecar);
  return working[sidecar] === one ? { working: one, other: two } : { working: two, other: one };
}

/**
 * Kruise's IsPodReady (rollout.md §1.4, §1.8a): for each HotUpgrade sidecar
 * the empty container carries `hotUpgradeEmptyImage` (skipped when that is
 * empty), and the pod is Running, Ready=True and not being deleted.
 */
export function isPodReady(pod: Pod, set: SidecarSet, hotContainers: readonly SidecarContainer[] = setContainers(set).filter(isHotUpgrade)): boolean {
  if (!isRunningAndReady(pod)) return false;
  if (hotContainers.length === 0) return true;
  const working = workingHotUpgradeContainers(pod);
  const images = new Map(podContainers(pod).map((c) => [c.name, c.image]));
  for (const c of hotContainers) {
    const emptyImage = hotUpgradeEmptyImage(c);
    if (emptyImage === '') continue;
    if (images.get(hotContainersOf(pod, c.name, working).other) !== emptyImage) return false;
  }
  return true;
}

/** The imageIDs recorded for the set in the in-place update state; undefined when the annotation is absent, null when unreadable. */
function recordedImageIds(pod: Pod, set: SidecarSet): Map<string, string> | undefined | null {
  const raw = podAnnotation(pod, ANNOTATION_INPLACE_UPDATE_STATE);
  if (raw === undefined) return undefined;
  // Go decodes `null` into an empty map; anything else that is not an object is an error.
  const state = raw.trim() === 'null' ? {} : parseJsonObject(raw);
  if (state === undefined) return null;
  const out = new Map<string, string>();
  const entry = objectOf(state[sidecarSetName(set)]);
  for (const [name, status] of Object.entries(objectOf(entry?.lastContainerStatuses) ?? {})) {
    out.set(name, stringOf(objectOf(status)?.imageID) ?? '');
  }
  return out;
}

/**
 * IsPodStateConsistent (rollout.md §1.8 with §1.8a) for the sidecars `names`
 * (default: all of the set's). Native sidecars are judged too, from
 * `initContainerStatuses` (Kruise reads no init container); one without a
 * status is not, as Kruise judges none. A digest image must match its status
 * imageID; the first tag image hands the decision to the in-place update
 * state. Images are compared normalised (sidecarset.md §7), so a runtime
 * reporting `docker.io/library/nginx:1` for `nginx:1` does not hang the
 * rollout. An unreadable update state (Kruise: inconsistent for ever) leaves
 * the decision to the containers: in flight only while one runs another image.
 */
export function isPodStateConsistent(pod: Pod, set: SidecarSet, names: ReadonlySet<string> = sidecarContainerNames(set)): boolean {
  const containers = podContainers(pod);
  if (containers.length !== containerStatuses(pod).length) return false;
  const specs = withReportedNatives(pod, containers, names);
  const statuses = specs === containers ? containerStatuses(pod) : sidecarStatuses(pod);
  // Built on the first digest image only: with tag images (the usual case) the first sidecar decides without it.
  let statusByName: Map<string, JsonObject> | undefined;
  for (const c of specs) {
    if (!names.has(c.name)) continue;
    const image = c.image ?? '';
    const digest = imageDigestParts(image);
    if (digest === undefined) return inPlaceUpdateCompleted(pod, set, names, specs, statuses);
    statusByName ??= new Map(statuses.map((s) => [stringOf(s.name) ?? '', s]));
    const id = imageDigestParts(stringOf(statusByName.get(c.name)?.imageID) ?? '');
    if (id === undefined || id.repository !== digest.repository || id.digest !== digest.digest) return false;
  }
  return true;
}

/**
 * The pod's containers, then its native sidecars among `names` that have a
 * status: the list itself when there is none, with nothing made (a pod's
 * plain init containers, the usual case, cost a scan of their names).
 */
function withReportedNatives(pod: Pod, containers: readonly Container[], names: ReadonlySet<string>): readonly Container[] {
  const natives = podNativeSidecars(pod);
  if (!natives.some((c) => names.has(c.name))) return containers;
  const reported = new Set(objectsOf(objectOf(pod.status)?.initContainerStatuses).map((s) => s.name));
  const judged = natives.filter((c) => names.has(c.name) && reported.has(c.name));
  return judged.length === 0 ? containers : [...containers, ...judged];
}

function inPlaceUpdateCompleted(
  pod: Pod,
  set: SidecarSet,
  names: ReadonlySet<string>,
  containers: readonly Container[],
  statuses: readonly JsonObject[],
): boolean {
  const recorded = recordedImageIds(pod, set);
  if (recorded === undefined) return true;
  const specImages = new Map(containers.map((c) => [c.name, c.image ?? '']));
  for (const s of statuses) {
    const name = stringOf(s.name) ?? '';
    if (!names.has(name)) continue;
    const statusImage = stringOf(s.image) ?? '';
    // Whatever the annotation says, a container already running its spec image has no update in flight.
    if (normalizeImageReference(specImages.get(name) ?? '') === normalizeImageReference(statusImage)) continue;
    // An unreadable annotation (any pod writer can set it) proves nothing either way: the containers decide,
    // so a garbage value cannot hold a pod as "being updated", and maxUnavailable with it, forever (Kruise does).
    if (recorded === null) return false;
    const last = recorded.get(name);
    if (last === undefined) continue;
    if (last === (stringOf(s.imageID) ?? '')) return false;
  }
  return true;
}

/** The container's (or native sidecar's) status says `ready: true`. */
export function isContainerReady(pod: Pod, name: string): boolean {
  for (const s of sidecarStatuses(pod)) if (s.name === name && s.ready === true) return true;
  return false;
}

/** The status imageID of a container or native sidecar, '' when none. */
export function containerImageId(pod: Pod, name: string): string {
  return stringOf(sidecarStatuses(pod).find((s) => s.name === name)?.imageID) ?? '';
}

/** A kubelet has reported some container of the pod (a pod no kubelet runs has none). */
export function hasContainerStatuses(pod: Pod): boolean {
  return containerStatuses(pod).length > 0 || sidecarStatuses(pod).length > 0;
}

/** The highest restartCount among the pod's container statuses (k8s maxContainerRestarts). */
export function maxContainerRestarts(pod: Pod): number {
  let max = 0;
  for (const s of containerStatuses(pod)) if (typeof s.restartCount === 'number' && s.restartCount > max) max = s.restartCount;
  return max;
}

/**
 * Why an updated pod is not available, in the kubelet's words (rollout.md
 * "Stalled"): the waiting reason of the first of the set's sidecar
 * containers that waits (`ImagePullBackOff`, `CrashLoopBackOff`,
 * `CreateContainerConfigError`, ...) or the reason it terminated; else
 * `Pending` while no kubelet has reported a container of the pod (not
 * scheduled, or not started yet: nothing restarts there); `Restarting` while
 * a sidecar's update is in flight or one is not ready yet;
 * else the first waiting reason of another container; else `NotReady` (a
 * reason of the pod's own, e.g. a readiness probe).
 */
export function unavailableReason(pod: Pod, names: ReadonlySet<string>, consistent: boolean): string {
  const reasonOf = (s: JsonObject): string | undefined => {
    const state = objectOf(s.state);
    const why = stringOf(objectOf(state?.waiting)?.reason) ?? stringOf(objectOf(state?.terminated)?.reason);
    // A reason is the kubelet's CamelCase word; anything else is not shown as one (it becomes a metric dimension).
    return why !== undefined && /^[A-Za-z][A-Za-z0-9]{0,63}$/.test(why) ? why : undefined;
  };
  // A native sidecar's status is among the init ones; a plain init container's ("Completed") is no reason.
  const sidecars = sidecarStatuses(pod).filter((s) => names.has(stringOf(s.name) ?? ''));
  for (const s of sidecars) {
    const why = reasonOf(s);
    if (why !== undefined) return why;
  }
  if (!hasContainerStatuses(pod)) return 'Pending';
  if (!consistent || sidecars.some((s) => s.ready !== true)) return 'Restarting';
  for (const s of containerStatuses(pod)) {
    if (names.has(stringOf(s.name) ?? '')) continue;
    const why = reasonOf(s);
    if (why !== undefined) return why;
  }
  return 'NotReady';
}

/**
 * When the pod was last updated for the set: the `updateTimestamp` of its
 * entry in `kruise.io/sidecarset-hash` (written at injection and at every
 * in-place update), in ms; 0 when absent or unreadable.
 */
export function recordedUpdateTime(pod: Pod, set: SidecarSet, recorded = podRecordedEntries(pod, ANNOTATION_HASH)): number {
  return recorded.updateTime(sidecarSetName(set));
}
