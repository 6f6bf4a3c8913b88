/**
 * Whether this project and Kruise agree on a case. Only documented
 * differences are normalised away, each by one small function below that
 * says why; anything else is a mismatch.
 */
import { ANNOTATION_INJECTION_PATH } from '../../lib/sidecarset/injection-path.ts';
import { isDeepStrictEqual } from 'node:util';
import { CONVERTED_FROM_ANNOTATION } from '../../lib/conversion/parts.ts';
import { currentRevisionName } from '../../lib/sidecarset/revisions.ts';
import { ANNOTATION_INPLACE_UPDATE_STATE, ANNOTATION_WORKING_HOTUPGRADE } from '../../lib/sidecarset/pod-state.ts';
import { ANNOTATION_FENCE_CONTAINERS, ANNOTATION_FENCE_KEYS } from '../../lib/sidecarset/rollout-fence.ts';
import { ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, ANNOTATION_INJECTED_LIST } from '../../lib/sidecarset/types.ts';
import type { ConformanceCase } from './generator.ts';
import type { Verdict } from './verdict.ts';

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------
// Denials

/**
 * The field errors of a denial message, as a sorted list. Both sides print
 * several errors as `[a, b]` (utilerrors.NewAggregate); errors are compared
 * as a set because the order of Kruise's checks is not part of its contract.
 * An error starts with a field path, so a `, ` inside a message (Kubernetes'
 * env-name message has some) does not split it.
 */
export function fieldErrorsOf(message: string): string[] {
  const inner = message.startsWith('[') && message.endsWith(']') ? message.slice(1, -1) : message;
  return inner.split(/, (?=(?:spec|metadata|status)[.[:])/).sort();
}

/**
 * Denial codes are not compared: this project denies an invalid SidecarSet
 * with 422 and a pod it cannot inject with 400, where Kruise answers 500
 * (admission.Errored) for the same decision.
 * Both are `allowed: false` with the message shown to the user.
 */
export function denialIgnoringCode(verdict: Extract<Verdict, { kind: 'denied' }>): { kind: 'denied'; errors: string[] } {
  return { kind: 'denied', errors: fieldErrorsOf(verdict.message) };
}

/**
 * Issue 15 item 7 (better than Kruise): Kruise's defaulting
 * (setDefaultContainer) fills liveness and readiness probes but not a
 * startup probe, so Kubernetes' validateStartupProbe then sees Go's zero
 * values and Kruise denies a startupProbe without successThreshold
 * (`must be 1`) or, for an httpGet probe, without scheme (`Unsupported
 * value: ""`) or path (`Required value`). This project allows them; the API
 * server defaults those fields in the pod (SetDefaults_Probe,
 * SetDefaults_HTTPGetAction).
 */
export function startupProbeNotDefaulted(error: string): boolean {
  return /^spec\.(?:init)?[cC]ontainers\[\d+\]\.startupProbe\.(?:successThreshold: Invalid value: 0: must be 1|httpGet\.scheme: Unsupported value: "": supported values: "HTTP", "HTTPS"|httpGet\.path: Required value)$/.test(error);
}

/**
 * sidecarset.md §7 (better than Kruise): a HotUpgrade sidecar requires
 * `hotUpgradeEmptyImage`. Kruise admits the set without it, and the pods it
 * selects are then refused at creation (their idle copy has no image).
 */
export function hotUpgradeEmptyImageRequired(error: string): boolean {
  return /^spec\.(?:init)?[cC]ontainers\[\d+\]\.upgradeStrategy\.hotUpgradeEmptyImage: Required value: /.test(error);
}

/** A cross-set error of rule 13 (sidecarset.md §3) as this project words it. */
function isCrossSetError(error: string): boolean {
  return / already exist in |is in conflict with sidecarset /.test(error);
}

/** The other set a cross-set error names. */
function otherSetOf(error: string): string | undefined {
  return / (?:already exist in|is in conflict with sidecarset) (\S+)$/.exec(error)?.[1];
}

function selectorsOf(c: ConformanceCase): Json[] {
  if (c.class !== 'validate') return [];
  return [c.object, ...c.cluster.sidecarSets].map((s) => (isRecord(s.spec) ? s.spec : {}));
}

/**
 * Issue 15 items 8 and 9 (better than Kruise): Kruise takes an `Exists`
 * requirement on a key the other selector does not mention as disjoint, and
 * compares a namespaceSelector with a nil selector so a set with
 * `namespaceSelector` never overlaps one with `namespace`. This project finds
 * those overlaps and denies the colliding names. Only in cases that have
 * such a selector or such a pair are this project's extra cross-set errors
 * taken as this difference.
 */
export function overlapKruiseMisses(c: ConformanceCase, error: string, kruiseErrors: readonly string[]): boolean {
  if (!isCrossSetError(error)) return false;
  // Kruise found this pair of sets overlapping after all: not this difference.
  const other = otherSetOf(error);
  if (kruiseErrors.some((e) => isCrossSetError(e) && otherSetOf(e) === other)) return false;
  const specs = selectorsOf(c);
  const hasExists = specs.some((spec) => JSON.stringify(spec.selector ?? {}).includes('"operator":"Exists"'));
  const hasNamespaceSelector = specs.some((spec) => spec.namespaceSelector !== undefined);
  return hasExists || hasNamespaceSelector;
}

/**
 * Better than Kruise (docs/DIFFERENCES-FROM-KRUISE-1.9.md): a clash with another
 * set is reported here at the item that clashes
 * (`spec.containers[i].name`, `spec.initContainers[i].name`,
 * `spec.volumes[i]`, `spec.patchPodMetadata[i].annotations[key]`), where
 * Kruise names only the list (`spec.containers`, also for an init container;
 * `spec.volumes`; `spec.patchPodMetadata`). The error in Kruise's words, or
 * undefined when it is not such an error. Only the path changes: the value,
 * the name and the other set must still be the same.
 */
export function crossSetErrorAtList(error: string): string | undefined {
  const m = /^spec\.(?:(?:containers|initContainers)\[\d+\]\.name|volumes\[\d+\]|patchPodMetadata\[\d+\]\.annotations\[[^\]]+\])(: Invalid value: .*)$/.exec(error);
  if (m === null || !isCrossSetError(error)) return undefined;
  const list = error.startsWith('spec.volumes') ? 'volumes' : error.startsWith('spec.patchPodMetadata') ? 'patchPodMetadata' : 'containers';
  return `spec.${list}${m[1]}`;
}

