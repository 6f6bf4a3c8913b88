/**
 * A followed set's pods as a watch shows them: the pace loop's passes plan
 * from this view instead of listing every pod of the set again (sidecarset.md
 * §7 "Pace"), as Kruise's controller plans from its informer cache.
 *
 * The view is one list (the set's first pass in the loop), then every change
 * a watch from that list's resourceVersion tells, applied in the API
 * server's order: at any moment it is the set's pods as stored at one
 * version (`position`, the last change or bookmark told), exactly what a
 * list at that version would have given.
 *
 * Its own writes (Kruise's "expectations"): every pod write of a pass goes
 * through {@link SetPodView.writer}, which records what the view must show
 * before it may serve again. A write that went through: the pod at that
 * write's resourceVersion or later. A guarded write refused because the pod
 * changed (a conflict; also a repeat of a write whose first answer was lost
 * and that landed after all): the pod at a later version than the one the
 * write tested. A pass asks the view for the pods (`source.list`); the view
 * answers once every expectation is met, so no pass ever plans from a view
 * older than its own writes (it would count a pod it just updated as not
 * updated and ready, and write one more pod than maxUnavailable allows).
 * When they are not met within `catchUpMs`, or a write's outcome is unknown
 * (no answer, an error, the pod gone), or the watch ends for any reason
 * (410, closed by the server, an error), the view is dropped and the pass
 * lists the set's pods, which starts a new view from that list.
 *
 * Every pod write stays guarded by the resourceVersion its decision came
 * from, so a pod another writer changed after the view's version is still
 * skipped and decided again, as after a list.
 */
