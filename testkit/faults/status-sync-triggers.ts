/**
 * Thin decorators around the reconciler's real adapters that run a real
 * fault (stop the API server, compact etcd, change a SidecarSet) at a precise
 * point of a resync: between two pages of the pod list, or just before or
 * after a status write. They never answer in place of the API server.
 */
import type { PodPages, SidecarSetStatusWriter } from '../../lib/ports.ts';
import { StatusConflictError } from '../../lib/ports/errors.ts';

/** Runs after the consumer took page `page` (1-based) of list attempt `attempt`, before it takes the next (which the list may have asked for already). */
export type BetweenPages = (page: number, attempt: number) => Promise<void>;

export interface FaultyPodPages extends PodPages {
  /** Lists started. */
  readonly attempts: number;
  /** Pages handed out, over every attempt. */
  readonly pagesRead: number;
}

export function podPagesWithFault(inner: PodPages, betweenPages: BetweenPages): FaultyPodPages {
  let attempts = 0;
  let pagesRead = 0;
  return {
    get attempts() {
      return attempts;
    },
    get pagesRead() {
      return pagesRead;
    },
    async *pages(signal) {
      const attempt = ++attempts;
      let page = 0;
      // The fault lands after the resync took a page and before it takes the next; the inner list may already have asked for
      // that next page (it reads one ahead, kube-paged-list.ts), so a fault can find it answered or on the wire.
      for await (const pods of inner.pages(signal)) {
        pagesRead++;
        yield pods;
        await betweenPages(++page, attempt);
      }
    },
  };
}

export interface WriteHooks {
  /** Before status write number `call` (1-based, over the writer's life) of set `name`. */
  beforePatch?: (name: string, call: number) => Promise<void>;
  /** After status write number `call` returned or failed. */
  afterPatch?: (name: string, call: number) => Promise<void>;
}

export interface FaultyStatusWriter extends SidecarSetStatusWriter {
  readonly patches: number;
  /** Writes the API server refused with 409. */
  readonly conflicts: number;
  /** Writes that failed otherwise (connection refused, 5xx). */
  readonly failures: number;
}

export function statusWriterWithFault(inner: SidecarSetStatusWriter, hooks: WriteHooks): FaultyStatusWriter {
  let patches = 0;
  let conflicts = 0;
  let failures = 0;
  return {
    get patches() {
      return patches;
    },
    get conflicts() {
      return conflicts;
    },
    get failures() {
      return failures;
    },
    async patchStatus(name, resourceVersion, status, signal) {
      const call = ++patches;
      await hooks.beforePatch?.(name, call);
      try {
        return await inner.patchStatus(name, resourceVersion, status, signal);
      } catch (error) {
        if (error instanceof StatusConflictError) conflicts++;
        else failures++;
        throw error;
      } finally {
        await hooks.afterPatch?.(name, call);
      }
    },
    get: (name, signal) => inner.get(name, signal),
  };
}

/**
 * A broken pod list, for checking the checks: it ends quietly after `pages`
 * pages, as an adapter that lost the continue token would. A resync over it
 * writes statuses from part of the pods, which the scenarios' record check
 * must catch.
 */
export function podPagesCutShort(inner: PodPages, pages: number): PodPages {
  return {
    async *pages(signal) {
      let page = 0;
      for await (const pods of inner.pages(signal)) {
        yield pods;
        if (++page === pages) return;
      }
    },
  };
}