const NATIVE_SIDECAR_ROLLING_KRUISE = 'spec.updateStrategy: Required value: The initContainer in-place upgrade is not currently supported.';

/**
 * Different from Kruise on purpose ("Native sidecars rolled in place" in
 * docs/DIFFERENCES-FROM-KRUISE-1.9.md): Kruise refuses a native sidecar (an
 * init container with restartPolicy Always) under a RollingUpdate strategy,
 * which this project accepts and rolls in place. Kruise's error.
 */
export function nativeSidecarRollingRefused(error: string): boolean {
  return error === NATIVE_SIDECAR_ROLLING_KRUISE;
}

/**
 * The one such set this project still refuses: a HotUpgrade native sidecar
 * under RollingUpdate. Set aside only when Kruise refused the set for its
 * native sidecar (then both refuse it, each for its own reason).
 */
export function nativeSidecarHotUpgradeRefused(error: string): boolean {
  return /^spec\.initContainers\[\d+\]\.upgradeStrategy\.upgradeType: Forbidden: a native sidecar \(an init container with restartPolicy Always\) is rolled in place, never hot upgraded; /.test(error);
}

/** A cross-set error without the other set's name: what it clashes on. */
function clashOf(error: string): string | undefined {
  if (!isCrossSetError(error)) return undefined;
  const atList = crossSetErrorAtList(error) ?? error;
  return atList.slice(0, atList.lastIndexOf(' '));
}

/**
 * Better than Kruise (docs/DIFFERENCES-FROM-KRUISE-1.9.md): a name or key that
 * clashes with several sets is reported here once per set. Kruise keeps one
 * set per name (the last overlapping set of its list that has it) and names
 * only that one. When Kruise reported the clash with a set this project also
 * reports, this project's errors on the same name against other sets are
 * that difference.
 */
export function clashesWithEverySet(ours: readonly string[], kruise: readonly string[]): string[] {
  const named = new Set(ours.filter((e) => kruise.includes(e)).map(clashOf));
  return ours.filter((e) => {
    const clash = clashOf(e);
    return kruise.includes(e) || clash === undefined || !named.has(clash);
  });
}

/**
 * Kruise 1.9 reports a resourcesPolicy error at `spec[i].resourcesPolicy`
 * (its path leaves out which list, containers or initContainers) with the
 * policy printed as a Go struct of pointers; here it is at
 * `spec.containers[i].resourcesPolicy` or `spec.initContainers[i]...` with
 * the policy as JSON. Both sides' such errors are compared by index and
 * message only.
 */
export function resourcesPolicyErrorShape(error: string): string {
  const ours = /^spec\.(?:initContainers|containers)\[(\d+)\]\.(resourcesPolicy[\w.]*): Invalid value: .*: ([^:]*)$/.exec(error);
  if (ours !== null) return `spec[${ours[1]}].${ours[2]}: ${ours[3]}`;
  const kruise = /^spec\[(\d+)\]\.(resourcesPolicy[\w.]*): Invalid value: v1beta1\.\w+\{.*\}: ([^:]*)$/.exec(error);
  return kruise === null ? error : `spec[${kruise[1]}].${kruise[2]}: ${kruise[3]}`;
}

/**
 * Kruise 1.9 prints a refused maxUnavailable or partition as a Go struct
 * (`intstr.IntOrString{Type:1, IntVal:0, StrVal:"5"}`), 1.8 and this
 * project as the value (`"5"`).
 */
