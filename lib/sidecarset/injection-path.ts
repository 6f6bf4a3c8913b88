/**
 * Which path injects a SidecarSet: the MutatingAdmissionPolicy inside the
 * API server (lib/webhook-config/injection-policy.ts), or pod-inject. The one
 * rule: the defaulting webhook writes its verdict on the set
 * ({@link ANNOTATION_INJECTION_PATH}), the policy reads only that annotation,
 * explain and status print it. A set goes to the policy only when everything
 * it asks of a pod is something the policy's CEL computes exactly as
 * pod-inject does, and its size keeps that CEL within the API server's cost
 * budget (docs/INJECTION-POLICY.md); anything else goes to pod-inject.
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import { canaryBaseOf } from './canary.ts';
import { INJECTION_ANNOTATIONS } from './pod-annotations.ts';
import { ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD } from './policy-record.ts';
import { hotUpgradeContainerNames, hotUpgradeEmptyImage, versionAltAnnotation, versionAnnotation } from './hot-upgrade.ts';
import { ANNOTATION_WORKING_HOTUPGRADE, isHotUpgrade } from './pod-state.ts';
import { patchPodMetadataKeys } from './rollout-fence.ts';
import { ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, type SidecarContainer, type SidecarSet } from './types.ts';

/** The set's path, as the defaulting webhook writes it (over whatever the author wrote). */
export const ANNOTATION_INJECTION_PATH = 'serverless-sidecarset/injection-path';

export type InjectionPathName = 'policy' | 'webhook';

export interface InjectionPath {
  readonly path: InjectionPathName;
  /** Why: what sends the set to pod-inject, or that nothing does. */
  readonly reason: string;
}

/**
 * The largest set the policy takes. Measured on the real API server
 * (docs/BENCHMARKS.md, "Injection policy cost"): with the pod-side bounds of
 * lib/webhook-config/injection-policy.ts at their most, the policy's CEL stays
 * below the per-expression cost limit.
 */
export const POLICY_SET_BOUNDS = {
  /** Pod containers and init containers together (a HotUpgrade sidecar counts as its two). */
  containers: 8,
  /** The env var names a sidecar's transferEnv copies, over all its entries. */
  transferredEnv: 16,
  /** Env vars, mounts, ports and the like: the items of any one list in a sidecar. */
  listItems: 32,
  volumes: 16,
  imagePullSecrets: 8,
  /** The spec as JSON. */
  specBytes: 32 * 1024,
} as const;

/** Names the policy writes into annotation text unescaped: DNS labels and subdomains. */
const PLAIN_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
/** The hash annotations hash.ts writes. */
const PLAIN_HASH = /^[a-z0-9]+$/;

const webhook = (reason: string): InjectionPath => ({ path: 'webhook', reason });

/** The verdict for a set (as stored, defaulted): pure, the same wherever it is asked. */
export function injectionPath(set: SidecarSet): InjectionPath {
  const spec = objectOf(set.spec);
  if (spec === undefined) return webhook('it has no spec');
  if (!PLAIN_NAME.test(stringOf(set.metadata?.name) ?? '')) return webhook('its name is not a DNS name');
  const annotations = objectOf(set.metadata?.annotations) ?? {};
  if (!PLAIN_HASH.test(stringOf(annotations[ANNOTATION_HASH]) ?? '') || !PLAIN_HASH.test(stringOf(annotations[ANNOTATION_HASH_WITHOUT_IMAGE]) ?? '')) {
    return webhook('its hash annotations are missing');
  }
  const excluded = excludedFeature(set, spec) ?? sizeProblem(spec);
  return excluded === undefined ? { path: 'policy', reason: 'the policy computes everything it injects' } : webhook(excluded);
}

/** The first feature of the spec the policy does not compute; undefined when none. */
function excludedFeature(set: SidecarSet, spec: JsonObject): string | undefined {
  const strategy = objectOf(spec.injectionStrategy);
  if (strategy?.revision !== undefined && strategy.revision !== null) return 'it pins a revision (injectionStrategy.revision)';
  if (!isObject(spec.selector)) return 'it has no selector';
  const base = canaryBaseOf(set);
  if (base !== undefined && !PLAIN_NAME.test(base)) return 'its canary base is not a DNS name';
  const containers = arrayOf(spec.containers);
  const inits = arrayOf(spec.initContainers);
  const written = new Set(patchPodMetadataKeys(set));
  for (const [list, init] of [[inits, true], [containers, false]] as const) {
    for (const c of list) {
      const problem = containerProblem(c, init, written);
      if (problem !== undefined) return problem;
    }
  }
  const names = containers.flatMap((c) => podContainerNames(c as SidecarContainer));
  const all = [...names, ...inits.map((c) => stringOf(objectOf(c)?.name) ?? '')];
  if (new Set(all).size !== all.length) return 'two of its containers share a name';
  // pod-inject may sort sidecars by name (SORT_SIDECAR_CONTAINERS_BY_NAME): a set already in that order is placed alike either way.
  if (names.some((name, i) => i > 0 && (names[i - 1] as string) > name)) return 'its containers are not in name order (pod-inject may sort them)';
  if (!distinctNames(spec.volumes)) return 'its volumes are not distinctly named by DNS names';
  if (!distinctNames(spec.imagePullSecrets)) return 'its imagePullSecrets are not distinctly named by DNS names';
  return patchProblem(spec.patchPodMetadata);
}

