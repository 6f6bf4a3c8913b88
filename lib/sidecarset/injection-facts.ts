/**
 * What injecting a SidecarSet needs from the set alone, worked out before
 * any pod is looked at: its named sidecars with a copy of each ready to go
 * into a pod, the volumes each one mounts, its pull secrets, the list and
 * hashes its pod annotation entries record. inject.ts adds what depends on
 * the pod (transferred env, shared mounts, placement, the timestamp).
 *
 * Everything here that can reach a pod is a copy of the set's own objects,
 * never the set's: the pod webhook keeps these facts for a stored version
 * of the set (stored-set-facts.ts) and shares them into every pod it
 * injects, so they are frozen there and never written to here.
 */
import { arrayOf, cloneJson, isObject, objectOf, stringOf } from '../kube/json.ts';
import { freezeJson } from '../kube/json-text.ts';
import type { JsonObject, LocalObjectReference, Volume } from '../kube/types.ts';
import { isHotUpgrade } from './pod-state.ts';
import { hotUpgradeContainerNames } from './hot-upgrade.ts';
import { sidecarSetName } from './match.ts';
import { ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, type SidecarContainer, type SidecarSet } from './types.ts';

/** One named sidecar of the set. */
export interface SidecarFacts {
  /** The sidecar as the set holds it (read only). */
  readonly source: SidecarContainer;
  /** A copy of the source, to be copied shallowly into each pod (its env and mounts replaced there). */
  readonly template: SidecarContainer;
  /** Goes into the pod as two containers (HotUpgrade). */
  readonly hotSplit: boolean;
  /** Its names in the pod: its own, or `x-1` and `x-2`. */
  readonly podNames: readonly string[];
  /** `shareVolumePolicy.type: enabled`. */
  readonly sharing: boolean;
  /** The mount and device paths it uses itself: a shared mount at one of them is not added. */
  readonly takenPaths: ReadonlySet<unknown>;
  /** Copies of the set's volumes its mounts and devices name, in their order. */
  readonly volumes: readonly Volume[];
}

export interface SetInjectionFacts {
  readonly name: string;
  /** Sidecars without a name (not injected; the user is warned). */
  readonly unnamedSidecars: number;
  readonly initSidecars: readonly SidecarFacts[];
  readonly sidecars: readonly SidecarFacts[];
  /** The names its hash annotation entries list: native init sidecars and containers, sorted. */
  readonly sidecarList: readonly string[];
  /** Copies of its pull secrets (objects only). */
  readonly pullSecrets: readonly LocalObjectReference[];
  /** The set's two hash annotations, '' when absent. */
  readonly hash: string;
  readonly hashWithoutImage: string;
}

export function isNamedSidecar(value: unknown): value is SidecarContainer {
  return isObject(value) && typeof value.name === 'string' && value.name !== '';
}

/**
 * The sidecars of a list that have a name. Validation refuses the others, but
 * a stored set is not validated again (nor is one read from a file by the
 * invoke command): a container without a name would make the pod invalid and
 * be appended again on every call, and one whose name is not text cannot
 * even be sorted.
 */
export function namedSidecars(list: unknown): SidecarContainer[] {
  return arrayOf(list).filter(isNamedSidecar);
}

export function isNativeSidecar(source: SidecarContainer): boolean {
  return source.restartPolicy === 'Always';
}

/**
 * Whether the sidecar goes into the pod as two containers: a HotUpgrade one
 * in `spec.containers`, or a native sidecar among the init containers (a
 * plain init container runs once and is injected as written, as in Kruise).
 */
export function isHotSplit(source: SidecarContainer, init: boolean): boolean {
  return isHotUpgrade(source) && (!init || isNativeSidecar(source));
}

/** The mount and device paths a sidecar uses itself. */
export function takenMountPaths(sidecar: SidecarContainer): Set<unknown> {
  return new Set<unknown>([
    ...arrayOf<JsonObject>(sidecar.volumeMounts).map((m) => objectOf(m)?.mountPath),
    ...arrayOf<JsonObject>(sidecar.volumeDevices).map((d) => objectOf(d)?.devicePath),
  ]);
}

function sidecarFacts(source: SidecarContainer, init: boolean, setVolumes: ReadonlyMap<string, Volume>): SidecarFacts {
  const hotSplit = isHotSplit(source, init);
  const volumes: Volume[] = [];
  for (const ref of [...arrayOf<JsonObject>(source.volumeMounts), ...arrayOf<JsonObject>(source.volumeDevices)]) {
    const volume = isObject(ref) && typeof ref.name === 'string' ? setVolumes.get(ref.name) : undefined;
    if (volume) volumes.push(cloneJson(volume));
  }
  return {
    source,
    template: cloneJson(source),
    hotSplit,
    podNames: hotSplit ? hotUpgradeContainerNames(source.name) : [source.name],
    sharing: objectOf(source.shareVolumePolicy)?.type === 'enabled',
    takenPaths: takenMountPaths(source),
    volumes,
  };
}

/** The facts of a set (any set: as stored, or a revision restored onto it). */
export function setInjectionFacts(set: SidecarSet): SetInjectionFacts {
  const setVolumes = new Map<string, Volume>();
  for (const v of arrayOf<Volume>(set.spec?.volumes)) if (isObject(v) && typeof v.name === 'string') setVolumes.set(v.name, v);
  const initSources = namedSidecars(set.spec?.initContainers);
  const sources = namedSidecars(set.spec?.containers);
  // Only native sidecars (restartPolicy Always) are tracked for updates, as in Kruise;
  // a HotUpgrade sidecar is listed by its own name, not its two containers'.
  const sidecarList = [...initSources.filter(isNativeSidecar).map((s) => s.name), ...sources.map((s) => s.name)].sort();
  const annotations = objectOf(set.metadata?.annotations) ?? {};
  return {
    name: sidecarSetName(set),
    unnamedSidecars: [...arrayOf(set.spec?.initContainers), ...arrayOf(set.spec?.containers)].filter((c) => !isNamedSidecar(c)).length,
    initSidecars: initSources.map((s) => sidecarFacts(s, true, setVolumes)),
    sidecars: sources.map((s) => sidecarFacts(s, false, setVolumes)),
    sidecarList,
    // Objects only: a stored set is not re-validated, and a stray item would make the pod unreadable.
    pullSecrets: cloneJson(arrayOf<LocalObjectReference>(set.spec?.imagePullSecrets).filter(isObject)),
    hash: stringOf(annotations[ANNOTATION_HASH]) ?? '',
    hashWithoutImage: stringOf(annotations[ANNOTATION_HASH_WITHOUT_IMAGE]) ?? '',
  };
}

/**
 * Freezes the copies the facts hand to pods (not `source`, the set's own
 * objects), so that a pod sharing them can never change them for the next;
 * frozen as JSON (lib/kube/json-text.ts), so each is serialised once for the
 * stored version, however many pods' patches carry it.
 */
export function freezeInjectionFacts(facts: SetInjectionFacts): SetInjectionFacts {
  for (const sidecar of [...facts.initSidecars, ...facts.sidecars]) {
    freezeJson(sidecar.template);
    freezeJson(sidecar.volumes);
    Object.freeze(sidecar);
  }
  freezeJson(facts.pullSecrets);
  Object.freeze(facts.initSidecars);
  Object.freeze(facts.sidecars);
  Object.freeze(facts.sidecarList);
  return Object.freeze(facts);
}