import type { JsonPatchOperation } from '../admission/json-patch.ts';
import { stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import type { PodChangeType, PodNews, PodScope, PodWatchEnd, PodWrite, PodWriter, SetPodSource } from '../ports.ts';
import { WriteConflictError } from '../ports/errors.ts';

/** How long a pass waits for the view to show the loop's own writes before it lists instead. */
export const DEFAULT_CATCH_UP_MS = 2_000;

export interface PodViewOptions {
  /** Which changes wake the loop (the others are applied to the view silently). */
  news: PodNews;
  /** See {@link DEFAULT_CATCH_UP_MS}. */
  catchUpMs?: number;
}

/** Why a pass listed the set's pods instead of planning from the view. */
export type ListReason = 'first' | 'scope' | 'catch-up' | 'unsure' | Exclude<PodWatchEnd, 'stopped'>;

/** How the passes got their pods: from the view, or listed (and why). */
export interface PodViewCounts {
  fromView: number;
  listed: Partial<Record<ListReason, number>>;
}

export interface SetPodView {
  /** The set's pods for a pass: the view when it can serve, a list (which starts a new view) otherwise. */
  readonly source: SetPodSource;
  /** The pass's pod writes, each recorded as what the view must show before it serves again. */
  readonly writer: PodWriter;
  /** Whether the view follows the pods now (a watch runs), so {@link changed} can be waited on. */
  following(): boolean;
  /**
   * Resolves 'changed' once a change that is news arrived since the pods
   * last handed to a pass, or the watch ended so that a fresh list is due
   * (the server closed it, or 410); 'error' when the watch failed (the
   * caller waits out its interval before listing); 'timeout' after
   * `timeoutMs` or when `signal` aborts.
   */
  changed(timeoutMs: number, signal?: AbortSignal): Promise<'changed' | 'timeout' | 'error'>;
  counts(): PodViewCounts;
  /** Ends the watch; the view lists again if asked afterwards. */
  close(): void;
}

/** A resourceVersion as a number to compare, when it is one (etcd's revisions are; other stores may not be). */
function versionOf(resourceVersion: string | undefined): bigint | undefined {
  return resourceVersion !== undefined && /^\d{1,19}$/.test(resourceVersion) ? BigInt(resourceVersion) : undefined;
}

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

function podKeyOf(pod: Pod): string {
  return keyOf(stringOf(pod.metadata?.namespace) ?? '', stringOf(pod.metadata?.name) ?? '');
}

/** The resourceVersion a guarded patch tests first, if it does. */
function testedVersion(operations: readonly JsonPatchOperation[]): string | undefined {
  const first = operations[0];
  return first?.op === 'test' && first.path === '/metadata/resourceVersion' && typeof first.value === 'string' ? first.value : undefined;
}

const sameScope = (a: PodScope, b: PodScope) => a.namespace === b.namespace && a.labelSelector === b.labelSelector;

/** One watch's view: the pods at `position`, and whether news arrived since the last pass took them. */
interface Live {
  scope: PodScope;
  pods: Map<string, Pod>;
  position: bigint;
  news: boolean;
  stop: AbortController;
}

/**
 * A view of one set's pods over `source` (which must be able to watch, or
 * every pass lists as before), its writes through `writer`.
 */
export function setPodView(source: SetPodSource, writer: PodWriter, options: PodViewOptions): SetPodView {
  const catchUpMs = options.catchUpMs ?? DEFAULT_CATCH_UP_MS;
  const counts: PodViewCounts = { fromView: 0, listed: {} };
  let live: Live | undefined;
  /** Why the view is not live: the next list's reason. */
  let why: ListReason = 'first';
  /** The watch failed rather than ended: the caller waits before listing. */
  let failed = false;
  /** Per pod, the version the view must show it at (or later) before it serves. */
  const expected = new Map<string, bigint>();
  /** The versions this loop's writes made: their changes are not news. */
  const own = new Set<string>();
  const wakers = new Set<() => void>();
  const wake = () => {
    for (const waker of [...wakers]) waker();
  };

  const drop = (reason: ListReason) => {
    if (live === undefined) return;
    live.stop.abort();
    live = undefined;
    why = reason;
    wake();
  };

  const met = (view: Live): boolean => {
    for (const [key, version] of expected) {
      const pod = view.pods.get(key);
      const at = pod === undefined ? view.position : versionOf(stringOf(pod.metadata?.resourceVersion));
      if (at === undefined || at < version) return false;
    }
    return true;
  };

  const apply = (view: Live, type: PodChangeType, pod: Pod) => {
    const version = stringOf(pod.metadata?.resourceVersion);
    const at = versionOf(version);
    // Only versions that compare can tell the view's position: without, no pass may plan from it.
    if (at === undefined) {
      drop('unsure');
      return;
    }
    const key = podKeyOf(pod);
    if (type === 'DELETED') view.pods.delete(key);
    else view.pods.set(key, pod);
    if (at > view.position) view.position = at;
    const mine = version !== undefined && own.delete(version);
    if (!mine && options.news(type, pod)) view.news = true;
    wake();
  };

  const start = (scope: PodScope, pods: readonly Pod[], resourceVersion: string) => {
    const position = versionOf(resourceVersion);
    const watch = source.watch?.bind(source);
    if (position === undefined || watch === undefined) return;
    const view: Live = { scope, pods: new Map(pods.map((pod) => [podKeyOf(pod), pod])), position, news: false, stop: new AbortController() };
    live = view;
    failed = false;
    // Expectations the list already meets are met for good; a later one (a trailing write answered after the list, trailing-writes.ts) stays.
    for (const [key, version] of expected) if (version <= position) expected.delete(key);
    const sink = {
      change: (type: PodChangeType, pod: Pod) => {
        if (live === view) apply(view, type, pod);
      },
      progress: (version: string) => {
        const at = versionOf(version);
        if (live !== view || at === undefined) return;
        if (at > view.position) view.position = at;
        wake();
      },
    };
    void watch(scope, resourceVersion, sink, view.stop.signal).then((end) => {
      if (live !== view || end === 'stopped') return;
      failed = end === 'error';
      drop(end);
    });
  };

  /** Waits until `done()` holds or `timeoutMs` passes (or `signal` aborts); whether it holds. */
  const until = (done: () => boolean, timeoutMs: number, signal: AbortSignal | undefined): Promise<boolean> => {
    if (done()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        wakers.delete(check);
        signal?.removeEventListener('abort', finish);
        resolve(done());
      };
      const check = () => {
        if (done()) finish();
      };
      const timer = setTimeout(finish, timeoutMs);
      wakers.add(check);
      signal?.addEventListener('abort', finish, { once: true });
    });
  };

  const list: SetPodSource['list'] = async (scope, signal) => {
    if (live !== undefined && !sameScope(live.scope, scope)) drop('scope');
    if (live !== undefined) {
      const view = live;
      const ready = await until(() => live !== view || met(view), catchUpMs, signal);
      signal?.throwIfAborted();
      if (ready && live === view) {
        counts.fromView++;
        view.news = false;
        return { pods: [...view.pods.values()], resourceVersion: String(view.position) };
      }
      if (live === view) drop('catch-up');
    }
    counts.listed[why] = (counts.listed[why] ?? 0) + 1;
    const listed = await source.list(scope, signal);
    start(scope, listed.pods, listed.resourceVersion);
    return listed;
  };

  /** What the view must show after a write to `namespace/name`, from the write's outcome. */
  const record = async (namespace: string, name: string, tested: string | undefined, write: () => Promise<PodWrite>): Promise<PodWrite> => {
    const key = keyOf(namespace, name);
    const expect = (version: bigint | undefined) => {
      if (version === undefined) {
        drop('unsure');
        return;
      }
      const before = expected.get(key);
      if (before === undefined || before < version) expected.set(key, version);
    };
    let outcome: PodWrite;
    try {
      outcome = await write();
    } catch (error) {
      // Refused by its test: the pod is past the tested version (another writer's change, or this write landed on a first try whose answer was lost).
      const from = versionOf(tested);
      if (error instanceof WriteConflictError && from !== undefined) expect(from + 1n);
      else drop('unsure');
      throw error;
    }
    if (outcome.outcome === 'written') {
      own.add(outcome.resourceVersion);
      expect(versionOf(outcome.resourceVersion));
    } else drop('unsure');
    return outcome;
  };

  return {
    source: {
      list,
      changed: (...args) => source.changed(...args),
    },
    writer: {
      patch: (namespace, name, operations, signal) => record(namespace, name, testedVersion(operations), () => writer.patch(namespace, name, operations, signal)),
      patchStatus: (namespace, name, patch, signal) => record(namespace, name, undefined, () => writer.patchStatus(namespace, name, patch, signal)),
    },
    following: () => live !== undefined,
    async changed(timeoutMs, signal) {
      const view = live;
      if (view === undefined) return failed ? 'error' : 'changed';
      const seen = await until(() => live !== view || view.news, timeoutMs, signal);
      if (!seen) return 'timeout';
      if (live !== view) return failed ? 'error' : 'changed';
      return 'changed';
    },
    counts: () => ({ fromView: counts.fromView, listed: { ...counts.listed } }),
    close: () => {
      drop('first');
      expected.clear();
      own.clear();
    },
  };
}
