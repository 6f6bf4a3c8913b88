/**
 * A list read page by page with the page's bytes bounded, not its item
 * count (pod-page-size.ts): every list of pods, ControllerRevisions and
 * namespaces reads through here.
 */
import { isObject, objectOf, stringOf } from '../kube/json.ts';
import { ListExpiredError } from '../ports/errors.ts';
import { apiServerAnswered, KubeApiError } from './kube-api-error.ts';
import { AnswerTooLargeError, type KubeClient, type KubeListAnswer } from './kube-request.ts';
import { MAX_POD_PAGE_SIZE, nextPageSize, PAGE_MAX_BYTES, shrunkPageSize } from './pod-page-size.ts';

/** One page as read: what the caller keeps of each item (the item itself by default). */
export interface ListPage<T = Record<string, unknown>> {
  items: T[];
  /** The list's resourceVersion (the snapshot every page belongs to). */
  resourceVersion: string;
  /** The list's kind, as its envelope names it (`PartialObjectMetadataList` when the metadata list was served). */
  kind: string;
  /** The page's size on the wire and the `limit` it was asked with. */
  bytes: number;
  limit: number;
}

export interface PagedListOptions {
  /** The most items a page asks for. Default {@link MAX_POD_PAGE_SIZE}. */
  maxPageSize?: number;
  /**
   * The items the first page asks for, before any page tells the bytes per
   * item (later pages are planned from the last one read). Default {@link maxPageSize}.
   */
  firstPageSize?: number;
  /** The hard cap on one page's answer. Default {@link PAGE_MAX_BYTES}. */
  maxBytes?: number;
  /** The Accept header (a PartialObjectMetadataList is asked for with its media type parameters). Default JSON. */
  accept?: string;
  /**
   * Told of every page read and of every page abandoned at the cap
   * (`abandoned: true`), with the largest item's bytes (the most raw text
   * held at once: items are parsed one by one as they arrive), for tests and benchmarks.
   */
  onPage?: (page: { limit: number; bytes: number; items: number; largestItemBytes: number; abandoned: boolean }) => void;
}

/** One page asked for: its continue token and limit, its answer to come, and what its envelope said before its items. */
interface PageRequest<T> {
  token: string | undefined;
  limit: number;
  /** Its limit was planned (the first page's, or from a page read whole), not shrunk after a page passed the cap. */
  planned: boolean;
  answer: Promise<KubeListAnswer<T>>;
  /** Calls it off (a page read ahead that is not wanted after all). */
  controller: AbortController;
  /** The continue token its answer gave before its items ('' on the last page); undefined until they begin. */
  headToken: string | undefined;
  /** Set while the list waits for this page: told of its head's token as soon as it comes. */
  onHeadToken: ((token: string) => void) | undefined;
  /** Its answer failed already (a page read ahead): nothing is read ahead from it. */
  failed: boolean;
}

/**
 * The pages of `path` (with `query`'s parameters besides limit and continue).
 *
 * Reads one page ahead: the API server writes a list's metadata, with the
 * continue token, before its items, so the next page is asked for as soon as
 * the current one's items begin. The server then prepares the next page
 * (reads it from etcd, encodes it) while this process parses the current
 * one and the caller uses it, instead of each waiting for the other. At
 * most one page ahead is asked for, and only once the caller has taken the
 * one before: what is held is the page the caller has and the one being
 * read. The next page's size is planned from the last page read whole (one
 * page later than when pages were read one after the other); after a page
 * passed the byte cap and was asked for again smaller, the page after it
 * waits for it (its size then comes from it). A page read ahead that is not
 * the one wanted (the list went on with another token, or ended) is called
 * off; its failure is an error only when it is the page the list needs,
 * and then the same one as without reading ahead, in the same order.
 *
 * @throws ListExpiredError when a continue token expired (410); KubeApiError otherwise.
 */
