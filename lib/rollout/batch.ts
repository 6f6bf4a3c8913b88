/**
 * One batch's writes and reports from a plan (rollout.md §0 step 4, §1.5
 * step 7, §1.6, §1.7; sidecarset.md §7 "Why is it waiting?"), pure: the reconcile
 * sends them in this order and skips a pod whose patch meets a conflict.
 */
import type { JsonPatchOperation } from '../admission/json-patch.ts';
import { errorMessage } from '../errors.ts';
import type { Pod } from '../kube/types.ts';
import { sidecarSetName } from '../sidecarset/match.ts';
import type { SidecarSet, SidecarSetStatus } from '../sidecarset/types.ts';
import { changedFieldsText } from './changed-fields.ts';
import { heldPatchPodMetadataKeys } from './fence-check.ts';
import { podFlipPatch, podUpdatePatch } from './pod-patch.ts';
import type { RolloutCounts, RolloutPlan, UnavailablePods, WaitingReason } from './plan.ts';
import { upgradableConditionPatch } from './upgradable-condition.ts';

/** Kruise's Event on the SidecarSet when a batch meets not-upgradable pods (type Normal). */
export const NOT_UPGRADABLE_EVENT_REASON = 'NotUpgradablePods';

export function notUpgradableEventMessage(count: number): string {
  return `SidecarSet in-place update detected ${count} not upgradable pod(s) in this round, will skip them.`;
}

/**
 * The Warning Event on the SidecarSet for a pod the batch had to skip (its
 * patch could not be planned, or the API server or a webhook refused it):
 * better than Kruise, whose Reconcile stops at the first such pod (docs/ROLLOUT.md).
 */
export const POD_UPDATE_FAILED_REASON = 'PodUpdateFailed';

/** The Event's message: the pod and why, in one line. */
export function podUpdateFailedMessage(pod: string, why: string): string {
  return `pod ${pod} skipped: ${why}; the other pods go on, this one is tried again next reconcile`;
}

/**
 * The Warning Event on the SidecarSet when a batch updates pods without some
 * of its `patchPodMetadata` keys: keys the pods' rollout fence does not list
 * (the set named them after the pods were created), which the pod policy
 * refuses the reconciler (fence-check.ts). The image update goes on; the
 * keys reach pods created from now on.
 */
export const PATCH_METADATA_HELD_REASON = 'PatchPodMetadataHeld';

export function patchMetadataHeldMessage(keys: readonly string[], pods: readonly string[]): string {
  return `${pods.length} pod(s) updated without patchPodMetadata key(s) ${keys.join(', ')} (${pods.slice(0, 3).join(', ')}${pods.length > 3 ? ', …' : ''}): pod-inject did not record them when the pods were created, so the pod policy lets no rollout write them; recreate the pods to get them`;
}

/** What the SidecarSetUpgradable condition of a pod skipped for `why` records for the set. */
export function podUpdateFailedNote(why: string): { reason: 'PodUpdateFailed'; why: string } {
  return { reason: 'PodUpdateFailed', why: `update failed: ${why}` };
}

/** What the condition of a not-upgradable pod records for the set: the changed fields. */
export function notUpgradableNote(pod: Pod, set: SidecarSet): { reason: 'UpdateImmutableField'; why: string } {
  return { reason: 'UpdateImmutableField', why: `not upgradable in place: ${changedFieldsText(pod, set)} changed (recreate the pod)` };
}

/** A `pods/status` strategic-merge patch, or none when the condition already says it. */
type ConditionPatch = ReturnType<typeof upgradableConditionPatch>;

/** Kruise's Events on a pod whose hot upgrade was ended by the flip (rollout.md §3.4). */
export const FLIP_EVENT = {
  succeeded: { reason: 'ResetContainerSucceed', type: 'Normal', message: 'reset sidecar container image empty successfully' },
  failed: { reason: 'ResetContainerFailed', type: 'Warning', message: (error: string) => `reset sidecar container image empty failed: ${error}` },
} as const;

