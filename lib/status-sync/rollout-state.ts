/**
 * "Why is it waiting?" (sidecarset.md §7): each set's rollout state in words,
 * reported when it changes, as a log field and an Event on the SidecarSet,
 * because Kruise's users cannot see why an image change does not reach their
 * pods (openkruise/kruise #242, #365, #1003, #1307).
 *
 * A state is reported when its kind or its lasting figures change (pods held
 * by partition, pods not upgradable), not when only the moving counts do:
 * a rollout that updates a batch, waits for it under maxUnavailable, and
 * updates the next is one state, "progressing", from its first batch to its
 * last pod ready (an Event per batch would bury the ones that matter). A
 * rollout whose updated pods have not become ready for `stallMs` since the
 * last of them was updated (an image that cannot be pulled, a sidecar that
 * crashes) is stalled: a Warning naming the kubelet's reasons and pods. The
 * clock is the pods' own update times, so it survives any number of
 * invocations; a time after now is no clock (a pod's creator can write its
 * hash annotation, and a year-2099 time would hold the slot unwarned): the
 * rollout then counts from when this process first saw such a time, and a
 * process without that memory (the status view, a cold start) from now. Memory of what was reported is per process, like the
 * uninjected-pod notices; a new process says nothing of a resting state at
 * first sight, and a stall it finds already recorded by an earlier process (a
 * RolloutStalled Event on the set carries the same stall key, in an
 * annotation) is not recorded again: an operator hears of a stall once, and again
 * when it changes (other pods, another kind of reason), not once per cold start.
 */
import type { SidecarSetEvent } from '../ports.ts';
import type { RolloutCounts, UnavailablePods, WaitingReason } from '../rollout/plan.ts';
import { unavailableText, waitingMessage } from '../rollout/batch.ts';

/** How long updated pods may stay unavailable before the rollout is stalled, by default (ROLLOUT_STALL_MS). */
export const DEFAULT_STALL_MS = 60_000;
/** The variable that sets it (status-sync and `npm start`; the CDK context `rolloutStallSeconds`). */
export const ENV_ROLLOUT_STALL_MS = 'ROLLOUT_STALL_MS';

/** The annotation on a RolloutStalled Event that holds its stall's key (what a later process compares). */
export const ANNOTATION_STALL_KEY = 'serverless-sidecarset/stall';

/**
 * The stalls already recorded, as stored (the Events): per SidecarSet uid, the
 * stall keys of the RolloutStalled Events about it. A key holds the stall's
 * last update time, so a stall recorded, left and met again is another key.
 */
export type RecordedStalls = (signal?: AbortSignal) => Promise<ReadonlyMap<string, ReadonlySet<string>>>;

/** What decides a stall: now and the threshold, in the clock of the pods' update times (ms since the epoch). */
export interface StallClock {
  nowMs: number;
  stallMs: number;
  /**
   * When this process first saw the set's unavailable updated pods claim an
   * update time after now ({@link RolloutStateEvents.aheadSince}); a claim
   * after now counts from it, or from now without it.
   */
  aheadSinceMs?: number;
}

/** A SidecarSet's rollout states by name: the Events' reasons without "Rollout", and the metrics' `State` dimension. */
export const ROLLOUT_STATES = ['Progressing', 'Waiting', 'Paused', 'Finished', 'NotUpdate', 'Blocked', 'Stalled'] as const;
export type RolloutStateName = (typeof ROLLOUT_STATES)[number];

export interface RolloutState {
  /** What the Event's reason says. */
  reason: `Rollout${RolloutStateName}`;
  type: 'Normal' | 'Warning';
  message: string;
  /** Equal keys are the same state for reporting. */
  key: string;
  /** The counts it was seen with (progressing and stalled states): a stalled rollout seen again unmoved is nothing new. */
  progress?: string;
  /**
   * A resting state (finished; NotUpdate with every pod updated; every pod
   * updated before this reconcile, the last not ready yet): new only as
   * the end of another state this process saw, not at first sight, or every
   * cold start would post one Event per SidecarSet of the cluster.
   */
  resting?: boolean;
}

/**
 * Kinds of reasons a kubelet alternates between for one trouble (ErrImagePull
 * and ImagePullBackOff; a crashing container's Error, CrashLoopBackOff and
 * running-not-ready): a stall whose pods only alternate is the same stall.
 */
const REASON_KINDS: Readonly<Record<string, string>> = {
  ErrImagePull: 'image',
  ImagePullBackOff: 'image',
  ErrImageNeverPull: 'image',
  InvalidImageName: 'image',
  ImageInspectError: 'image',
  RegistryUnavailable: 'image',
  CrashLoopBackOff: 'crash',
  Error: 'crash',
  OOMKilled: 'crash',
  Completed: 'crash',
  ContainerCannotRun: 'crash',
  StartError: 'crash',
  RunContainerError: 'crash',
  Restarting: 'crash',
};

/**
 * What makes one stall: how many updated pods hold it, when the last of them
 * was updated (a pod updated or recreated since is another stall), and the
 * kinds of their reasons. Never the seconds since: the same stall seen later
 * has the same key.
 */