/** The pod containers a sidecar becomes: itself, or its HotUpgrade pair. */
function podContainerNames(c: SidecarContainer): string[] {
  const name = stringOf(c.name) ?? '';
  return isHotUpgrade(c) ? hotUpgradeContainerNames(name) : [name];
}

/** Why the policy cannot inject this sidecar (an init container when `init`); undefined when it can. */
function containerProblem(value: unknown, init: boolean, written: ReadonlySet<string>): string | undefined {
  if (!isObject(value)) return 'a container is not an object';
  // Read as JSON: a stored set is not validated again, so any member may be null or of another type.
  const c: JsonObject = value;
  const name = stringOf(c.name) ?? '';
  if (!PLAIN_NAME.test(name) || name.includes('.')) return 'a container has no DNS label name';
  if (isHotUpgrade(c as SidecarContainer)) {
    // A HotUpgrade pair is a container's only; its empty copy's image is written into the pod as it stands.
    if (init) return `init container ${name} is a HotUpgrade sidecar`;
    if (typeof c.image !== 'string' || c.image === '' || hotUpgradeEmptyImage(c as SidecarContainer) === '') return `container ${name} is a HotUpgrade sidecar without both its images`;
  }
  if (c.resourcesPolicy !== undefined && c.resourcesPolicy !== null) return `container ${name} has a resourcesPolicy`;
  for (const key of ['shareVolumePolicy', 'shareVolumeDevicePolicy']) {
    const type: unknown = objectOf(c[key])?.type;
    if (c[key] !== undefined && c[key] !== null && type !== 'enabled' && type !== 'disabled') return `container ${name} has a malformed ${key}`;
  }
  const restart = c.restartPolicy;
  if (restart !== undefined && restart !== null && !(init && restart === 'Always')) return `container ${name} has a restartPolicy`;
  const policy = c.podInjectPolicy;
  if (policy !== 'BeforeAppContainer' && policy !== 'AfterAppContainer') return `container ${name} has no podInjectPolicy`;
  for (const key of ['env', 'volumeMounts', 'volumeDevices']) {
    const list: unknown = c[key];
    if (list !== undefined && list !== null && !(Array.isArray(list) && list.every((item) => isObject(item) && typeof item.name === 'string'))) return `container ${name} has a malformed ${key}`;
  }
  return transferProblem(name, c.transferEnv, written);
}

/** An env var name the policy can sort as pod-inject does (code units and bytes agree on ASCII). */
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const LABEL_FIELD_PATH = /^metadata\.labels\['.+'\]$/;
const ANNOTATION_FIELD_PATH = /^metadata\.annotations\['(.+)'\]$/;

/**
 * Whether the policy reads a source container's name where pod-inject does: a
 * label, or an annotation its record can name that no injection writes. pod-inject
 * reads annotations after every set's patchPodMetadata: the set's own writes are
 * not yet on the pod it sees (`written`), another set's are refused by the record.
 */
function sourcePathTaken(path: string, written: ReadonlySet<string>): boolean {
  if (LABEL_FIELD_PATH.test(path)) return true;
  const key = ANNOTATION_FIELD_PATH.exec(path)?.[1];
  return key !== undefined && ANNOTATION_KEY.test(key) && !RESERVED_KEYS.includes(key) && !isVersionKey(key) && !written.has(key);
}

