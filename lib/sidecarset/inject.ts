/**
 * Sidecar injection into a Pod at creation (spec section 4), following
 * OpenKruise's pod mutating handler, with a deterministic set order and an
 * idempotent result (the API server may reinvoke mutating webhooks).
 */
import { arrayOf, cloneJson, isObject, objectOf, stringOf } from '../kube/json.ts';
import { builtFrom, freezeJson, jsonText, objectBuiltFrom, type StringTexts } from '../kube/json-text.ts';
import { ANNOTATION_WORKING_HOTUPGRADE } from './pod-state.ts';
import { mergePatch, stringifySorted } from '../kube/merge-patch.ts';
import type { Container, EnvVar, JsonObject, LocalObjectReference, Pod, Volume, VolumeMount } from '../kube/types.ts';
import { formatWorkingHotUpgrade, hotUpgradeContainerNames, initialVersionAnnotations, parseWorkingHotUpgrade, splitHotUpgradeSidecar } from './hot-upgrade.ts';
import { setInjectionFacts, type SetInjectionFacts, type SidecarFacts } from './injection-facts.ts';
import { injectingSets } from './injecting-sets.ts';
import { labelsOf, sidecarSetName, type NamespaceLabels } from './match.ts';
import {
  formatInjectedList,
  formatTimestamp,
  INJECTION_ANNOTATIONS,
  parseHashAnnotation,
  parseInjectedList,
  type SidecarSetUpgradeSpec,
  type UpgradeSpecMap,
} from './pod-annotations.ts';
import { storedSetFacts, type StoredSetFactsOf } from './stored-set-facts.ts';
import { writeRolloutFence } from './rollout-fence.ts';
import { bookkeepingKeysOn, removedBookkeepingWarning, withoutBookkeeping } from './injection-bookkeeping.ts';
import { hashAnnotationText, setHashEntries, type FreshEntry, type SetHashEntries } from './inject-annotations.ts';
import { PolicyTargets, withPolicyResources } from './resources-policy.ts';
import { mergedVolumeDevices, sharesVolumeDevices } from './volume-devices.ts';
import { ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, ANNOTATION_INJECTED_LIST, type SidecarContainer, type SidecarSet } from './types.ts';

/** The env var Kruise adds to every injected container; it also marks a container as a sidecar. */
export const SIDECAR_ENV = 'IS_INJECTED';

/** {@link SIDECAR_ENV} as every sidecar carries it: one immutable object, serialised once. */
const SIDECAR_ENV_VAR: EnvVar = freezeJson({ name: SIDECAR_ENV, value: 'true' });

/** The SidecarContainer-only fields, which never reach the pod. */
const SIDECAR_ONLY_FIELDS: ReadonlySet<string> = new Set([
  'podInjectPolicy',
  'upgradeStrategy',
  'shareVolumePolicy',
  'shareVolumeDevicePolicy',
  'transferEnv',
  'resourcesPolicy',
]);

const SUBPATH_EXPR_ENV = /\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)/g;

/** A `patchPodMetadata` entry could not be applied to the pod's annotations. */
export class PatchPodMetadataError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PatchPodMetadataError';
  }
}

/**
 * A field injection reads or writes holds the wrong JSON type, so the pod
 * cannot be injected (Kruise fails to decode such a pod and refuses it, 400).
 */
export class InvalidPodError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidPodError';
  }
}

/**
 * The injected pod would be larger than an answer may carry: its JSON text
 * would grow by at least `growthBytes`, and a JSON Patch is never shorter than
 * the growth it describes.
 */
export class InjectionTooLargeError extends Error {
  readonly growthBytes: number;

  constructor(growthBytes: number) {
    super(`the injected pod would grow by at least ${growthBytes} bytes`);
    this.name = 'InjectionTooLargeError';
    this.growthBytes = growthBytes;
  }
}

function isUnsetOr(value: unknown, test: (v: unknown) => boolean): boolean {
  return value === undefined || value === null || test(value);
}

/**
 * The first field injection touches that has the wrong type, as the path and
 * the type it needs; undefined when all are usable. Only these fields are
 * checked: the API server has decoded the pod already, so this guards against
 * hand-made requests, which must get an answer rather than a crash.
 */
function podShapeProblem(pod: unknown): string | undefined {
  if (!isObject(pod)) return 'the pod must be an object';
  if (!isUnsetOr(pod.metadata, isObject)) return 'metadata must be an object';
  const metadata = objectOf(pod.metadata);
  const annotations: unknown = metadata?.annotations;
  if (!isUnsetOr(annotations, (a) => isObject(a) && Object.values(a).every((v) => typeof v === 'string'))) {
    return 'metadata.annotations must be a map of strings';
  }
  if (!isUnsetOr(pod.spec, isObject)) return 'spec must be an object';
  const spec = objectOf(pod.spec);
  for (const key of ['containers', 'initContainers', 'volumes', 'imagePullSecrets']) {
    if (!isUnsetOr(spec?.[key], (list) => Array.isArray(list) && list.every(isObject))) return `spec.${key} must be a list of objects`;
  }
  return undefined;
}

