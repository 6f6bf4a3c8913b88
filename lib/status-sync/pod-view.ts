/**
 * A requeued set's pods as a watch shows them: reconciles plan from this view
 * instead of listing the set's pods again (ROLLOUT.md, "Requeue"), as Kruise's
 * controller plans from its informer cache. The view is one list, then every
 * change a watch from its resourceVersion tells, in the API server's order:
 * at any moment exactly what a list at `position` would have given.
 *
 * Its own writes (Kruise's "expectations"): every pod write goes through
 * {@link SetPodView.writer}, which records what the view must show before it
 * serves again: the pod at the write's resourceVersion or later; after a
 * conflict (also a repeat of a write whose lost first try landed), at a later
 * version than the one tested. So no reconcile plans from a view older than
 * its own writes, which would count a pod it just updated as not updated and
 * write one more pod than maxUnavailable allows. An expectation not met
 * within `catchUpMs`, a write of unknown outcome (no answer, an error, the pod
 * gone) or a watch that ends for any reason drops the view; the reconcile
 * lists the set's pods, which starts a new one. Every pod write stays guarded
 * by the resourceVersion its decision came from, so a pod another writer
 * changed after the view's version is skipped and decided again, as after a list.
 *
 * The parts, as client-go's: {@link WatchedPods} the indexer,
 * `PodExpectations` (pod-expectations.ts) what the loop wrote, and
 * {@link PodView} the informer that serves a reconcile once they are met.
 */
import type { JsonPatchOperation } from '../admission/json-patch.ts';
import { stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import { podKey } from '../sidecarset/pod-state.ts';
import type { PodChangeType, PodPredicate, PodScope, PodWatchEnd, PodWrite, PodWriter, SetPodSource } from '../ports.ts';
import { WriteConflictError } from '../ports/errors.ts';
import { PodExpectations, versionOf } from './pod-expectations.ts';

/** How long a reconcile waits for the view to show the loop's own writes before it lists instead. */
export const DEFAULT_CATCH_UP_MS = 2_000;

export interface PodViewOptions {
  /** Which changes wake the loop (the others are applied to the view silently). */
  predicate: PodPredicate;
  /** See {@link DEFAULT_CATCH_UP_MS}. */
  catchUpMs?: number;
}

/** Why a reconcile listed the set's pods instead of planning from the view. */
export type ListReason = 'first' | 'scope' | 'catch-up' | 'unsure' | Exclude<PodWatchEnd, 'stopped'>;

/** How the reconciles got their pods: from the view, or listed (and why). */
export interface PodViewCounts {
  fromView: number;
  listed: Partial<Record<ListReason, number>>;
}

export interface SetPodView {
  /** The set's pods for a reconcile: the view when it can serve, a list (which starts a new view) otherwise. */
  readonly source: SetPodSource;
  /** The reconcile's pod writes, each recorded as what the view must show before it serves again. */
  readonly writer: PodWriter;
  /** Whether the view watches the pods now (a watch runs), so {@link changed} can be waited on. */
  watching(): boolean;
  /**
   * Resolves 'changed' once a change the predicate accepts arrived since the pods
   * last handed to a reconcile, or the watch ended so that a fresh list is due
   * (the server closed it, or 410); 'error' when the watch failed (the
   * caller waits out its interval before listing); 'timeout' after
   * `timeoutMs` or when `signal` aborts.
   */
  changed(timeoutMs: number, signal?: AbortSignal): Promise<'changed' | 'timeout' | 'error'>;
  counts(): PodViewCounts;
  /** Ends the watch; the view lists again if asked afterwards. */
  close(): void;
}

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

/** The resourceVersion a guarded patch tests first, if it does. */
function testedVersion(operations: readonly JsonPatchOperation[]): string | undefined {
  const first = operations[0];
  return first?.op === 'test' && first.path === '/metadata/resourceVersion' && typeof first.value === 'string' ? first.value : undefined;
}

const sameScope = (a: PodScope, b: PodScope) => a.namespace === b.namespace && a.labelSelector === b.labelSelector;

/** One watch's store: the pods in `scope` at `position`, and whether an accepted change arrived since a reconcile last took them (dirty). */
class WatchedPods {
  readonly scope: PodScope;
  readonly stop = new AbortController();
  position: bigint;
  dirty = false;
  private readonly pods: Map<string, Pod>;

  constructor(scope: PodScope, pods: readonly Pod[], position: bigint) {
    this.scope = scope;
    this.pods = new Map(pods.map((pod) => [podKey(pod), pod]));
    this.position = position;
  }

  /** A change the watch told, at version `at`. */
  apply(type: PodChangeType, pod: Pod, at: bigint): void {
    const key = podKey(pod);
    if (type === 'DELETED') this.pods.delete(key);
    else this.pods.set(key, pod);
    this.advance(at);
  }

  advance(at: bigint): void {
    if (at > this.position) this.position = at;
  }

  /** The version the store shows a pod at: a pod it does not hold is gone as of its position. */
  shownAt(key: string): bigint | undefined {
    const pod = this.pods.get(key);
    return pod === undefined ? this.position : versionOf(stringOf(pod.metadata?.resourceVersion));
  }

  /** The pods for a reconcile, as a list at the store's position would give them; taking them clears dirty. */
  take(): { pods: Pod[]; resourceVersion: string } {
    this.dirty = false;
    return { pods: [...this.pods.values()], resourceVersion: String(this.position) };
  }
}

/** Waits for a condition that holds after some wake-up (a change, a drop). */
class Waiters {
  private readonly wakers = new Set<() => void>();

  wake(): void {
    for (const waker of [...this.wakers]) waker();
  }

  /** Waits until `done()` holds or `timeoutMs` passes (or `signal` aborts); whether it holds. */
  until(done: () => boolean, timeoutMs: number, signal: AbortSignal | undefined): Promise<boolean> {
    if (done()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.wakers.delete(check);
        signal?.removeEventListener('abort', finish);
        resolve(done());
      };
      const check = () => {
        if (done()) finish();
      };
      const timer = setTimeout(finish, timeoutMs);
      this.wakers.add(check);
      signal?.addEventListener('abort', finish, { once: true });
    });
  }
}