export function intOrStringAsValue(error: string): string {
  return error
    .replace(/Invalid value: intstr\.IntOrString\{Type:1, IntVal:0, StrVal:("(?:[^"\\]|\\.)*")\}/, 'Invalid value: $1')
    .replace(/Invalid value: intstr\.IntOrString\{Type:0, IntVal:(-?\d+), StrVal:""\}/, 'Invalid value: $1');
}

/**
 * A pod refused because a resourcesPolicy's regex names none of its
 * containers: this project's message names the set and the sidecar
 * (`SidecarSet mesh, sidecar proxy: no containers match ...`), Kruise 1.9's
 * is the rest alone. Taken in Kruise's words when Kruise gave exactly the rest.
 */
export function noMatchingTargetNamed(ours: readonly string[], kruise: readonly string[]): string[] {
  return ours.map((error) => {
    const rest = /^SidecarSet [^,]+, sidecar [^:]+: (no containers match the regex pattern .*)$/.exec(error)?.[1];
    return rest !== undefined && kruise.includes(rest) ? rest : error;
  });
}

/** Both sides deny: this project's errors in Kruise's words where only the wording differs (the functions above). */
export function oursInKruiseWords(ours: readonly string[], kruise: readonly string[]): string[] {
  const kruiseErrors = new Set(kruise);
  const reworded = ours.map((e) => {
    const atList = crossSetErrorAtList(e);
    return atList !== undefined && kruiseErrors.has(atList) ? atList : e;
  });
  return clashesWithEverySet(reworded, kruise).sort();
}

/**
 * Better than Kruise ("Container names across kinds" in
 * docs/DIFFERENCES-FROM-KRUISE-1.9.md): Kruise compares an overlapping set's
 * init containers only with the other set's init containers, and containers
 * only with containers; a pod may not hold an init container and a container
 * of one name, so both kinds are compared here. This project's clash error
 * is this difference when the other set holds that name only in the other
 * kind (so Kruise, comparing like with like, cannot have reported it).
 */
export function containerNameAcrossKinds(c: ConformanceCase, error: string): boolean {
  const m = /^spec\.(containers|initContainers)\[\d+\]\.name: Invalid value: "([^"]*)": container \S+ already exist in (\S+)$/.exec(error);
  if (m === null || c.class !== 'validate') return false;
  const [, kind = '', name, otherName] = m;
  const spec: unknown = c.cluster.sidecarSets.find((s) => s.metadata?.name === otherName)?.spec;
  if (!isRecord(spec)) return false;
  const namesOf = (key: string) => {
    const list = spec[key];
    return new Set((Array.isArray(list) ? list : []).map((x: unknown) => (isRecord(x) ? x.name : undefined)));
  };
  return !namesOf(kind).has(name) && namesOf(kind === 'containers' ? 'initContainers' : 'containers').has(name);
}

// ---------------------------------------------------------------------------
// Admitted objects

/**
 * Kruise re-serialises the SidecarSet from its Go types, so its patch drops
 * what the types do not know (unknown fields; this project keeps them, as
 * the API server's own pruning decides what is stored) and what Go omits
 * (omitempty zero values such as `paused: false` or an env var's `value: ""`,
 * also when they reach a pod from a stored SidecarSet). A field of this
 * project's result that Kruise's lacks is dropped when it is exactly as
 * received or a zero value.
 */
export function keptFieldsKruiseDrops(ours: unknown, kruise: unknown, input: unknown): unknown {
  if (Array.isArray(ours) && Array.isArray(kruise)) {
    return ours.map((item, i) => keptFieldsKruiseDrops(item, kruise[i], Array.isArray(input) ? input[i] : undefined));
  }
  if (!isRecord(ours) || !isRecord(kruise)) return ours;
  const inputRecord = isRecord(input) ? input : {};
  const out: Json = {};
  for (const [key, value] of Object.entries(ours)) {
    if (!(key in kruise) && ((key in inputRecord && isDeepStrictEqual(inputRecord[key], value)) || isGoZero(value))) continue;
    out[key] = keptFieldsKruiseDrops(value, kruise[key], inputRecord[key]);
  }
  return out;
}

/**
 * What Go's encoding writes for a field that is not set: `null` for a
 * struct pointer or time without omitempty (`metadata.creationTimestamp`),
 * `{}` for a struct field (`resources`, `injectionStrategy`), and all-zero
 * counts for a status the set was received without. Each means what the
 * field's absence means, so a field of Kruise's result that this project's
 * lacks is dropped when it holds only such a value.
 */
export function goEmptyValues(kruise: unknown, ours: unknown): unknown {
  if (Array.isArray(kruise) && Array.isArray(ours)) return kruise.map((item, i) => goEmptyValues(item, ours[i]));
  if (!isRecord(kruise) || !isRecord(ours)) return kruise;
  const out: Json = {};
  for (const [key, value] of Object.entries(kruise)) {
    if (!(key in ours) && isGoEmpty(value)) continue;
    out[key] = goEmptyValues(value, ours[key]);
  }
  return out;
}

