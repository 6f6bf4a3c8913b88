/**
 * How many waiting pods this batch updates (rollout.md §1.4, Kruise's
 * calculateUpgradeCount): partition, maxUnavailable and the unavailable count.
 */
import type { IntOrString } from '../sidecarset/types.ts';

/** An IntOrString the rollout cannot use (validation refuses it; a stored set may still carry it). */
export class InvalidIntOrPercentError extends Error {
  constructor(field: string, value: unknown) {
    super(`updateStrategy.${field} must be a non-negative integer or a percentage such as "20%", not ${JSON.stringify(value)}`);
    this.name = 'InvalidIntOrPercentError';
  }
}

/** An int, or a percent's number (intstr's Atoi of the text before `%`); throws on anything else. */
function parseIntOrPercent(field: string, value: IntOrString): { percent: boolean; n: number } {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new InvalidIntOrPercentError(field, value);
    return { percent: false, n: value };
  }
  if (typeof value === 'string') {
    const m = /^([+-]?\d+)%$/.exec(value);
    if (m !== null) return { percent: true, n: Number.parseInt(m[1] as string, 10) };
  }
  throw new InvalidIntOrPercentError(field, value);
}

/**
 * util.CalculatePartitionReplicas: an int as is; a percent rounded up, and
 * when that reaches `total` (> 1) for anything but exactly "100%", one less;
 * clamped to [0, total]. Unset is 0.
 */
export function partitionCount(partition: IntOrString | undefined | null, total: number): number {
  if (partition === undefined || partition === null) return 0;
  const { percent, n } = parseIntOrPercent('partition', partition);
  let out = percent ? Math.ceil((n * total) / 100) : n;
  if (percent && total > 1 && out === total && partition !== '100%') out = total - 1;
  return Math.min(Math.max(out, 0), total);
}

/** intstr.GetValueFromIntOrPercent(mu, total, roundUp=true); 1 when unset. */
export function maxUnavailableCount(maxUnavailable: IntOrString | undefined | null, total: number): number {
  if (maxUnavailable === undefined || maxUnavailable === null) return 1;
  const { percent, n } = parseIntOrPercent('maxUnavailable', maxUnavailable);
  return percent ? Math.ceil((n * total) / 100) : n;
}

/** What the count needs to know about one waiting pod. */
export interface BatchInput {
  /** Waiting pods in update order: whether each is ready (Kruise's IsPodReady). */
  waitingReady: readonly boolean[];
  /** All matched pods. */
  total: number;
  /** Matched pods already updated and (not consistent or not ready). */
  unavailable: number;
  partition: number;
  maxUnavailable: number;
  /**
   * Whether the walk may take the i-th waiting pod (its update can be
   * made). One it may not is set aside: it takes no slot and the next pod
   * takes its place. Asked only of the pods the walk reaches. Default: every one.
   */
  take?: (i: number) => boolean;
}

/** The outcome of {@link batchSize}. */
export interface Batch {
  /** Take this many waiting pods from the front of the order. */
  count: number;
  /** Waiting pods held back by partition. */
  heldByPartition: number;
  /** A ready pod did not fit in maxUnavailable (the walk stopped there). */
  blockedByMaxUnavailable: boolean;
  /** Waiting pods the walk reached and set aside ({@link BatchInput.take}). */
  setAside: number;
}

/**
 * calculateUpgradeCount: the last `partition` waiting pods are held back;
 * then the walk takes every not-ready pod for free and ready pods while the
 * unavailable count stays under maxUnavailable, stopping at the first ready
 * pod that does not fit (even if later ones are not ready). A pod `take`
 * refuses is passed over within the same pods (the held ones stay held), as
 * if it were not waiting.
 */
export function batchSize(input: BatchInput): Batch {
  const waiting = input.waitingReady.length;
  if (waiting - input.partition <= 0) return { count: 0, heldByPartition: waiting, blockedByMaxUnavailable: false, setAside: 0 };
  const eligible = waiting - input.partition;
  const take = input.take ?? (() => true);
  let unavailable = input.unavailable;
  let count = 0;
  let setAside = 0;
  for (let i = 0; i < eligible; i++) {
    const ready = input.waitingReady[i] === true;
    if (ready && unavailable >= input.maxUnavailable) return { count, heldByPartition: input.partition, blockedByMaxUnavailable: true, setAside };
    if (!take(i)) {
      setAside++;
      continue;
    }
    if (ready) unavailable++;
    count++;
  }
  return { count, heldByPartition: input.partition, blockedByMaxUnavailable: false, setAside };
}
