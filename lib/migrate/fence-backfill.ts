/**
 * The rollout fence (lib/sidecarset/rollout-fence.ts) for a pod injected
 * before pod-inject wrote it, by an earlier version or by Kruise: what
 * `npm run -s migrate -- fence` writes on it, as pod-inject would have
 * written it at the pod's creation. Pure: the pod and the stored sets in,
 * a decision out (functions/migrate/fence.ts reads and writes).
 *
 * The containers are the names the pod's `kruise.io/sidecarset-hash`
 * entries list in `sidecarList` (the HotUpgrade pair `x-1`, `x-2` for a hot
 * sidecar `x`), each required in the pod; the keys are the named sets'
 * current `patchPodMetadata` keys. Every listed name must also be a sidecar
 * the named set declares: the hash annotation is text on the pod that its
 * creator could have written, and the fence is what lets the reconciler's
 * identity re-image a container, so an application container listed there
 * is never fenced. A pod this cannot vouch for is skipped with the reason,
 * never fenced in part: a fence is written once and never changed.
 */
import { arrayOf, isObject, objectOf } from '../kube/json.ts';
import type { Container, Pod } from '../kube/types.ts';
import { hotUpgradeContainerNames } from '../sidecarset/hot-upgrade.ts';
import { isHotSplit, isNativeSidecar, namedSidecars } from '../sidecarset/injection-facts.ts';
import { INJECTION_ANNOTATIONS, InvalidHashAnnotationError, parseHashAnnotation } from '../sidecarset/pod-annotations.ts';
import { podAnnotation } from '../sidecarset/pod-state.ts';
import { ANNOTATION_FENCE_CONTAINERS, ANNOTATION_FENCE_KEYS, fenceKeysOn, writeRolloutFence } from '../sidecarset/rollout-fence.ts';
import { ANNOTATION_HASH, type SidecarContainer, type SidecarSet } from '../sidecarset/types.ts';

/** What the tool does with one pod. */
export type FenceDecision =
  /** Not injected (no `kruise.io/sidecarset-hash`): not the tool's, not reported. */
  | { readonly kind: 'not-injected' }
  /** Carries a fence (or part of one) already: left as it is. */
  | { readonly kind: 'fenced' }
  /** Left unfenced, and why. */
  | { readonly kind: 'skip'; readonly reason: string }
  /** The two fence annotations to write, as pod-inject writes them. */
  | ({ readonly kind: 'fence' } & FenceValues);

/** The two fence annotations' values. */
export interface FenceValues {
  /** `serverless-sidecarset/rollout-containers`. */
  readonly containers: string;
  /** `serverless-sidecarset/rollout-annotations`. */
  readonly keys: string;
}

/** A sidecar a set declares where pod-inject places it: `spec.containers`, or a native sidecar of `spec.initContainers`. */
interface Declared {
  readonly sidecar: SidecarContainer;
  readonly init: boolean;
}

function declaredSidecar(set: SidecarSet, name: string): Declared | undefined {
  const sidecar = namedSidecars(set.spec?.containers).find((c) => c.name === name);
  if (sidecar !== undefined) return { sidecar, init: false };
  // sidecarList names native init sidecars only (Kruise, and injection-facts.ts): a plain init container ran once.
  const init = namedSidecars(set.spec?.initContainers).find((c) => c.name === name && isNativeSidecar(c));
  return init === undefined ? undefined : { sidecar: init, init: true };
}

function podList(pod: Pod, key: 'containers' | 'initContainers'): Container[] {
  return arrayOf(objectOf(pod.spec)?.[key]).filter((c): c is Container => isObject(c) && typeof c.name === 'string');
}

/**
 * What `migrate fence` does with `pod`, given every stored SidecarSet by
 * name: the fence pod-inject would have written at its creation, or why
 * it is left alone.
 */
export function fenceDecision(pod: Pod, sets: ReadonlyMap<string, SidecarSet>): FenceDecision {
  const hashText = podAnnotation(pod, ANNOTATION_HASH);
  if (hashText === undefined) return { kind: 'not-injected' };
  if (fenceKeysOn(pod).length > 0) return { kind: 'fenced' };
  const deletion: unknown = objectOf(pod.metadata)?.deletionTimestamp;
  if (deletion !== undefined && deletion !== null) return { kind: 'skip', reason: 'being deleted' };

  let entries;
  try {
    entries = parseHashAnnotation(ANNOTATION_HASH, hashText);
  } catch (error) {
    if (error instanceof InvalidHashAnnotationError) return { kind: 'skip', reason: error.message };
    throw error;
  }
  if (entries.size === 0) return { kind: 'skip', reason: `its ${ANNOTATION_HASH} names no SidecarSet` };

  const containers = podList(pod, 'containers');
  const initContainers = podList(pod, 'initContainers');
  const fencedContainers: Container[] = [];
  const fencedInit: Container[] = [];
  const named: SidecarSet[] = [];
  for (const [setName, entry] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const set = sets.get(setName);
    if (set === undefined) return { kind: 'skip', reason: `SidecarSet ${setName}, which its ${ANNOTATION_HASH} names, does not exist` };
    if (entry.sidecarList === null) return { kind: 'skip', reason: `its ${ANNOTATION_HASH} entry for ${setName} has no sidecarList (the old form)` };
    named.push(set);
    for (const name of entry.sidecarList) {
      const declared = declaredSidecar(set, name);
      if (declared === undefined) return { kind: 'skip', reason: `sidecarList of ${setName} names ${name}, which SidecarSet ${setName} does not declare as a sidecar` };
      const names = isHotSplit(declared.sidecar, declared.init) ? hotUpgradeContainerNames(name) : [name];
      // pod-inject places a native sidecar among the init containers with restartPolicy Always, every other in containers.
      const from = declared.init ? initContainers.filter((c) => c.restartPolicy === 'Always') : containers;
      const missing = names.filter((n) => !from.some((c) => c.name === n));
      if (missing.length > 0) return { kind: 'skip', reason: `sidecarList of ${setName} names ${name}, but the pod has no ${declared.init ? 'native-sidecar init container' : 'container'} ${missing.join(', ')}` };
      for (const n of names) (declared.init ? fencedInit : fencedContainers).push(from.find((c) => c.name === n) as Container);
    }
  }
  const written: Record<string, string> = {};
  writeRolloutFence(written, fencedContainers, fencedInit, named, INJECTION_ANNOTATIONS);
  return { kind: 'fence', containers: written[ANNOTATION_FENCE_CONTAINERS] ?? '', keys: written[ANNOTATION_FENCE_KEYS] ?? '' };
}