export function pagedList(client: KubeClient, path: string, query: Readonly<Record<string, string>>, operation: string, signal: AbortSignal | undefined, options?: PagedListOptions): AsyncGenerator<ListPage>;
/** The pages of `path`, each item reduced by `keep` as soon as it is read (its whole form is garbage at once). */
export function pagedList<T>(client: KubeClient, path: string, query: Readonly<Record<string, string>>, operation: string, signal: AbortSignal | undefined, options: PagedListOptions, keep: (item: Record<string, unknown>) => T): AsyncGenerator<ListPage<T>>;
export async function* pagedList<T>(client: KubeClient, path: string, query: Readonly<Record<string, string>>, operation: string, signal: AbortSignal | undefined, options: PagedListOptions = {}, keep?: (item: Record<string, unknown>) => T): AsyncGenerator<ListPage<T>> {
  const reduce = keep ?? ((item: Record<string, unknown>) => item as T);
  const max = options.maxPageSize ?? MAX_POD_PAGE_SIZE;
  const maxBytes = options.maxBytes ?? PAGE_MAX_BYTES;
  /** The last page read whole: the next pages' size comes from its bytes per item. */
  let last: { bytes: number; items: number } | undefined;
  let ahead: PageRequest<T> | undefined;

  const ask = (token: string | undefined, limit: number, planned: boolean): PageRequest<T> => {
    const controller = new AbortController();
    const pageSignal = signal === undefined ? controller.signal : AbortSignal.any([signal, controller.signal]);
    const params: Record<string, string> = { ...query, limit: String(limit), ...(token === undefined ? {} : { continue: token }) };
    const page: PageRequest<T> = {
      token,
      limit,
      planned,
      controller,
      headToken: undefined,
      onHeadToken: undefined,
      failed: false,
      answer: client.list({ path, query: params, operation, maxBytes, signal: pageSignal, ...(options.accept === undefined ? {} : { accept: options.accept }) }, reduce, (head) => {
        const next = stringOf(objectOf(head.metadata)?.continue) ?? '';
        page.headToken = next;
        page.onHeadToken?.(next);
      }),
    };
    // Awaited when its turn comes, or never (called off): a rejection meanwhile is not unhandled.
    page.answer.catch(() => {
      page.failed = true;
    });
    return page;
  };
  const callOff = (page: PageRequest<T>) => {
    page.controller.abort(new Error('a page read ahead was not needed'));
  };
  /** Keeps the page read ahead only when it is the one `token` names (undefined: none); calls it off otherwise. */
  const keepAheadFor = (token: string | undefined) => {
    if (ahead === undefined || (token !== undefined && ahead.token === token)) return;
    callOff(ahead);
    ahead = undefined;
  };
  /** The page read ahead when it is the one `token` names (it is no longer ahead); undefined otherwise. */
  const takeAhead = (token: string | undefined): PageRequest<T> | undefined => {
    keepAheadFor(token);
    const page = ahead;
    ahead = undefined;
    return page;
  };
  /** Asks for the page after `from` (whose head named `token`), unless it is the last or already asked for. */
  const readAhead = (from: PageRequest<T>, token: string) => {
    if (token === '' || !from.planned || from.failed || ahead?.token === token) return;
    keepAheadFor(undefined);
    ahead = ask(token, last === undefined ? from.limit : nextPageSize(last.bytes, last.items, max), true);
  };

  let limit = Math.min(max, options.firstPageSize ?? max);
  let planned = true;
  let next: string | undefined;
  try {
    for (;;) {
      const page = takeAhead(next) ?? ask(next, limit, planned);
      // The list waits for this page now: the next is asked for as soon as this one's head names it.
      page.onHeadToken = (token) => {
        readAhead(page, token);
      };
      if (page.headToken !== undefined) readAhead(page, page.headToken);
      let answer;
      try {
        answer = await page.answer;
      } catch (error) {
        if (!(error instanceof AnswerTooLargeError)) throw error;
        // A page read ahead from this one's head belongs to a page that will not be.
        keepAheadFor(undefined);
        options.onPage?.({ limit: page.limit, bytes: maxBytes, items: 0, largestItemBytes: 0, abandoned: true });
        const smaller = shrunkPageSize(page.limit);
        if (smaller === undefined) throw new KubeApiError(operation, `one item alone is larger than the page cap of ${maxBytes} bytes`, undefined, { cause: error });
        // The same continue token names the same snapshot: the list goes on where it was, in smaller pages.
        limit = smaller;
        planned = false;
        continue;
      } finally {
        page.onHeadToken = undefined;
      }
      const { status, body, items, bytes, largestItemBytes, nonObjectItem } = answer;
      if (status === 410) throw new ListExpiredError(`the list's continue token expired: ${(typeof body === 'string' ? body : JSON.stringify(body)).slice(0, 300)}`);
      if (status !== 200) throw apiServerAnswered(operation, status, body);
      if (nonObjectItem === true) throw new KubeApiError(operation, 'the list holds an item that is not an object', status);
      if (typeof body === 'string' || items === undefined) throw new KubeApiError(operation, 'the answer is not JSON', status);
      // An empty PartialObjectMetadataList says `"items": null` (Go's nil slice, no omitempty): no items, not a broken answer.
      if (!isObject(body) || !(Array.isArray(body.items) || body.items === null)) throw new KubeApiError(operation, 'the answer is not a list (no items array)', status);
      options.onPage?.({ limit: page.limit, bytes, items: items.length, largestItemBytes, abandoned: false });
      const metadata = objectOf(body.metadata);
      const token = stringOf(metadata?.continue);
      next = token === undefined || token === '' ? undefined : token;
      last = { bytes, items: items.length };
      // The page read ahead from the head is not the next one when the whole answer says otherwise (or that there is none).
      keepAheadFor(next);
      yield { items, resourceVersion: stringOf(metadata?.resourceVersion) ?? '', kind: stringOf(body.kind) ?? '', bytes, limit: page.limit };
      if (next === undefined) return;
      limit = nextPageSize(bytes, items.length, max);
      planned = true;
    }
  } finally {
    // The caller stopped, the list failed or ended: a page read ahead is not wanted.
    keepAheadFor(undefined);
  }
}

