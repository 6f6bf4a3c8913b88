/**
 * Telling the user about pods a SidecarSet applies to but never injected
 * (created while the pod-inject webhook was unreachable and its
 * failurePolicy let them through).
 *
 * Where: a Kubernetes Event on the SidecarSet, shown by
 * `kubectl describe sidecarset <name>` and `kubectl get events`, rather than
 * an extra status field, because
 * - the status stays exactly OpenKruise's SidecarSetStatus, so the CRD stays
 *   the drop-in one and tools that read Kruise status see nothing foreign
 *   (our CRD's status schema would prune an unknown field anyway);
 * - an event can name the pods to recreate, which a count cannot, and a
 *   Warning event reaches the alerting people already run on events;
 * - it needs one extra permission, `create` on events, and no schema change.
 *
 * Events are transient (the API server drops them after an hour by default)
 * and must not be written every pass, so this keeps what it last reported
 * per set: a Warning goes out when a set's uninjected pods first appear or
 * change, again every `refreshMs` while they remain (before the old event
 * expires), and a Normal event says when they are gone. The memory is per
 * process: a new Lambda execution environment reports once more, which is
 * harmless. The counts are also in every pass's result and log line.
 */
import type { SidecarSetEvent } from '../ports.ts';

/** What a pass found for one set. */
export interface NotInjectedFinding {
  uid: string;
  count: number;
  /** `namespace/name` of the first few such pods, in list order. */
  samples: readonly string[];
}

/** An event to record, and what to remember once it is recorded. */
export interface DueNotice {
  set: string;
  event: SidecarSetEvent;
  finding: NotInjectedFinding;
}

export interface NotInjectedNotices {
  /**
   * The events due after a pass.
   * @param findings the sets whose status the pass computed (count 0 included).
   * @param present every set the pass saw: what is remembered about others is dropped.
   */
  due(findings: ReadonlyMap<string, NotInjectedFinding>, present: ReadonlySet<string>): DueNotice[];
  /** Remembers a notice whose event was recorded (a failed one is due again next pass). */
  reported(notice: DueNotice): void;
}

/** Reason of the Warning event: the set applies to pods it never injected. */
export const REASON_NOT_INJECTED = 'PodsNotInjected';
/** Reason of the Normal event that follows once no such pod is left. */
export const REASON_INJECTED = 'PodsInjected';
/** Under the API server's default event TTL of one hour, so the warning never lapses while it holds. */
export const DEFAULT_REFRESH_MS = 30 * 60_000;

export interface NotInjectedNoticesOptions {
  refreshMs?: number;
  /** Milliseconds on a monotonic scale. */
  nowMs?: () => number;
}

function warningMessage(finding: NotInjectedFinding): string {
  const more = finding.count - finding.samples.length;
  const names = `${finding.samples.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
  const pods = finding.count === 1 ? '1 pod matches' : `${finding.count} pods match`;
  return `${pods} this SidecarSet but ${finding.count === 1 ? 'was' : 'were'} created without its sidecars (the pod-inject webhook did not inject them, e.g. it was unreachable and its failurePolicy is Ignore); recreate them to inject: ${names}`;
}

/** Starts with nothing reported; make one per process (per cold start) and keep it across passes. */
export function notInjectedNotices(options: NotInjectedNoticesOptions = {}): NotInjectedNotices {
  const refreshMs = options.refreshMs ?? DEFAULT_REFRESH_MS;
  const nowMs = options.nowMs ?? (() => performance.now());
  const last = new Map<string, { count: number; samples: string; at: number }>();
  return {
    due(findings, present) {
      for (const name of last.keys()) if (!present.has(name)) last.delete(name);
      const now = nowMs();
      const out: DueNotice[] = [];
      for (const [set, finding] of findings) {
        const previous = last.get(set);
        const sidecarSet = { name: set, uid: finding.uid };
        if (finding.count === 0) {
          if (previous !== undefined) {
            out.push({ set, finding, event: { sidecarSet, type: 'Normal', reason: REASON_INJECTED, message: 'every pod this SidecarSet applies to now carries its sidecars' } });
          }
          continue;
        }
        const changed = previous === undefined || previous.count !== finding.count || previous.samples !== finding.samples.join(',');
        if (changed || now - previous.at >= refreshMs) {
          out.push({ set, finding, event: { sidecarSet, type: 'Warning', reason: REASON_NOT_INJECTED, message: warningMessage(finding) } });
        }
      }
      return out;
    },
    reported(notice) {
      if (notice.finding.count === 0) last.delete(notice.set);
      else last.set(notice.set, { count: notice.finding.count, samples: notice.finding.samples.join(','), at: nowMs() });
    },
  };
}
