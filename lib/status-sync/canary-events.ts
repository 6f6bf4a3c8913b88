/**
 * Telling a SidecarSet's owner that canaries took its pods. A canary
 * (lib/sidecarset/canary.ts) names its base in an annotation, and anyone who
 * may create SidecarSets may name any set as a base: the base's pods then
 * get the canary's sidecar instead of the base's, while the base's status
 * (which counts only the pods it injected, as Kruise's does) and its rollout
 * (Finished) say nothing of it. So the base tells it: a Warning Event on the
 * base naming each canary and how many of the pods the base selects it
 * injected, written when that changes and refreshed while it holds
 * (event-memory.ts, as the uninjected-pod notices), and a Normal Event once no
 * such pod is left. `npm run -s status` shows the same split.
 */
import { errorMessage } from '../errors.ts';
import { ANNOTATION_BASE } from '../sidecarset/canary.ts';
import type { SidecarSetEvent, SidecarSetEventSink } from '../ports.ts';
import type { ReconcileError } from './errors.ts';
import { eventMemory, type EventMemoryOptions } from './event-memory.ts';

/** What a reconcile found for one set: each canary of it that took pods, by name, with how many. */
export interface CanaryFinding {
  uid: string;
  /** Sorted by canary name; empty when no canary took a pod. */
  canaries: readonly (readonly [name: string, pods: number])[];
}

/** An event to record, and what to remember once it is recorded. */
export interface CanaryEvent {
  set: string;
  finding: CanaryFinding;
  event: SidecarSetEvent;
}

export interface CanaryEvents {
  /**
   * The events due after a reconcile.
   * @param findings the sets the reconcile counted (those no canary took pods from included).
   * @param present every set the reconcile saw: what is remembered about others is dropped.
   */
  due(findings: ReadonlyMap<string, CanaryFinding>, present: ReadonlySet<string>): CanaryEvent[];
  /** Remembers a notice whose event was recorded (a failed one is due again next reconcile). */
  reported(notice: CanaryEvent): void;
}

/** Reason of the Warning event on the base: canaries took pods it selects. */
export const REASON_TAKEN_BY_CANARY = 'PodsTakenByCanary';
/** Reason of the Normal event that follows once no canary holds such a pod. */
export const REASON_NONE_TAKEN = 'NoPodsTakenByCanary';
/** Canaries named in one message; the others are counted. */
export const MAX_CANARIES_NAMED = 10;

/** The finding of a set from its counted canary pods (StatusAccumulator.canaryPods). */
export function canaryFinding(uid: string, canaryPods: ReadonlyMap<string, number>): CanaryFinding {
  return { uid, canaries: [...canaryPods].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) };
}

/** The base's message: how many pods, and which canary took how many. */
export function takenMessage(set: string, finding: CanaryFinding): string {
  const total = finding.canaries.reduce((sum, [, pods]) => sum + pods, 0);
  const named = finding.canaries.slice(0, MAX_CANARIES_NAMED).map(([name, pods]) => `${name} took ${pods}`);
  const more = finding.canaries.length - named.length;
  const list = `${named.join(', ')}${more > 0 ? ` and ${more} more canaries` : ''}`;
  const pods = total === 1 ? '1 pod this SidecarSet selects runs' : `${total} pods this SidecarSet selects run`;
  return `${pods} a canary's sidecars instead of its own (canary SidecarSets naming ${set} in ${ANNOTATION_BASE}: ${list}); this set's rollout does not reach them`;
}

function keyOf(finding: CanaryFinding): string | undefined {
  return finding.canaries.length === 0 ? undefined : JSON.stringify(finding.canaries);
}

/** Starts with nothing reported; make one per process (per cold start) and keep it across resyncs. */
export function canaryEvents(options: EventMemoryOptions = {}): CanaryEvents {
  const memory = eventMemory(options);
  return {
    due(findings, present) {
      memory.keep(present);
      const out: CanaryEvent[] = [];
      for (const [set, finding] of findings) {
        const sidecarSet = { name: set, uid: finding.uid };
        const due = memory.due(set, keyOf(finding));
        if (due === 'gone') out.push({ set, finding, event: { sidecarSet, type: 'Normal', reason: REASON_NONE_TAKEN, message: "no pod this SidecarSet selects runs a canary's sidecars any more" } });
        else if (due === 'record') out.push({ set, finding, event: { sidecarSet, type: 'Warning', reason: REASON_TAKEN_BY_CANARY, message: takenMessage(set, finding) } });
      }
      return out;
    },
    reported(notice) {
      memory.recorded(notice.set, keyOf(notice.finding));
    },
  };
}

/** Records the canary events that are due; a failed one is an error and is due again next reconcile. */
export async function recordCanaryEvents(
  notices: CanaryEvents,
  findings: ReadonlyMap<string, CanaryFinding>,
  present: ReadonlySet<string>,
  events: SidecarSetEventSink,
  errors: ReconcileError[],
  signal?: AbortSignal,
): Promise<void> {
  for (const notice of notices.due(findings, present)) {
    try {
      await events.record(notice.event, signal);
      notices.reported(notice);
    } catch (error) {
      errors.push({ sidecarSet: notice.set, operation: 'record event', message: errorMessage(error) });
    }
  }
}