/**
 * A view of one set's pods over `source` (which must be able to watch, or
 * every reconcile lists as before), its writes through `writer`.
 */
export function setPodView(source: SetPodSource, writer: PodWriter, options: PodViewOptions): SetPodView {
  return new PodView(source, writer, options);
}

/** The informer of one set's pods (see the file's comment): a store kept by a watch, served once the expectations are met. */
class PodView implements SetPodView {
  readonly source: SetPodSource;
  readonly writer: PodWriter;
  private readonly upstream: SetPodSource;
  private readonly options: PodViewOptions;
  private readonly tally: PodViewCounts = { fromView: 0, listed: {} };
  private readonly expectations = new PodExpectations();
  private readonly waiters = new Waiters();
  private live: WatchedPods | undefined;
  /** Why the view is not live: the next list's reason. */
  private why: ListReason = 'first';
  /** The watch failed rather than ended: the caller waits before listing. */
  private failed = false;

  constructor(source: SetPodSource, writer: PodWriter, options: PodViewOptions) {
    this.upstream = source;
    this.options = options;
    this.source = { list: (scope, signal) => this.list(scope, signal), changed: (...args) => source.changed(...args) };
    this.writer = {
      patch: (namespace, name, operations, signal) => this.record(namespace, name, testedVersion(operations), () => writer.patch(namespace, name, operations, signal)),
      patchStatus: (namespace, name, patch, signal) => this.record(namespace, name, undefined, () => writer.patchStatus(namespace, name, patch, signal)),
    };
  }

  watching(): boolean {
    return this.live !== undefined;
  }

  async changed(timeoutMs: number, signal?: AbortSignal): Promise<'changed' | 'timeout' | 'error'> {
    const view = this.live;
    if (view === undefined) return this.failed ? 'error' : 'changed';
    const seen = await this.waiters.until(() => this.live !== view || view.dirty, timeoutMs, signal);
    if (!seen) return 'timeout';
    if (this.live !== view) return this.failed ? 'error' : 'changed';
    return 'changed';
  }

