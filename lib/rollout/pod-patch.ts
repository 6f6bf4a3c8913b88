/**
 * What an in-place update writes to one pod (rollout.md §1.5, formats §5):
 * a JSON Patch of exactly the changed paths, guarded by a `test` of
 * `metadata.resourceVersion` (sidecarset.md §7), so a pod changed since it was
 * listed is skipped rather than overwritten.
 */
import { pointer, type JsonPatchOperation } from '../admission/json-patch.ts';
import { arrayOf, isObject, objectOf, parseJsonObject, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { compareGoStrings, goJsonString } from '../sidecarset/go-json.ts';
import { formatWorkingHotUpgrade, parseWorkingHotUpgrade, versionAltAnnotation, versionAnnotation } from '../sidecarset/hot-upgrade.ts';
import { patchPodMetadata } from '../sidecarset/inject.ts';
import { sidecarSetName } from '../sidecarset/match.ts';
import {
  formatHashAnnotation,
  formatTimestamp,
  InvalidHashAnnotationError,
  parseHashAnnotation,
  type UpgradeSpecMap,
} from '../sidecarset/pod-annotations.ts';
import {
  ANNOTATION_HASH,
  ANNOTATION_HASH_WITHOUT_IMAGE,
  ANNOTATION_INJECTED_LIST,
  type SidecarSet,
} from '../sidecarset/types.ts';
import type { HotFlip } from '../sidecarset/hot-swapping.ts';
import { hotUpgradeChanges, type HotUpgradeChange } from './hot-swap.ts';
import { assertFenceAdmitsRollout, heldKeys } from './fence-check.ts';
import { imageChanges } from './plan.ts';
import { ANNOTATION_INPLACE_UPDATE_STATE, ANNOTATION_WORKING_HOTUPGRADE, containerImageId, podAnnotations, setContainers, setHash } from '../sidecarset/pod-state.ts';

/** The pod cannot be patched as listed (no resourceVersion to guard the write with). */
export class UnpatchablePodError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnpatchablePodError';
  }
}

export interface PodUpdateInput {
  pod: Pod;
  set: SidecarSet;
  /** The set's latest ControllerRevision name (written as `controllerRevision`). */
  latestRevision: string;
  /**
   * The injected-list value to write when the pod's is missing or empty:
   * the sets currently matching the pod, namespace-scoped first (§1.5 step 4,
   * {@link backfillInjectedList}).
   */
  injectedList: string;
  now: Date;
}

/** Kruise's sidecarList: the set's container names plus native-sidecar init containers, sorted. */
export function sidecarList(set: SidecarSet): string[] {
  const init = arrayOf(objectOf(set.spec)?.initContainers)
    .filter(isObject)
    .filter((c) => c.restartPolicy === 'Always')
    .map((c) => stringOf(c.name) ?? '');
  return [...setContainers(set).map((c) => c.name), ...init].sort(compareGoStrings);
}

/** The injected list Kruise backfills: names of `matching` sets, namespace-scoped ones first, each group in list order. */
export function backfillInjectedList(matching: readonly SidecarSet[]): string {
  const scoped = matching.filter((s) => (stringOf(s.spec?.namespace) ?? '') !== '');
  const cluster = matching.filter((s) => (stringOf(s.spec?.namespace) ?? '') === '');
  return [...scoped, ...cluster].map(sidecarSetName).join(',');
}

/** Whether a hash annotation is in the old `{"set":"<hash>"}` form. */
function isOldForm(value: string | undefined): boolean {
  if (value === undefined || value === '') return false;
  try {
    const parsed: unknown = JSON.parse(value);
    return isObject(parsed) && Object.keys(parsed).length > 0 && Object.values(parsed).every((v) => typeof v === 'string');
  } catch {
    return false;
  }
}

/** Old-form entries get the conversion's timestamp; each keeps its own set name (Kruise writes the updating set's: a bug, §1.8a). */
function converted(map: UpgradeSpecMap, timestamp: string): UpgradeSpecMap {
  for (const entry of map.values()) entry.updateTimestamp = timestamp;
  return map;
}

