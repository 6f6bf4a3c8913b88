/**
 * Where a freed slot's wait goes in the rollout bench (pure: no control plane).
 * A slot frees when an updated pod is seen available again; the next pod's
 * image patch fills it. For each pod updated after the first batch, the steps
 * from the freed slot to its patch being seen, read from the API server's
 * audit log of the functions' identity and the recorder's watch times:
 * the reconcile that wrote the pod is found by its last SidecarSet read and
 * status write before the pod's patch.
 */
import { median } from './stats.ts';
import type { TimedRequest } from './audit-count.ts';

/** One pod of the rollout as the recorder saw it, times in milliseconds since the epoch. */
export interface SeenPod {
  name: string;
  updatedAt: number;
  availableAt: number | undefined;
}

/** Medians, in milliseconds, of each step of a freed slot's wait. */
export interface SlotWait {
  /** Pods the steps were found for (every pod after the first batch whose patch and reconcile the log holds). */
  pods: number;
  /** The slot frees → the SidecarSet read of the reconcile that fills it (negative: that reconcile was reading already). */
  freedToRead: number;
  /** That read → its status write arrives: the revisions read alongside, the plan, the debounce's rest. */
  readToStatus: number;
  /** The status write, as the API server took it. */
  status: number;
  /** The status written → the pod's patch arrives: its place among the reconcile's pod writes. */
  statusToPatch: number;
  /** The pod's image patch, as the API server took it. */
  patch: number;
  /** The patch answered → the recorder's watch sees it. */
  patchToSeen: number;
}

/** The last of `sorted` (by `at`) at or before `ms`. */
function lastAtOrBefore<T>(sorted: readonly T[], at: (item: T) => number, ms: number): T | undefined {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (at(sorted[mid]!) <= ms) low = mid + 1;
    else high = mid;
  }
  return sorted[low - 1];
}

/** A pod updated after the first batch, and when the slot it fills was freed (none when fewer pods became available). */
export interface SlotFill {
  pod: SeenPod;
  freedAt: number | undefined;
}

/**
 * The slots of a rollout `budget` wide as pods fill them: the k-th pod updated after the
 * first batch fills the slot the k-th pod to become available freed.
 */
export function slotFills(pods: readonly SeenPod[], budget: number): SlotFill[] {
  const freed = pods.flatMap((p) => (p.availableAt === undefined ? [] : [p.availableAt])).sort((a, b) => a - b);
  const updated = [...pods].sort((a, b) => a.updatedAt - b.updatedAt);
  return updated.slice(budget).map((pod, k) => ({ pod, freedAt: freed[k] }));
}

/** The wait's steps over the rollout's slot fills; undefined when no fill could be traced. */
export function slotWait(requests: readonly TimedRequest[], fills: readonly SlotFill[]): SlotWait | undefined {
  const byReceived = (request: string) => requests.filter((r) => r.request === request).sort((a, b) => a.receivedMs - b.receivedMs);
  const reads = byReceived('get sidecarsets');
  const statuses = byReceived('patch sidecarsets/status');
  const patches = new Map(byReceived('patch pods').map((r) => [r.name, r]));
  const steps: Omit<SlotWait, 'pods'>[] = [];
  for (const { pod, freedAt } of fills) {
    const patch = patches.get(pod.name);
    if (freedAt === undefined || patch === undefined) continue;
    const status = lastAtOrBefore(statuses, (r) => r.receivedMs, patch.receivedMs);
    const read = status === undefined ? undefined : lastAtOrBefore(reads, (r) => r.receivedMs, status.receivedMs);
    if (status === undefined || read === undefined) continue;
    steps.push({
      freedToRead: read.receivedMs - freedAt,
      readToStatus: status.receivedMs - read.receivedMs,
      status: status.doneMs - status.receivedMs,
      statusToPatch: patch.receivedMs - status.doneMs,
      patch: patch.doneMs - patch.receivedMs,
      patchToSeen: pod.updatedAt - patch.doneMs,
    });
  }
  if (steps.length === 0) return undefined;
  const of = (step: keyof Omit<SlotWait, 'pods'>) => median(steps.map((s) => s[step]));
  return { pods: steps.length, freedToRead: of('freedToRead'), readToStatus: of('readToStatus'), status: of('status'), statusToPatch: of('statusToPatch'), patch: of('patch'), patchToSeen: of('patchToSeen') };
}
