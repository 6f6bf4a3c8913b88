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
 * current `patchPodMetadata` keys. The hash annotation is text on the pod
 * that its creator (or a stolen reconciler credential, before the pod
 * policy held bookkeeping to fenced pods) could have written, and the fence
 * is what lets the reconciler's identity re-image a container and write a
 * set's keys, so nothing is fenced that pod-inject would not have injected
 * today: the pod is in a namespace pod-inject serves (its
 * registered namespaceSelector and objectSelector); each named set selects
 * the pod (selector, namespace, namespaceSelector); each listed name is a
 * sidecar the set declares, and its container runs an image the set or one
 * of its ControllerRevisions declares for it (or the HotUpgrade empty
 * image); a set whose sidecarList is empty fences nothing, not even its
 * keys. A pod this cannot vouch for is skipped with the reason, never
 * fenced in part: a fence is written once and never changed.
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import type { Container, Pod } from '../kube/types.ts';
import type { PodWebhookSelectors } from '../ports.ts';
import { webhookSeesPod } from '../status-sync/repair-missing.ts';
import { labelsOf, selectionMiss, UnknownNamespaceError, type NamespaceLabels } from '../sidecarset/match.ts';
import { LABEL_SIDECARSET_NAME, type ControllerRevision } from '../sidecarset/revisions.ts';
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

/** What a pod is judged against: the stored sets and what decides whether pod-inject would inject them today. */
export interface FenceContext {
  /** Every stored SidecarSet, by name. */
  readonly sets: ReadonlyMap<string, SidecarSet>;
  /** Every namespace's labels. */
  readonly namespaceLabels: NamespaceLabels;
  /** pod-inject's selectors as the cluster registers them; undefined when it is not registered. */
  readonly webhook: PodWebhookSelectors | undefined;
  /** The images each set or one of its ControllerRevisions declares, by set name, then sidecar name ({@link declaredImages}). */
  readonly declaredImages: ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>>;
}

/** The images a set spec (or a revision's data spec) declares per sidecar name, the HotUpgrade empty image included. */
function addDeclaredImages(spec: unknown, into: Map<string, Set<string>>): void {
  for (const list of [objectOf(spec)?.containers, objectOf(spec)?.initContainers]) {
    for (const c of arrayOf(list)) {
      const name = isObject(c) ? stringOf(c.name) : undefined;
      if (name === undefined || !isObject(c)) continue;
      const images = into.get(name) ?? new Set<string>();
      for (const image of [stringOf(c.image), stringOf(objectOf(c.upgradeStrategy)?.hotUpgradeEmptyImage)]) if (image !== undefined && image !== '') images.add(image);
      into.set(name, images);
    }
  }
}

/**
 * The images each set's spec or one of its ControllerRevisions (by their
 * `kruise.io/sidecarset-name` label) declares, by set name, then by sidecar
 * name: worked out once for a run, not per pod.
 */
export function declaredImages(sets: Iterable<readonly [string, SidecarSet]>, revisions: readonly ControllerRevision[]): Map<string, Map<string, Set<string>>> {
  const out = new Map<string, Map<string, Set<string>>>();
  const of = (name: string): Map<string, Set<string>> => {
    const byName = out.get(name) ?? new Map<string, Set<string>>();
    out.set(name, byName);
    return byName;
  };
  for (const [name, set] of sets) addDeclaredImages(set.spec, of(name));
  for (const revision of revisions) {
    const name = stringOf(objectOf(objectOf(revision.metadata)?.labels)?.[LABEL_SIDECARSET_NAME]);
    if (name !== undefined) addDeclaredImages(objectOf(revision.data)?.spec, of(name));
  }
  return out;
}

