/**
 * A list read page by page with the page's bytes bounded, not its item
 * count (pod-page-size.ts): every list of pods, ControllerRevisions and
 * namespaces reads through here.
 */
import { isObject, objectOf, stringOf } from '../kube/json.ts';
import { ListExpiredError } from '../ports/errors.ts';
import { apiServerAnswered, KubeApiError } from './kube-api-error.ts';
import { AnswerTooLargeError, type KubeClient } from './kube-request.ts';
import { MAX_POD_PAGE_SIZE, nextPageSize, PAGE_MAX_BYTES, shrunkPageSize } from './pod-page-size.ts';

/** One page as read: what the caller keeps of each item (the item itself by default). */
export interface ListPage<T = Record<string, unknown>> {
  items: T[];
  /** The list's resourceVersion (the snapshot every page belongs to). */
  resourceVersion: string;
  /** The page's size on the wire and the `limit` it was asked with. */
  bytes: number;
  limit: number;
}

export interface PagedListOptions {
  /** The most items a page asks for. Default {@link MAX_POD_PAGE_SIZE}. */
  maxPageSize?: number;
  /** The hard cap on one page's answer. Default {@link PAGE_MAX_BYTES}. */
  maxBytes?: number;
  /**
   * Told of every page read and of every page abandoned at the cap
   * (`abandoned: true`), with the largest item's bytes (the most raw text
   * held at once: items are parsed one by one as they arrive), for tests and benchmarks.
   */
  onPage?: (page: { limit: number; bytes: number; items: number; largestItemBytes: number; abandoned: boolean }) => void;
}

/**
 * The pages of `path` (with `query`'s parameters besides limit and continue).
 * @throws ListExpiredError when a continue token expired (410); KubeApiError otherwise.
 */
export function pagedList(client: KubeClient, path: string, query: Readonly<Record<string, string>>, operation: string, signal: AbortSignal | undefined, options?: PagedListOptions): AsyncGenerator<ListPage>;
/** The pages of `path`, each item reduced by `keep` as soon as it is read (its whole form is garbage at once). */
export function pagedList<T>(client: KubeClient, path: string, query: Readonly<Record<string, string>>, operation: string, signal: AbortSignal | undefined, options: PagedListOptions, keep: (item: Record<string, unknown>) => T): AsyncGenerator<ListPage<T>>;
export async function* pagedList<T>(client: KubeClient, path: string, query: Readonly<Record<string, string>>, operation: string, signal: AbortSignal | undefined, options: PagedListOptions = {}, keep?: (item: Record<string, unknown>) => T): AsyncGenerator<ListPage<T>> {
  const reduce = keep ?? ((item: Record<string, unknown>) => item as T);
  const max = options.maxPageSize ?? MAX_POD_PAGE_SIZE;
  const maxBytes = options.maxBytes ?? PAGE_MAX_BYTES;
  let limit = max;
  let next: string | undefined;
  for (;;) {
    const params: Record<string, string> = { ...query, limit: String(limit), ...(next === undefined ? {} : { continue: next }) };
    let answer;
    try {
      answer = await client.list({ path, query: params, operation, maxBytes, ...(signal === undefined ? {} : { signal }) }, reduce);
    } catch (error) {
      if (!(error instanceof AnswerTooLargeError)) throw error;
      options.onPage?.({ limit, bytes: maxBytes, items: 0, largestItemBytes: 0, abandoned: true });
      const smaller = shrunkPageSize(limit);
      if (smaller === undefined) throw new KubeApiError(operation, `one item alone is larger than the page cap of ${maxBytes} bytes`, undefined, { cause: error });
      // The same continue token names the same snapshot: the list goes on where it was, in smaller pages.
      limit = smaller;
      continue;
    }
    const { status, body, items, bytes, largestItemBytes } = answer;
    if (status === 410) throw new ListExpiredError(`the list's continue token expired: ${(typeof body === 'string' ? body : JSON.stringify(body)).slice(0, 300)}`);
    if (status !== 200) throw apiServerAnswered(operation, status, body);
    if (typeof body === 'string' || items === undefined) throw new KubeApiError(operation, 'the answer is not JSON', status);
    if (!isObject(body) || !Array.isArray(body.items)) throw new KubeApiError(operation, 'the answer is not a list (no items array)', status);
    options.onPage?.({ limit, bytes, items: items.length, largestItemBytes, abandoned: false });
    const metadata = objectOf(body.metadata);
    const token = stringOf(metadata?.continue);
    next = token === undefined || token === '' ? undefined : token;
    yield { items, resourceVersion: stringOf(metadata?.resourceVersion) ?? '', bytes, limit };
    if (next === undefined) return;
    limit = nextPageSize(bytes, items.length, max);
  }
}

/** The attempts at a list whose continue token keeps expiring. */
const MAX_LIST_ATTEMPTS = 3;

/**
 * Every item of a paged list, with the list's resourceVersion; a list whose
 * continue token expired (ListExpiredError) is read again from the start, at
 * most {@link MAX_LIST_ATTEMPTS} times.
 */
export async function listAll(client: KubeClient, path: string, query: Readonly<Record<string, string>>, operation: string, signal: AbortSignal | undefined, options: PagedListOptions = {}): Promise<{ items: Record<string, unknown>[]; resourceVersion: string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      const items: Record<string, unknown>[] = [];
      let resourceVersion = '';
      for await (const page of pagedList(client, path, query, operation, signal, options)) {
        for (const item of page.items) items.push(item);
        resourceVersion = page.resourceVersion;
      }
      return { items, resourceVersion };
    } catch (error) {
      if (!(error instanceof ListExpiredError) || attempt >= MAX_LIST_ATTEMPTS) throw error;
    }
  }
}
