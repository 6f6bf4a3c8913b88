/**
 * The rollout view's word on a revision the reconciler cannot write
 * (lib/status-sync/revision-failure.ts): while a set's revision is not
 * registered the reconciler updates none of its pods, so the plan's "pods
 * due for update" would read as progress forever. The reconciler tells the
 * failure as a RevisionWriteFailed Event on the set; the view shows the
 * newest one as the set's WHY, state Blocked, as long as the revision it
 * names is the one the set's spec needs (the reconciler's own
 * currentRevisionName) and the set's status does not name it yet. Once the
 * revision is registered, or the spec moves on, the Event no longer applies.
 */
import { stringOf } from '../kube/json.ts';
import { currentRevisionName } from '../sidecarset/revisions.ts';
import { sidecarSetName } from '../sidecarset/match.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { failedRevisionOf } from '../status-sync/revision-failure.ts';
import type { ViewRow } from './rows.ts';

/** A RevisionWriteFailed Event, as the view reads it. */
export interface RevisionFailureEvent {
  /** The SidecarSet's uid and name (involvedObject). */
  uid: string;
  name: string;
  message: string;
  /** When it was last seen (lastTimestamp or eventTime), for the newest first. */
  at: string;
}

/** Reads the RevisionWriteFailed Events on SidecarSets. */
export type RevisionFailureSource = (signal?: AbortSignal) => Promise<RevisionFailureEvent[]>;

/** `rows` with each set whose current revision cannot be written shown Blocked, the failure as WHY. */
export function withRevisionFailures(rows: readonly ViewRow[], sets: readonly SidecarSet[], failures: readonly RevisionFailureEvent[]): ViewRow[] {
  if (failures.length === 0) return [...rows];
  const newestFirst = [...failures].sort((a, b) => Date.parse(b.at || '0') - Date.parse(a.at || '0'));
  const blocked = new Map<string, string>();
  for (const set of sets) {
    const name = sidecarSetName(set);
    const revision = currentRevisionName(set);
    if (set.status?.latestRevision === revision) continue;
    const uid = stringOf(set.metadata?.uid) ?? '';
    const failure = newestFirst.find((f) => (f.uid === '' || uid === '' ? f.name === name : f.uid === uid) && failedRevisionOf(f.message)?.split('/').at(-1) === revision);
    if (failure !== undefined) blocked.set(name, failure.message);
  }
  return rows.map((row) => {
    const why = blocked.get(row.name);
    return why === undefined ? row : { ...row, state: 'Blocked', why, rolling: true };
  });
}