/** A value Go's omitempty leaves out: "", false, 0, null, or an empty list or object. */
function isGoZero(value: unknown): boolean {
  if (value === '' || value === false || value === 0 || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isRecord(value) && Object.keys(value).length === 0;
}

function isGoEmpty(value: unknown): boolean {
  if (value === null) return true;
  if (!isRecord(value)) return false;
  return Object.values(value).every((v) => v === 0 || isGoEmpty(v));
}

/**
 * The time of injection is recorded in the hash annotations
 * (`updateTimestamp`); each side records its own clock. The annotations are
 * compared as parsed JSON with the times blanked (key order is not part of
 * their meaning), and the injected-list as a set of names (Kruise builds it
 * in the order its informer lists sets, which is not deterministic).
 */
export function injectionAnnotations(pod: unknown): unknown {
  if (!isRecord(pod) || !isRecord(pod.metadata) || !isRecord(pod.metadata.annotations)) return pod;
  const annotations: Json = { ...pod.metadata.annotations };
  for (const key of [ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE]) {
    const value = annotations[key];
    if (typeof value !== 'string') continue;
    try {
      const parsed: unknown = JSON.parse(value);
      if (isRecord(parsed)) {
        for (const entry of Object.values(parsed)) if (isRecord(entry) && 'updateTimestamp' in entry) entry.updateTimestamp = '<time>';
      }
      annotations[key] = parsed;
    } catch {
      // Not JSON: compared as it is.
    }
  }
  const list = annotations[ANNOTATION_INJECTED_LIST];
  if (typeof list === 'string') annotations[ANNOTATION_INJECTED_LIST] = list.split(',').sort().join(',');
  return { ...pod, metadata: { ...pod.metadata, annotations } };
}

/**
 * Which set injected each sidecar, from the pod's hash annotation
 * (`sidecarList`); a HotUpgrade sidecar `x` (an entry of the working-container
 * map) is listed as `x` but occupies `x-1` and `x-2`.
 */
function sidecarOwners(pod: Json): Map<string, string> {
  const owners = new Map<string, string>();
  const annotations = isRecord(pod.metadata) && isRecord(pod.metadata.annotations) ? pod.metadata.annotations : {};
  const hash = annotations[ANNOTATION_HASH];
  const parsed: unknown = typeof hash === 'string' ? safeParse(hash) : hash;
  if (!isRecord(parsed)) return owners;
  const working = annotations[ANNOTATION_WORKING_HOTUPGRADE];
  const hot = typeof working === 'string' ? safeParse(working) : undefined;
  for (const [setName, entry] of Object.entries(parsed)) {
    if (!isRecord(entry) || !Array.isArray(entry.sidecarList)) continue;
    for (const container of entry.sidecarList) {
      if (typeof container !== 'string') continue;
      const names = isRecord(hot) && Object.hasOwn(hot, container) ? [`${container}-1`, `${container}-2`] : [container];
      for (const name of names) owners.set(name, setName);
    }
  }
  return owners;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Kruise injects the sidecars of several sets in the order its informer
 * lists the sets, which is not deterministic; this project injects in set
 * name order (sidecarset.md §4). Within each run of consecutive sidecars
 * the containers are put in set name order (stable, so a set's own order
 * stays compared).
 */
export function sidecarOrderBySetName(pod: unknown): unknown {
  if (!isRecord(pod) || !isRecord(pod.spec)) return pod;
  const owners = sidecarOwners(pod);
  const spec: Json = { ...pod.spec };
  for (const field of ['containers', 'initContainers']) {
    const list = spec[field];
    if (!Array.isArray(list)) continue;
    const out: unknown[] = [];
    let run: { owner: string; item: unknown }[] = [];
    const flush = () => {
      run.sort((a, b) => (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0));
      out.push(...run.map((r) => r.item));
      run = [];
    };
    for (const item of list) {
      const owner = isRecord(item) && typeof item.name === 'string' ? owners.get(item.name) : undefined;
      if (owner === undefined) {
        flush();
        out.push(item);
      } else {
        run.push({ owner, item });
      }
    }
    flush();
    spec[field] = out;
  }
  return { ...pod, spec };
}

/**
 * The volumes of several sets come in the order their sets are injected in:
 * set name order here, the order Kruise's informer lists the sets there
 * (namespace-scoped sets first). When both sides injected the same volumes,
 * and each volume that only one set of the cluster defines keeps, on both
 * sides, its order among that set's own, this project's injected volumes
 * (those the pod did not have) are put in Kruise's order; a volume two sets
 * define goes wherever its first set put it. Anything else stays compared.
 */
export function volumesInKruiseSetOrder(c: ConformanceCase, ours: unknown, kruise: unknown): unknown {
  if (c.class !== 'inject' || !isRecord(ours) || !isRecord(kruise) || !isRecord(ours.spec) || !isRecord(kruise.spec)) return ours;
  const mine: unknown = ours.spec.volumes;
  const theirs: unknown = kruise.spec.volumes;
  if (!Array.isArray(mine) || !Array.isArray(theirs)) return ours;
  const nameOf = (v: unknown) => (isRecord(v) && typeof v.name === 'string' ? v.name : '');
  const names = (list: readonly unknown[]) => list.map(nameOf);
  // The pod's own volumes come first on both sides, in its order; the injected ones after them.
  const own = names(c.pod.spec?.volumes ?? []);
  const [mineOwn, theirsOwn] = [(mine as unknown[]).slice(0, own.length), (theirs as unknown[]).slice(0, own.length)];
  if (!isDeepStrictEqual(names(mineOwn), own) || !isDeepStrictEqual(names(theirsOwn), own)) return ours;
  const mineInjected = (mine as unknown[]).slice(own.length);
  const theirsInjected = (theirs as unknown[]).slice(own.length);
  if (!isDeepStrictEqual(names(mineInjected).sort(), names(theirsInjected).sort())) return ours;
  const definers = (name: string) => c.cluster.sidecarSets.filter((set) => (set.spec?.volumes ?? []).some((v) => v.name === name));
  for (const set of c.cluster.sidecarSets) {
    const alone = (list: readonly unknown[]) =>
      names(list).filter((name) => {
        const sets = definers(name);
        return sets.length === 1 && sets[0] === set;
      });
    if (!isDeepStrictEqual(alone(mineInjected), alone(theirsInjected))) return ours;
  }
  const byName = new Map(mineInjected.map((v) => [nameOf(v), v]));
  return { ...ours, spec: { ...ours.spec, volumes: [...mineOwn, ...theirsInjected.map((v) => byName.get(nameOf(v)))] } };
}

/**
 * sidecarset.md §7 (better than Kruise): a pod injected with a set's
 * current spec records as `controllerRevision` the revision name computed
 * from that spec and `status.collisionCount`, where Kruise copies
 * `status.latestRevision`, which lags a spec change until its controller
 * runs (and is absent before it first does). For each set whose status does
 * not name its current revision, an entry of ours that records the computed
 * name while Kruise's records the status's (or nothing) is taken as
 * Kruise's; any other difference stays.
 */
export function revisionNameComputed(c: ConformanceCase, ours: unknown, kruise: unknown): unknown {
  if (c.class !== 'inject') return ours;
  const entries = (pod: unknown): Json | undefined => {
    const annotations = isRecord(pod) && isRecord(pod.metadata) && isRecord(pod.metadata.annotations) ? pod.metadata.annotations : undefined;
    const hash = annotations?.[ANNOTATION_HASH];
    return isRecord(hash) ? hash : undefined;
  };
  const theirs = entries(kruise);
  const mine = entries(ours);
  if (theirs === undefined || mine === undefined) return ours;
  const replaced: Json = { ...mine };
  for (const set of c.cluster.sidecarSets) {
    const name = set.metadata?.name ?? '';
    const computed = currentRevisionName(set);
    const latest = typeof set.status?.latestRevision === 'string' && set.status.latestRevision !== '' ? set.status.latestRevision : undefined;
    const entry = mine[name];
    const their = theirs[name];
    if (latest === computed || !isRecord(entry) || !isRecord(their)) continue;
    if (entry.controllerRevision !== computed || their.controllerRevision !== latest) continue;
    const rest: Json = { ...entry };
    if (latest === undefined) delete rest.controllerRevision;
    else rest.controllerRevision = latest;
    replaced[name] = rest;
  }
  const pod = ours as Json & { metadata: Json & { annotations: Json } };
  return { ...pod, metadata: { ...pod.metadata, annotations: { ...pod.metadata.annotations, [ANNOTATION_HASH]: replaced } } };
}

// ---------------------------------------------------------------------------
// Status

/** Kruise's `updatedReadyPods` is omitempty: absent means 0. */
export function statusCountsWithZeros(status: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...status };
  for (const key of ['observedGeneration', 'matchedPods', 'updatedPods', 'readyPods', 'updatedReadyPods']) out[key] ??= 0;
  return out;
}

/**
 * sidecarset.md §7 (better than Kruise): image references are normalised
 * before a spec image is compared with a status imageID, where Kruise
 * compares strings, so `agent@sha256:…` running as
 * `docker.io/library/agent@sha256:…` is consistent here and not in Kruise.
 * In a case with such a pod the ready counts are not compared.
 */
export function pinnedImageQualified(c: ConformanceCase): boolean {
  if (c.class !== 'status') return false;
  return c.cluster.pods.some((pod) => {
    const statuses = isRecord(pod.status) && Array.isArray(pod.status.containerStatuses) ? pod.status.containerStatuses : [];
    return statuses.some((s) => isRecord(s) && typeof s.image === 'string' && s.image.includes('@') && typeof s.imageID === 'string' && s.imageID !== s.image && s.imageID.endsWith(`/${s.image}`));
  });
}

function readyCountsDropped(status: Record<string, unknown>): Record<string, unknown> {
  return without(status, ['readyPods', 'updatedReadyPods']);
}

// ---------------------------------------------------------------------------
// Rollout

/** The SidecarSetUpgradable condition the rollout writes (rollout.md §1.7). */
const UPGRADABLE_CONDITION = 'SidecarSetUpgradable';

/** A pod's `namespace/name`. */
function keyOf(pod: unknown): string {
  const metadata = isRecord(pod) && isRecord(pod.metadata) ? pod.metadata : {};
  return `${typeof metadata.namespace === 'string' ? metadata.namespace : ''}/${typeof metadata.name === 'string' ? metadata.name : ''}`;
}

function annotationsOf(pod: unknown): Json {
  return isRecord(pod) && isRecord(pod.metadata) && isRecord(pod.metadata.annotations) ? pod.metadata.annotations : {};
}

/**
 * The times a reconcile writes (`updateTimestamp` in the hash annotations and in
 * the in-place update state) are each side's clock. In an annotation holding
 * per-set entries, an entry's time is blanked only when it is not the time
 * the pod carried for that entry before the reconcile: a time the reconcile should have
 * kept (another set's entry, or the in-place update state's first update,
 * which Kruise keeps) is still compared.
 */
function reconcileTimes(value: unknown, before: unknown): unknown {
  const parsed: unknown = typeof value === 'string' ? safeParse(value) : undefined;
  if (!isRecord(parsed)) return value;
  const old: unknown = typeof before === 'string' ? safeParse(before) : undefined;
  const out: Json = {};
  for (const [set, entry] of Object.entries(parsed)) {
    const previous = isRecord(old) ? old[set] : undefined;
    if (isRecord(entry) && 'updateTimestamp' in entry && !(isRecord(previous) && previous.updateTimestamp === entry.updateTimestamp)) {
      out[set] = { ...entry, updateTimestamp: '<time>' };
    } else out[set] = entry;
  }
  return out;
}

/**
 * What a rollout's reconcile decides about a pod, in the form compared: the images
 * of its containers and init containers, every annotation (the hash and
 * in-place update state parsed, with the reconcile's times set aside as
 * {@link reconcileTimes} says), and the SidecarSetUpgradable condition without its
 * times (its message parsed). Everything else of a pod is the kubelet's or
 * the user's and no rollout writes it.
 */
export function rolloutPodView(pod: unknown, before: unknown): Json {
  const spec = isRecord(pod) && isRecord(pod.spec) ? pod.spec : {};
  const images = (list: unknown): unknown[] => (Array.isArray(list) ? (list as unknown[]).map((c) => (isRecord(c) ? { name: c.name, image: c.image } : c)) : []);
  const annotations: Json = { ...annotationsOf(pod) };
  const old = annotationsOf(before);
  for (const key of [ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, ANNOTATION_INPLACE_UPDATE_STATE]) {
    if (key in annotations) annotations[key] = reconcileTimes(annotations[key], old[key]);
  }
  const conditions = isRecord(pod) && isRecord(pod.status) && Array.isArray(pod.status.conditions) ? pod.status.conditions : [];
  const condition = conditions.find((c) => isRecord(c) && c.type === UPGRADABLE_CONDITION) as Json | undefined;
  const view: Json = { pod: keyOf(pod), containers: images(spec.containers), initContainers: images(spec.initContainers), annotations };
  if (condition !== undefined) {
    view.condition = { status: condition.status, reason: condition.reason, message: notUpgradableWhyAsFalse(typeof condition.message === 'string' ? (safeParse(condition.message) ?? condition.message) : condition.message) };
  }
  return view;
}

/**
 * Better than Kruise (docs/ROLLOUT.md, "Where this differs"): where Kruise's
 * SidecarSetUpgradable message says `"<set>": false`, this project says why
 * (`"<set>": "not upgradable in place: env of sidecar1 changed …"`). A why
 * counts as the `false` it stands for; Kruise never writes a string there.
 */
export function notUpgradableWhyAsFalse(message: unknown): unknown {
  if (!isRecord(message)) return message;
  return Object.fromEntries(Object.entries(message).map(([set, value]) => [set, typeof value === 'string' ? false : value]));
}

/**
 * Better than Kruise (docs/ROLLOUT.md, "Where this differs"): a pod whose hot
 * upgrade this reconcile flips, and which the same reconcile's batch also takes, is
 * updated here in a later reconcile, once its old container has restarted on the
 * empty image; Kruise writes the update right after the flip, over a
 * container the kubelet has not reset yet. For each pod this project
 * deferred so (`deferred`: flipped, and in its planned batch), Kruise's pod
 * is taken as it was after its first write, the flip, when Kruise wrote it
 * exactly so (the flip, then the update, then perhaps the condition); its
 * flip is compared, the update it made in the same reconcile is not.
 */
export function flippedPodUpdatedLater(ours: Extract<Verdict, { kind: 'pods' }>, kruise: Extract<Verdict, { kind: 'pods' }>): Extract<Verdict, { kind: 'pods' }> {
  const deferred = new Set(ours.deferred ?? []);
  if (deferred.size === 0) return kruise;
  const pods = kruise.pods.map((pod) => {
    const key = keyOf(pod);
    if (!deferred.has(key)) return pod;
    const writes = kruise.writes.filter((w) => keyOf(w.pod) === key);
    const shape = writes.map((w) => w.kind).join(',');
    const flip = writes[0];
    if (flip === undefined || !(shape === 'update,update' || shape === 'update,update,status')) return pod;
    return flip.pod;
  });
  return { ...kruise, pods };
}

/** Whether a hash annotation is in the form older Kruise versions wrote, `{"<set>":"<hash>"}`. */
function isOldFormHash(value: unknown): boolean {
  const parsed: unknown = typeof value === 'string' ? safeParse(value) : undefined;
  return isRecord(parsed) && Object.keys(parsed).length > 0 && Object.values(parsed).every((v) => typeof v === 'string');
}

/**
 * Better than Kruise (docs/ROLLOUT.md, "Where this differs"): when a reconcile
 * converts a pod's hash annotations from the old form `{"<set>":"<hash>"}`,
 * Kruise names the set it is rolling as `sidecarSetName` of every converted
 * entry, other sets' included; each entry names its own set here. In
 * Kruise's view of a pod whose annotation was in the old form, an entry of
 * another set that carries the rolled set's name, where this project's
 * entry names its own set, is given that name; nothing else changes.
 */
export function oldFormEntriesNamed(c: ConformanceCase, kruise: Json, ours: Json | undefined): Json {
  if (c.class !== 'rollout' || ours === undefined) return kruise;
  const rolled = c.sidecarSet.metadata?.name ?? '';
  const input = c.cluster.pods.find((p) => keyOf(p) === kruise.pod);
  const inputAnnotations = annotationsOf(input);
  if (!isOldFormHash(inputAnnotations[ANNOTATION_HASH])) return kruise;
  const annotations: Json = { ...(kruise.annotations as Json) };
  const oursAnnotations = isRecord(ours.annotations) ? ours.annotations : {};
  for (const key of [ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE]) {
    const theirs = annotations[key];
    const mine = oursAnnotations[key];
    if (!isRecord(theirs) || !isRecord(mine)) continue;
    const renamed: Json = { ...theirs };
    for (const [set, entry] of Object.entries(theirs)) {
      const own = mine[set];
      if (set === rolled || !isRecord(entry) || !isRecord(own) || entry.sidecarSetName !== rolled || own.sidecarSetName !== set) continue;
      renamed[set] = { ...entry, sidecarSetName: set };
    }
    annotations[key] = renamed;
  }
  return { ...kruise, annotations };
}

/** The Events Kruise's reconcile records: on the set for not-upgradable pods, on a pod for its HotUpgrade flip. */
const KRUISE_ROLLOUT_EVENTS = new Set(['NotUpgradablePods', 'ResetContainerSucceed', 'ResetContainerFailed']);

/**
 * Better than Kruise (docs/ROLLOUT.md, "Watching a rollout"): this project
 * also tells on the set why its rollout is where it is (`Rollout…` Events),
 * which Kruise only logs. The Events compared are Kruise's own reasons, in
 * the order recorded.
 */
export function kruiseReasonEvents(events: readonly { object: string; type: string; reason: string; message: string }[]): unknown[] {
  return events.filter((e) => KRUISE_ROLLOUT_EVENTS.has(e.reason)).map((e) => ({ object: e.object, type: e.type, reason: e.reason, message: e.message }));
}

function rolloutView(c: ConformanceCase, verdict: Extract<Verdict, { kind: 'pods' }>): Json {
  const before = new Map(c.class === 'rollout' ? c.cluster.pods.map((p) => [keyOf(p), p]) : []);
  const pods = [...verdict.pods].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0)).map((p) => rolloutPodView(p, before.get(keyOf(p))));
  // Why a reconcile stopped is worded by each side; only that it did is compared.
  return { kind: 'pods', pods, events: kruiseReasonEvents(verdict.events), stopped: verdict.passError !== undefined };
}

