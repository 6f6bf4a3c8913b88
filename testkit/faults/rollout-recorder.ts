/**
 * Every stored version of every pod of one rollout's namespace, seen through
 * a watch as the admin (control-plane/pod-watch.ts), each checked the moment
 * it arrives against the rollout's safety rules:
 *
 * - at no stored moment are more than the budget of UPDATED pods unavailable
 *   (updated: the hash the pod records for the set is the set's current
 *   hash; unavailable: not Kruise-ready or not consistent, rollout.md §1.4,
 *   computed with lib/sidecarset/pod-state.ts);
 * - each pod is written by the rollout at most once for the set's version:
 *   one change of its sidecar image, one change of the set's entry in its
 *   hash annotation (a second write of the same batch would stamp a new
 *   updateTimestamp there); for a HotUpgrade sidecar, one change of each of
 *   its two containers' images (the upgrade, then the flip);
 * - HotUpgrade: the working container (by the pod's annotation) never holds
 *   the empty image, and one of the two containers always runs a real image
 *   ready (its status image is its spec image, not the empty one).
 *
 * A watch rather than polling: a pod unavailable for a moment between two
 * polls would go unseen. Watches resume from the last version seen across
 * API server restarts (lists and watches read from etcd never expire here);
 * a relist means versions may have been missed, which is recorded as a gap
 * and fails the scenario rather than pass on incomplete evidence.
 */
import type { Pod } from '../../lib/kube/types.ts';
import { hotContainersOf, isPodReady, isPodSidecarUpdated, isPodStateConsistent, podAnnotation, podContainers, podNativeSidecars } from '../../lib/sidecarset/pod-state.ts';
import { hotUpgradeContainerNames } from '../../lib/sidecarset/hot-upgrade.ts';
import { sidecarSetName } from '../../lib/sidecarset/match.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import type { ControlPlane } from '../../control-plane/harness.ts';
import { watchPods } from '../../control-plane/pod-watch.ts';
import { listPods, until } from './rollout-fixture.ts';

const ANNOTATION_HASH = 'kruise.io/sidecarset-hash';