/**
 * An unreadable hash annotation starts from an empty map, as in Kruise (it
 * logs and rewrites the annotation with this set's entry only); refusing
 * would leave the pod waiting forever.
 */
function readableOrEmpty(parse: () => UpgradeSpecMap): UpgradeSpecMap {
  try {
    return parse();
  } catch (e) {
    if (e instanceof InvalidHashAnnotationError) return new Map();
    throw e;
  }
}

/** One set's entry of the in-place update state, in Go's field order. */
interface InPlaceUpdateState {
  revision: string;
  updateTimestamp: string | null;
  lastContainerStatuses: Record<string, { imageID?: string }>;
}

/** The annotation text: Go's json.Marshal of map[string]InPlaceUpdateState (keys sorted, HTML-safe). */
export function formatInPlaceUpdateState(state: ReadonlyMap<string, InPlaceUpdateState>): string {
  const sets = [...state.keys()].sort(compareGoStrings);
  const parts = sets.map((name) => {
    const e = state.get(name) as InPlaceUpdateState;
    const containers = Object.keys(e.lastContainerStatuses).sort(compareGoStrings);
    const statuses = containers.map((c) => {
      const id = e.lastContainerStatuses[c]?.imageID ?? '';
      return `${goJsonString(c)}:${id === '' ? '{}' : `{"imageID":${goJsonString(id)}}`}`;
    });
    const ts = e.updateTimestamp === null ? 'null' : goJsonString(e.updateTimestamp);
    return `${goJsonString(name)}:{"revision":${goJsonString(e.revision)},"updateTimestamp":${ts},"lastContainerStatuses":{${statuses.join(',')}}}`;
  });
  return `{${parts.join(',')}}`;
}

/** Parses the in-place update state; an unreadable value counts as empty (Kruise logs and carries on). */
export function parseInPlaceUpdateState(value: string | undefined): Map<string, InPlaceUpdateState> {
  const out = new Map<string, InPlaceUpdateState>();
  for (const [name, raw] of Object.entries(parseJsonObject(value) ?? {})) {
    const entry = objectOf(raw) ?? {};
    const statuses: Record<string, { imageID?: string }> = {};
    for (const [c, s] of Object.entries(objectOf(entry.lastContainerStatuses) ?? {})) {
      const id = stringOf(objectOf(s)?.imageID);
      statuses[c] = id === undefined || id === '' ? {} : { imageID: id };
    }
    out.set(name, {
      revision: stringOf(entry.revision) ?? '',
      updateTimestamp: stringOf(entry.updateTimestamp) ?? null,
      lastContainerStatuses: statuses,
    });
  }
  return out;
}

/** The first op of every rollout write: the pod must still be the one listed. */
function guard(pod: Pod): JsonPatchOperation {
  const resourceVersion = stringOf(objectOf(pod.metadata)?.resourceVersion);
  if (resourceVersion === undefined || resourceVersion === '') {
    throw new UnpatchablePodError('the pod has no metadata.resourceVersion to guard its update with');
  }
  return { op: 'test', path: '/metadata/resourceVersion', value: resourceVersion };
}

/**
 * `replace` ops for the containers of `images`, by index into the pod's own
 * lists: its containers, then its native sidecars (init containers with
 * `restartPolicy: Always`, whose image the API server lets a pod update
 * change and whose change the kubelet restarts). A plain init container is
 * never written, whatever `images` names: it ran once.
 */
function imageOps(pod: Pod, images: Readonly<Record<string, string>>): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  for (const list of ['containers', 'initContainers'] as const) {
    // Indexes into the pod's own list: a malformed entry must not shift the path to another container.
    arrayOf(objectOf(pod.spec)?.[list]).forEach((c, i) => {
      const container = objectOf(c);
      if (list === 'initContainers' && container?.restartPolicy !== 'Always') return;
      const name = container?.name;
      const image = typeof name === 'string' && Object.hasOwn(images, name) ? images[name] : undefined;
      if (image !== undefined) ops.push({ op: 'replace', path: pointer(['spec', list, i, 'image']), value: image });
    });
  }
  return ops;
}

