/**
 * Which revision of a SidecarSet the pod webhook injects (rollout.md §2.3,
 * §2.4, Kruise's getSuitableRevisionSidecarSet on CREATE), pure: the caller
 * lists the revisions and supplies the random draw.
 */
import { root } from '../kube/field-errors.ts';
import { selectorMatches, validateLabelSelector } from '../kube/label-selector.ts';
import { cloneJson, isObject, objectOf, stringMapOf, stringOf } from '../kube/json.ts';
import { sidecarSetHashes } from './hash.ts';
import { sidecarSetName } from './match.ts';
import { ANNOTATION_HASH, ANNOTATION_HASH_WITHOUT_IMAGE, type SidecarSet } from './types.ts';
import { LABEL_CUSTOM_VERSION, LABEL_SIDECARSET_NAME, setHistory, type ControllerRevision } from './revisions.ts';

/** The pinned revision cannot be used; the pod CREATE must not be admitted with a guess. */
export class RevisionUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RevisionUnavailableError';
  }
}

/**
 * The revision `injectionStrategy.revision` pins (§2.3): by `revisionName`
 * (any revision of that name; the owner is not checked), else the
 * `customVersion` revision of the set with the highest `revision`.
 * Undefined when nothing is pinned.
 * @throws RevisionUnavailableError when the pinned revision is not in `revisions`.
 */
export function pinnedRevision(set: SidecarSet, revisions: readonly ControllerRevision[]): ControllerRevision | undefined {
  const pin = objectOf(set.spec?.injectionStrategy?.revision);
  const byName = stringOf(pin?.revisionName);
  const custom = stringOf(pin?.customVersion);
  if (byName !== undefined) {
    const found = revisions.find((r) => r.metadata?.name === byName);
    if (found === undefined) throw new RevisionUnavailableError(`SidecarSet ${sidecarSetName(set)} pins ControllerRevision ${byName}, which does not exist`);
    return found;
  }
  if (custom !== undefined) {
    const name = sidecarSetName(set);
    const labelled = revisions.filter(
      (r) => stringMapOf(r.metadata?.labels)[LABEL_SIDECARSET_NAME] === name && stringMapOf(r.metadata?.labels)[LABEL_CUSTOM_VERSION] === custom,
    );
    // Sorted like the history, but without the owner filter: Kruise lists by labels only here.
    const newest = setHistory({ ...set, metadata: { ...set.metadata, uid: undefined } }, labelled.map(withoutOwner)).at(-1);
    if (newest === undefined) throw new RevisionUnavailableError(`SidecarSet ${name} pins custom version ${custom}, but no ControllerRevision carries it`);
    return revisions.find((r) => r.metadata?.name === newest.metadata?.name) ?? newest;
  }
  return undefined;
}

function withoutOwner(r: ControllerRevision): ControllerRevision {
  return { ...r, metadata: { ...r.metadata, ownerReferences: [] } };
}

/**
 * The set as the revision recorded it (§2.3): the revision's `$patch:
 * replace` spec (only its five recorded fields; selector and strategies
 * empty), the set's metadata with the revision's hash annotations
 * (recomputed when absent), and `status.latestRevision` = the revision's name.
 */
export function restoreRevision(set: SidecarSet, revision: ControllerRevision): SidecarSet {
  const data = objectOf(objectOf(revision.data)?.spec) ?? {};
  const spec: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) if (k !== '$patch' && v !== null) spec[k] = cloneJson(v);
  const restored: SidecarSet = { ...set, metadata: cloneJson(set.metadata ?? {}), spec, status: { ...set.status, latestRevision: stringOf(revision.metadata?.name) ?? '' } };
  const recorded = stringMapOf(revision.metadata?.annotations);
  const computed = recorded[ANNOTATION_HASH] === undefined || recorded[ANNOTATION_HASH_WITHOUT_IMAGE] === undefined ? sidecarSetHashes(restored) : undefined;
  const meta = restored.metadata as NonNullable<SidecarSet['metadata']>;
  meta.annotations = {
    ...stringMapOf(meta.annotations),
    [ANNOTATION_HASH]: recorded[ANNOTATION_HASH] ?? (computed?.hash as string),
    [ANNOTATION_HASH_WITHOUT_IMAGE]: recorded[ANNOTATION_HASH_WITHOUT_IMAGE] ?? (computed?.withoutImage as string),
  };
  return restored;
}

/** The outcome of {@link revisionForInjection}. */
export type InjectionChoice = { kind: 'current' } | { kind: 'pinned'; set: SidecarSet; revision: ControllerRevision };

/**
 * getSuitableRevisionSidecarSet (§2.4), for a set already known to apply to
 * the pod: nothing pinned gives the current set; otherwise the pinned
 * revision when the rollout is paused, under policy `Always` (or empty), or
 * under `Partial` for a pod outside `updateStrategy.selector`; under
 * `Partial` otherwise, a percent partition `p` picks the pinned revision
 * when `draw <= p/100` (`draw` in [0, 1), Go's rand.Float64) and an int or
 * no partition picks the current set.
 * @throws RevisionUnavailableError when the pinned revision is missing, the
 * selector is invalid or the percent malformed (Kruise fails the CREATE).
 */
export function revisionForInjection(
  set: SidecarSet,
  podLabels: Readonly<Record<string, string>>,
  revisions: readonly ControllerRevision[],
  draw: number,
): InjectionChoice {
  const revision = pinnedRevision(set, revisions);
  if (revision === undefined) return { kind: 'current' };
  const pinned: InjectionChoice = { kind: 'pinned', set: restoreRevision(set, revision), revision };
  const strategy = objectOf(set.spec?.updateStrategy) ?? {};
  if (strategy.paused === true) return pinned;
  const policy = stringOf(objectOf(set.spec?.injectionStrategy?.revision)?.policy) ?? '';
  if (policy !== 'Partial') return pinned;
  const selector = strategy.selector;
  if (selector !== undefined && selector !== null) {
    if (!isObject(selector) || validateLabelSelector(selector, root).length > 0) throw new RevisionUnavailableError(`SidecarSet ${sidecarSetName(set)} has an invalid updateStrategy.selector`);
    if (!selectorMatches(selector, podLabels)) return pinned;
  }
  const partition = strategy.partition;
  if (typeof partition !== 'string') return { kind: 'current' };
  // Kruise: strconv.Atoi(strings.TrimSuffix(partition, "%")).
  const m = /^([+-]?\d+)%?$/.exec(partition);
  if (m === null) throw new RevisionUnavailableError(`SidecarSet ${sidecarSetName(set)} has a malformed updateStrategy.partition ${JSON.stringify(partition)}`);
  const percent = Number.parseInt(m[1] as string, 10);
  return draw <= percent / 100 ? pinned : { kind: 'current' };
}