// ---------------------------------------------------------------------------
// The comparison

/**
 * Both answers are JSON documents: compared as such (a key holding
 * `undefined` is no key), with a path to the first difference for the report.
 */
export function firstDifference(a: unknown, b: unknown, path = ''): string | undefined {
  if (isRecord(a) && isRecord(b)) {
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      if (a[key] === undefined && b[key] === undefined) continue;
      const found = firstDifference(a[key], b[key], `${path}/${key}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const found = firstDifference(a[i], b[i], `${path}/${i}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  return isDeepStrictEqual(a, b) ? undefined : `${path === '' ? '/' : path}: ${shown(a)} vs ${shown(b)}`;
}

function shown(value: unknown): string {
  return value === undefined ? 'absent' : JSON.stringify(value);
}

/** The object without these keys. */
function without(object: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([key]) => !keys.includes(key)));
}

export interface Comparison {
  agree: boolean;
  /** Where the two answers first differ (ours vs Kruise's), when they do. */
  difference?: string;
  /** The two answers after normalisation, for the report. */
  ours: unknown;
  kruise: unknown;
  /** For denials: the field errors only one side gave. */
  oursOnly?: string[];
  kruiseOnly?: string[];
}

function inputOf(c: ConformanceCase): unknown {
  if (c.class === 'convert') return c.objects;
  return c.class === 'inject' ? c.pod : c.class === 'status' || c.class === 'rollout' ? c.sidecarSet : c.object;
}