/** Why the policy cannot copy this sidecar's transferEnv; undefined when it can. */
function transferProblem(name: string, transferEnv: unknown, written: ReadonlySet<string>): string | undefined {
  if (transferEnv === undefined || transferEnv === null) return undefined;
  if (!Array.isArray(transferEnv) || !transferEnv.every(isObject)) return `container ${name} has a malformed transferEnv`;
  let names = 0;
  for (const t of transferEnv) {
    const from = t.sourceContainerNameFrom;
    if (from !== undefined && from !== null) {
      const fieldRef = objectOf(objectOf(from)?.fieldRef);
      const path = stringOf(fieldRef?.fieldPath) ?? '';
      if (fieldRef === undefined || !sourcePathTaken(path, written)) return `container ${name} transfers env from a container named by ${path === '' ? 'a malformed fieldRef' : path} (transferEnv)`;
    } else if (t.sourceContainerName !== undefined && typeof t.sourceContainerName !== 'string') return `container ${name} has a malformed transferEnv`;
    const envNames: unknown = t.envNames ?? [];
    if ((t.envName !== undefined && t.envName !== null && typeof t.envName !== 'string') || !Array.isArray(envNames)) return `container ${name} has a malformed transferEnv`;
    const all = [...(typeof t.envName === 'string' && t.envName !== '' ? [t.envName] : []), ...(envNames as unknown[])];
    if (!all.every((n) => typeof n === 'string' && ENV_NAME.test(n))) return `container ${name} transfers an env var whose name is not a C identifier`;
    names += all.length;
  }
  if (names > POLICY_SET_BOUNDS.transferredEnv) return `container ${name} transfers ${names} env vars, more than the policy's ${POLICY_SET_BOUNDS.transferredEnv}`;
  return undefined;
}

/** A qualified annotation key: the policy writes it into its record, whose separators it cannot hold. */
const ANNOTATION_KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
/** Keys only injection writes (pod-inject skips them in patchPodMetadata; the policy must never). */
const RESERVED_KEYS: readonly string[] = [...INJECTION_ANNOTATIONS, ANNOTATION_INJECT_MARK, ANNOTATION_POLICY_RECORD, ANNOTATION_WORKING_HOTUPGRADE];
/** A HotUpgrade container's version annotations: injection writes them after every set's patchPodMetadata. */
const isVersionKey = (key: string): boolean => key.startsWith(versionAnnotation('')) || key.startsWith(versionAltAnnotation(''));

/** Why the policy cannot apply these patchPodMetadata entries; undefined when it can. */
function patchProblem(entries: unknown): string | undefined {
  if (entries === undefined || entries === null) return undefined;
  if (!Array.isArray(entries) || !entries.every(isObject)) return 'its patchPodMetadata is malformed';
  const keys = new Set<string>();
  for (const entry of entries) {
    const policy = entry.patchPolicy;
    if (policy !== undefined && policy !== null && typeof policy !== 'string') return 'its patchPodMetadata is malformed';
    for (const [key, value] of Object.entries(objectOf(entry.annotations) ?? {})) {
      if (typeof value !== 'string' || !ANNOTATION_KEY.test(key) || RESERVED_KEYS.includes(key) || isVersionKey(key)) return `it patches pod annotation ${key}, which the policy may not write (patchPodMetadata)`;
      if (keys.has(key)) return `it patches pod annotation ${key} twice (patchPodMetadata)`;
      keys.add(key);
    }
  }
  return undefined;
}

/** Whether every item is an object named by a DNS name, no name twice (the policy's record lists them). */
function distinctNames(list: unknown): boolean {
  if (list !== undefined && list !== null && !Array.isArray(list)) return false;
  const names = arrayOf(list).map((item) => objectOf(item)?.name);
  if (names.some((n) => typeof n !== 'string' || !PLAIN_NAME.test(n))) return false;
  return new Set(names).size === names.length;
}

/** Which bound of {@link POLICY_SET_BOUNDS} the spec exceeds; undefined when within all. */
function sizeProblem(spec: JsonObject): string | undefined {
  const b = POLICY_SET_BOUNDS;
  const bytes = JSON.stringify(spec).length;
  if (bytes > b.specBytes) return `its spec is ${bytes} bytes, more than the policy's ${b.specBytes}`;
  const containers = [...arrayOf(spec.initContainers), ...arrayOf(spec.containers)];
  // A HotUpgrade sidecar is two pod containers, each costing what a plain one does.
  const podContainers = arrayOf(spec.initContainers).length + arrayOf(spec.containers).flatMap((c) => podContainerNames(c as SidecarContainer)).length;
  if (podContainers > b.containers) return `it makes ${podContainers} pod containers and init containers (a HotUpgrade sidecar two), more than the policy's ${b.containers}`;
  if (arrayOf(spec.volumes).length > b.volumes) return `it has more than ${b.volumes} volumes`;
  if (arrayOf(spec.imagePullSecrets).length > b.imagePullSecrets) return `it has more than ${b.imagePullSecrets} imagePullSecrets`;
  for (const c of containers) {
    for (const [key, list] of Object.entries(objectOf(c) ?? {})) {
      if (Array.isArray(list) && list.length > b.listItems) return `container ${String(objectOf(c)?.name)} has ${list.length} ${key}, more than the policy's ${b.listItems}`;
    }
  }
  return undefined;
}
