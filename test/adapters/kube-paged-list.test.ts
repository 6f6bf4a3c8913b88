/**
 * A paged list reads one page ahead (lib/adapters/kube-paged-list.ts): the
 * next page is asked for as soon as the current one's items begin (the API
 * server writes the continue token first), never more than one page past the
 * one the caller holds, and a page read ahead that fails, hangs, is not the
 * one wanted or is no longer wanted ends as reading one page after the other
 * would: the same error in its turn, the caller's deadline, a request called
 * off, never a hang or an unhandled rejection. Against a local HTTP server
 * that writes each page in pieces when the test says so.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { pagedList, type ListPage, type PagedListOptions } from '../../lib/adapters/kube-paged-list.ts';
import { kubeClient, settingsConnection, type KubeClient } from '../../lib/adapters/kube-request.ts';
import { ListExpiredError } from '../../lib/ports/errors.ts';

/** One request the server saw: its continue token and limit, and whether the client hung up before the answer ended. */
interface Seen {
  token: string | undefined;
  limit: number;
  closedEarly: boolean;
  /** The answer ended or the client hung up. */
  done: boolean;
  closed: Promise<void>;
}

/** How the server answers one request: the test writes to `res` as it likes (see {@link writePage}). */
type Respond = (seen: Seen, res: ServerResponse, n: number) => void | Promise<void>;

let server: Server;
let base: string;
let seen: Seen[] = [];
let respond: Respond = () => undefined;
let arrivals: (() => void)[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    let closedResolve: () => void = () => undefined;
    const entry: Seen = { token: url.searchParams.get('continue') ?? undefined, limit: Number(url.searchParams.get('limit')), closedEarly: false, done: false, closed: new Promise((resolve) => (closedResolve = resolve)) };
    res.on('close', () => {
      if (!res.writableEnded) entry.closedEarly = true;
      entry.done = true;
      closedResolve();
    });
    seen.push(entry);
    for (const wake of arrivals.splice(0)) wake();
    void respond(entry, res, seen.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  seen = [];
  arrivals = [];
  server.closeAllConnections();
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => { resolve(); }));
});

/** The client as the reconciler makes it, without retries: each test sees exactly the requests it caused. */
function client(): KubeClient {
  return kubeClient(settingsConnection({ server: base }), { retryDelaysMs: [] });
}

/** Resolves once the server has seen `count` requests. */
function requestsArrived(count: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (seen.length >= count) resolve();
      else arrivals.push(check);
    };
    check();
  });
}

const TOTAL = 10;
const item = (i: number) => ({ metadata: { name: `item-${i}` } });

/** The page of the list of {@link TOTAL} items that starts after `token` (an offset), as its head, its items' texts and its tail. */
function pageOf(seenRequest: Seen): { head: string; items: string[]; tail: string } {
  const from = seenRequest.token === undefined ? 0 : Number(seenRequest.token);
  const to = Math.min(TOTAL, from + seenRequest.limit);
  const next = to < TOTAL ? String(to) : '';
  return {
    head: `{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"7"${next === '' ? '' : `,"continue":"${next}"`}},"items":[`,
    items: Array.from({ length: to - from }, (_, k) => JSON.stringify(item(from + k))),
    tail: ']}',
  };
}

/** Writes the whole page at once. */
function writePage(seenRequest: Seen, res: ServerResponse): void {
  const { head, items, tail } = pageOf(seenRequest);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(`${head}${items.join(',')}${tail}`);
}

function list(kc: KubeClient, options: PagedListOptions = { maxPageSize: 3 }, signal?: AbortSignal): AsyncGenerator<ListPage> {
  return pagedList(kc, '/api/v1/pods', {}, 'list pods', signal, options);
}

const names = (page: ListPage) => page.items.map((i) => (i.metadata as { name: string }).name);

async function readAll(pages: AsyncGenerator<ListPage>): Promise<string[][]> {
  const out: string[][] = [];
  for await (const page of pages) out.push(names(page));
  return out;
}

const EVERY_PAGE = [
  ['item-0', 'item-1', 'item-2'],
  ['item-3', 'item-4', 'item-5'],
  ['item-6', 'item-7', 'item-8'],
  ['item-9'],
];

