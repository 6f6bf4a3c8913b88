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
  /** Set while the list waits for this page: called with its head's token as soon as it comes. */
  onHeadToken: ((token: string) => void) | undefined;
  /** Its answer failed already (a page read ahead): nothing is read ahead from it. */
  failed: boolean;
}

/** Where a list's pages come from and the page read ahead, if any. */
class PageReader<T> {
  readonly max: number;
  readonly maxBytes: number;
  /** The last page read whole: the next pages' size comes from its bytes per item. */
  last: { bytes: number; items: number } | undefined;
  private ahead: PageRequest<T> | undefined;
  private readonly client: KubeClient;
  private readonly path: string;
  private readonly query: Readonly<Record<string, string>>;
  private readonly operation: string;
  private readonly signal: AbortSignal | undefined;
  private readonly options: PagedListOptions;
  private readonly reduce: (item: Record<string, unknown>) => T;

  constructor(client: KubeClient, path: string, query: Readonly<Record<string, string>>, operation: string, signal: AbortSignal | undefined, options: PagedListOptions, reduce: (item: Record<string, unknown>) => T) {
    this.client = client;
    this.path = path;
    this.query = query;
    this.operation = operation;
    this.signal = signal;
    this.options = options;
    this.reduce = reduce;
    this.max = options.maxPageSize ?? MAX_POD_PAGE_SIZE;
    this.maxBytes = options.maxBytes ?? PAGE_MAX_BYTES;
  }