export interface InjectionInput {
  /** The pod as received; not modified. */
  pod: Pod;
  /** The namespace from the admission request (a pod created with generateName may lack metadata.namespace). */
  namespace: string;
  /** Every SidecarSet of the cluster; those that apply are chosen here. */
  sidecarSets: readonly SidecarSet[];
  namespaceLabels: NamespaceLabels;
  now: Date;
  /**
   * The most the pod's JSON text may grow. Sidecars sharing volumes copy
   * every app mount, so a pod of many mounts and a few sharing sets can make
   * an answer many times the pod; past this bound injection stops with
   * {@link InjectionTooLargeError} before copying them. Unbounded when absent.
   */
  maxGrowthBytes?: number;
  /**
   * The set to inject in place of an applying set of that name: a pinned
   * revision restored onto it (lib/sidecarset/revision-pick.ts), chosen for
   * this pod. Which sets apply is still decided by the sets as stored.
   */
  revisions?: ReadonlyMap<string, SidecarSet>;
  /**
   * What is derived from an applying set as stored (its revision name):
   * computed per call when absent; the pod webhook passes a memo, so a
   * stored version's facts are computed once, not once per pod.
   */
  factsOf?: StoredSetFactsOf;
  /**
   * {@link applyingSidecarSets} of this same input, when the caller has
   * chosen them already (the pod webhook does, to read their pinned
   * revisions first): not chosen a second time.
   */
  applying?: readonly SidecarSet[];
  /**
   * Sort the injected sidecar containers (all sets' together) by name before
   * they are placed, as Kruise 1.9's alpha gate EnableSortSidecarContainerByName
   * does; otherwise (the default) they come in the sets' name order, each set's
   * as written.
   */
  sortSidecarsByName?: boolean;
}

export interface InjectionResult {
  /** The injected pod, or the input itself when nothing applies. */
  pod: Pod;
  /** Names of the SidecarSets that applied, sorted. */
  applied: string[];
  /** Short notes for the user (AdmissionResponse.warnings). */
  warnings: string[];
}

/** The SidecarSets that inject into this pod (injecting-sets.ts: not paused, selecting it, not displaced by a canary); sorted by name. */
export function applyingSidecarSets(input: Omit<InjectionInput, 'now' | 'pod'> & { pod: Pod }): SidecarSet[] {
  return injectingSets(input.sidecarSets, { labels: labelsOf(input.pod), namespace: input.namespace, namespaceLabels: input.namespaceLabels });
}

/**
 * Injects every applying SidecarSet into the pod.
 * @throws UnknownNamespaceError, InvalidHashAnnotationError, PatchPodMetadataError, InvalidPodError, ResourcesPolicyError
 * when the outcome cannot be decided from the input.
 */
export function injectPod(input: InjectionInput): InjectionResult {
  const changes = injectionChanges(input);
  if (changes === undefined) {
    // A pod no set injects carries no injection annotations, whoever wrote them (pod-inject's answer: lib/webhooks/pod-inject-fence.ts).
    const keys = bookkeepingKeysOn(input.pod);
    return { pod: withoutBookkeeping(input.pod), applied: [], warnings: keys.length === 0 ? [] : [removedBookkeepingWarning(keys)] };
  }
  return { pod: injectedPod(changes), applied: changes.applied, warnings: changes.warnings };
}

/** The spec lists injection may change, in the order it writes them. */
export type InjectedListKey = 'initContainers' | 'containers' | 'volumes' | 'imagePullSecrets';

/** One list of the pod's spec as injection leaves it. */
export interface ListChange {
  readonly key: InjectedListKey;
  /** The new list (a new array; its items the received list's own where they are kept). */
  readonly list: readonly unknown[];
  /**
   * When the new list is the received one with items only inserted before
   * its first item or only after its last (none replaced), where they go
   * and which (no items: the same list); undefined otherwise.
   */
  readonly inserted: { readonly at: number; readonly items: readonly unknown[] } | undefined;
}

/**
 * What injection changes in a pod, decided: its annotations and the lists of
 * its spec it rewrites. The injected pod ({@link injectedPod}) and the
 * answer's JSON Patch (lib/webhooks/pod-inject-patch.ts) are both written
 * from it, so the patch costs what is injected, not what the pod holds.
 */
export interface InjectionChanges {
  /** The pod as received (never written to). */
  readonly received: Pod;
  /** A copy of the pod and its metadata holding {@link annotations}; its spec the received one. */
  readonly annotated: Pod;
  /** The pod's annotations after injection (a copy). */
  readonly annotations: Readonly<Record<string, string>>;
  /** The lists of the spec, in the order written ('containers' always). */
  readonly lists: readonly ListChange[];
  /** Names of the SidecarSets that applied, sorted. */
  readonly applied: string[];
  readonly warnings: string[];
  /**
   * The JSON text (`JSON.stringify(value)`) of annotation values injection
   * wrote from kept pieces (its hash annotations), by value: the patch
   * writes them as they are instead of escaping them again.
   */
  readonly stringTexts: StringTexts;
}

/**
 * What injecting every applying SidecarSet changes in the pod; undefined when
 * none applies.
 * @throws as {@link injectPod}.
 */
