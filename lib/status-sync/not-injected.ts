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
 * - a SidecarSet is cluster-scoped, so its events live in `default`, which
 *   other tenants may read: its event gives counts only, and each namespace
 *   holding such pods gets its own Warning event (`PodNotInjected`, on its
 *   first such pod, naming that namespace's pods only), so no event in one
 *   namespace names a pod of another; at most {@link MAX_NAMESPACES_RECORDED}
 *   namespaces per set are recorded;
 * - it needs one extra permission, `create` on events, and no schema change.
 *
 * Events are transient (the API server drops them after an hour by default)
 * and must not be written every reconcile, so what was reported is remembered
 * per set (event-memory.ts): a Warning goes out when a set's uninjected pods
 * first appear or change, again every `refreshMs` while they remain (before
 * the old event expires), and a Normal event says when they are gone. The
 * counts are also in every reconcile's result and log line.
 */
import type { PodEvent, SidecarSetEvent } from '../ports.ts';
import { eventMemory, type EventMemoryOptions } from './event-memory.ts';

/** One uninjected pod, as its namespace's event names it. */
export interface NotInjectedPod {
  name: string;
  uid: string;
}

/** What a reconcile found in one namespace for one set. */
export interface NamespaceFinding {
  namespace: string;
  count: number;
  /** The first few such pods of the namespace, in list order. */
  pods: readonly NotInjectedPod[];
}

/** What a reconcile found for one set. */
export interface NotInjectedFinding {
  uid: string;
  count: number;
  /** How many namespaces hold such pods. */
  namespaceCount: number;
  /** The first {@link MAX_NAMESPACES_RECORDED} of those namespaces, in list order: each gets an Event naming its own pods. */
  namespaces: readonly NamespaceFinding[];
}

/** An event to record, and what to remember once it is recorded. */
export interface DueEvent {
  set: string;
  /** On the SidecarSet (in `default`, as for any cluster-scoped object): counts only, never a pod's name. */
  event: SidecarSetEvent;
  /** One per namespace told, in that namespace, on its first such pod: only that namespace's pods are named. */
  podEvents: PodEvent[];
  finding: NotInjectedFinding;
}

export interface NotInjectedEvents {
  /**
   * The events due after a reconcile.
   * @param findings the sets whose status the reconcile computed (count 0 included).
   * @param present every set the reconcile saw: what is remembered about others is dropped.
   */
  due(findings: ReadonlyMap<string, NotInjectedFinding>, present: ReadonlySet<string>): DueEvent[];
  /** Remembers a notice whose events were recorded (a failed one is due again next reconcile). */
  reported(notice: DueEvent): void;
}

/** Namespaces told per set and notice: the events a notice writes stay few however widely the pods are spread. */
export const MAX_NAMESPACES_RECORDED = 20;
/** Reason of the Warning event in a pod's namespace, on one of its uninjected pods. */
export const REASON_POD_NOT_INJECTED = 'PodNotInjected';

/** Reason of the Warning event: the set applies to pods it never injected. */
export const REASON_NOT_INJECTED = 'PodsNotInjected';
/** Reason of the Normal event that follows once no such pod is left. */
export const REASON_INJECTED = 'PodsInjected';
export type NotInjectedEventsOptions = EventMemoryOptions;

const WHY = 'created without its sidecars (the pod-inject webhook did not inject them, e.g. it was unreachable and its failurePolicy is Ignore)';

function warningMessage(finding: NotInjectedFinding): string {
  const pods = finding.count === 1 ? '1 pod matches' : `${finding.count} pods match`;
  const where = finding.namespaceCount === 1 ? '1 namespace' : `${finding.namespaceCount} namespaces`;
  const told = finding.namespaceCount > finding.namespaces.length ? ` (the first ${finding.namespaces.length} namespaces)` : '';
  return (
    `${pods} this SidecarSet but ${finding.count === 1 ? 'was' : 'were'} ${WHY}, in ${where}; recreate them to inject. ` +
    `Each namespace${told} is told of its own pods by a ${REASON_POD_NOT_INJECTED} event (kubectl get events -A --field-selector reason=${REASON_POD_NOT_INJECTED})`
  );
}

/** The event in one namespace, on its first uninjected pod, naming that namespace's pods only. */
function namespaceEvent(set: string, found: NamespaceFinding): PodEvent[] {
  const [first] = found.pods;
  if (first === undefined) return [];
  const more = found.count - found.pods.length;
  const names = `${found.pods.map((p) => p.name).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
  const pods = found.count === 1 ? '1 pod in this namespace matches' : `${found.count} pods in this namespace match`;
  return [{
    pod: { namespace: found.namespace, name: first.name, uid: first.uid },
    type: 'Warning',
    reason: REASON_POD_NOT_INJECTED,
    message: `${pods} SidecarSet ${set} but ${found.count === 1 ? 'was' : 'were'} ${WHY}; recreate them to inject: ${names}`,
  }];
}

/** What a finding is remembered by: a change in it is new; undefined when no pod is left to tell of. */
function keyOf(finding: NotInjectedFinding): string | undefined {
  if (finding.count === 0) return undefined;
  return JSON.stringify([finding.count, finding.namespaceCount, finding.namespaces.map((n) => [n.namespace, n.count, n.pods.map((p) => p.name)])]);
}

/** Starts with nothing reported; make one per process (per cold start) and keep it across resyncs. */
export function notInjectedEvents(options: NotInjectedEventsOptions = {}): NotInjectedEvents {
  const memory = eventMemory(options);
  return {
    due(findings, present) {
      memory.keep(present);
      const out: DueEvent[] = [];
      for (const [set, finding] of findings) {
        const sidecarSet = { name: set, uid: finding.uid };
        const due = memory.due(set, keyOf(finding));
        if (due === 'gone') {
          out.push({ set, finding, podEvents: [], event: { sidecarSet, type: 'Normal', reason: REASON_INJECTED, message: 'every pod this SidecarSet applies to now carries its sidecars' } });
        } else if (due === 'record') {
          const podEvents = finding.namespaces.flatMap((found) => namespaceEvent(set, found));
          out.push({ set, finding, podEvents, event: { sidecarSet, type: 'Warning', reason: REASON_NOT_INJECTED, message: warningMessage(finding) } });
        }
      }
      return out;
    },
    reported(notice) {
      memory.recorded(notice.set, keyOf(notice.finding));
    },
  };
}