  ask(token: string | undefined, limit: number, planned: boolean): PageRequest<T> {
    const controller = new AbortController();
    const pageSignal = this.signal === undefined ? controller.signal : AbortSignal.any([this.signal, controller.signal]);
    const params: Record<string, string> = { ...this.query, limit: String(limit), ...(token === undefined ? {} : { continue: token }) };
    const accept = this.options.accept === undefined ? {} : { accept: this.options.accept };
    const page: PageRequest<T> = {
      token,
      limit,
      planned,
      controller,
      headToken: undefined,
      onHeadToken: undefined,
      failed: false,
      answer: this.client.list({ path: this.path, query: params, operation: this.operation, maxBytes: this.maxBytes, signal: pageSignal, ...accept }, this.reduce, (head) => {
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
  }

  /** Keeps the page read ahead only when it is the one `token` names (undefined: none); calls it off otherwise. */
  keepAheadFor(token: string | undefined): void {
    if (this.ahead === undefined || (token !== undefined && this.ahead.token === token)) return;
    this.ahead.controller.abort(new Error('a page read ahead was not needed'));
    this.ahead = undefined;
  }

  /** The page read ahead when it is the one `token` names (it is no longer ahead); undefined otherwise. */
  takeAhead(token: string | undefined): PageRequest<T> | undefined {
    this.keepAheadFor(token);
    const page = this.ahead;
    this.ahead = undefined;
    return page;
  }

  /** Asks for the page after `from` (whose head named `token`), unless it is the last or already asked for. */
  private readAhead(from: PageRequest<T>, token: string): void {
    if (token === '' || !from.planned || from.failed || this.ahead?.token === token) return;
    this.keepAheadFor(undefined);
    this.ahead = this.ask(token, this.last === undefined ? from.limit : nextPageSize(this.last.bytes, this.last.items, this.max), true);
  }

  /**
   * Waits for `page`, asking for the next as soon as its head names it; a page
   * past the byte cap is reported abandoned and gives the smaller limit to ask again with.
   */
  async answerOf(page: PageRequest<T>): Promise<{ answer: KubeListAnswer<T> } | { smaller: number }> {
    page.onHeadToken = (token) => {
      this.readAhead(page, token);
    };
    if (page.headToken !== undefined) this.readAhead(page, page.headToken);
    try {
      return { answer: await page.answer };
    } catch (error) {
      if (!(error instanceof AnswerTooLargeError)) throw error;
      // A page read ahead from this one's head belongs to a page that will not be.
      this.keepAheadFor(undefined);
      this.options.onPage?.({ limit: page.limit, bytes: this.maxBytes, items: 0, largestItemBytes: 0, abandoned: true });
      const smaller = shrunkPageSize(page.limit);
      if (smaller === undefined) throw new KubeApiError(this.operation, `one item alone is larger than the page cap of ${this.maxBytes} bytes`, undefined, { cause: error });
      return { smaller };
    } finally {
      page.onHeadToken = undefined;
    }
  }
}

/** A page's answer as a list: its envelope and items, or the error its status or shape says. */
function listOf<T>(answer: KubeListAnswer<T>, operation: string): { items: T[]; body: Record<string, unknown> } {
  const { status, body, items, nonObjectItem } = answer;
  if (status === 410) throw new ListExpiredError(`the list's continue token expired: ${(typeof body === 'string' ? body : JSON.stringify(body)).slice(0, 300)}`);
  if (status !== 200) throw apiServerAnswered(operation, status, body);
  if (nonObjectItem === true) throw new KubeApiError(operation, 'the list holds an item that is not an object', status);
  if (typeof body === 'string' || items === undefined) throw new KubeApiError(operation, 'the answer is not JSON', status);
  // An empty PartialObjectMetadataList says `"items": null` (Go's nil slice, no omitempty): no items, not a broken answer.
  if (!isObject(body) || !(Array.isArray(body.items) || body.items === null)) throw new KubeApiError(operation, 'the answer is not a list (no items array)', status);
  return { items, body };
}

/**
 * The pages of `path` (with `query`'s parameters besides limit and continue).
 * Reads one page ahead, as soon as the current page's items begin (the API
 * server writes the continue token first), so the server prepares it while
 * this process parses; never more than one, and none from a page asked for
 * again in smaller size after one passed the byte cap. A page read ahead that is not the one wanted is called off; its
 * failure counts only when it is the page the list needs.
 *
 * @throws ListExpiredError when a continue token expired (410); KubeApiError otherwise.
 */
export function pagedList(client: KubeClient, path: string, query: Readonly<Record<string, string>>, operation: string, signal: AbortSignal | undefined, options?: PagedListOptions): AsyncGenerator<ListPage>;
/** The pages of `path`, each item reduced by `keep` as soon as it is read (its whole form is garbage at once). */
export function pagedList<T>(client: KubeClient, path: string, query: Readonly<Record<string, string>>, operation: string, signal: AbortSignal | undefined, options: PagedListOptions, keep: (item: Record<string, unknown>) => T): AsyncGenerator<ListPage<T>>;
export async function* pagedList<T>(client: KubeClient, path: string, query: Readonly<Record<string, string>>, operation: string, signal: AbortSignal | undefined, options: PagedListOptions = {}, keep?: (item: Record<string, unknown>) => T): AsyncGenerator<ListPage<T>> {
  const reader = new PageReader(client, path, query, operation, signal, options, keep ?? ((item: Record<string, unknown>) => item as T));
  let limit = Math.min(reader.max, options.firstPageSize ?? reader.max);
  let planned = true;
  let next: string | undefined;
  try {
    for (;;) {
      const page = reader.takeAhead(next) ?? reader.ask(next, limit, planned);
      const read = await reader.answerOf(page);
      if ('smaller' in read) {
        // The same continue token names the same snapshot: the list goes on where it was, in smaller pages.
        limit = read.smaller;
        planned = false;
        continue;
      }
      const { bytes, largestItemBytes } = read.answer;
      const { items, body } = listOf(read.answer, operation);
      options.onPage?.({ limit: page.limit, bytes, items: items.length, largestItemBytes, abandoned: false });
      const metadata = objectOf(body.metadata);
      const token = stringOf(metadata?.continue);
      next = token === undefined || token === '' ? undefined : token;
      reader.last = { bytes, items: items.length };
      // The page read ahead from the head is not the next one when the whole answer says otherwise (or that there is none).
      reader.keepAheadFor(next);
      yield { items, resourceVersion: stringOf(metadata?.resourceVersion) ?? '', kind: stringOf(body.kind) ?? '', bytes, limit: page.limit };
      if (next === undefined) return;
      limit = nextPageSize(bytes, items.length, reader.max);
      planned = true;
    }
  } finally {
    // The caller stopped, the list failed or ended: a page read ahead is not wanted.
    reader.keepAheadFor(undefined);
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