/** The attempts at a list whose continue token keeps expiring. */
const MAX_LIST_ATTEMPTS = 3;

/**
 * Every item of a paged list, with the list's resourceVersion and kind; a
 * list whose continue token expired (ListExpiredError) is read again from
 * the start, at most {@link MAX_LIST_ATTEMPTS} times. With `keep`, each item
 * is reduced as soon as it is read, so what is held is the kept items and
 * one page in flight.
 */
export function listAll(client: KubeClient, path: string, query: Readonly<Record<string, string>>, operation: string, signal: AbortSignal | undefined, options?: PagedListOptions): Promise<ListAllResult>;
export function listAll<T>(client: KubeClient, path: string, query: Readonly<Record<string, string>>, operation: string, signal: AbortSignal | undefined, options: PagedListOptions, keep: (item: Record<string, unknown>) => T): Promise<ListAllResult<T>>;
export async function listAll<T>(client: KubeClient, path: string, query: Readonly<Record<string, string>>, operation: string, signal: AbortSignal | undefined, options: PagedListOptions = {}, keep?: (item: Record<string, unknown>) => T): Promise<ListAllResult<T>> {
  const reduce = keep ?? ((item: Record<string, unknown>) => item as T);
  for (let attempt = 1; ; attempt++) {
    try {
      const items: T[] = [];
      let resourceVersion = '';
      let kind = '';
      for await (const page of pagedList(client, path, query, operation, signal, options, reduce)) {
        for (const item of page.items) items.push(item);
        resourceVersion = page.resourceVersion;
        kind = page.kind;
      }
      return { items, resourceVersion, kind };
    } catch (error) {
      if (!(error instanceof ListExpiredError) || attempt >= MAX_LIST_ATTEMPTS) throw error;
    }
  }
}

/** A whole list: its items (as kept), the snapshot's resourceVersion and the list's kind. */
export interface ListAllResult<T = Record<string, unknown>> {
  items: T[];
  resourceVersion: string;
  kind: string;
}