export interface RolloutRecorder {
  /** Pod versions seen (added, modified, deleted). */
  readonly versions: () => number;
  /** Broken safety rules, each naming the pod, the version and the numbers; empty in a passing run. */
  readonly violations: readonly string[];
  /** Why versions may have been missed; empty when the record is complete. */
  readonly gaps: readonly string[];
  /** The most updated pods seen unavailable at one stored moment. */
  maxUnavailableSeen(): number;
  /** Pods now recorded as updated to the set's current hash. */
  updatedNow(): number;
  /** Updated pods now unavailable. */
  unavailableNow(): readonly string[];
  /** Pods whose sidecar image the rollout changed, and pods it changed more than once (per container for a hot sidecar). */
  imageChanges(): { pods: number; repeated: number };
  /** HotUpgrade: pods whose old container was flipped to the empty image. */
  flips(): number;
  /** HotUpgrade: pods now updated whose old container was not flipped yet (between the two writes). */
  swappingNow(): number;
  /** Pods deleted while recording. */
  deleted(): readonly string[];
  /** Per updated pod (by name, one namespace), when (performance.now()) it was first seen updated, and first seen updated and available again. */
  timeline(): { pod: string; updatedAt: number; availableAt: number | undefined }[];
  /** Waits until every pod as listed now has been seen at that version (and every pod not listed as deleted). */
  caughtUp(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

interface PodRecord {
  resourceVersion: string;
  /** Per tracked container (the sidecar, or a hot sidecar's two), its spec image and how often it changed. */
  images: Record<string, string>;
  imageChanges: Record<string, number>;
  hashEntry: string;
  hashChanges: number;
  flipped: boolean;
}

/** A HotUpgrade sidecar's containers and placeholder, when the rollout is a hot one. */
export interface HotSidecar {
  emptyImage: string;
}

const keyOf = (pod: Pod): string => pod.metadata?.name ?? '';

/** Whether version `seen` is `wanted` or newer (resourceVersions are etcd revisions here). */
function atLeast(seen: string | undefined, wanted: string): boolean {
  return seen !== undefined && /^\d+$/.test(seen) && /^\d+$/.test(wanted) && BigInt(seen) >= BigInt(wanted);
}

/** The spec images of the tracked containers: a container sidecar's, or a native sidecar's among the init containers. */
function imagesOf(pod: Pod, containers: readonly string[]): Record<string, string> {
  const specs = new Map([...podContainers(pod), ...podNativeSidecars(pod)].map((c) => [c.name, c.image ?? '']));
  return Object.fromEntries(containers.map((name) => [name, specs.get(name) ?? '']));
}

/** What is wrong with a hot pod's pair at this version, if anything. */
function hotProblem(pod: Pod, sidecar: string, hot: HotSidecar): string | undefined {
  const { working } = hotContainersOf(pod, sidecar);
  const specs = new Map(podContainers(pod).map((c) => [c.name, c.image ?? '']));
  if (specs.get(working) === hot.emptyImage) return `the working container ${working} holds the empty image`;
  const pair: readonly string[] = hotUpgradeContainerNames(sidecar);
  const statuses = (pod.status?.containerStatuses ?? []).map((s) => ({ name: String(s.name), image: typeof s.image === 'string' ? s.image : '', ready: s.ready === true })).filter((s) => pair.includes(s.name));
  const serving = statuses.some((s) => s.ready && s.image === specs.get(s.name) && s.image !== hot.emptyImage);
  return serving ? undefined : `neither ${pair.join(' nor ')} runs a real image ready (${statuses.map((s) => `${s.name}=${s.image}${s.ready ? ' ready' : ''}`).join(', ')})`;
}

/** The set's entry in the pod's hash annotation, as text: a rewrite changes its updateTimestamp. */
function hashEntry(pod: Pod, setName: string): string {
  const raw = podAnnotation(pod, ANNOTATION_HASH);
  if (raw === undefined) return '';
  try {
    return JSON.stringify((JSON.parse(raw) as Record<string, unknown>)[setName] ?? null);
  } catch {
    return raw;
  }
}

/**
 * Starts recording the pods of `namespace` against `set` (as stored after
 * the update under test), with `budget` the most updated pods that may be
 * unavailable at once. Resolves once the first list has been seen.
 */
export async function recordRollout(cp: ControlPlane, namespace: string, set: SidecarSet, budget: number, sidecar: string, hot?: HotSidecar): Promise<RolloutRecorder> {
  const setName = sidecarSetName(set);
  const tracked = hot === undefined ? [sidecar] : hotUpgradeContainerNames(sidecar);
  const pods = new Map<string, PodRecord>();
  const unavailable = new Set<string>();
  const deleted: string[] = [];
  const violations: string[] = [];
  const gaps: string[] = [];
  let versions = 0;
  let maxSeen = 0;
  let updated = new Set<string>();
  let listedOnce = false;
  const updatedAt = new Map<string, number>();
  const availableAt = new Map<string, number>();

  const observe = (pod: Pod, initial: boolean): void => {
    const key = keyOf(pod);
    const rv = pod.metadata?.resourceVersion ?? '';
    const images = imagesOf(pod, tracked);
    const entry = hashEntry(pod, setName);
    const previous = pods.get(key);
    const record: PodRecord =
      previous === undefined
        ? { resourceVersion: rv, images, imageChanges: Object.fromEntries(tracked.map((c) => [c, 0])), hashEntry: entry, hashChanges: 0, flipped: false }
        : { ...previous, resourceVersion: rv, imageChanges: { ...previous.imageChanges } };
    if (previous !== undefined && !initial) {
      for (const c of tracked) {
        if (images[c] === previous.images[c]) continue;
        record.imageChanges[c] = (record.imageChanges[c] ?? 0) + 1;
        if (hot !== undefined && images[c] === hot.emptyImage) record.flipped = true;
      }
      if (entry !== previous.hashEntry) record.hashChanges++;
      record.images = images;
      record.hashEntry = entry;
      const most = Math.max(...Object.values(record.imageChanges));
      if (most > 1 || record.hashChanges > 1) {
        violations.push(
          `pod ${namespace}/${key} was written by the rollout again at resourceVersion ${rv}: its sidecar image changed ${most} times ` +
            `(now ${JSON.stringify(images)}), its hash entry for ${setName} ${record.hashChanges} times`,
        );
      }
    }
    pods.set(key, record);
    if (hot !== undefined) {
      const problem = hotProblem(pod, sidecar, hot);
      if (problem !== undefined) violations.push(`pod ${namespace}/${key} at resourceVersion ${rv}: ${problem}`);
    }
    const isUpdated = isPodSidecarUpdated(pod, set);
    if (isUpdated) updated.add(key);
    else updated.delete(key);
    if (isUpdated && (!isPodReady(pod, set) || !isPodStateConsistent(pod, set))) unavailable.add(key);
    else unavailable.delete(key);
    if (isUpdated && !updatedAt.has(key)) updatedAt.set(key, performance.now());
    if (isUpdated && !unavailable.has(key) && !availableAt.has(key)) availableAt.set(key, performance.now());
    if (unavailable.size > maxSeen) maxSeen = unavailable.size;
    if (unavailable.size > budget) {
      const why = isPodReady(pod, set) ? 'not consistent' : 'not ready';
      violations.push(`at resourceVersion ${rv} (pod ${key}, ${why}) ${unavailable.size} updated pods were unavailable, over maxUnavailable ${budget}: ${[...unavailable].sort().join(', ')}`);
    }
  };

  // The watch may deliver a version again when it resumes after an error: only newer versions of a pod count.
  const latest = new Map<string, string>();
  const isNew = (pod: Pod): boolean => {
    const key = keyOf(pod);
    const rv = pod.metadata?.resourceVersion ?? '';
    const seen = latest.get(key);
    if (seen !== undefined && atLeast(seen, rv)) return false;
    latest.set(key, rv);
    return true;
  };

  const watch = watchPods(cp, [namespace], {
    listed(_namespace, listed) {
      if (listedOnce) {
        gaps.push(`the pod watch had to list again (versions between may be unseen), ${listed.length} pods`);
        updated = new Set();
        unavailable.clear();
      }
      for (const pod of listed) if (isNew(pod)) observe(pod, !listedOnce);
      listedOnce = true;
    },
    changed(type, pod) {
      if (!isNew(pod)) return;
      versions++;
      if (type === 'DELETED') {
        const key = keyOf(pod);
        pods.delete(key);
        updated.delete(key);
        unavailable.delete(key);
        deleted.push(key);
        return;
      }
      observe(pod, !pods.has(keyOf(pod)));
    },
    failed() {
      // Retried by the watch; a restart of the API server fails it for a while on purpose.
    },
  });
  await until(() => Promise.resolve(watch.synced()), 60_000, () => `the pod watch of ${namespace} did not list`);

  return {
    versions: () => versions,
    violations,
    gaps,
    maxUnavailableSeen: () => maxSeen,
    updatedNow: () => updated.size,
    unavailableNow: () => [...unavailable],
    imageChanges() {
      let changed = 0;
      let repeated = 0;
      for (const record of pods.values()) {
        const counts = Object.values(record.imageChanges);
        if (counts.some((n) => n > 0)) changed++;
        if (counts.some((n) => n > 1)) repeated++;
      }
      return { pods: changed, repeated };
    },
    flips: () => [...pods.values()].filter((r) => r.flipped).length,
    swappingNow: () => [...updated].filter((key) => pods.get(key)?.flipped !== true).length,
    deleted: () => deleted,
    timeline: () => [...updatedAt].map(([key, at]) => ({ pod: key, updatedAt: at, availableAt: availableAt.get(key) })),
    async caughtUp(timeoutMs = 60_000) {
      const { items } = await listPods(cp, namespace);
      const listed = new Map(items.map((pod) => [keyOf(pod), pod.metadata?.resourceVersion ?? '']));
      await until(
        () => Promise.resolve([...listed].every(([key, rv]) => atLeast(pods.get(key)?.resourceVersion, rv)) && [...pods.keys()].every((key) => listed.has(key))),
        timeoutMs,
        () => `the pod watch of ${namespace} has not caught up with the list`,
      );
    },
    stop: () => watch.stop(),
  };
}