function stallKey(stuck: UnavailablePods): string {
  const kinds = [...new Set(stuck.reasons.map((r) => REASON_KINDS[r.reason] ?? r.reason))].sort();
  return `stalled:${stuck.count}:${stuck.lastUpdateMs}:${kinds.join(',')}`;
}

function counted(counts: RolloutCounts): string {
  return `${counts.updatedPods} of ${counts.matchedPods} pod(s) updated, ${counts.updatedReadyPods} updated and ready`;
}

/** The updated pods, not available, that a rollout waits for (under maxUnavailable, or the last ones of it). */
export function stuckPods(waiting: WaitingReason | undefined): UnavailablePods | undefined {
  return waiting?.kind === 'max-unavailable' || waiting?.kind === 'updated-not-ready' ? waiting.stuck : undefined;
}

/** When the stuck pods were last updated as the stall clock counts it: what they say, unless that is after now. */
function stuckSinceMs(stuck: UnavailablePods, stall: StallClock): number {
  if (stuck.lastUpdateMs <= stall.nowMs) return stuck.lastUpdateMs;
  return Math.min(stall.aheadSinceMs ?? stall.nowMs, stall.nowMs);
}

/** The updated pods that hold the rollout, when they have for `stallMs` since the last of them was updated. */
function stalledPods(updated: number, waiting: WaitingReason | undefined, stall: StallClock | undefined): UnavailablePods | undefined {
  if (stall === undefined || updated > 0) return undefined;
  const stuck = stuckPods(waiting);
  if (stuck === undefined || stall.nowMs - stuckSinceMs(stuck, stall) < stall.stallMs) return undefined;
  // The time the key and the message name is the one the clock counted from.
  return { ...stuck, lastUpdateMs: stuckSinceMs(stuck, stall) };
}

/** Updated pods stay unavailable past the stall threshold. */
function stalledState(counts: RolloutCounts, waiting: WaitingReason | undefined, stuck: UnavailablePods & { lastUpdateMs: number }, stall: StallClock): RolloutState {
  const seconds = Math.round((stall.nowMs - stuck.lastUpdateMs) / 1000);
  const holds = waiting?.kind === 'max-unavailable' ? `the next pods wait under maxUnavailable ${waiting.maxUnavailable}` : 'every pod is updated';
  return {
    reason: 'RolloutStalled',
    type: 'Warning',
    message: `stalled: ${stuck.count} updated pod(s) not ready, the last updated ${seconds} s ago: ${unavailableText(stuck)}; ${holds} (check the sidecar image and logs); ${counted(counts)}`,
    // Kinds of reasons, not the reasons: a kubelet alternates ErrImagePull and ImagePullBackOff, which is nothing new.
    key: stallKey(stuck),
    progress: JSON.stringify(counts),
  };
}

/** The rollout moves: pods were updated, wait under maxUnavailable, finish a hot upgrade or restart on their new sidecars. */
function progressingState(counts: RolloutCounts, updated: number, waiting: Extract<WaitingReason, { kind: 'max-unavailable' | 'hot-swapping' | 'flipping' | 'updated-not-ready' }> | undefined): RolloutState {
  const limit = waiting?.kind === 'max-unavailable' ? `, at most ${waiting.maxUnavailable} unavailable at a time (maxUnavailable)` : '';
  const swapping = waiting?.kind === 'hot-swapping' || waiting?.kind === 'flipping' ? `; ${waiting.pods} pod(s) finishing a hot upgrade` : '';
  const last = waiting?.kind === 'updated-not-ready' ? `; ${waitingMessage(waiting)}` : '';
  return {
    reason: 'RolloutProgressing',
    type: 'Normal',
    message: `rolling out${limit}: ${updated} pod(s) updated in this reconcile; ${counted(counts)}${swapping}${last}`,
    key: 'progressing',
    progress: JSON.stringify(counts),
    // Every pod updated before this reconcile and some not ready yet: whoever updated them (an earlier reconcile, or the
    // webhook injecting the current sidecars at creation) is where it started; at first sight it is nothing new.
    ...(updated === 0 && waiting?.kind === 'updated-not-ready' ? { resting: true } : {}),
  };
}

/**
 * The state of a set after a reconcile: `updated` pods were written this reconcile;
 * `waiting` why it stops; `stall` the clock that tells a stalled rollout
 * (without it, as in the status view, a rollout is never called stalled,
 * though its message names what its pods wait for).
 */