export interface BatchWrites {
  /**
   * Before anything else, even when the batch updates nothing: the flips
   * ending finished hot upgrades (§0 step 6), each a guarded JSON Patch.
   */
  flips: { pod: Pod; patch: JsonPatchOperation[] }[];
  /** First: the not-upgradable pods' `SidecarSetUpgradable` (false) patches, where they change anything. */
  notUpgradable: { pod: Pod; condition: NonNullable<ConditionPatch> }[];
  /** Then one Normal Event when there were any not-upgradable pods. */
  event?: { reason: typeof NOT_UPGRADABLE_EVENT_REASON; message: string };
  /** And one Warning Event when pods are updated without some patchPodMetadata keys (their rollout fence). */
  held?: { reason: typeof PATCH_METADATA_HELD_REASON; message: string };
  /** Then, per pod in order: the guarded JSON Patch, and after it the condition (true) patch if it changes anything. */
  updates: { pod: Pod; patch: JsonPatchOperation[]; condition: ConditionPatch }[];
  /** Pods of the plan whose write could not be made (e.g. a `MergePatchJson` annotation that is not JSON): skipped, reported by the reconcile (a Warning Event). */
  unplanned: { pod: Pod; why: string }[];
}

/**
 * The writes of Kruise's updatePods for a plan. `injectedListFor` gives the
 * injected-list backfill of a pod (see `backfillInjectedList`). A pod whose
 * write cannot be made (UnpatchablePodError, PatchPodMetadataError) is in
 * `unplanned`: one pod never costs the others their batch.
 */
export function batchWrites(
  set: SidecarSet,
  plan: RolloutPlan,
  latestRevision: string,
  injectedListFor: (pod: Pod) => string,
  now: Date,
): BatchWrites {
  const name = sidecarSetName(set);
  const unplanned: BatchWrites['unplanned'] = [];
  const planned = <T>(pod: Pod, make: () => T): T[] => {
    try {
      return [make()];
    } catch (error) {
      unplanned.push({ pod, why: errorMessage(error) });
      return [];
    }
  };
  const notUpgradable = notUpgradableWrites(plan.notUpgradable, set, now);
  const flips = plan.flips.flatMap(({ pod, flips }) => planned(pod, () => ({ pod, patch: podFlipPatch({ pod, set, flips, now }) })));
  // The pods the plan set aside were tried first (the batch's lazy filter): reported after the flips, as they were met.
  unplanned.push(...(plan.setAside ?? []));
  const out: BatchWrites = {
    flips,
    notUpgradable,
    updates: plan.updates.flatMap(({ pod, patch }) =>
      planned(pod, () => ({
        pod,
        patch: patch ?? podUpdatePatch({ pod, set, latestRevision, injectedList: injectedListFor(pod), now }),
        condition: upgradableConditionPatch(pod, name, true, now),
      })),
    ),
    unplanned,
  };
  if (plan.notUpgradable.length > 0) out.event = { reason: NOT_UPGRADABLE_EVENT_REASON, message: notUpgradableEventMessage(plan.notUpgradable.length) };
  const held = heldKeysOfBatch(out.updates.map((u) => u.pod), set);
  if (held !== undefined) out.held = held;
  return out;
}

/** The not-upgradable condition of each pod the set cannot update in place, none where the pod already says so. */
function notUpgradableWrites(pods: readonly Pod[], set: SidecarSet, now: Date): BatchWrites['notUpgradable'] {
  const name = sidecarSetName(set);
  return pods.flatMap((pod) => {
    const condition = upgradableConditionPatch(pod, name, notUpgradableNote(pod, set), now);
    return condition === undefined ? [] : [{ pod, condition }];
  });
}

/** The held-keys Event of a batch's updated pods, or undefined when none is held. */
function heldKeysOfBatch(pods: readonly Pod[], set: SidecarSet): BatchWrites['held'] {
  const keys = new Set<string>();
  const named: string[] = [];
  for (const pod of pods) {
    const held = heldPatchPodMetadataKeys(pod, set);
    if (held.length === 0) continue;
    for (const key of held) keys.add(key);
    named.push(`${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`);
  }
  if (named.length === 0) return undefined;
  return { reason: PATCH_METADATA_HELD_REASON, message: patchMetadataHeldMessage([...keys].sort(), named) };
}