export function injectionChanges(input: InjectionInput): InjectionChanges | undefined {
  const applying = input.applying ?? applyingSidecarSets(input);
  if (applying.length === 0) return undefined;
  const sets = applying.map((set) => input.revisions?.get(sidecarSetName(set)) ?? set);
  const problem = podShapeProblem(input.pod);
  if (problem !== undefined) throw new InvalidPodError(`the pod cannot be injected: ${problem}`);

  const factsOf = input.factsOf ?? storedSetFacts;
  // A restored revision carries its own name; the current set's is computed from its spec
  // (status.latestRevision lags a spec change until the reconciler runs). Only a set as
  // stored may be looked up by its stored version: a restored one keeps the set's uid
  // and resourceVersion, not its spec.
  const facts = sets.map((set, i): CollectedFacts => {
    if (set !== applying[i]) {
      const injection = setInjectionFacts(set);
      const revision = stringOf(set.status?.latestRevision) ?? '';
      return { injection, revision, entries: setHashEntries(injection, revision) };
    }
    const stored = factsOf(set);
    return { injection: stored.injection, revision: stored.revisionName, entries: stored.hashEntries };
  });

  const { pod, annotations } = annotatedCopy(input.pod);
  for (const set of sets) patchPodMetadata(annotations, set);
  const spec = objectOf(input.pod.spec);
  const apps = appContainersOf(facts.map((f) => f.injection), spec);
  if (input.maxGrowthBytes !== undefined) checkSharedGrowth(facts.map((f) => f.injection), apps, input.pod, input.maxGrowthBytes);

  const records = injectionRecords(annotations, input.now);
  const parts: InjectedParts = { sidecars: [], initSidecars: [], volumes: [], pullSecrets: [], hotSidecars: [], warnings: [] };
  const targets = new PolicyTargets(input.pod, sets);
  for (const set of facts) collectSet(set, pod, apps, parts, records, targets);
  const lists = placeParts(spec, parts, input.sortSidecarsByName === true);

  const applied = sets.map(sidecarSetName);
  writeHotUpgradeAnnotations(annotations, parts.hotSidecars);
  const stringTexts = writeInjectionAnnotations(annotations, records, applied);
  writeRolloutFence(annotations, parts.sidecars.map((p) => p.container), parts.initSidecars.map((p) => p.container), [...applying, ...sets], INJECTION_ANNOTATIONS);
  return { received: input.pod, annotated: pod, annotations, lists, applied, warnings: parts.warnings, stringTexts };
}

/**
 * The injected pod: copied only where injection writes (the pod, its
 * metadata, annotations and spec, and the lists it rewrote). The rest stays
 * shared with the pod as received, which is never written to, and a diff
 * against it skips the shared subtrees without walking them.
 */
export function injectedPod(changes: InjectionChanges): Pod {
  const received = changes.received.spec;
  const spec: JsonObject = received == null ? { containers: [] } : { ...received };
  for (const { key, list } of changes.lists) spec[key] = list;
  return { ...changes.annotated, spec: spec as NonNullable<Pod['spec']> };
}

/** Copies of the pod, its metadata and annotations, the annotations to write injection's into. */
function annotatedCopy(received: Pod): { pod: Pod; annotations: Record<string, string> } {
  const pod: Pod = { ...received };
  const metadata = (pod.metadata = { ...pod.metadata });
  const annotations = (metadata.annotations = { ...metadata.annotations });
  return { pod, annotations };
}

/**
 * The app containers that shared mounts and transferred env come from: those
 * of the pod as received, not a sidecar (one injected earlier carries
 * IS_INJECTED), and not a container a sidecar of this pass replaces by name,
 * which will not exist once injected. Otherwise a reinvocation, which sees
 * the first pass's sidecars where those containers were, would give another
 * result.
 */
function appContainersOf(sets: readonly SetInjectionFacts[], spec: JsonObject | undefined): AppContainers {
  // Loops, not flatMap and filter: this runs for every pod.
  const replaced = new Set<string>();
  for (const set of sets) for (const sidecar of set.sidecars) for (const name of sidecar.podNames) replaced.add(name);
  const apps: Container[] = [];
  for (const c of arrayOf<Container>(spec?.containers)) if (isObject(c) && !isInjectedSidecar(c) && !replaced.has(c.name)) apps.push(c);
  return new AppContainers(apps);
}

/** What the sets add to the pod, gathered set by set and placed once. */
interface InjectedParts {
  sidecars: PlacedSidecar[];
  initSidecars: PlacedSidecar[];
  volumes: Volume[];
  pullSecrets: LocalObjectReference[];
  /** The names of the HotUpgrade sidecars injected, each as two containers. */
  hotSidecars: string[];
  warnings: string[];
}

/** What injection knows of one applying set: its facts, the revision it records, and its hash annotation entries' texts. */
interface CollectedFacts {
  injection: SetInjectionFacts;
  revision: string;
  entries: SetHashEntries;
}

/**
 * The pod's two hash annotations as parsed, updated set by set, the entries
 * this injection wrote into each (with the texts they are written from), and
 * the time this injection records.
 */
interface InjectionRecords {
  hashes: UpgradeSpecMap;
  hashesWithoutImage: UpgradeSpecMap;
  freshHashes: Map<string, FreshEntry>;
  freshWithoutImage: Map<string, FreshEntry>;
  timestamp: string;
}

