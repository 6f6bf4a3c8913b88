/**
 * "Tell me when this list changes": one watch from a list's resourceVersion
 * that settles on the first event the predicate accepts, or after a timeout.
 * The controller waits on a set's pods with it (kube-pods.ts), the
 * rollout view on the SidecarSets and their pods (kube-sidecarsets.ts).
 */
import { objectOf, stringOf } from '../kube/json.ts';
import type { KubeClient } from './kube-request.ts';

/** How a wait ended; a watch that failed answers 'error' (never rejects), and the caller decides what to do. */
export type WatchOutcome = 'changed' | 'timeout' | 'error';

function resourceVersionOf(object: unknown): string {
  return stringOf(objectOf(objectOf(object)?.metadata)?.resourceVersion) ?? '';
}

/**
 * Watches `path` from `resourceVersion` until an object changes other than
 * by a write whose resulting resourceVersion is in `ignore` (and, with
 * `predicate`, in a way `predicate` says is worth waking for), or `timeoutMs` passes,
 * or `signal` aborts ('timeout'). An ERROR event (410: the version is too
 * old) means a fresh list is due: that is a change too.
 */
export function watchForChange(
  client: KubeClient,
  path: string,
  query: Readonly<Record<string, string>>,
  resourceVersion: string,
  ignore: ReadonlySet<string>,
  timeoutMs: number,
  signal?: AbortSignal,
  predicate?: (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: Record<string, unknown>) => boolean,
): Promise<WatchOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const controller = new AbortController();
    const finish = (result: WatchOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      controller.abort();
      resolve(result);
    };
    const onAbort = () => { finish('timeout'); };
    const timer = setTimeout(() => { finish('timeout'); }, timeoutMs);
    if (signal?.aborted === true) { finish('timeout'); return; }
    signal?.addEventListener('abort', onAbort, { once: true });
    const params = { ...query, resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: String(Math.max(1, Math.ceil(timeoutMs / 1000))) };
    client
      .watch({ path, query: params, operation: `watch ${path}`, signal: controller.signal }, (type, object) => {
        if (type === 'BOOKMARK') return;
        if (type === 'ERROR') finish('changed');
        else if (!ignore.has(resourceVersionOf(object)) && (predicate === undefined || accepts(predicate, type, object))) finish('changed');
      })
      .then(
        () => {
          finish('timeout');
        },
        () => {
          finish('error');
        },
      );
  });
}

/** What `predicate` says of a watch event; an event of a type or shape it was not made for is accepted (a fresh list sorts it out). */
function accepts(predicate: (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: Record<string, unknown>) => boolean, type: string, object: unknown): boolean {
  const item = objectOf(object);
  if (item === undefined || (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED')) return true;
  return predicate(type, item);
}

/** How a stream of watch events ended: the caller's signal, the server closing it, a version too old (410), or a failure. */
export type WatchEnd = 'stopped' | 'ended' | 'expired' | 'error';

/** What a stream of watch events is told: each change, and each bookmark's version. */
export interface WatchEvents {
  change(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: Record<string, unknown>): void;
  progress(resourceVersion: string): void;
}

/**
 * Watches `path` from `resourceVersion` and tells every event to `events` in
 * the order the API server sends them, until `signal` aborts ('stopped'),
 * the server ends the watch ('ended', at the latest after `timeoutSeconds`),
 * it sends an ERROR event ('expired' for 410 Gone: the version is too old, a
 * fresh list is due; 'error' otherwise), or it fails or sends an event that
 * is not an object of a known type ('error'). Never rejects: the caller
 * decides what each end calls for. Events after the end are not told.
 */
export function watchEvents(client: KubeClient, path: string, query: Readonly<Record<string, string>>, resourceVersion: string, events: WatchEvents, signal: AbortSignal, timeoutSeconds: number): Promise<WatchEnd> {
  const controller = new AbortController();
  const stop = AbortSignal.any([signal, controller.signal]);
  let end: WatchEnd | undefined;
  const finish = (how: WatchEnd) => {
    end ??= how;
    controller.abort();
  };
  if (signal.aborted) return Promise.resolve('stopped');
  const params = { ...query, resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: String(Math.max(1, Math.floor(timeoutSeconds))) };
  return client
    .watch({ path, query: params, operation: `watch ${path}`, signal: stop }, (type, object) => {
      if (end !== undefined) return;
      const item = objectOf(object);
      if (type === 'BOOKMARK') {
        const version = resourceVersionOf(item);
        if (version !== '') events.progress(version);
        return;
      }
      if (type === 'ERROR') {
        finish(item?.code === 410 ? 'expired' : 'error');
        return;
      }
      if (item === undefined || (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED')) {
        finish('error');
        return;
      }
      events.change(type, item);
    })
    .then(
      () => end ?? (signal.aborted ? 'stopped' : 'ended'),
      () => end ?? (signal.aborted ? 'stopped' : 'error'),
    );
}
