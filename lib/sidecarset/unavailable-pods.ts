/**
 * The updated pods that are not available, tallied one pod at a time: the
 * rollout's plan tallies a set's own pod list with it, and the resync's
 * streamed counts with the same code, so a set whose every pod is updated
 * but not all ready is told the same from either (rollout.md "Stalled").
 */

/** Pods named per reason. */
export const SAMPLE_PODS = 3;

/**
 * The updated pods that are not available (not consistent or not ready), by
 * the reason the kubelet gives (rollout.md "Stalled"), most pods first.
 */
export interface UnavailablePods {
  count: number;
  reasons: { reason: string; count: number; pods: string[] }[];
  /** The latest time one of them was updated (its hash annotation's updateTimestamp), ms; 0 when none is readable. */
  lastUpdateMs: number;
}

export interface UnavailableTally {
  /** Counts one updated, unavailable pod, in list order (the first {@link SAMPLE_PODS} of each reason are named). */
  add(podKey: string, reason: string, updateMs: number): void;
  /** What was tallied; undefined when no pod was. */
  result(): UnavailablePods | undefined;
}

export function unavailableTally(): UnavailableTally {
  const byReason = new Map<string, { reason: string; count: number; pods: string[] }>();
  let count = 0;
  let lastUpdateMs = 0;
  return {
    add(podKey, reason, updateMs) {
      count++;
      lastUpdateMs = Math.max(lastUpdateMs, updateMs);
      const entry = byReason.get(reason) ?? { reason, count: 0, pods: [] };
      entry.count++;
      if (entry.pods.length < SAMPLE_PODS) entry.pods.push(podKey);
      byReason.set(reason, entry);
    },
    result() {
      if (count === 0) return undefined;
      const reasons = [...byReason.values()].map((r) => ({ ...r, pods: [...r.pods] })).sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0));
      return { count, reasons, lastUpdateMs };
    },
  };
}
