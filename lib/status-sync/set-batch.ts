/**
 * A set's batch (set-reconcile.ts, step 6): its writes sent in Kruise's order,
 * and the pods it skipped told.
 */
import { errorMessage } from '../errors.ts';
import { stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import type { PodEvent } from '../ports.ts';
import { WriteConflictError } from '../ports/errors.ts';
import { FLIP_EVENT, POD_UPDATE_FAILED_REASON, podUpdateFailedMessage, podUpdateFailedNote, type BatchWrites } from '../rollout/batch.ts';
import { upgradableConditionPatch } from '../rollout/upgradable-condition.ts';
import { podKey, podRef } from '../sidecarset/pod-state.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import { forEachLimited } from './concurrency.ts';
import type { ReconcileDeps, ReconcileOptions, ReconcileResult } from './set-reconcile-types.ts';
import type { DeferredWrites } from './deferred-writes.ts';

const DEFAULT_WRITE_CONCURRENCY = 8;

/**
 * The batch without the pods a deferred write of an earlier reconcile still
 * changes: their writes would be guarded by a version that write is about to
 * move past. They are decided again by a later reconcile (counted in `deferred`).
 */
export function withoutBusyPods(writes: BatchWrites, deferredWrites: DeferredWrites, result: ReconcileResult): BatchWrites {
  const free = <T extends { pod: Pod }>(items: readonly T[]) => items.filter((item) => !deferredWrites.busy(podKey(item.pod)));
  const updates = free(writes.updates);
  const flips = free(writes.flips);
  const notUpgradable = free(writes.notUpgradable);
  const deferred = writes.updates.length - updates.length + writes.flips.length - flips.length + writes.notUpgradable.length - notUpgradable.length;
  if (deferred === 0) return writes;
  result.deferred = deferred;
  return { ...writes, updates, flips, notUpgradable };
}



/** A pod the batch skipped because its write could not be planned or was refused. */
interface PodFailure {
  pod: Pod;
  why: string;
}

/**
 * Sends a batch's writes in Kruise's order: the flips (each recorded on its pod
 * by an Event), the not-upgradable conditions, their Event, then each pod's
 * patch and condition. A plan with flips has no updates (Kruise 1.9 returns
 * after flipping): the next batch is decided from the pods as flipped, by
 * the requeued reconcile the flips put in flight. A pod whose update fails (other than a
 * conflict, decided again next reconcile) is skipped and returned, to be told;
 * Kruise stops the whole reconcile there instead. With a deferred queue, the
 * updated pods' conditions and the flips' Events are queued there, not
 * waited for, and nothing queued starts while this batch writes pods.
 * Each pod updated is added to `updated`, as listed (for the counts the reconcile leaves).
 */
export async function sendBatch(writes: BatchWrites, set: { name: string; uid: string }, deps: ReconcileDeps, options: ReconcileOptions, result: ReconcileResult, own: Set<string>, updated: Pod[]): Promise<PodFailure[]> {
  const failures: PodFailure[] = writes.unplanned.map(({ pod, why }) => ({ pod, why: `its patch cannot be made: ${why}` }));
  for (const { pod, why } of writes.unplanned) result.errors.push({ sidecarSet: result.sidecarSet, operation: `plan the update of pod ${podKey(pod)}`, message: why });
  const record = (write: { outcome: string; resourceVersion?: string }) => {
    if (write.resourceVersion !== undefined) own.add(write.resourceVersion);
  };
  // The writes that free or take a slot go first: nothing deferred starts while they are sent.
  const { deferredWrites } = deps.rollout;
  const release = deferredWrites?.hold();
  try {
    await new BatchWriter(set, deps, options, result, record, failures, updated).send(writes);
  } finally {
    release?.();
  }
  return failures;
}

/** The batch's writes in order (see sendBatch), one method a kind; conditions after updates go to the deferred queue when there is one. */
class BatchWriter {
  private readonly set: { name: string; uid: string };
  private readonly deps: ReconcileDeps;
  private readonly signal: AbortSignal | undefined;
  private readonly concurrency: number;
  private readonly result: ReconcileResult;
  /** Remembers the version a write made (the reconcile's own, for its watch). */
  private readonly record: (write: { outcome: string; resourceVersion?: string }) => void;
  private readonly failures: PodFailure[];
  private readonly updated: Pod[];

  constructor(set: { name: string; uid: string }, deps: ReconcileDeps, options: ReconcileOptions, result: ReconcileResult, record: (write: { outcome: string; resourceVersion?: string }) => void, failures: PodFailure[], updated: Pod[]) {
    this.set = set;
    this.deps = deps;
    this.signal = options.signal;
    this.concurrency = options.writeConcurrency ?? DEFAULT_WRITE_CONCURRENCY;
    this.result = result;
    this.record = record;
    this.failures = failures;
    this.updated = updated;
  }

  async send(writes: BatchWrites): Promise<void> {
    await forEachLimited(writes.flips, this.concurrency, (flip) => this.flip(flip));
    await forEachLimited(writes.notUpgradable, this.concurrency, (mark) => this.markNotUpgradable(mark));
    if (writes.event !== undefined) await this.setEvent('Normal', writes.event);
    // patchPodMetadata keys the rollout fence kept out of this batch's patches (rollout/fence-check.ts).
    if (writes.held !== undefined) await this.setEvent('Warning', writes.held);
    // Every pod's image first, then the conditions of those written: a pod's restart (and so the rollout) waits
    // for its image patch alone, not for the condition patches of the pods before it.
    const written: Condition[] = [];
    await forEachLimited(writes.updates, this.concurrency, (update) => this.update(update, written));
    await forEachLimited(written, this.concurrency, (condition) => this.setCondition(condition));
  }

  private error(operation: string, error: unknown): void {
    this.result.errors.push({ sidecarSet: this.result.sidecarSet, operation, message: errorMessage(error) });
  }

  private async flip({ pod, patch }: BatchWrites['flips'][number]): Promise<void> {
    const { signal, result } = this;
    const ref = podRef(pod);
    if (signal?.aborted === true) return;
    let event: PodEvent;
    try {
      const write = await this.deps.rollout.pods.patch(ref.namespace, ref.name, patch, signal);
      if (write.outcome === 'gone') return;
      this.record(write);
      result.podsFlipped++;
      event = { pod: ref, ...FLIP_EVENT.succeeded };
    } catch (error) {
      // A pod changed since the list is decided again next reconcile: no failure to tell.
      if (error instanceof WriteConflictError) {
        result.conflicts++;
        return;
      }
      this.error(`flip hot sidecars of pod ${ref.namespace}/${ref.name}`, error);
      event = { pod: ref, type: FLIP_EVENT.failed.type, reason: FLIP_EVENT.failed.reason, message: FLIP_EVENT.failed.message(errorMessage(error)) };
    }
    const operation = `record event on pod ${ref.namespace}/${ref.name}`;
    const { deferredWrites, podEvents } = this.deps.rollout;
    if (deferredWrites !== undefined) {
      deferredWrites.add({ sidecarSet: result.sidecarSet, operation, run: () => podEvents.record(event, signal) });
      return;
    }
    try {
      await podEvents.record(event, signal);
    } catch (error) {
      this.error(operation, error);
    }
  }

  private async markNotUpgradable({ pod, condition }: BatchWrites['notUpgradable'][number]): Promise<void> {
    const { namespace, name } = podRef(pod);
    try {
      this.record(await this.deps.rollout.pods.patchStatus(namespace, name, condition, this.signal));
    } catch (error) {
      this.error(`mark pod ${namespace}/${name} not upgradable`, error);
    }
  }

  private async setEvent(type: 'Normal' | 'Warning', event: { reason: string; message: string }): Promise<void> {
    try {
      await this.deps.events.record({ sidecarSet: this.set, type, reason: event.reason, message: event.message }, this.signal);
    } catch (error) {
      this.error('record event', error);
    }
  }

  /** A pod's image patch; its condition to `written`, or to the deferred queue when there is one. */
  private async update({ pod, patch, condition }: BatchWrites['updates'][number], written: Condition[]): Promise<void> {
    const { signal, result } = this;
    const { pods, deferredWrites } = this.deps.rollout;
    const { namespace, name } = podRef(pod);
    if (signal?.aborted === true) return;
    try {
      const write = await pods.patch(namespace, name, patch, signal);
      if (write.outcome === 'gone') return;
      this.record(write);
      result.podsUpdated++;
      this.updated.push(pod);
    } catch (error) {
      if (error instanceof WriteConflictError) result.conflicts++;
      else {
        this.error(`update pod ${namespace}/${name}`, error);
        this.failures.push({ pod, why: errorMessage(error) });
      }
      return;
    }
    if (condition === undefined) return;
    if (deferredWrites === undefined) written.push({ pod, condition });
    else {
      const run = async () => {
        this.record(await pods.patchStatus(namespace, name, condition, signal));
      };
      deferredWrites.add({ pod: podKey(pod), sidecarSet: result.sidecarSet, operation: `set condition on pod ${namespace}/${name}`, run });
    }
  }

  private async setCondition({ pod, condition }: Condition): Promise<void> {
    const { namespace, name } = podRef(pod);
    try {
      this.record(await this.deps.rollout.pods.patchStatus(namespace, name, condition, this.signal));
    } catch (error) {
      this.error(`set condition on pod ${namespace}/${name}`, error);
    }
  }
}

/** An updated pod's condition, sent after every image patch of the batch. */
interface Condition {
  pod: Pod;
  condition: NonNullable<BatchWrites['updates'][number]['condition']>;
}

/** Warning Events about skipped pods per reconcile, at most: one bad annotation on a thousand pods must not flood the Events. */
export const MAX_POD_FAILURE_EVENTS = 5;

/**
 * Tells each pod the batch skipped: its SidecarSetUpgradable condition
 * (False, PodUpdateFailed, why) and a Warning Event on the set naming it,
 * the Event only when the condition changed (or could not be written), so a
 * pod failing the same way reconcile after reconcile is recorded once; at most
 * {@link MAX_POD_FAILURE_EVENTS} Events a reconcile, then one counting the rest.
 */
export async function recordFailures(failures: readonly PodFailure[], set: SidecarSet, deps: ReconcileDeps, result: ReconcileResult, own: Set<string>, signal: AbortSignal | undefined): Promise<void> {
  result.podsFailed = failures.length;
  if (failures.length === 0) return;
  const ref = { name: result.sidecarSet, uid: stringOf(set.metadata?.uid) ?? '' };
  const now = deps.rollout.clock.now();
  const fresh: PodFailure[] = [];
  for (const failure of failures) {
    const { namespace, name } = podRef(failure.pod);
    const condition = upgradableConditionPatch(failure.pod, ref.name, podUpdateFailedNote(failure.why), now);
    if (condition === undefined) continue;
    fresh.push(failure);
    if (signal?.aborted === true) continue;
    try {
      const write = await deps.rollout.pods.patchStatus(namespace, name, condition, signal);
      if (write.outcome === 'written') own.add(write.resourceVersion);
    } catch (error) {
      result.errors.push({ sidecarSet: ref.name, operation: `mark pod ${namespace}/${name} update failed`, message: errorMessage(error) });
    }
  }
  const told = fresh.slice(0, MAX_POD_FAILURE_EVENTS).map((f) => ({ type: 'Warning' as const, reason: POD_UPDATE_FAILED_REASON, message: podUpdateFailedMessage(podKey(f.pod), f.why) }));
  if (fresh.length > MAX_POD_FAILURE_EVENTS) {
    const rest = fresh.slice(MAX_POD_FAILURE_EVENTS);
    told.push({ type: 'Warning' as const, reason: POD_UPDATE_FAILED_REASON, message: `${rest.length} more pod(s) skipped this reconcile (${rest.slice(0, 3).map((f) => podKey(f.pod)).join(', ')}${rest.length > 3 ? ', …' : ''}): see their SidecarSetUpgradable condition` });
  }
  for (const event of told) {
    try {
      await deps.events.record({ sidecarSet: ref, ...event }, signal);
    } catch (error) {
      result.errors.push({ sidecarSet: ref.name, operation: 'record event', message: errorMessage(error) });
    }
  }
}