function injectionRecords(annotations: Record<string, string>, now: Date): InjectionRecords {
  return {
    hashes: parseHashAnnotation(ANNOTATION_HASH, annotations[ANNOTATION_HASH]),
    hashesWithoutImage: parseHashAnnotation(ANNOTATION_HASH_WITHOUT_IMAGE, annotations[ANNOTATION_HASH_WITHOUT_IMAGE]),
    freshHashes: new Map(),
    freshWithoutImage: new Map(),
    timestamp: formatTimestamp(now),
  };
}

/**
 * One set's sidecars, the volumes they mount, its pull secrets and its
 * entries in the hash annotations, which record `revision` as its
 * controllerRevision.
 */
function collectSet(
  { injection: set, revision, entries }: CollectedFacts,
  pod: Pod,
  apps: AppContainers,
  parts: InjectedParts,
  records: InjectionRecords,
  targets: PolicyTargets,
): void {
  const { name } = set;

  /** The pod containers for one sidecar: itself, or its two HotUpgrade containers. */
  const build = (sidecar: SidecarFacts): PlacedSidecar[] => {
    for (const volume of sidecar.volumes) parts.volumes.push(volume);
    // The usual sidecar: its pod container made straight from its template.
    if (!sidecar.hotSplit && isPlainSidecar(sidecar.template)) return [{ container: podContainer(sidecar, pod, apps), beforeApp: sidecar.template.podInjectPolicy === 'BeforeAppContainer' }];
    const built = withPolicyResources(buildSidecar(sidecar, pod, apps), name, targets);
    if (!sidecar.hotSplit) return [placed(built, sidecar.template)];
    parts.hotSidecars.push(sidecar.source.name);
    return splitHotUpgradeSidecar(built).map((container) => placed(container, sidecar.template));
  };

  if (set.unnamedSidecars > 0) parts.warnings.push(`SidecarSet ${name}: a sidecar without a name was not injected`);
  for (const sidecar of set.initSidecars) parts.initSidecars.push(...build(sidecar));
  parts.pullSecrets.push(...set.pullSecrets);
  for (const sidecar of set.sidecars) parts.sidecars.push(...build(sidecar));

  const hashEntry: SidecarSetUpgradeSpec = {
    updateTimestamp: records.timestamp,
    hash: set.hash,
    sidecarSetName: name,
    sidecarList: [...set.sidecarList],
    ...(revision !== '' ? { controllerRevision: revision } : {}),
  };
  if (recordInjection(records.hashes, name, hashEntry)) records.freshHashes.set(name, { entry: hashEntry, pieces: entries.hash });
  const withoutImage: SidecarSetUpgradeSpec = { updateTimestamp: records.timestamp, hash: set.hashWithoutImage, sidecarSetName: name, sidecarList: [...set.sidecarList] };
  if (recordInjection(records.hashesWithoutImage, name, withoutImage)) records.freshWithoutImage.set(name, { entry: withoutImage, pieces: entries.withoutImage });
}

/** A container injection will place, and where its sidecar asked to go. */
interface PlacedSidecar {
  /** The pod's container: without the sidecar-only fields. */
  readonly container: Container;
  /** `podInjectPolicy: BeforeAppContainer`. */
  readonly beforeApp: boolean;
}

/**
 * A sidecar's container for the pod, built from its stored template (marked
 * so, lib/kube/json-text.ts: the answer's patch writes the members it still
 * shares with the template from their kept texts; marked once, as the mark
 * costs about as much as building the container).
 */
function placed(sidecar: SidecarContainer, template: SidecarContainer): PlacedSidecar {
  return { container: builtFrom(withoutSidecarFields(sidecar), template), beforeApp: sidecar.podInjectPolicy === 'BeforeAppContainer' };
}