describe('a paged list, reading one page ahead', () => {
  it('asks for the next page as soon as the current one names it, before its items have all arrived', async () => {
    let secondWhileFirstOpen = false;
    respond = async (request, res, n) => {
      if (n !== 1) { writePage(request, res); return; }
      const { head, items, tail } = pageOf(request);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`${head}${items[0]}`);
      // The rest of the first page waits for the second page's request (up to 2 s, which it never needs to).
      await Promise.race([requestsArrived(2), new Promise((resolve) => setTimeout(resolve, 2_000))]);
      secondWhileFirstOpen = seen.length >= 2;
      res.end(`,${items.slice(1).join(',')}${tail}`);
    };
    expect(await readAll(list(client()))).toEqual(EVERY_PAGE);
    expect(secondWhileFirstOpen).toBe(true);
    // One request per page, each token once, every one answered to the end.
    expect(seen.map((s) => [s.token, s.limit, s.closedEarly])).toEqual([
      [undefined, 3, false],
      ['3', 3, false],
      ['6', 3, false],
      ['9', 3, false],
    ]);
    expect(unhandled).toEqual([]);
  });

  it('asks for no page past the one after what the caller holds', async () => {
    respond = (request, res) => {
      writePage(request, res);
    };
    const pages = list(client());
    const first = await pages.next();
    expect(first.value && names(first.value)).toEqual(EVERY_PAGE[0]);
    // The caller holds the first page: the second is read, the third is not asked for however long it waits.
    await requestsArrived(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen.map((s) => s.token)).toEqual([undefined, '3']);
    const second = await pages.next();
    expect(second.value && names(second.value)).toEqual(EVERY_PAGE[1]);
    await requestsArrived(3);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen.map((s) => s.token)).toEqual([undefined, '3', '6']);
    const rest: string[][] = [];
    for await (const page of pages) rest.push(names(page));
    expect(rest).toEqual(EVERY_PAGE.slice(2));
    expect(seen).toHaveLength(4);
  });

  it.each<[string, (res: ServerResponse) => void, RegExp | (new (...args: never[]) => Error)]>([
    ['refused', (res) => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 403, reason: 'Forbidden', message: 'pods is forbidden' }));
    }, /the API server answered 403: pods is forbidden/],
    ['expired (410)', (res) => {
      res.writeHead(410, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old' }));
    }, ListExpiredError],
    ['dropped halfway', (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"kind":"List","metadata":{"continue":"6"},"items":[{"metadata":');
      setTimeout(() => res.destroy(), 20);
    }, KubeApiError],
  ])('fails in its turn, after the page before it, when the second page is %s', async (_name, answerSecond, expected) => {
    respond = (request, res, n) => {
      if (n === 2) answerSecond(res);
      else writePage(request, res);
    };
    const pages = list(client());
    const first = await pages.next();
    expect(first.value && names(first.value)).toEqual(EVERY_PAGE[0]);
    // The second page has failed by now; the caller hears it when it asks for it, not before.
    await requestsArrived(2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expect(pages.next()).rejects.toThrow(expected);
    expect(seen.map((s) => s.token)).toEqual([undefined, '3']);
    expect(unhandled).toEqual([]);
  });

  it('hands the caller the current page while the next one hangs, and a deadline ends the list without a hang', async () => {
    respond = (request, res, n) => {
      // The second page never comes.
      if (n !== 2) writePage(request, res);
    };
    const deadline = new AbortController();
    const pages = list(client(), { maxPageSize: 3 }, deadline.signal);
    const first = await pages.next();
    expect(first.value && names(first.value)).toEqual(EVERY_PAGE[0]);
    await requestsArrived(2);
    const waiting = pages.next();
    setTimeout(() => { deadline.abort(new Error('deadline')); }, 100);
    await expect(waiting).rejects.toThrow(/abandoned \(deadline\)/);
    // The hanging request was hung up on.
    await seen[1]?.closed;
    expect(seen[1]?.closedEarly).toBe(true);
    expect(unhandled).toEqual([]);
  });

  it('calls off the page read ahead when the caller stops, and leaves nothing to fail later', async () => {
    respond = (request, res, n) => {
      if (n === 2) {
        // Slow, then a failure nobody is waiting for any more.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"kind":"List","metadata":{"continue":"6"},"items":[');
        setTimeout(() => res.destroy(), 300);
      } else writePage(request, res);
    };
    for await (const page of list(client())) {
      expect(names(page)).toEqual(EVERY_PAGE[0]);
      await requestsArrived(2);
      break;
    }
    await seen[1]?.closed;
    expect(seen[1]?.closedEarly).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(seen).toHaveLength(2);
    expect(unhandled).toEqual([]);
  });

  it('reads the page the whole answer names when it differs from what its head said, and calls the other off', async () => {
    respond = (request, res, n) => {
      if (n !== 1) { writePage(request, res); return; }
      // A second metadata after the items (JSON.parse keeps the last): the head said 9, the answer says 3.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"kind":"List","metadata":{"continue":"9"},"items":[{"metadata":{"name":"item-0"}}');
      setTimeout(() => res.end(',{"metadata":{"name":"item-1"}},{"metadata":{"name":"item-2"}}],"metadata":{"resourceVersion":"7","continue":"3"}}'), 200);
    };
    expect(await readAll(list(client()))).toEqual(EVERY_PAGE);
    expect(seen.map((s) => s.token)).toEqual([undefined, '9', '3', '6', '9']);
    expect(unhandled).toEqual([]);
  });

  it('after a page passed the byte cap, asks again smaller and asks for the next page only once the smaller one is read', async () => {
    // The head goes first, the items a little later, so that a page's head is read before its size passes the cap.
    const overlapped: Seen[] = [];
    respond = (request, res) => {
      if (request.token !== undefined && seen.some((s) => s !== request && s.limit === 1 && !s.done)) overlapped.push(request);
      const { head, items, tail } = pageOf(request);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(head);
      setTimeout(() => res.end(`${items.join(',')}${tail}`), 50);
    };
    const pages: { limit: number; abandoned: boolean }[] = [];
    // About 90 bytes of head and 31 per item: a page of one fits 130 bytes, a page of 8 does not.
    const got = await readAll(list(client(), { maxPageSize: 8, maxBytes: 130, onPage: (p) => pages.push({ limit: p.limit, abandoned: p.abandoned }) }));
    expect(got.flat()).toEqual(Array.from({ length: TOTAL }, (_, i) => `item-${i}`));
    expect(pages.slice(0, 2)).toEqual([
      { limit: 8, abandoned: true },
      { limit: 1, abandoned: false },
    ]);
    // A page asked for again smaller says nothing about the size of the next: that one waits for it.
    expect(overlapped).toEqual([]);
    expect(unhandled).toEqual([]);
  });
});