/** The ops turning the pod's annotations `before` into `after` (only the keys that change). */
function annotationOps(pod: Pod, before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>): JsonPatchOperation[] {
  if (!isObject(objectOf(pod.metadata)?.annotations)) return [{ op: 'add', path: '/metadata/annotations', value: { ...after } }];
  const ops: JsonPatchOperation[] = [];
  for (const [key, value] of Object.entries(after)) {
    if (before[key] === value) continue;
    ops.push({ op: Object.hasOwn(before, key) ? 'replace' : 'add', path: pointer(['metadata', 'annotations', key]), value });
  }
  return ops;
}

/**
 * Kruise's UpdatePodAnnotationsInUpgrade: the set's entry of the in-place
 * update state (an existing entry kept, a new one with the set's hash and
 * `timestamp`) records the status imageID each of `containers` has before
 * its image changes, so the restart can be told apart later.
 */
function recordImageIds(annotations: Record<string, string>, pod: Pod, set: SidecarSet, containers: readonly string[], timestamp: string): void {
  const name = sidecarSetName(set);
  const state = parseInPlaceUpdateState(annotations[ANNOTATION_INPLACE_UPDATE_STATE]);
  const entry = state.get(name) ?? { revision: setHash(set), updateTimestamp: timestamp, lastContainerStatuses: {} };
  for (const container of containers) {
    const id = containerImageId(pod, container);
    entry.lastContainerStatuses[container] = id === '' ? {} : { imageID: id };
  }
  state.set(name, entry);
  annotations[ANNOTATION_INPLACE_UPDATE_STATE] = formatInPlaceUpdateState(state);
}

/** The set's resourceVersion, which versions a hot sidecar's new container (rollout.md §3.2). */
function setVersion(set: SidecarSet): string {
  const version = stringOf(objectOf(set.metadata)?.resourceVersion) ?? '';
  if (version === '') throw new UnpatchablePodError('the SidecarSet has no metadata.resourceVersion to version its hot sidecars with');
  return version;
}

/**
 * A hot upgrade's annotations (§3.4 pass N): the working-container map
 * switches to the new container at once, which is versioned with the set's
 * resourceVersion and learns its partner's version, and the partner learns the new one.
 */
function switchWorking(annotations: Record<string, string>, set: SidecarSet, changes: readonly HotUpgradeChange[]): void {
  if (changes.length === 0) return;
  const version = setVersion(set);
  const working = parseWorkingHotUpgrade(annotations[ANNOTATION_WORKING_HOTUPGRADE]);
  for (const change of changes) {
    working.set(change.sidecar, change.container);
    annotations[versionAnnotation(change.container)] = version;
    // Go reads a missing annotation as "".
    annotations[versionAltAnnotation(change.container)] = annotations[versionAnnotation(change.other)] ?? '';
    annotations[versionAltAnnotation(change.other)] = version;
  }
  annotations[ANNOTATION_WORKING_HOTUPGRADE] = formatWorkingHotUpgrade(working);
}

/**
 * The JSON Patch that updates one pod in place for one set (§1.5, §3.4),
 * guarded by a `test` of resourceVersion: the changed sidecar images (hot
 * sidecars as §3.3 picks), the set's hash entry (old-form annotations
 * converted), its in-place update state, the injected list when missing and
 * `patchPodMetadata` again; nothing else. An unreadable hash annotation is
 * replaced by this set's entry alone, as Kruise does. Under the rollout
 * fence (fence-check.ts) an unfenced pod or a container the fence does not
 * list throws FencedPodError; a `patchPodMetadata` key it does not list is left out.
 * @throws UnpatchablePodError without a resourceVersion on the pod (or, for hot sidecars, on the set); PatchPodMetadataError; FencedPodError.
 */
