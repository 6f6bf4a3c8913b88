/**
 * "Tell me when this list changes": one watch from a list's resourceVersion
 * that settles on the first event that is news, or after a timeout. The
 * rollout's pace loop waits on a set's pods with it (kube-pods.ts), the
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
 * `news`, in a way `news` says is worth waking for), or `timeoutMs` passes,
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
  news?: (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: Record<string, unknown>) => boolean,
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
        else if (!ignore.has(resourceVersionOf(object)) && (news === undefined || isNews(type, object, news))) finish('changed');
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

/** What `news` says of a watch event; an event of a type or shape it was not made for is news (a fresh list sorts it out). */
function isNews(type: string, object: unknown, news: (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: Record<string, unknown>) => boolean): boolean {
  const item = objectOf(object);
  if (item === undefined || (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED')) return true;
  return news(type, item);
}