function byName(a: PlacedSidecar, b: PlacedSidecar): number {
  const x = a.container.name;
  const y = b.container.name;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** What the sets add, placed into the pod's lists (new lists: the received ones are never written to). */
function placeParts(spec: JsonObject | undefined, parts: InjectedParts, sortByName: boolean): ListChange[] {
  // Init sidecars are ordered by name across all sets (stable), as Kruise does.
  parts.initSidecars.sort(byName);
  // Kruise 1.9's EnableSortSidecarContainerByName: the containers too, when asked (stable: a HotUpgrade pair stays -1, -2).
  if (sortByName) parts.sidecars.sort(byName);
  const lists: ListChange[] = [];
  if (parts.initSidecars.length > 0) lists.push(placeContainers('initContainers', arrayOf<Container>(spec?.initContainers), parts.initSidecars));
  lists.push(placeContainers('containers', arrayOf<Container>(spec?.containers), parts.sidecars));
  if (parts.volumes.length > 0) lists.push(appended('volumes', arrayOf<Volume>(spec?.volumes), parts.volumes));
  if (parts.pullSecrets.length > 0) lists.push(appended('imagePullSecrets', arrayOf<LocalObjectReference>(spec?.imagePullSecrets), parts.pullSecrets));
  return lists;
}

/** `existing` with the `extra` items whose name is not taken yet appended (first one wins). */
function appended(key: InjectedListKey, existing: readonly JsonObject[], extra: readonly JsonObject[]): ListChange {
  const list = mergeByKey(existing, extra, 'name');
  return { key, list, inserted: { at: existing.length, items: list.slice(existing.length) } };
}

/**
 * The version annotations of the hot containers just injected and the
 * working-container map, the pod's own entries kept (Kruise merges them), as
 * Kruise writes them: over whatever `patchPodMetadata` put there. Written only
 * when a hot sidecar was injected.
 */
function writeHotUpgradeAnnotations(annotations: Record<string, string>, hotSidecars: readonly string[]): void {
  if (hotSidecars.length === 0) return;
  const working = parseWorkingHotUpgrade(Object.hasOwn(annotations, ANNOTATION_WORKING_HOTUPGRADE) ? annotations[ANNOTATION_WORKING_HOTUPGRADE] : undefined);
  for (const name of hotSidecars) {
    for (const [key, value] of initialVersionAnnotations(name)) setAnnotation(annotations, key, value);
    working.set(name, hotUpgradeContainerNames(name)[0]);
  }
  annotations[ANNOTATION_WORKING_HOTUPGRADE] = formatWorkingHotUpgrade(working);
}

/**
 * The three bookkeeping annotations. Unchanged entries keep their timestamps
 * (recordInjection), so a canonical annotation is rewritten byte for byte on
 * reinvocation. Returns the JSON texts of the two hash annotations, by value.
 */
function writeInjectionAnnotations(annotations: Record<string, string>, records: InjectionRecords, applied: readonly string[]): StringTexts {
  const hash = hashAnnotationText(records.hashes, records.freshHashes);
  const withoutImage = hashAnnotationText(records.hashesWithoutImage, records.freshWithoutImage);
  annotations[ANNOTATION_HASH] = hash.text;
  annotations[ANNOTATION_HASH_WITHOUT_IMAGE] = withoutImage.text;
  annotations[ANNOTATION_INJECTED_LIST] = formatInjectedList([...parseInjectedList(annotations[ANNOTATION_INJECTED_LIST]), ...applied]);
  return [
    { value: hash.text, json: hash.json },
    { value: withoutImage.text, json: withoutImage.json },
  ];
}

/**
 * Records a set's entry, keeping the existing one (and its timestamp) when only
 * the timestamp would change, so that reinvocation changes nothing. Whether
 * `entry` was recorded.
 */
function recordInjection(map: Map<string, SidecarSetUpgradeSpec>, name: string, entry: SidecarSetUpgradeSpec): boolean {
  const old = map.get(name);
  if (
    old?.updateTimestamp != null &&
    old.hash === entry.hash &&
    old.sidecarSetName === entry.sidecarSetName &&
    (old.controllerRevision ?? '') === (entry.controllerRevision ?? '') &&
    JSON.stringify(old.sidecarList) === JSON.stringify(entry.sidecarList)
  ) {
    return false;
  }
  map.set(name, entry);
  return true;
}

/**
 * What the app containers of the pod offer to the sidecars: their mounts (for
 * `shareVolumePolicy`), the env vars those mounts' subPathExpr names, and
 * each container's env by name (for `transferEnv`). Read once per injection,
 * however many sidecars share or transfer: every lookup is then a map read,
 * so the work stays linear in the pod (a `$(VAR)` repeated thousands of
 * times against thousands of env vars was quadratic, seconds per review).
 */
class AppContainers {
  readonly #containers: readonly Container[];
  #byName: Map<string, Container> | undefined;
  readonly #envByContainer = new Map<Container, Map<string, EnvVar>>();
  #shared: { mounts: VolumeMount[]; subPathEnvs: EnvVar[] } | undefined;
  readonly #frozenCopies = new Map<object, object>();

  constructor(containers: readonly Container[]) {
    this.#containers = containers;
  }

  /**
   * A copy of an app container's object for the sidecars: a new one each
   * time, or, when `shared` (the sidecars come from a stored set's frozen
   * facts), one frozen copy for every sidecar of this injection, so that its
   * JSON text is written once for the patch (lib/kube/json-text.ts) however
   * many sidecars carry it. Either way the pod never holds one of its own
   * objects in a second place, nor a writable object in two.
   */
  copy<T extends object>(value: T, shared: boolean): T {
    if (!shared) return cloneJson(value);
    let copy = this.#frozenCopies.get(value);
    if (copy === undefined) {
      copy = freezeJson(cloneJson(value));
      this.#frozenCopies.set(value, copy);
    }
    return copy as T;
  }

  /** The app containers themselves, in order. */
  get containers(): readonly Container[] {
    return this.#containers;
  }

  /** The first app container of that name, as a linear search would find it. */
  named(name: string): Container | undefined {
    if (this.#byName === undefined) {
      this.#byName = new Map();
      for (const c of this.#containers) if (!this.#byName.has(c.name)) this.#byName.set(c.name, c);
    }
    return this.#byName.get(name);
  }

  /** The container's first env var of that name (later duplicates are ignored, as by a linear search). */
  env(container: Container, name: string): EnvVar | undefined {
    let byName = this.#envByContainer.get(container);
    if (byName === undefined) {
      byName = new Map();
      for (const e of arrayOf<EnvVar>(container.env)) {
        if (isObject(e) && typeof e.name === 'string' && !byName.has(e.name)) byName.set(e.name, e);
      }
      this.#envByContainer.set(container, byName);
    }
    return byName.get(name);
  }

  /**
   * Every app mount, in order, and the env vars their subPathExpr expands
   * (each name once: a sidecar's env keeps the first of a name anyway).
   */
  shared(): { mounts: VolumeMount[]; subPathEnvs: EnvVar[] } {
    if (this.#shared !== undefined) return this.#shared;
    const mounts: VolumeMount[] = [];
    const subPathEnvs: EnvVar[] = [];
    const taken = new Set<string>();
    for (const app of this.#containers) {
      for (const mount of arrayOf<VolumeMount>(app.volumeMounts)) {
        if (!isObject(mount)) continue;
        mounts.push(mount);
        const expr = stringOf(mount.subPathExpr) ?? '';
        // matchAll copies the regular expression on every call; most mounts have no expression.
        if (!expr.includes('$(')) continue;
        // A mount whose subPathExpr expands $(VAR) needs VAR in the sidecar too.
        for (const match of expr.matchAll(SUBPATH_EXPR_ENV)) {
          const name = match[1] ?? '';
          if (taken.has(name)) continue;
          const env = this.env(app, name);
          if (env === undefined) continue;
          taken.add(name);
          subPathEnvs.push(env);
        }
      }
    }
    this.#shared = { mounts, subPathEnvs };
    return this.#shared;
  }
}

/**
 * The container to put into the pod for one SidecarContainer (spec section
 * 4, "Containers"): a shallow copy of the sidecar's template, whose env and
 * mounts are new lists. Everything else is the template's, which nothing
 * writes to (it may be shared by every pod of a stored set's version).
 */
function buildSidecar(facts: SidecarFacts, pod: Pod, apps: AppContainers): SidecarContainer {
  // The sidecar-only fields are still needed (placement, the resources policy, HotUpgrade); `placed` leaves them out.
  return withPodMembers({ ...spreadable(facts.template) }, facts, pod, apps);
}

/**
 * Whether a sidecar's pod container is its template's members but the
 * sidecar-only fields, with this pod's env, mounts and devices: no resources
 * policy (a new `resources` computed from the sidecar) and no shared volume
 * devices (merged from the sidecar's own).
 */
function isPlainSidecar(template: SidecarContainer): boolean {
  return objectOf(template.resourcesPolicy) === undefined && !sharesVolumeDevices(template);
}

/**
 * {@link buildSidecar} then {@link withoutSidecarFields} for a plain sidecar
 * ({@link isPlainSidecar}), in one copy: the container made from its
 * template (lib/kube/json-text.ts: the patch writes the members it shares
 * with the template from their kept texts), its members the template's but
 * the sidecar-only fields, in the template's order, and then this pod's.
 */
function podContainer(facts: SidecarFacts, pod: Pod, apps: AppContainers): Container {
  const { template } = facts;
  const container = objectBuiltFrom(template);
  for (const key of podKeysOf(template)) {
    if (key === '__proto__') Object.defineProperty(container, key, { value: template[key], enumerable: true, writable: true, configurable: true });
    else container[key] = template[key];
  }
  return withPodMembers(container as SidecarContainer, facts, pod, apps);
}

/** The members of a template that go into the pod (not the sidecar-only fields), in its order: kept per frozen template. */
const podKeys = new WeakMap<SidecarContainer, readonly string[]>();

function podKeysOf(template: SidecarContainer): readonly string[] {
  let keys = podKeys.get(template);
  if (keys === undefined) {
    keys = Object.keys(template).filter((key) => !SIDECAR_ONLY_FIELDS.has(key));
    if (Object.isFrozen(template)) podKeys.set(template, keys);
  }
  return keys;
}

/** The sidecar with this pod's members: its env (IS_INJECTED, transferred env), the shared mounts, the shared devices. */
function withPodMembers(sidecar: SidecarContainer, facts: SidecarFacts, pod: Pod, apps: AppContainers): SidecarContainer {
  const { mounts: sharedMounts, subPathEnvs } = facts.sharing ? apps.shared() : NOTHING_SHARED;
  const extraEnv: EnvVar[] = [SIDECAR_ENV_VAR];
  const transferredFrom = transferEnvs(facts.source, pod, apps);
  // A stored set's facts are frozen and shared by every pod: this pod's copies may then be shared by its sidecars.
  const shareCopies = Object.isFrozen(facts.template);
  if (transferredFrom.length > 0 || subPathEnvs.length > 0) {
    for (const env of mergeByKey(transferredFrom, subPathEnvs, 'name')) extraEnv.push(apps.copy(env, shareCopies));
  }

  const ownEnv = arrayOf<EnvVar>(sidecar.env);
  sidecar.env = mergeByKey(ownEnv, extraEnv, 'name');

  if (sharedMounts.length > 0) {
    const taken = new Set(facts.takenPaths);
    const mounts = [...arrayOf<VolumeMount>(sidecar.volumeMounts)];
    for (const mount of sharedMounts) {
      if (taken.has(mount.mountPath)) continue;
      taken.add(mount.mountPath);
      mounts.push(apps.copy(mount, shareCopies));
    }
    sidecar.volumeMounts = mounts;
  }
  if (sharesVolumeDevices(facts.source)) sidecar.volumeDevices = mergedVolumeDevices(sidecar, apps.containers);
  return sidecar;
}

/**
 * Plain shallow copies of frozen sidecar templates, kept only to be spread
 * from: V8 copies a frozen object's members several times slower than a
 * plain object's, and a memoised stored set's templates are frozen. Never
 * handed out, so never written; the members are the template's own.
 */
const plainTemplates = new WeakMap<SidecarContainer, SidecarContainer>();

function spreadable(template: SidecarContainer): SidecarContainer {
  if (!Object.isFrozen(template)) return template;
  let plain = plainTemplates.get(template);
  if (plain === undefined) {
    plain = { ...template };
    plainTemplates.set(template, plain);
  }
  return plain;
}

/**
 * Throws {@link InjectionTooLargeError} when the mounts the sharing sidecars
 * copy would grow the pod's JSON by more than `limit`, before any is copied.
 * A lower bound, so only an answer that could not be sent is refused: each
 * sharing sidecar carries every app mount at a path it does not use itself
 * (JSON size plus a comma), and whatever the injection replaces or drops is
 * at most the pod as received.
 */
function checkSharedGrowth(sets: readonly SetInjectionFacts[], apps: AppContainers, pod: Pod, limit: number): void {
  // Each pod container of a sharing sidecar carries the copies: a HotUpgrade one twice.
  const sharing: SidecarFacts[] = [];
  for (const set of sets) {
    for (const sidecar of set.initSidecars) if (sidecar.sharing) sharing.push(sidecar);
    for (const sidecar of set.sidecars) if (sidecar.sharing) sharing.push(sidecar);
  }
  if (sharing.length === 0) return;
  // The bytes of the first mount at each path: the one a sidecar copies. Measured on the
  // copy a stored set's sidecars share (buildSidecar), whose text the patch then reuses.
  const shared = sharing.some((sidecar) => Object.isFrozen(sidecar.template));
  const bytesAt = new Map<unknown, number>();
  let all = 0;
  for (const mount of apps.shared().mounts) {
    if (bytesAt.has(mount.mountPath)) continue;
    const bytes = (shared ? (jsonText(apps.copy(mount, true)) as string) : JSON.stringify(mount)).length + 1;
    bytesAt.set(mount.mountPath, bytes);
    all += bytes;
  }
  let copied = 0;
  for (const sidecar of sharing) {
    let bytes = all;
    for (const path of sidecar.takenPaths) bytes -= bytesAt.get(path) ?? 0;
    copied += sidecar.podNames.length * bytes;
  }
  if (copied <= limit) return;
  // Only now is the pod measured: most pods are refused or passed above.
  const growth = copied - JSON.stringify(pod).length;
  if (growth > limit) throw new InjectionTooLargeError(growth);
}

/** What a sidecar that does not share volumes takes from the app containers' mounts. */
const NOTHING_SHARED: { mounts: readonly VolumeMount[]; subPathEnvs: readonly EnvVar[] } = Object.freeze({ mounts: Object.freeze([]), subPathEnvs: Object.freeze([]) });

/** The env values `transferEnv` copies from app containers; missing sources are skipped. */
function transferEnvs(source: SidecarContainer, pod: Pod, apps: AppContainers): EnvVar[] {
  const out: EnvVar[] = [];
  for (const t of arrayOf<JsonObject>(source.transferEnv)) {
    if (!isObject(t)) continue;
    const names = new Set<string>();
    const single = stringOf(t.envName);
    if (single) names.add(single);
    for (const n of arrayOf(t.envNames)) if (typeof n === 'string') names.add(n);
    let containerName = stringOf(t.sourceContainerName) ?? '';
    const fieldRef = objectOf(objectOf(t.sourceContainerNameFrom)?.fieldRef);
    if (fieldRef) {
      const resolved = containerNameFromFieldPath(stringOf(fieldRef.fieldPath) ?? '', pod);
      if (resolved === undefined) continue;
      containerName = resolved;
    }
    const container = apps.named(containerName);
    if (container === undefined) continue;
    for (const envName of [...names].sort()) {
      const env = apps.env(container, envName);
      if (env) out.push(env);
    }
  }
  return out;
}

const SUBSCRIPTED_PATH = /^metadata\.(labels|annotations)\['(.+)'\]$/;

/** Resolves `metadata.labels['k']` / `metadata.annotations['k']` on the pod; undefined for other paths. */
function containerNameFromFieldPath(fieldPath: string, pod: Pod): string | undefined {
  const m = SUBSCRIPTED_PATH.exec(fieldPath);
  if (!m) return undefined;
  const map = m[1] === 'labels' ? pod.metadata?.labels : pod.metadata?.annotations;
  return (m[2] !== undefined && map?.[m[2]]) || '';
}

function isInjectedSidecar(container: Container): boolean {
  for (const e of arrayOf<EnvVar>(container.env)) if (isObject(e) && e.name === SIDECAR_ENV && e.value === 'true') return true;
  return false;
}

/**
 * Places sidecars into a container list: a container of the same name is
 * replaced in place; otherwise BeforeAppContainer sidecars go first and the
 * rest after, each group in the order given.
 */
function placeContainers(key: InjectedListKey, existing: readonly Container[], sidecars: readonly PlacedSidecar[]): ListChange {
  const result = [...existing];
  const index = new Map<string, number>();
  result.forEach((c, i) => {
    if (isObject(c) && typeof c.name === 'string' && !index.has(c.name)) index.set(c.name, i);
  });
  const before: Container[] = [];
  const after: Container[] = [];
  let replaced = false;
  for (const { container, beforeApp } of sidecars) {
    const at = index.get(container.name);
    if (at !== undefined) {
      result[at] = container;
      replaced = true;
    } else if (beforeApp) before.push(container);
    else after.push(container);
  }
  const list = [...before, ...result, ...after];
  // Only at one end, nothing replaced: a received container never has an inserted one's name (it would
  // have been replaced), so no inserted container equals a received one.
  const inserted = replaced || (before.length > 0 && after.length > 0 && existing.length > 0) ? undefined : { at: before.length > 0 ? 0 : existing.length, items: before.length > 0 ? [...before, ...after] : after };
  return { key, list, inserted };
}

function withoutSidecarFields(sidecar: SidecarContainer): Container {
  // Copied without them rather than copied and deleted from: a deleted key
  // turns a V8 object into a slow dictionary, which the patch's
  // serialisation then walks several times slower.
  const container: JsonObject = {};
  for (const key of Object.keys(sidecar)) {
    if (SIDECAR_ONLY_FIELDS.has(key)) continue;
    const value = sidecar[key];
    if (key === '__proto__') Object.defineProperty(container, key, { value, enumerable: true, writable: true, configurable: true });
    else container[key] = value;
  }
  return container as Container;
}

/** `existing` followed by the `extra` items whose `key` is not taken yet (first one wins). */
function mergeByKey<T>(existing: readonly T[], extra: readonly T[], key: string): T[] {
  // Spread, not slice: slicing a frozen list (a stored set's, shared by every pod) is several times slower.
  const out = [...existing];
  if (extra.length === 0) return out;
  if (out.length + extra.length <= SMALL_MERGE) {
    // The usual few env vars or volumes: a scan costs less than building a Set.
    next: for (const item of extra) {
      const k = objectOf(item)?.[key];
      for (const taken of out) if (sameValueZero(objectOf(taken)?.[key], k)) continue next;
      out.push(item);
    }
    return out;
  }
  const seen = new Set<unknown>();
  for (const item of existing) seen.add(objectOf(item)?.[key]);
  for (const item of extra) {
    const k = objectOf(item)?.[key];
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(item);
  }
  return out;
}

/** Up to this many items in all, {@link mergeByKey} scans (a few dozen comparisons at most); past it, a Set keeps it linear. */
const SMALL_MERGE = 16;

/** Equality as a Set sees it. */
function sameValueZero(a: unknown, b: unknown): boolean {
  return a === b || (a !== a && b !== b);
}

/** Applies one set's `patchPodMetadata` entries to the pod's annotations. */
export function patchPodMetadata(annotations: Record<string, string>, set: SidecarSet): void {
  for (const entry of arrayOf<JsonObject>(set.spec?.patchPodMetadata).filter(isObject)) {
    const policy = stringOf(entry.patchPolicy) ?? '';
    for (const [key, value] of Object.entries(objectOf(entry.annotations) ?? {})) {
      // Validation refuses these keys; a set stored before it did must not
      // break the bookkeeping this injection parses back.
      if (typeof value !== 'string' || INJECTION_ANNOTATIONS.includes(key)) continue;
      const current = Object.hasOwn(annotations, key) ? annotations[key] : undefined;
      if (policy === 'Overwrite') {
        setAnnotation(annotations, key, value);
      } else if (policy === 'MergePatchJson') {
        // An absent or empty annotation gets the patch text as is, as in Kruise.
        // Finding that same text again means a reinvocation is looking at that
        // write: merging the patch into itself would rewrite it (keys sorted,
        // nulls dropped) or, for text that is not JSON, fail and deny the pod
        // the first call admitted.
        if (current === undefined || current === '') setAnnotation(annotations, key, value);
        else if (current !== value) setAnnotation(annotations, key, mergeJsonText(current, value, set, key));
      } else if (current === undefined) {
        // Retain, and "" which Kruise treats as Retain.
        setAnnotation(annotations, key, value);
      }
    }
  }
}

/**
 * Writes an annotation as an own property: a plain assignment to a key such
 * as `__proto__` would change the object's prototype (or do nothing) instead
 * of adding the key, and the annotation would vanish from the pod unseen.
 * Validation refuses such keys now; a set stored before it did still gets its
 * key written, so the API server names it when it refuses the pod.
 */
function setAnnotation(annotations: Record<string, string>, key: string, value: string): void {
  Object.defineProperty(annotations, key, { value, writable: true, enumerable: true, configurable: true });
}

function mergeJsonText(current: string, patch: string, set: SidecarSet, key: string): string {
  let target: unknown;
  let patchValue: unknown;
  try {
    target = JSON.parse(current);
    patchValue = JSON.parse(patch);
  } catch (e) {
    throw new PatchPodMetadataError(
      `SidecarSet ${sidecarSetName(set)} merges JSON into pod annotation ${key}, but the annotation or the patch is not JSON`,
      { cause: e },
    );
  }
  return stringifySorted(mergePatch(target, patchValue));
}