/**
 * Better than Kruise (docs/CONVERSION.md): where Kruise's conversion loses
 * something (a v1alpha1 `namespace`, both a `namespace` and a selector, an
 * empty custom-version label, fields the other version lacks), this
 * project's converted object also carries the source's part in the
 * annotation `sidecarset.kruise.io/converted-from`, so that converting back
 * gives what was written. The annotation is set aside; the rest of the
 * object is Kruise's mapping and is compared. (A round trip's losses are
 * counted as a documented difference, release-differences.ts.)
 */
export function convertedFromAnnotation(object: unknown): unknown {
  return withoutAnnotations(object, [CONVERTED_FROM_ANNOTATION]);
}

/** The object without the annotations `keys` (and without `metadata.annotations` once empty); unchanged when it has none of them. */
function withoutAnnotations(object: unknown, keys: readonly string[]): unknown {
  if (!isRecord(object) || !isRecord(object.metadata) || !isRecord(object.metadata.annotations)) return object;
  const present = object.metadata.annotations;
  if (!keys.some((key) => key in present)) return object;
  const annotations = without(present, keys);
  const metadata = Object.keys(annotations).length === 0 ? without(object.metadata, ['annotations']) : { ...object.metadata, annotations };
  return { ...object, metadata };
}

/**
 * Better than Kruise (docs/OPERATIONS.md, "the rollout fence"): pod-inject
 * records on each pod it injects the sidecars it injected and the sets'
 * patchPodMetadata keys, the only things the pod policy lets the reconciler
 * change later; Kruise records neither, and keeps what a pod copied from a
 * live one carried. Set aside on both sides of an injection; the rest of the
 * pod is compared.
 */
