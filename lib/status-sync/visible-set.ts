/**
 * Waiting, bounded, until an admitted SidecarSet change is stored:
 * admission is not yet the write, and a reconcile decided from the set as it was
 * before the change would roll the old spec.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { stringOf } from '../kube/json.ts';
import type { AdmittedSidecarSet } from '../ports.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import type { QueuedChange } from './admitted-queue.ts';
import { POD_DEBOUNCE_MS } from './pod-trigger.ts';
import type { ReconcileDeps } from './set-reconcile.ts';

/** An admitted change is visible once the stored set is the admitted object or newer. */
function isVisible(set: SidecarSet, change: AdmittedSidecarSet): boolean {
  if (!isSameObject(set, change)) return false;
  // A pod change is about the set as stored, whatever its version.
  if (change.operation === 'CREATE' || change.operation === 'PODS') return true;
  return (stringOf(set.metadata?.resourceVersion) ?? '') !== change.resourceVersion;
}

function isSameObject(set: SidecarSet, change: AdmittedSidecarSet): boolean {
  return change.uid === '' || (stringOf(set.metadata?.uid) ?? '') === change.uid;
}

/**
 * How long after its arrival a CREATE is first read: the local server hands
 * the change over while the API server still waits for the webhook's answer
 * (on AWS, Lambda's queue usually took longer than this already).
 */
export const CREATE_DEBOUNCE_MS = 1_000;

/**
 * When an admitted change is first read: a CREATE {@link CREATE_DEBOUNCE_MS}
 * after it arrived, a pod change (`PODS`) {@link POD_DEBOUNCE_MS} after (the
 * write follows the webhook's answer), an UPDATE at once.
 */
export function firstReadAt(change: QueuedChange, createDebounceMs: number = CREATE_DEBOUNCE_MS): number {
  if (change.operation === 'CREATE') return change.queuedAtMs + createDebounceMs;
  if (change.operation === 'PODS') return change.queuedAtMs + POD_DEBOUNCE_MS;
  return change.queuedAtMs;
}

/**
 * The set an admitted change is about, once the change is stored (docs/RELIABILITY.md, "Admitted changes"),
 * read from {@link firstReadAt} on, which the caller waits for:
 * - a set that is not there costs one read: undefined (a CREATE that another
 *   webhook refused or that was never sent to storage is never there);
 * - a set there that is another object than the one admitted (a CREATE
 *   answered AlreadyExists, a forged review, a set deleted and made again)
 *   costs one read: undefined, nothing admitted was stored;
 * - a CREATE or a pod change is read once;
 * - an UPDATE not stored yet is read again, backing off, until it shows or
 *   `timeoutMs` passed: then the set as stored (the reconcile runs on what is there).
 */
export async function visibleSet(change: QueuedChange, deps: Pick<ReconcileDeps, 'statuses'>, timeoutMs: number, signal?: AbortSignal): Promise<SidecarSet | undefined> {
  const deadline = performance.now() + timeoutMs;
  for (let delay = 100; ; delay = Math.min(delay * 2, 1_000)) {
    const set = await deps.statuses.get(change.sidecarSet, signal);
    if (set === undefined || !isSameObject(set, change)) return undefined;
    if (isVisible(set, change)) return set;
    // The last wait is cut to the deadline, so the change gets its whole timeout.
    const left = deadline - performance.now();
    if (left <= 0) return set;
    await sleep(Math.min(delay, left), undefined, signal === undefined ? {} : { signal });
  }
}
