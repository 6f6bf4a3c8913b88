/**
 * The rollout fence: what pod-inject records on a pod at its creation so
 * that the pod policy (infra/k8s/rbac.yaml, `sidecarset-status-sync-pod-writes`)
 * can tell, from the pod alone, what the reconciler may later change in it:
 *
 * - {@link ANNOTATION_FENCE_CONTAINERS}: the containers pod-inject injected
 *   that a rollout may re-image (sidecar containers, both containers of a
 *   HotUpgrade pair, native-sidecar init containers), sorted, comma-separated;
 * - {@link ANNOTATION_FENCE_KEYS}: the annotation keys the injected sets'
 *   `patchPodMetadata` names, sorted, comma-separated.
 *
 * Plain comma-separated text because the policy's CEL can split a string
 * but not parse JSON; container names (DNS labels) and annotation keys
 * (qualified names) hold no comma. pod-inject always writes both on the pods
 * it injects, over whatever the pod's creator put there, and removes them
 * from the pods it does not inject (injection-bookkeeping.ts); the policy forbids the reconciler to
 * change them. A pod's creator could otherwise name its own application
 * container, as it can write `IS_INJECTED` on any container (which is why the
 * env var no longer decides). Why a record on the pod and not the sets as
 * the policy's params: docs/OPERATIONS.md, "What the pod policy cannot see".
 *
 * Both are this project's keys, not Kruise's: Kruise's own annotations keep
 * their keys and values.
 */
import { withoutAnnotations } from '../kube/annotations.ts';
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import type { Container, JsonObject, Pod } from '../kube/types.ts';
import type { SidecarSet } from './types.ts';

/** The containers a rollout may re-image in this pod. */
export const ANNOTATION_FENCE_CONTAINERS = 'serverless-sidecarset/rollout-containers';
/** The annotation keys a rollout may add or change in this pod (the sets' patchPodMetadata keys at injection). */
export const ANNOTATION_FENCE_KEYS = 'serverless-sidecarset/rollout-annotations';
/** Both, as pod-inject owns them. */
export const FENCE_ANNOTATIONS: readonly string[] = [ANNOTATION_FENCE_CONTAINERS, ANNOTATION_FENCE_KEYS];

/** What a pod's fence allows the reconciler; undefined for a pod without one (created before it, or never injected). */
export interface RolloutFence {
  readonly containers: ReadonlySet<string>;
  readonly keys: ReadonlySet<string>;
}

function sortedList(names: Iterable<string>): string {
  // Code-unit order, as Go's sort.Strings: the same text however the names came.
  return [...new Set(names)].filter((n) => n !== '').sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(',');
}

function splitList(value: string | undefined): Set<string> {
  return new Set((value ?? '').split(',').filter((n) => n !== ''));
}

/** The keys a set's `patchPodMetadata` names (any policy). */
export function patchPodMetadataKeys(set: SidecarSet): string[] {
  const keys: string[] = [];
  for (const entry of arrayOf<JsonObject>(set.spec?.patchPodMetadata)) {
    if (!isObject(entry)) continue;
    for (const key of Object.keys(objectOf(entry.annotations) ?? {})) keys.push(key);
  }
  return keys;
}

/**
 * Writes the fence of an injection into `annotations` (over anything there):
 * `containers` and `initContainers` are what it placed into the pod (an init
 * container only when a native sidecar, `restartPolicy: Always`: a plain one
 * ran once and no rollout touches it), `sets` the sets it injected (a pinned
 * revision and its stored set both: the keys of either may be written).
 * `excluded` are keys no set may write (injection's own bookkeeping): never listed.
 */
export function writeRolloutFence(
  annotations: Record<string, string>,
  containers: readonly Container[],
  initContainers: readonly Container[],
  sets: readonly SidecarSet[],
  excluded: readonly string[],
): void {
  const names = [...containers.map((c) => c.name), ...initContainers.filter((c) => c.restartPolicy === 'Always').map((c) => c.name)];
  const keys = sets.flatMap(patchPodMetadataKeys).filter((k) => !excluded.includes(k));
  annotations[ANNOTATION_FENCE_CONTAINERS] = sortedList(names);
  annotations[ANNOTATION_FENCE_KEYS] = sortedList(keys);
}

/** The pod's fence as pod-inject recorded it; undefined when it carries none. */
export function rolloutFenceOf(pod: Pod): RolloutFence | undefined {
  const annotations = objectOf(objectOf(pod.metadata)?.annotations);
  const containers = stringOf(annotations?.[ANNOTATION_FENCE_CONTAINERS]);
  if (containers === undefined) return undefined;
  return { containers: splitList(containers), keys: splitList(stringOf(annotations?.[ANNOTATION_FENCE_KEYS])) };
}

/** The fence keys a pod carries (a pod without them was never fenced). */
export function fenceKeysOn(pod: Pod): string[] {
  const annotations = objectOf(objectOf(pod.metadata)?.annotations);
  return annotations === undefined ? [] : FENCE_ANNOTATIONS.filter((k) => Object.hasOwn(annotations, k));
}

/** The pod without its fence annotations (the pod itself when it carries none). */
export function withoutFence(pod: Pod): Pod {
  return withoutAnnotations(pod, FENCE_ANNOTATIONS);
}