export function rolloutFenceSetAside(pod: unknown): unknown {
  return withoutAnnotations(pod, [ANNOTATION_FENCE_CONTAINERS, ANNOTATION_FENCE_KEYS]);
}

/**
 * This project's own (docs/INJECTION-POLICY.md): defaulting writes the
 * path that injects the set, `serverless-sidecarset/injection-path`, over
 * anything written there; Kruise writes none and keeps the author's. Set
 * aside on both sides of a defaulting; the rest of the set is compared.
 */
export function injectionPathSetAside(set: unknown): unknown {
  return withoutAnnotations(set, [ANNOTATION_INJECTION_PATH]);
}

/** Puts one side's verdict in the form compared (denials as field error sets, objects normalised). */
function normalised(c: ConformanceCase, verdict: Verdict): unknown {
  switch (verdict.kind) {
    case 'denied':
      return denialIgnoringCode(verdict);
    case 'failed':
      // Why it failed is not compared (each side words it its own way), only that it did.
      return { kind: 'failed' };
    case 'status': {
      // Every field, latestRevision and collisionCount included: the revision name must be Kruise's byte for byte.
      const counts = statusCountsWithZeros(verdict.status);
      return { kind: 'status', status: pinnedImageQualified(c) ? readyCountsDropped(counts) : counts };
    }
    case 'allowed':
      return { kind: 'allowed', result: c.class === 'inject' ? sidecarOrderBySetName(injectionAnnotations(verdict.result)) : verdict.result };
    case 'pods':
      return rolloutView(c, verdict);
    case 'converted':
      return { kind: 'converted', objects: verdict.objects };
  }
}