/**
 * The status a reconcile writes (§1.9): the counts, observedGeneration, and the
 * registered revision's latestRevision and collisionCount (without a
 * registration, the stored ones stay).
 */
export function rolloutStatusFields(set: SidecarSet, counts: RolloutCounts, revision?: Pick<SidecarSetStatus, 'latestRevision' | 'collisionCount'>): SidecarSetStatus {
  return {
    observedGeneration: typeof set.metadata?.generation === 'number' ? set.metadata.generation : 0,
    ...counts,
    ...(revision === undefined ? {} : { latestRevision: revision.latestRevision, collisionCount: revision.collisionCount }),
  };
}

/** Kruise's inconsistentStatus: write only when observedGeneration goes up or another field differs. */
export function statusNeedsWrite(stored: SidecarSetStatus | undefined, next: SidecarSetStatus): boolean {
  const s = stored ?? {};
  return (
    (next.observedGeneration ?? 0) > (s.observedGeneration ?? 0) ||
    next.matchedPods !== (s.matchedPods ?? 0) ||
    next.updatedPods !== (s.updatedPods ?? 0) ||
    next.readyPods !== (s.readyPods ?? 0) ||
    next.updatedReadyPods !== (s.updatedReadyPods ?? 0) ||
    next.latestRevision !== (s.latestRevision ?? '') ||
    next.collisionCount !== s.collisionCount
  );
}

/** The user-facing line for why a set's rollout updates nothing more this reconcile (sidecarset.md §7). */
export function waitingMessage(reason: WaitingReason): string {
  switch (reason.kind) {
    case 'not-update':
      return 'updateStrategy.type is NotUpdate: running pods keep their sidecars';
    case 'finished':
      return 'finished: every matched pod runs the current sidecars';
    case 'paused':
      return 'paused (updateStrategy.paused)';
    case 'hot-swapping':
      return `every pod is updated; ${reason.pods} pod(s) finishing a hot upgrade: their old sidecar containers go back to the empty image once the new ones run ready`;
    case 'flipping':
      return `${reason.pods} pod(s) finishing a hot upgrade: their old sidecar containers go back to the empty image this reconcile; the next pods are updated in a later reconcile`;
    case 'invalid-strategy':
      return `cannot roll: ${reason.message}`;
    case 'max-unavailable':
      // `unavailable` is counted before this reconcile's writes, which may add to it: say so, lest "0" read as nothing pending.
      return `maxUnavailable ${reason.maxUnavailable} reached: the next pods wait until updated ones are ready (${reason.unavailable} updated and not ready before this reconcile${reason.stuck === undefined ? '' : `: ${unavailableText(reason.stuck)}`})`;
    case 'updated-not-ready':
      return `every pod is updated; ${reason.stuck.count} not ready yet: ${unavailableText(reason.stuck)}`;
    case 'partition':
      return `${reason.held} pod(s) held back by partition`;
    case 'nothing-waiting': {
      const parts: string[] = [];
      if (reason.notUpgradable > 0) {
        const fields = reason.changed === undefined || reason.changed.length === 0 ? '' : ` (${reason.changed.join(', ')})`;
        parts.push(`${reason.notUpgradable} pod(s) not upgradable because fields other than the image changed${fields}: recreate them`);
      }
      if (reason.notSelected > 0) parts.push(`${reason.notSelected} pod(s) outside updateStrategy.selector`);
      if (reason.inFlight > 0) parts.push(`${reason.inFlight} pod(s) still restarting from an earlier update`);
      return parts.length > 0 ? parts.join('; ') : 'nothing to update';
    }
  }
}

/**
 * The updated pods not available, in words: each reason the kubelet gives
 * with how many pods and a few of their names, e.g.
 * `ImagePullBackOff: 2 pod(s) (default/a, default/b)`.
 */
export function unavailableText(stuck: UnavailablePods): string {
  return stuck.reasons.map((r) => `${r.reason}: ${r.count} pod(s) (${r.pods.join(', ')}${r.count > r.pods.length ? ', …' : ''})`).join('; ');
}
