/**
 * Which resyncs of a long-running loop (`npm start`) are worth a log
 * line. A resync every 30 s that changes nothing would otherwise print the same
 * JSON line forever and bury the ones that matter. A resync is logged when it
 * changed something or something is wrong, and otherwise a heartbeat line at
 * most every `heartbeatMs`, so a quiet log still shows the loop is alive.
 *
 * The Lambda logs every invocation (one line per invocation is its
 * contract); this is only for the loop.
 */
import { jsonEqual } from '../kube/json.ts';
import type { ResyncResult } from './resync.ts';

/** Default longest silence of the loop: a heartbeat line after 5 minutes without one. */
export const DEFAULT_HEARTBEAT_MS = 5 * 60_000;

/** Why a resync is logged; undefined when it is not. */
export type ResyncLogReason = 'first' | 'changed' | 'heartbeat';

export interface ResyncLog {
  /**
   * Decides about one finished resync, in order.
   * @returns why it is logged, or undefined to stay quiet; `quietResyncs` is
   *   how many resyncs since the last logged one were not logged.
   */
  decide(result: ResyncResult): { reason: ResyncLogReason; quietResyncs: number } | undefined;
}

/** The rotation step without its clock: a `waiting` whose nextStepAt moved is nothing new. */
function rotationWithoutClock(result: ResyncResult): unknown {
  const rotation = result.secretRotation;
  return rotation === undefined ? undefined : { step: rotation.step, detail: rotation.detail };
}

/**
 * A resync is new when it wrote a status, had an error, found a different set
 * of uninjected pods than the resync before (which is when events are
 * recorded), evicted one or was refused an eviction, took a rotation step (started, webhooks-updated, finished,
 * failed), or when the rotation's waiting or skipped state changed.
 */
function changedSince(result: ResyncResult, previous: ResyncResult): boolean {
  if (result.errors.length > 0 || result.statusesWritten > 0) return true;
  // A rollout step (pods written, a state reported) is new; a resync that only requeues one in flight is not.
  if ((result.rollout?.podsUpdated ?? 0) > 0 || (result.rollout?.podsFlipped ?? 0) > 0 || (result.rollout?.revisionWrites ?? 0) > 0 || Object.keys(result.rollout?.states ?? {}).length > 0) return true;
  if (!jsonEqual(result.notInjected, previous.notInjected)) return true;
  if ((result.repair?.evicted ?? 0) > 0 || (result.repair?.refused ?? 0) > 0) return true;
  if ((result.secretRotation?.repaired?.length ?? 0) > 0) return true;
  const step = result.secretRotation?.step;
  if (step !== undefined && step !== 'waiting' && step !== 'skipped') return true;
  return !jsonEqual(rotationWithoutClock(result), rotationWithoutClock(previous));
}

/**
 * @param heartbeatMs longest time without a line while nothing changes; 0 logs every resync.
 * @param nowMs milliseconds on a monotonic scale.
 */
export function resyncLog(heartbeatMs: number = DEFAULT_HEARTBEAT_MS, nowMs: () => number = () => performance.now()): ResyncLog {
  let previous: ResyncResult | undefined;
  let lastLoggedAt: number | undefined;
  let quiet = 0;
  return {
    decide(result) {
      const now = nowMs();
      let reason: ResyncLogReason | undefined;
      if (lastLoggedAt === undefined || previous === undefined) reason = 'first';
      else if (heartbeatMs === 0 || changedSince(result, previous)) reason = 'changed';
      else if (now - lastLoggedAt >= heartbeatMs) reason = 'heartbeat';
      previous = result;
      if (reason === undefined) {
        quiet++;
        return undefined;
      }
      const quietResyncs = quiet;
      quiet = 0;
      lastLoggedAt = now;
      return { reason, quietResyncs };
    },
  };
}