/** Compares the two sides' verdicts on a case, after the documented normalisations. */
export function compareVerdicts(c: ConformanceCase, oursVerdict: Verdict, kruiseVerdict: Verdict): Comparison {
  const kruiseLater = oursVerdict.kind === 'pods' && kruiseVerdict.kind === 'pods' ? flippedPodUpdatedLater(oursVerdict, kruiseVerdict) : kruiseVerdict;
  let ours = normalised(c, oursVerdict) as { kind: string; errors?: string[]; result?: unknown };
  let kruise = normalised(c, kruiseLater) as { kind: string; errors?: string[]; result?: unknown };

  // Items 7-9, names across kinds and native sidecars under RollingUpdate: errors only one side reports, for documented reasons, are set aside.
  let kruiseStoppedEarly = false;
  const kruiseRefusedNative = kruise.kind === 'denied' && (kruise.errors ?? []).some(nativeSidecarRollingRefused);
  if (kruise.kind === 'denied') {
    const errors = (kruise.errors ?? []).filter((e) => !startupProbeNotDefaulted(e) && !nativeSidecarRollingRefused(e));
    // Kruise checks other sets only when the set is valid on its own, so
    // with an item-7 error it never compared this set with the others.
    kruiseStoppedEarly = errors.length < (kruise.errors ?? []).length && !(kruise.errors ?? []).some(isCrossSetError);
    kruise = errors.length === 0 ? { kind: 'allowed', result: inputOf(c) } : { kind: 'denied', errors };
  }
  if (ours.kind === 'denied' && (kruise.kind === 'allowed' || kruise.kind === 'denied')) {
    const kruiseErrors = new Set(kruise.errors ?? []);
    const errors = (ours.errors ?? []).filter(
      (e) =>
        kruiseErrors.has(e) ||
        !(
          overlapKruiseMisses(c, e, kruise.errors ?? []) ||
          containerNameAcrossKinds(c, e) ||
          hotUpgradeEmptyImageRequired(e) ||
          (kruiseRefusedNative && nativeSidecarHotUpgradeRefused(e)) ||
          (kruiseStoppedEarly && isCrossSetError(e))
        ),
    );
    ours = errors.length === 0 ? { kind: 'allowed', result: inputOf(c) } : { kind: 'denied', errors };
  }

  if (ours.kind === 'denied' && kruise.kind === 'denied') {
    // Shaped errors may fall together: compared as sorted lists, as denialIgnoringCode compares them.
    const shaped = (errors: readonly string[]) => errors.map((e) => intOrStringAsValue(resourcesPolicyErrorShape(e))).sort();
    kruise = { kind: 'denied', errors: shaped(kruise.errors ?? []) };
    ours = { kind: 'denied', errors: noMatchingTargetNamed(oursInKruiseWords(shaped(ours.errors ?? []), kruise.errors ?? []), kruise.errors ?? []).sort() };
  }

  if (ours.kind === 'converted' && kruise.kind === 'converted') {
    const mine = ((ours as { objects?: unknown[] }).objects ?? []).map(convertedFromAnnotation);
    const theirs = (kruise as { objects?: unknown[] }).objects ?? [];
    const kept = keptFieldsKruiseDrops(mine, theirs, inputOf(c));
    ours = { kind: 'converted', objects: kept } as typeof ours;
    kruise = { kind: 'converted', objects: goEmptyValues(theirs, kept) } as typeof kruise;
  }
  if (ours.kind === 'allowed' && kruise.kind === 'allowed') {
    if (c.class === 'default') {
      ours = { kind: 'allowed', result: injectionPathSetAside(ours.result) };
      kruise = { kind: 'allowed', result: injectionPathSetAside(kruise.result) };
    }
    if (c.class === 'inject') {
      // Both sides: a pod copied from a live one carries the fence pod-inject wrote then, which Kruise keeps as it is.
      ours = { kind: 'allowed', result: rolloutFenceSetAside(ours.result) };
      kruise = { kind: 'allowed', result: rolloutFenceSetAside(kruise.result) };
    }
    ours = { kind: 'allowed', result: volumesInKruiseSetOrder(c, revisionNameComputed(c, keptFieldsKruiseDrops(ours.result, kruise.result, inputOf(c)), kruise.result), kruise.result) };
    kruise = { kind: 'allowed', result: goEmptyValues(kruise.result, ours.result) };
  }
  if (c.class === 'rollout' && ours.kind === 'pods' && kruise.kind === 'pods') {
    const mine = new Map(((ours as { pods?: Json[] }).pods ?? []).map((v) => [v.pod, v]));
    const theirs = kruise as { pods?: Json[] };
    kruise = { ...kruise, pods: (theirs.pods ?? []).map((v) => oldFormEntriesNamed(c, v, mine.get(v.pod))) } as typeof kruise;
  }
  const difference = firstDifference(ours, kruise);
  const comparison: Comparison = difference === undefined ? { agree: true, ours, kruise } : { agree: false, difference, ours, kruise };
  if (ours.kind === 'denied' || kruise.kind === 'denied') {
    const o = new Set(ours.errors ?? []);
    const k = new Set(kruise.errors ?? []);
    return { ...comparison, oursOnly: [...o].filter((e) => !k.has(e)), kruiseOnly: [...k].filter((e) => !o.has(e)) };
  }
  return comparison;
}