/** Why pod-inject would not inject `set` into the pod today, or undefined when it would. */
function notSelected(set: SidecarSet, setName: string, pod: Pod, namespace: string, namespaceLabels: NamespaceLabels): string | undefined {
  try {
    const miss = selectionMiss(set, labelsOf(pod), namespace, namespaceLabels);
    return miss === undefined ? undefined : `SidecarSet ${setName}, which its ${ANNOTATION_HASH} names, does not select the pod (its ${miss.kind === 'no-selector' ? 'selector is missing' : miss.kind})`;
  } catch (error) {
    if (error instanceof UnknownNamespaceError) return `namespace ${namespace} is unknown, but SidecarSet ${setName} selects by namespaceSelector`;
    throw error;
  }
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

/** Why the pod itself is not one pod-inject injects into today, or undefined. */
function notServed(pod: Pod, namespace: string, context: FenceContext): string | undefined {
  if (context.webhook === undefined) return 'the project\'s pod-inject webhook is not registered (apply the manifests first): nothing is fenced that pod-inject would not inject';
  if (!webhookSeesPod(context.webhook, namespace, labelsOf(pod), context.namespaceLabels)) return `pod-inject is never called for pods of namespace ${namespace} (its registered namespaceSelector or objectSelector leaves the pod out)`;
  return undefined;
}

/** The containers of `names` in `from` whose image neither the set nor its revisions declare for `sidecar`. */
function foreignImages(setName: string, sidecar: string, from: readonly Container[], names: readonly string[], context: FenceContext): string[] {
  const images = context.declaredImages.get(setName)?.get(sidecar);
  return names.filter((n) => images?.has(from.find((c) => c.name === n)?.image ?? '') !== true);
}

/** The pod's containers of sidecar `name` of `setName` (both of a HotUpgrade pair), or why they cannot be fenced. */
function sidecarContainers(
  set: SidecarSet,
  setName: string,
  name: string,
  pod: { containers: Container[]; initContainers: Container[] },
  context: FenceContext,
): { init: boolean; found: Container[] } | { reason: string } {
  const declared = declaredSidecar(set, name);
  if (declared === undefined) return { reason: `sidecarList of ${setName} names ${name}, which SidecarSet ${setName} does not declare as a sidecar` };
  const names = isHotSplit(declared.sidecar, declared.init) ? hotUpgradeContainerNames(name) : [name];
  // pod-inject places a native sidecar among the init containers with restartPolicy Always, every other in containers.
  const from = declared.init ? pod.initContainers.filter((c) => c.restartPolicy === 'Always') : pod.containers;
  const missing = names.filter((n) => !from.some((c) => c.name === n));
  if (missing.length > 0) return { reason: `sidecarList of ${setName} names ${name}, but the pod has no ${declared.init ? 'native-sidecar init container' : 'container'} ${missing.join(', ')}` };
  const foreign = foreignImages(setName, name, from, names, context);
  if (foreign.length > 0) return { reason: `container ${foreign.join(', ')} runs an image neither SidecarSet ${setName} nor its revisions declare for ${name}` };
  return { init: declared.init, found: names.map((n) => from.find((c) => c.name === n) as Container) };
}

/** The sets the pod's hash annotation names, or why it is skipped. */
function hashEntries(hashText: string): ReturnType<typeof parseHashAnnotation> | FenceDecision {
  let entries;
  try {
    entries = parseHashAnnotation(ANNOTATION_HASH, hashText);
  } catch (error) {
    if (error instanceof InvalidHashAnnotationError) return { kind: 'skip', reason: error.message };
    throw error;
  }
  return entries.size === 0 ? { kind: 'skip', reason: `its ${ANNOTATION_HASH} names no SidecarSet` } : entries;
}

/**
 * What `migrate fence` does with `pod`, given every stored SidecarSet by
 * name and what pod-inject would decide today: the fence pod-inject would
 * have written at its creation, or why it is left alone.
 */
export function fenceDecision(pod: Pod, context: FenceContext): FenceDecision {
  const hashText = podAnnotation(pod, ANNOTATION_HASH);
  if (hashText === undefined) return { kind: 'not-injected' };
  if (fenceKeysOn(pod).length > 0) return { kind: 'fenced' };
  const deletion: unknown = objectOf(pod.metadata)?.deletionTimestamp;
  if (deletion !== undefined && deletion !== null) return { kind: 'skip', reason: 'being deleted' };

  const entries = hashEntries(hashText);
  if ('kind' in entries) return entries;
  const namespace = stringOf(objectOf(pod.metadata)?.namespace) ?? '';
  const unserved = notServed(pod, namespace, context);
  if (unserved !== undefined) return { kind: 'skip', reason: unserved };

  const containers = podList(pod, 'containers');
  const initContainers = podList(pod, 'initContainers');
  const fencedContainers: Container[] = [];
  const fencedInit: Container[] = [];
  const named: SidecarSet[] = [];
  for (const [setName, entry] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const set = context.sets.get(setName);
    if (set === undefined) return { kind: 'skip', reason: `SidecarSet ${setName}, which its ${ANNOTATION_HASH} names, does not exist` };
    if (entry.sidecarList === null) return { kind: 'skip', reason: `its ${ANNOTATION_HASH} entry for ${setName} has no sidecarList (the old form)` };
    const unselected = notSelected(set, setName, pod, namespace, context.namespaceLabels);
    if (unselected !== undefined) return { kind: 'skip', reason: unselected };
    // An empty sidecarList records no sidecar of the set: it vouches for nothing, not even the set's keys.
    if (entry.sidecarList.length > 0) named.push(set);
    for (const name of entry.sidecarList) {
      const sidecar = sidecarContainers(set, setName, name, { containers, initContainers }, context);
      if ('reason' in sidecar) return { kind: 'skip', reason: sidecar.reason };
      (sidecar.init ? fencedInit : fencedContainers).push(...sidecar.found);
    }
  }
  if (named.length === 0) return { kind: 'skip', reason: `its ${ANNOTATION_HASH} lists no sidecar (every sidecarList is empty): nothing to fence` };
  const written: Record<string, string> = {};
  writeRolloutFence(written, fencedContainers, fencedInit, named, INJECTION_ANNOTATIONS);
  return { kind: 'fence', containers: written[ANNOTATION_FENCE_CONTAINERS] ?? '', keys: written[ANNOTATION_FENCE_KEYS] ?? '' };
}