  counts(): PodViewCounts {
    return { fromView: this.tally.fromView, listed: { ...this.tally.listed } };
  }

  close(): void {
    this.drop('first');
    this.expectations.clear();
  }

  /** The pods for a reconcile: the store once it shows the loop's writes (within catchUpMs), else a list, which starts a new watch. */
  private async list(scope: PodScope, signal: AbortSignal | undefined): Promise<{ pods: readonly Pod[]; resourceVersion: string }> {
    if (this.live !== undefined && !sameScope(this.live.scope, scope)) this.drop('scope');
    const view = this.live;
    if (view !== undefined) {
      const ready = await this.waiters.until(() => this.live !== view || this.expectations.satisfied((key) => view.shownAt(key)), this.options.catchUpMs ?? DEFAULT_CATCH_UP_MS, signal);
      signal?.throwIfAborted();
      if (ready && this.live === view) {
        this.tally.fromView++;
        return view.take();
      }
      if (this.live === view) this.drop('catch-up');
    }
    this.tally.listed[this.why] = (this.tally.listed[this.why] ?? 0) + 1;
    const listed = await this.upstream.list(scope, signal);
    this.start(scope, listed.pods, listed.resourceVersion);
    return listed;
  }

  /** A new store from a list, kept by a watch from the list's version. */
  private start(scope: PodScope, pods: readonly Pod[], resourceVersion: string): void {
    const position = versionOf(resourceVersion);
    const watch = this.upstream.watch?.bind(this.upstream);
    if (position === undefined || watch === undefined) return;
    const view = new WatchedPods(scope, pods, position);
    this.live = view;
    this.failed = false;
    this.expectations.listed(position);
    const sink = {
      change: (type: PodChangeType, pod: Pod) => {
        if (this.live === view) this.apply(view, type, pod);
      },
      progress: (version: string) => {
        const at = versionOf(version);
        if (this.live !== view || at === undefined) return;
        view.advance(at);
        this.waiters.wake();
      },
    };
    void watch(scope, resourceVersion, sink, view.stop.signal).then((end) => {
      if (this.live !== view || end === 'stopped') return;
      this.failed = end === 'error';
      this.drop(end);
    });
  }

  private apply(view: WatchedPods, type: PodChangeType, pod: Pod): void {
    const version = stringOf(pod.metadata?.resourceVersion);
    const at = versionOf(version);
    // Only versions that compare can tell the view's position: without, no reconcile may plan from it.
    if (version === undefined || at === undefined) {
      this.drop('unsure');
      return;
    }
    view.apply(type, pod, at);
    if (!this.expectations.observedOwn(version) && this.options.predicate(type, pod)) view.dirty = true;
    this.waiters.wake();
  }

  /** The store is dropped: the next reconcile lists, for `reason`. */
  private drop(reason: ListReason): void {
    if (this.live === undefined) return;
    this.live.stop.abort();
    this.live = undefined;
    this.why = reason;
    this.waiters.wake();
  }

  /** What the view must show after a write to `namespace/name`, from the write's outcome. */
  private async record(namespace: string, name: string, tested: string | undefined, write: () => Promise<PodWrite>): Promise<PodWrite> {
    const key = keyOf(namespace, name);
    const expect = (version: bigint | undefined) => {
      if (version === undefined) this.drop('unsure');
      else this.expectations.expect(key, version);
    };
    let outcome: PodWrite;
    try {
      outcome = await write();
    } catch (error) {
      // Refused by its test: the pod is past the tested version (another writer's change, or this write landed on a first try whose answer was lost).
      const from = versionOf(tested);
      if (error instanceof WriteConflictError && from !== undefined) expect(from + 1n);
      else this.drop('unsure');
      throw error;
    }
    if (outcome.outcome === 'written') {
      this.expectations.wrote(outcome.resourceVersion);
      expect(versionOf(outcome.resourceVersion));
    } else this.drop('unsure');
    return outcome;
  }
}
