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
import { isHotUpgrade } from './pod-state.ts';
import { sharesVolumeDevices } from './volume-devices.ts';
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
  containers: 8,
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
  const excluded = excludedFeature(spec) ?? sizeProblem(spec);
  return excluded === undefined ? { path: 'policy', reason: 'the policy computes everything it injects' } : webhook(excluded);
}

/** The first feature of the spec the policy does not compute; undefined when none. */
function excludedFeature(spec: JsonObject): string | undefined {
  if (arrayOf(spec.initContainers).length > 0) return 'it injects init containers';
  if (arrayOf(spec.patchPodMetadata).length > 0) return 'it patches pod metadata (patchPodMetadata)';
  const strategy = objectOf(spec.injectionStrategy);
  if (strategy?.revision !== undefined && strategy.revision !== null) return 'it pins a revision (injectionStrategy.revision)';
  if (!isObject(spec.selector)) return 'it has no selector';
  const containers = arrayOf(spec.containers);
  for (const c of containers) {
    const problem = containerProblem(c);
    if (problem !== undefined) return problem;
  }
  const names = containers.map((c) => stringOf(objectOf(c)?.name) ?? '');
  if (new Set(names).size !== names.length) return 'two of its containers share a name';
  // pod-inject may sort sidecars by name (SORT_SIDECAR_CONTAINERS_BY_NAME): a set already in that order is placed alike either way.
  if (names.some((name, i) => i > 0 && (names[i - 1] as string) > name)) return 'its containers are not in name order (pod-inject may sort them)';
  if (!distinctNames(spec.volumes, false)) return 'its volumes are not distinctly named';
  if (!distinctNames(spec.imagePullSecrets, true)) return 'its imagePullSecrets are not distinctly named';
  return undefined;
}

/** Why the policy cannot inject this sidecar; undefined when it can. */
function containerProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'a container is not an object';
  // Read as JSON: a stored set is not validated again, so any member may be null or of another type.
  const c: JsonObject = value;
  const name = stringOf(c.name) ?? '';
  if (!PLAIN_NAME.test(name) || name.includes('.')) return 'a container has no DNS label name';
  if (isHotUpgrade(c as SidecarContainer)) return `container ${name} is a HotUpgrade sidecar`;
  if (c.resourcesPolicy !== undefined && c.resourcesPolicy !== null) return `container ${name} has a resourcesPolicy`;
  if (sharesVolumeDevices(c as SidecarContainer)) return `container ${name} shares volume devices (shareVolumeDevicePolicy)`;
  if (c.shareVolumeDevicePolicy !== undefined && c.shareVolumeDevicePolicy !== null && objectOf(c.shareVolumeDevicePolicy)?.type !== 'disabled') {
    return `container ${name} has a shareVolumeDevicePolicy`;
  }
  if (arrayOf(c.transferEnv).length > 0) return `container ${name} transfers env (transferEnv)`;
  if (c.restartPolicy !== undefined && c.restartPolicy !== null) return `container ${name} has a restartPolicy`;
  const policy = c.podInjectPolicy;
  if (policy !== 'BeforeAppContainer' && policy !== 'AfterAppContainer') return `container ${name} has no podInjectPolicy`;
  for (const key of ['env', 'volumeMounts', 'volumeDevices']) {
    const list: unknown = c[key];
    if (list !== undefined && list !== null && !(Array.isArray(list) && list.every(isObject))) return `container ${name} has a malformed ${key}`;
  }
  return undefined;
}

/** Whether every item is an object with a name, no name twice (a pull secret's name may not be empty). */
function distinctNames(list: unknown, nonEmpty: boolean): boolean {
  if (list !== undefined && list !== null && !Array.isArray(list)) return false;
  const names = arrayOf(list).map((item) => objectOf(item)?.name);
  if (names.some((n) => typeof n !== 'string' || (nonEmpty && n === ''))) return false;
  return new Set(names).size === names.length;
}

/** Which bound of {@link POLICY_SET_BOUNDS} the spec exceeds; undefined when within all. */
function sizeProblem(spec: JsonObject): string | undefined {
  const b = POLICY_SET_BOUNDS;
  const bytes = JSON.stringify(spec).length;
  if (bytes > b.specBytes) return `its spec is ${bytes} bytes, more than the policy's ${b.specBytes}`;
  const containers = arrayOf(spec.containers);
  if (containers.length > b.containers) return `it has ${containers.length} containers, more than the policy's ${b.containers}`;
  if (arrayOf(spec.volumes).length > b.volumes) return `it has more than ${b.volumes} volumes`;
  if (arrayOf(spec.imagePullSecrets).length > b.imagePullSecrets) return `it has more than ${b.imagePullSecrets} imagePullSecrets`;
  for (const c of containers) {
    for (const [key, list] of Object.entries(objectOf(c) ?? {})) {
      if (Array.isArray(list) && list.length > b.listItems) return `container ${String(objectOf(c)?.name)} has ${list.length} ${key}, more than the policy's ${b.listItems}`;
    }
  }
  return undefined;
}
