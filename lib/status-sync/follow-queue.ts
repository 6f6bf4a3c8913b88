/**
 * The sets the pace loop follows (pace.ts), held as client-go's workqueue
 * holds keys: a set added while it is already followed is one entry (its
 * place in the round kept), and every set is due again at the latest after
 * the loop's interval, sooner when news about it arrives. A set just read
 * (handed over by the full pass, or an admitted change made visible) is due
 * at once, from that read.
 */
import type { SetPodSource } from '../ports.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import type { AdmittedQueue } from './admitted-queue.ts';
import { FollowedSet } from './followed-set.ts';
import type { TrailingWrites } from './trailing-writes.ts';
import { setTimeout as sleep } from 'node:timers/promises';

/** What ended a wait: news of a set's pods, an admitted change, pods a pass left now free, the interval, or the signal. */
export type Wake = 'changed' | 'admitted' | 'freed' | 'timeout' | 'stopped';

export class FollowQueue {
  private readonly sets = new Map<string, FollowedSet>();
  /** Sets read just now, passed again at once from that read (the full pass's gives the watch its starting point). */
  private readonly fresh = new Map<string, SidecarSet>();

  private readonly nowMs: () => number;

  constructor(nowMs: () => number) {
    this.nowMs = nowMs;
  }

  /** Sets handed over are in flight by a pass that rolled them: their last batch is followed until ready. */
  handOver(names: Iterable<string>): void {
    for (const name of names) if (!this.sets.has(name)) this.sets.set(name, new FollowedSet(this.nowMs(), true));
  }

  /** An admitted change, now visible: the set starts over (its progress clock too; its view of the pods goes on). */
  readmit(name: string, set: SidecarSet): void {
    this.fresh.set(name, set);
    this.sets.set(name, new FollowedSet(this.nowMs(), false, this.sets.get(name)?.view));
  }

  /** The set as read just now, if it was; a set is fresh once. */
  takeFresh(name: string): SidecarSet | undefined {
    const set = this.fresh.get(name);
    this.fresh.delete(name);
    return set;
  }

  hasFresh(): boolean {
    return this.fresh.size > 0;
  }

  /** The set leaves the loop, and its watch stops. */
  forget(name: string): void {
    this.sets.get(name)?.close();
    this.sets.delete(name);
  }

  /** The followed sets, in the order they joined, as they are now (a pass may forget one). */
  list(): [string, FollowedSet][] {
    return [...this.sets];
  }

  names(): string[] {
    return [...this.sets.keys()];
  }

  /** Whether the set is followed now (its pods watched). */
  has(name: string): boolean {
    return this.sets.has(name);
  }

  get size(): number {
    return this.sets.size;
  }

  /**
   * Until a followed set's pods change in a way worth a pass ('changed', which the caller lets settle), a
   * change is admitted, pods a pass left are free, or `intervalMs` passes.
   */
  async next(setPods: SetPodSource, intervalMs: number, signal: AbortSignal | undefined, admitted: AdmittedQueue | undefined, trailing: TrailingWrites): Promise<Wake> {
    const stop = new AbortController();
    const bounded = signal === undefined ? stop.signal : AbortSignal.any([signal, stop.signal]);
    const timer = sleep(intervalMs, 'timeout' as const, { signal: bounded }).catch(() => 'stopped' as const);
    // A watch that failed ('error', e.g. refused at once) says nothing: wait out the interval instead of passing again at once.
    const news = [...this.sets.values()].flatMap((followed) => {
      const waited = followed.news(setPods, intervalMs, bounded);
      return waited === undefined ? [] : [waited.then((r) => (r === 'error' ? timer : r))];
    });
    const arrival = admitted === undefined ? [] : [admitted.arrival().then(() => 'admitted' as const)];
    // Pods a pass left because a write to them trailed are free once the queue drains: no pod change would tell.
    const freed = [...this.sets.values()].some((followed) => followed.deferred) ? [trailing.drained().then(() => 'freed' as const)] : [];
    const first = await Promise.race([timer, ...news, ...arrival, ...freed]);
    stop.abort();
    return first;
  }
}