export function podUpdatePatch(input: PodUpdateInput): JsonPatchOperation[] {
  const { pod, set, now } = input;
  const ops: JsonPatchOperation[] = [guard(pod)];
  const timestamp = formatTimestamp(now);
  const name = sidecarSetName(set);
  const hot = hotUpgradeChanges(pod, set);
  const images = imageChanges(pod, set, hot);
  // The containers hot-swapped are re-imaged too (one of each pair, in `images`); both must be fenced in.
  assertFenceAdmitsRollout(pod, Object.keys(images));
  ops.push(...imageOps(pod, images));

  const before = podAnnotations(pod);
  const after: Record<string, string> = { ...before };
  switchWorking(after, set, hot);
  const hashValue = before[ANNOTATION_HASH];
  const oldForm = isOldForm(hashValue);
  const hashes = readableOrEmpty(() => parseHashAnnotation(ANNOTATION_HASH, hashValue));
  if (oldForm) converted(hashes, timestamp);
  hashes.set(name, { updateTimestamp: timestamp, hash: setHash(set), sidecarSetName: name, sidecarList: sidecarList(set), controllerRevision: input.latestRevision });
  after[ANNOTATION_HASH] = formatHashAnnotation(hashes);
  if (oldForm && isOldForm(before[ANNOTATION_HASH_WITHOUT_IMAGE])) {
    after[ANNOTATION_HASH_WITHOUT_IMAGE] = formatHashAnnotation(
      converted(parseHashAnnotation(ANNOTATION_HASH_WITHOUT_IMAGE, before[ANNOTATION_HASH_WITHOUT_IMAGE]), timestamp),
    );
  }
  recordImageIds(after, pod, set, Object.keys(images), timestamp);
  if ((before[ANNOTATION_INJECTED_LIST] ?? '') === '') after[ANNOTATION_INJECTED_LIST] = input.injectedList;
  patchPodMetadata(after, set);
  // A key the pod's fence does not list (the set named it after the pod was created) is left as it is:
  // the policy would refuse the whole update for it. The batch reports it (batch.ts, heldKeysOfBatch).
  for (const key of heldKeys(pod, before, after)) {
    if (Object.hasOwn(before, key)) after[key] = before[key] as string;
    else Reflect.deleteProperty(after, key);
  }
  ops.push(...annotationOps(pod, before, after));
  return ops;
}

export interface PodFlipInput {
  pod: Pod;
  set: SidecarSet;
  /** The containers to reset (lib/rollout/hot-swap.ts dueFlips). */
  flips: readonly HotFlip[];
  now: Date;
}

/**
 * The JSON Patch that ends a hot upgrade (§3.4 pass N+k, Kruise's
 * flipPodSidecarContainerDo): a `test` of resourceVersion; each old
 * container's image back to the empty image; its version "0" and its
 * working partner's alt version "0"; their pre-flip imageIDs in the in-place
 * update state. The hash annotations are not touched (the pod was counted
 * updated by its upgrade).
 * @throws UnpatchablePodError without a resourceVersion; FencedPodError for a pod without the fence or a container outside it.
 */
export function podFlipPatch(input: PodFlipInput): JsonPatchOperation[] {
  const { pod, set, flips } = input;
  const ops: JsonPatchOperation[] = [guard(pod)];
  assertFenceAdmitsRollout(pod, flips.map((f) => f.container));
  ops.push(...imageOps(pod, Object.fromEntries(flips.map((f) => [f.container, f.emptyImage]))));
  const before = podAnnotations(pod);
  const after: Record<string, string> = { ...before };
  for (const flip of flips) {
    after[versionAnnotation(flip.container)] = '0';
    after[versionAltAnnotation(flip.working)] = '0';
  }
  recordImageIds(after, pod, set, flips.map((f) => f.container), formatTimestamp(input.now));
  ops.push(...annotationOps(pod, before, after));
  return ops;
}
