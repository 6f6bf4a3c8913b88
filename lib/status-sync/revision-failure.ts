/**
 * A ControllerRevision that cannot be written, recorded rather than retried in
 * silence: while a set's revision is not registered, Kruise (and this
 * reconciler) writes no status and updates no pod, so the rollout stops
 * where it is. The reconcile logs the error with the API server's whole reason,
 * and a Warning Event on the SidecarSet names the revision and that reason
 * (once per revision and reason in a process, through the rollout-state
 * notices, so a set that fails every reconcile is one Event, not one a minute).
 * The rollout view (lib/status-view/revision-failures.ts) shows the newest
 * such Event while the revision it names is still not registered.
 */
import { errorMessage } from '../errors.ts';
import { stringOf } from '../kube/json.ts';
import type { SidecarSetEventSink } from '../ports.ts';
import { sidecarSetName } from '../sidecarset/match.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { REVISION_WRITE_DONE, RevisionWriteError, type ReconcileError } from './errors.ts';
import type { RolloutState, RolloutStateEvents } from './rollout-state.ts';

/** The Event's reason, which the rollout view selects the Events by. */
export const REVISION_WRITE_FAILED = 'RevisionWriteFailed';

/** What an Event's message holds at most (the event sink's cap: events.k8s.io notes are 1 kB). */
export const EVENT_MESSAGE_LIMIT = 1024;

/**
 * `text` within `limit` characters, its beginning and its end kept: the API
 * server says what it refused at the start and why at the end, and what it
 * echoes between (a field error's `Invalid value: …`, here the revision's
 * whole data) is what gives way, with the count of what was left out.
 */
export function keepEnds(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const marker = (n: number) => ` …[${n} characters left out]… `;
  const room = limit - marker(text.length).length;
  const head = Math.floor(room / 3);
  const tail = room - head;
  return `${text.slice(0, head)}${marker(text.length - head - tail)}${text.slice(text.length - tail)}`;
}

/** The Event message for a failed write: the revision, what it holds up, and the reason, its end always whole. */
export function revisionFailureMessage(set: string, error: RevisionWriteError): string {
  const lead = `ControllerRevision ${error.revision} could not be ${REVISION_WRITE_DONE[error.write]}, so SidecarSet ${set} updates no pod and writes no status until it is: `;
  return lead + keepEnds(error.reason, EVENT_MESSAGE_LIMIT - lead.length);
}

/** The revision a view-side reader finds named in a {@link REVISION_WRITE_FAILED} Event's message. */
export function failedRevisionOf(message: string): string | undefined {
  return /^ControllerRevision (\S+) could not be /.exec(message)?.[1];
}

/**
 * Tells a registration that failed: a Warning Event on the set when the
 * error is a failed write and this process has not recorded the same one yet
 * (a failure to record it goes into `errors`). The rollout-state notices
 * keep it as the set's state, Blocked, so the metrics show it too and the
 * set's next state after it is new again.
 */
export async function recordRevisionFailure(
  set: SidecarSet,
  error: unknown,
  deps: { events: SidecarSetEventSink; states: RolloutStateEvents },
  errors: ReconcileError[],
  signal?: AbortSignal,
): Promise<void> {
  if (!(error instanceof RevisionWriteError)) return;
  const name = sidecarSetName(set);
  const message = revisionFailureMessage(name, error);
  const state: RolloutState = { reason: 'RolloutBlocked', type: 'Warning', message, key: `revision-write:${error.write}:${error.revision}:${error.reason}` };
  const event = deps.states.due({ name, uid: stringOf(set.metadata?.uid) ?? '' }, state);
  if (event === undefined) return;
  try {
    await deps.events.record({ ...event, reason: REVISION_WRITE_FAILED }, signal);
    deps.states.reported(name, state);
  } catch (recordError) {
    errors.push({ sidecarSet: name, operation: 'record event', message: errorMessage(recordError) });
  }
}