export function rolloutState(counts: RolloutCounts, updated: number, waiting: WaitingReason | undefined, stall?: StallClock): RolloutState {
  const stuck = stalledPods(updated, waiting, stall);
  if (stuck !== undefined && stall !== undefined) return stalledState(counts, waiting, stuck, stall);
  // The last pods finishing a hot upgrade, or restarting on their new sidecars, are still the rollout moving, not its end.
  if (waiting === undefined || waiting.kind === 'max-unavailable' || waiting.kind === 'hot-swapping' || waiting.kind === 'flipping' || waiting.kind === 'updated-not-ready') {
    return progressingState(counts, updated, waiting);
  }
  const message = `${waitingMessage(waiting)}; ${counted(counts)}`;
  switch (waiting.kind) {
    case 'finished':
      // Every pod updated, consistent and ready (updated but unready pods are 'updated-not-ready' above).
      return { reason: 'RolloutFinished', type: 'Normal', message, key: 'finished', resting: true };
    case 'paused':
      return { reason: 'RolloutPaused', type: 'Normal', message, key: 'paused' };
    case 'not-update':
      return { reason: 'RolloutNotUpdate', type: 'Normal', message, key: 'not-update', ...(counts.updatedPods >= counts.matchedPods ? { resting: true } : {}) };
    case 'partition':
      return { reason: 'RolloutWaiting', type: 'Normal', message, key: `partition:${waiting.held}` };
    case 'nothing-waiting':
      if (waiting.notUpgradable > 0) return { reason: 'RolloutBlocked', type: 'Warning', message, key: `blocked:${waiting.notUpgradable}:${waiting.notSelected}` };
      return { reason: 'RolloutWaiting', type: 'Normal', message, key: `nothing-waiting:${waiting.notSelected}:${waiting.inFlight > 0}` };
    case 'invalid-strategy':
      return { reason: 'RolloutBlocked', type: 'Warning', message, key: `blocked:${waiting.kind}` };
  }
}

export interface RolloutStateEvents {
  /** The Event to record when the set's state changed since the last recorded one; undefined otherwise. */
  due(set: { name: string; uid: string }, state: RolloutState): SidecarSetEvent | undefined;
  /**
   * Whether a due stall was already recorded by another process (a set this
   * process has recorded nothing of, with a stored RolloutStalled Event of the
   * same stall key); it is then remembered as reported. The stored Events
   * are read once per process, at the first such stall; when they cannot be
   * read the stall is recorded (twice rather than never) and they are read again
   * at the next.
   */
  recordedBefore(set: { name: string; uid: string }, state: RolloutState, signal?: AbortSignal): Promise<boolean>;
  /** Remembers a state whose Event was recorded (a failed one is due again). */
  reported(set: string, state: RolloutState): void;
  /** Forgets sets no longer present. */
  keepOnly(present: ReadonlySet<string>): void;
  /**
   * When this process first saw the set's unavailable updated pods claim an
   * update time after `nowMs` (`ahead`), for {@link StallClock.aheadSinceMs};
   * undefined, and forgotten, when they claim none.
   */
  aheadSince(set: string, ahead: boolean, nowMs: number): number | undefined;
}

/** @param recorded the stalls already recorded, as stored; without it, a new process tells every stall it finds. */
export function rolloutStateEvents(recorded?: RecordedStalls): RolloutStateEvents {
  return new RolloutStateMemory(recorded);
}

class RolloutStateMemory implements RolloutStateEvents {
  private readonly recorded: RecordedStalls | undefined;
  private readonly last = new Map<string, { key: string; progress: string | undefined }>();
  private readonly ahead = new Map<string, number>();
  private stored: Promise<ReadonlyMap<string, ReadonlySet<string>>> | undefined;

  constructor(recorded: RecordedStalls | undefined) {
    this.recorded = recorded;
  }

  due(set: { name: string; uid: string }, state: RolloutState): SidecarSetEvent | undefined {
    const previous = this.last.get(set.name);
    if (previous?.key === state.key) return undefined;
    if (previous === undefined && state.resting === true) return undefined;
    // The schedule's next reconcile of a stalled rollout finds it as it was: still stalled, not progressing again.
    if (previous?.key.startsWith('stalled:') === true && state.key === 'progressing' && state.progress === previous.progress) return undefined;
    const event: SidecarSetEvent = { sidecarSet: set, type: state.type, reason: state.reason, message: state.message };
    return state.reason === 'RolloutStalled' ? { ...event, annotations: { [ANNOTATION_STALL_KEY]: state.key } } : event;
  }

  async recordedBefore(set: { name: string; uid: string }, state: RolloutState, signal?: AbortSignal): Promise<boolean> {
    if (this.recorded === undefined || state.reason !== 'RolloutStalled' || this.last.has(set.name)) return false;
    this.stored ??= this.recorded(signal);
    let keys: ReadonlyMap<string, ReadonlySet<string>>;
    try {
      keys = await this.stored;
    } catch {
      this.stored = undefined;
      return false;
    }
    if (set.uid === '' || keys.get(set.uid)?.has(state.key) !== true) return false;
    this.last.set(set.name, { key: state.key, progress: state.progress });
    return true;
  }

  reported(set: string, state: RolloutState): void {
    this.last.set(set, { key: state.key, progress: state.progress });
  }

  keepOnly(present: ReadonlySet<string>): void {
    for (const name of this.last.keys()) if (!present.has(name)) this.last.delete(name);
    for (const name of this.ahead.keys()) if (!present.has(name)) this.ahead.delete(name);
  }

  aheadSince(set: string, claimsAhead: boolean, nowMs: number): number | undefined {
    if (!claimsAhead) {
      this.ahead.delete(set);
      return undefined;
    }
    const since = this.ahead.get(set) ?? nowMs;
    this.ahead.set(set, since);
    return since;
  }
}
