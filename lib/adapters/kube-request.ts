/**
 * The one way this project sends a request to the API server: every live
 * adapter calls {@link KubeClient.request}, and a watch is one of its GETs
 * read line by line. It runs on node:https with a keep-alive agent, not on
 * client-node's generated API, whose typed models drop fields they do not
 * know (a pod read and written back must stay exactly as stored).
 *
 * Where the requests go and how they authenticate is a {@link KubeConnection}:
 * {@link settingsConnection} for the settings the project reads itself (a
 * kubeconfig with a token or a client certificate, EKS), or the KubeConfig
 * one in kubeconfig.ts, which asks client-node for the headers and TLS
 * material of whatever the kubeconfig holds (exec plugins, auth providers,
 * a proxy, impersonation).
 *
 * - A warm Lambda reuses its connection: the TLS handshake is paid once.
 * - Redirects are never followed (a 3xx is an answer like any other): a
 *   redirect would carry the bearer token wherever it points.
 * - Answers are bounded in size, checked on the bytes as they arrive.
 * - Retries: see {@link KubeClientOptions}.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { pipeline, type Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGunzip } from 'node:zlib';
import { errorMessage } from '../errors.ts';
import { isObject } from '../kube/json.ts';
import { apiServerAnswered, asKubeApiError, KubeApiError } from './kube-api-error.ts';
import { listItemSplitter } from './list-items-stream.ts';

/** The content types of the patches the API server takes. */
export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

/** The longest one attempt of a request may take, unless the client is made with another. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/**
 * The default bound on one answer: a list of a few thousand large SidecarSets
 * fits many times over, and parsing it stays well inside a small Lambda.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

const USER_AGENT = 'serverless-sidecarset';

/** A body already written as JSON text, sent as it is (bytes that must reach the API server exactly). */
export class JsonText {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** The verbs the client sends. */
export type KubeMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request. */
export interface KubeRequest {
  method: KubeMethod;
  /** Absolute, its segments already URI-encoded, without a query. */
  path: string;
  /** The query's parameters (encoded here). */
  query?: Readonly<Record<string, string>>;
  /** Names the request in errors (`list SidecarSets`). */
  operation: string;
  /** The caller's deadline: the attempts and the waits between them stop with it. */
  signal?: AbortSignal;
  /** Sent as JSON (a {@link JsonText} as it is). */
  body?: unknown;
  /** Default `application/json` when there is a body. */
  contentType?: string;
  /** Default `application/json` (a PartialObjectMetadataList is asked for with its media type parameters). */
  accept?: string;
  /** The largest answer read; a larger one fails with {@link AnswerTooLargeError}. Default the client's. */
  maxBytes?: number;
  /**
   * This write is safe to send again after no complete answer or a 429: a
   * JSON Patch that tests the resourceVersion first, a create that answers
   * AlreadyExists, a delete with a uid precondition, a merge patch setting
   * the same values. Reads are always safe.
   */
  guarded?: boolean;
}

export interface KubeAnswer {
  status: number;
  /** The parsed answer; the raw text when it is not JSON. */
  body: unknown;
  /** The answer's size in bytes, after decompression. */
  bytes: number;
}

/** A list read item by item ({@link KubeClient.list}). */
export interface KubeListAnswer<T> {
  status: number;
  /**
   * A 200 list: its envelope (kind, metadata) with `items` emptied. Any other
   * answer: the parsed body, or its text when not JSON (as {@link KubeAnswer.body});
   * a 200 whose items are not JSON: the text of the first bad item.
   */
  body: unknown;
  /** What `keep` returned for each item that is a JSON object, in order; undefined unless a 200 list was read whole. */
  items: T[] | undefined;
  /** The answer's size in bytes, after decompression. */
  bytes: number;
  /** The largest item's size in bytes: the most raw text reading held at once, besides the envelope. */
  largestItemBytes: number;
  /** A 200 list whose items array held something other than objects (items is then undefined). */
  nonObjectItem?: true;
}

/** One request sent again: what, which attempt comes next, and why. */
export interface RequestRetry {
  operation: string;
  method: KubeMethod;
  /** The attempt about to be made (2 for the first retry). */
  attempt: number;
  reason: string;
}

/**
 * When a request is sent again (docs/RELIABILITY.md, "Retries"):
 * - a read (GET) after no complete answer (refused, reset, its attempt timed
 *   out) or an answer that says "try again" (429, 500, 502, 503, 504);
 * - a write only when the request says it is `guarded`, and then only after
 *   no complete answer or a 429, which the API server sends before doing
 *   anything: a 5xx to a write may have been applied.
 * Every retry waits its delay first; none starts once the caller's signal
 * ended. Apart from these, a read or a guarded write that finds the
 * kept-alive socket it was given closed by the server (a warm Lambda thawed
 * after minutes) is sent again at once on another socket.
 */
export interface KubeClientOptions {
  /** The longest one attempt may take; unset, only the caller's signal bounds it. */
  attemptTimeoutMs?: number;
  /** Pauses before the retries; one more attempt per entry. Default {@link DEFAULT_RETRY_DELAYS_MS}; `[]` never retries. */
  retryDelaysMs?: readonly number[];
  /** Told before every retry (the reconciler counts and logs them). */
  onRetry?: (retry: RequestRetry) => void;
  /**
   * Which failures are retried: every one listed above (`any`, the default),
   * or only a 429 answer (`overload`): the API server asks to be asked again
   * (it sends one while a resource's storage re-initialises after its CRD
   * changed, and client-go always retries it), while a refused, dropped or
   * slow request is left to the caller (the webhooks serve their cache's last
   * list instead, within the review's deadline).
   */
  retryOn?: 'any' | 'overload';
  /** The largest answer accepted, after decompression. Default {@link DEFAULT_MAX_RESPONSE_BYTES}. */
  maxResponseBytes?: number;
}

/** Three attempts in all: a dropped connection or a slow answer costs a retry, not the resync. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [250, 1_000];

/** Statuses that ask for another try: overload (429), and, for reads only, the server's own trouble. */
const RETRY_READ_STATUSES = new Set([429, 500, 502, 503, 504]);
const RETRY_WRITE_STATUSES = new Set([429]);
const OVERLOAD_STATUSES = RETRY_WRITE_STATUSES;

/** What one attempt is sent with: the agent (TLS, proxy) and the headers (authentication). */
export interface PreparedRequest {
  agent: HttpAgent;
  headers: Record<string, string>;
}

/** Where the API server is and how to reach it; asked before every attempt, so renewed credentials are used at once. */
export interface KubeConnection {
  /** The API server's URL, for logs and messages. */
  readonly server: string;
  prepare(): Promise<PreparedRequest>;
  /** Closes the kept-alive connections (a process that wants to exit, a test). */
  close(): void;
}

/** The API server, through one connection: what every live adapter sends its requests with. */
export interface KubeClient {
  readonly server: string;
  /**
   * Sends one request, and again when that is safe ({@link KubeClientOptions}); every
   * HTTP status is an answer (the caller decides, usually through {@link expectObject}).
   * @throws KubeApiError without a status code when there was no complete answer (refused,
   *   reset, timed out) after the retries; AnswerTooLargeError when the answer passed its bound.
   */
  request(request: KubeRequest): Promise<KubeAnswer>;
  /**
   * A watch: one GET with `watch=true`, its events delivered one by one as they
   * arrive, until the server ends it (resolves) or the signal aborts (resolves).
   * @throws KubeApiError when the watch cannot start (a non-200 answer, no connection) or breaks.
   */
  watch(request: Omit<KubeRequest, 'method' | 'body' | 'contentType' | 'guarded'>, onEvent: (type: string, object: unknown) => void): Promise<void>;
  /**
   * A GET of a list whose items are parsed one at a time as their bytes
   * arrive and handed to `keep` (list-items-stream.ts): the page's text and
   * its whole parsed form never exist, only one item's and what `keep`
   * returns. Sent again like any GET; bounded by `maxBytes` like {@link request}.
   * `onHead` hears a 200 list's envelope as it stands when its items begin
   * (its metadata and continue token, when the server writes them first, as
   * the API server does), before they are read: again for each attempt.
   */
  list<T>(request: Omit<KubeRequest, 'method' | 'body' | 'contentType' | 'guarded'>, keep: (item: Record<string, unknown>) => T, onHead?: (head: Record<string, unknown>) => void): Promise<KubeListAnswer<T>>;
  /** Requests started so far, retries and watches included (the reconciler reports the count per resync). */
  requests(): number;
  close(): void;
}

/** An answer longer than the caller allowed; it was not read to the end. */
export class AnswerTooLargeError extends KubeApiError {
  readonly maxBytes: number;
  constructor(operation: string, maxBytes: number) {
    super(operation, `the answer is larger than ${maxBytes} bytes`);
    this.name = 'AnswerTooLargeError';
    this.maxBytes = maxBytes;
  }
}

/** Why a request ended before its answer: the caller's signal, with its reason as the cause. */
function abandoned(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return new Error(`the request was abandoned${reason === undefined ? '' : ` (${errorMessage(reason)})`}`, { cause: reason });
}

/** The gunzip stream's output chunk: the API server gzips lists in small pieces, and Node's default 16 KiB made a callback of each (docs/BENCHMARKS.md 4b). */
const GUNZIP_CHUNK_BYTES = 256 * 1024;

/** The answer's bytes, decompressed when gzipped; gunzip errors and aborts end the stream. */
function decoded(response: IncomingMessage): Readable {
  const encoding = (response.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'identity') return response;
  if (encoding === 'gzip') return pipeline(response, createGunzip({ chunkSize: GUNZIP_CHUNK_BYTES }), () => undefined);
  throw new Error(`the answer is encoded as "${encoding}", which was not asked for`);
}

/** The bytes of an answer as they arrive, decompressed, refused once they pass `maxBytes` (a huge page is never read whole). */
async function* boundedChunks(response: IncomingMessage, maxBytes: number, operation: string): AsyncGenerator<Buffer> {
  const declared = Number(response.headers['content-length']);
  const identity = (response.headers['content-encoding'] ?? 'identity').toLowerCase() === 'identity';
  if (identity && Number.isFinite(declared) && declared > maxBytes) throw new AnswerTooLargeError(operation, maxBytes);
  const stream = decoded(response);
  let size = 0;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > maxBytes) {
      stream.destroy();
      throw new AnswerTooLargeError(operation, maxBytes);
    }
    yield buffer;
  }
}

/** The body, refused once it passes `maxBytes` (checked as the bytes arrive). */
async function readBody(response: IncomingMessage, maxBytes: number, operation: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of boundedChunks(response, maxBytes, operation)) {
    chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks, size);
}

/** Parses text as JSON, or keeps it as text (a proxy's error page) for the message. */
function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A list answer read item by item: each item parsed and given to `keep` as
 * soon as it is complete, so that one item's text is what is held, not the
 * page's. Not a 200, it is read whole like any answer.
 */
async function readListItems<T>(response: IncomingMessage, maxBytes: number, operation: string, keep: (item: Record<string, unknown>) => T, onHead: ((head: Record<string, unknown>) => void) | undefined): Promise<KubeListAnswer<T>> {
  const status = response.statusCode ?? 0;
  if (status !== 200) {
    const body = await readBody(response, maxBytes, operation);
    return { status, body: parsedOrText(body.toString('utf8')), items: undefined, bytes: body.length, largestItemBytes: 0 };
  }
  const tellHead = (head: Buffer) => {
    // The envelope so far ends with the items' `[`: closed, it is JSON (or not, and nobody is called).
    const parsed = parsedOrText(`${head.toString('utf8')}]}`);
    if (isObject(parsed)) onHead?.(parsed);
  };
  const splitter = listItemSplitter(onHead === undefined ? {} : { onItemsOpen: tellHead });
  const items: T[] = [];
  let bytes = 0;
  let bad: string | undefined;
  // An object, not a boolean: set in onItem, which the compiler does not see called.
  const found = { nonObject: false };
  const onItem = (item: Buffer) => {
    if (bad !== undefined) return;
    const text = item.toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      bad = text.slice(0, 1000);
      return;
    }
    if (isObject(value)) items.push(keep(value));
    else found.nonObject = true;
  };
  for await (const chunk of boundedChunks(response, maxBytes, operation)) {
    bytes += chunk.length;
    // After a bad item the rest is read (the connection stays usable) but not parsed.
    if (bad === undefined) splitter.write(chunk, onItem);
  }
  if (bad !== undefined) return { status, body: bad, items: undefined, bytes, largestItemBytes: splitter.largestItem() };
  if (found.nonObject || splitter.strayItem()) return { status, body: undefined, items: undefined, bytes, largestItemBytes: splitter.largestItem(), nonObjectItem: true };
  const envelope = parsedOrText(splitter.envelope().toString('utf8'));
  return { status, body: envelope, items: typeof envelope === 'string' ? undefined : items, bytes, largestItemBytes: splitter.largestItem() };
}

/** The connection errors a kept-alive socket that the server closed while idle ends with. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);
const MAX_STALE_SOCKET_RETRIES = 16;

/** The signal of one attempt: the caller's, bounded by the attempt timeout; `done` lets the timer go. */
function attemptSignal(signal: AbortSignal | undefined, timeoutMs: number | undefined): { signal: AbortSignal | undefined; done: () => void } {
  if (timeoutMs === undefined) return { signal, done: () => undefined };
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort(new DOMException(`no answer within ${timeoutMs} ms (the attempt timeout)`, 'TimeoutError'));
  }, timeoutMs);
  return {
    signal: signal === undefined ? controller.signal : AbortSignal.any([signal, controller.signal]),
    done: () => {
      clearTimeout(timer);
    },
  };
}

/** The stream of a watch: one JSON event per line; a line longer than the bound is refused like a large answer. */
async function readWatchEvents(response: IncomingMessage, maxBytes: number, operation: string, onEvent: (type: string, object: unknown) => void): Promise<void> {
  const status = response.statusCode ?? 0;
  if (status !== 200) {
    const body = await readBody(response, maxBytes, operation);
    throw apiServerAnswered(operation, status, body.toString('utf8'));
  }
  let pending = '';
  for await (const chunk of decoded(response)) {
    pending += (chunk as Buffer).toString('utf8');
    let end: number;
    while ((end = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, end).trim();
      pending = pending.slice(end + 1);
      if (line === '') continue;
      const event: unknown = JSON.parse(line);
      if (isObject(event) && typeof event.type === 'string') onEvent(event.type, event.object);
    }
    if (pending.length > maxBytes) throw new AnswerTooLargeError(operation, maxBytes);
  }
}

/** Whether a failed attempt met a kept-alive socket the server had closed, so a safe request may go again. */
function staleSocket(error: unknown, safe: boolean): boolean {
  const code = (error as { code?: unknown }).code;
  const reused = (error as { reusedSocket?: unknown }).reusedSocket === true;
  return safe && reused && typeof code === 'string' && STALE_SOCKET_CODES.has(code);
}

/** The failure that ends a request after `count` attempts, naming the count when there was more than one. */
function finalFailure(failure: KubeApiError, operation: string, count: number): KubeApiError {
  return count === 1 ? failure : new KubeApiError(operation, `${failure.message} (${count} attempts)`, failure.code, { cause: failure });
}

/** One API server's requests: where they go, how they are sent and retried, and how many were started. */
class ApiServerClient {
  private readonly connection: KubeConnection;
  private readonly options: KubeClientOptions;
  private readonly base: URL;
  private readonly prefix: string;
  private readonly send: typeof httpRequest;
  private readonly delays: readonly number[];
  readonly maxBytes: number;
  started = 0;

  constructor(connection: KubeConnection, options: KubeClientOptions) {
    this.connection = connection;
    this.options = options;
    this.base = new URL(connection.server);
    const https = this.base.protocol === 'https:';
    if (!https && this.base.protocol !== 'http:') throw new TypeError(`the API server URL must be http(s), got ${connection.server}`);
    this.prefix = this.base.pathname.replace(/\/$/, '');
    this.send = https ? httpsRequest : httpRequest;
    this.maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.delays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  }

  private urlOf(path: string, query: Readonly<Record<string, string>> | undefined): URL {
    const search = query === undefined ? '' : new URLSearchParams(query).toString();
    return new URL(`${this.prefix}${path}${search === '' ? '' : `?${search}`}`, this.base);
  }

  /** Sends one request on one socket and hands its answer to `read`; an aborted signal's reason is what a failure reads. */
  private exchange<T>(url: URL, method: KubeMethod, prepared: PreparedRequest, payload: string | undefined, signal: AbortSignal | undefined, read: (response: IncomingMessage) => Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(abandoned(signal));
        return;
      }
      this.started++;
      const headers = { ...prepared.headers, ...(payload === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(payload)) }) };
      const req = this.send(url, { method, agent: prepared.agent, headers });
      const onAbort = () => {
        if (signal !== undefined) req.destroy(abandoned(signal));
      };
      const unhook = () => {
        signal?.removeEventListener('abort', onAbort);
      };
      const fail = (error: Error) => {
        unhook();
        reject(Object.assign(signal?.aborted === true ? abandoned(signal) : error, { reusedSocket: req.reusedSocket }));
      };
      // `on`, not `once`: a second 'error' with no listener would crash the process.
      req.on('error', fail);
      req.once('response', (response) => {
        read(response).then(
          (value) => {
            unhook();
            resolve(value);
          },
          (error: unknown) => {
            // The socket is mid-answer: it cannot go back to the pool.
            req.destroy();
            // Errors only (Node's own may come from another realm under a test runner: no instanceof).
            if (error instanceof AnswerTooLargeError) {
              unhook();
              reject(error);
            } else fail(error as Error);
          },
        );
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      req.end(payload);
    });
  }

  /** One attempt, sent again on another socket when the kept-alive one was found closed and a repeat is safe. */
  async attempt<T>(request: KubeRequest, safe: boolean, signal: AbortSignal | undefined, read: (response: IncomingMessage) => Promise<T>): Promise<T> {
    const payload = request.body === undefined ? undefined : request.body instanceof JsonText ? request.body.text : JSON.stringify(request.body);
    const url = this.urlOf(request.path, request.query);
    for (let tries = 1; ; tries++) {
      const prepared = await this.connection.prepare();
      const headers: Record<string, string> = { Accept: request.accept ?? 'application/json', 'Accept-Encoding': 'gzip', 'User-Agent': USER_AGENT, ...prepared.headers };
      if (payload !== undefined) headers['Content-Type'] = request.contentType ?? 'application/json';
      try {
        return await this.exchange(url, request.method, { agent: prepared.agent, headers }, payload, signal, read);
      } catch (error) {
        // Each such failure drops one dead socket from the pool, so this ends on a new connection; the bound is a backstop.
        if (!staleSocket(error, safe) || signal?.aborted === true || tries >= MAX_STALE_SOCKET_RETRIES) throw error;
      }
    }
  }

  /** Sends `request` with its retries (see {@link KubeClientOptions}), each answer read by `read`. */
  async sendWithRetries<A extends { status: number }>(request: KubeRequest, read: (response: IncomingMessage) => Promise<A>): Promise<A> {
    const { method, operation, signal } = request;
    const safe = method === 'GET' || request.guarded === true;
    const overloadOnly = this.options.retryOn === 'overload';
    const again = overloadOnly ? OVERLOAD_STATUSES : method === 'GET' ? RETRY_READ_STATUSES : RETRY_WRITE_STATUSES;
    for (let count = 1; ; count++) {
      const delay = safe ? this.delays[count - 1] : undefined;
      let reason: string;
      const bounded = attemptSignal(signal, this.options.attemptTimeoutMs);
      try {
        const answer = await this.attempt(request, safe, bounded.signal, read);
        if (delay === undefined || !again.has(answer.status) || signal?.aborted === true) return answer;
        reason = `the API server answered ${answer.status}`;
      } catch (error) {
        // An answer too large is an answer: asking again gets the same one.
        if (error instanceof AnswerTooLargeError) throw error;
        const failure = asKubeApiError(operation, error);
        if (delay === undefined || overloadOnly || signal?.aborted === true) throw finalFailure(failure, operation, count);
        reason = failure.message;
      } finally {
        bounded.done();
      }
      this.options.onRetry?.({ operation, method, attempt: count + 1, reason });
      try {
        await sleep(delay, undefined, signal === undefined ? {} : { signal });
      } catch {
        throw new KubeApiError(operation, `${reason} (${count} attempts; the deadline ended before the next)`);
      }
    }
  }
}

/** A client for one API server; make one per cold start (or per composition) and keep it. */
export function kubeClient(connection: KubeConnection, options: KubeClientOptions = {}): KubeClient {
  const client = new ApiServerClient(connection, options);
  const request: KubeClient['request'] = (request) => {
    const maxBytes = request.maxBytes ?? client.maxBytes;
    return client.sendWithRetries(request, async (response): Promise<KubeAnswer> => {
      const body = await readBody(response, maxBytes, request.operation);
      return { status: response.statusCode ?? 0, body: parsedOrText(body.toString('utf8')), bytes: body.length };
    });
  };
  const list: KubeClient['list'] = (request, keep, onHead) => {
    const maxBytes = request.maxBytes ?? client.maxBytes;
    return client.sendWithRetries({ ...request, method: 'GET' }, (response) => readListItems(response, maxBytes, request.operation, keep, onHead));
  };
  const watch: KubeClient['watch'] = async (request, onEvent) => {
    const { operation, signal } = request;
    const maxBytes = request.maxBytes ?? client.maxBytes;
    try {
      await client.attempt({ ...request, method: 'GET', query: { ...request.query, watch: 'true' } }, true, signal, (response) => readWatchEvents(response, maxBytes, operation, onEvent));
    } catch (error) {
      if (signal?.aborted === true) return;
      throw asKubeApiError(operation, error);
    }
  };
  return { server: connection.server, request, list, watch, requests: () => client.started, close: () => {
      connection.close();
    } };
}

/**
 * Sends a request and wants a JSON object back: any other status is a
 * KubeApiError carrying the status and the API server's whole reason.
 */
export async function expectObject(client: KubeClient, request: KubeRequest): Promise<Record<string, unknown>> {
  const answer = await client.request(request);
  if (answer.status < 200 || answer.status > 299) throw apiServerAnswered(request.operation, answer.status, answer.body);
  if (!isObject(answer.body)) throw new KubeApiError(request.operation, typeof answer.body === 'string' ? 'the answer is not JSON' : 'the answer is not a JSON object', answer.status);
  return answer.body;
}

/** A GET of one object: undefined when the API server answers 404, else as {@link expectObject}. */
export async function getObject(client: KubeClient, path: string, operation: string, signal: AbortSignal | undefined, query?: Readonly<Record<string, string>>): Promise<Record<string, unknown> | undefined> {
  const answer = await client.request({ method: 'GET', path, operation, ...(signal === undefined ? {} : { signal }), ...(query === undefined ? {} : { query }) });
  if (answer.status === 404) return undefined;
  if (answer.status < 200 || answer.status > 299) throw apiServerAnswered(operation, answer.status, answer.body);
  if (!isObject(answer.body)) throw new KubeApiError(operation, typeof answer.body === 'string' ? 'the answer is not JSON' : 'the answer is not a JSON object', answer.status);
  return answer.body;
}

/** Where the API server is and how to talk to it, as the project reads a kubeconfig or EKS itself. */
export interface KubeHttpsSettings {
  /** `https://host:port`, possibly with a path prefix (no trailing slash needed). */
  server: string;
  /** PEM of the CA(s) the server's certificate must chain to; the system's CAs when absent. */
  ca?: string | Buffer;
  /** PEM of a client certificate and its key. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** The name the server's certificate is checked against (and sent as SNI), instead of the URL's host. */
  servername?: string;
  /** False only for `insecure-skip-tls-verify: true`. Default true. */
  rejectUnauthorized?: boolean;
  /** The bearer token, asked for before every request; none sent when absent or when it gives ''. */
  token?: () => string | Promise<string>;
}

/** The TLS part of the settings, as the agent takes it. */
export type TlsSettings = Pick<KubeHttpsSettings, 'ca' | 'cert' | 'key' | 'servername' | 'rejectUnauthorized'>;

/** A keep-alive agent for `server` with `tls`: every kept-alive socket is made with them. */
export function keepAliveAgent(server: string, tls: TlsSettings): HttpAgent {
  if (new URL(server).protocol !== 'https:') return new HttpAgent({ keepAlive: true });
  return new HttpsAgent({
    keepAlive: true,
    rejectUnauthorized: tls.rejectUnauthorized ?? true,
    ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
    ...(tls.cert !== undefined ? { cert: tls.cert } : {}),
    ...(tls.key !== undefined ? { key: tls.key } : {}),
    ...(tls.servername !== undefined ? { servername: tls.servername } : {}),
  });
}

/** The connection for settings the project read itself (no client-node loaded). */
export function settingsConnection(settings: KubeHttpsSettings): KubeConnection {
  const agent = keepAliveAgent(settings.server, settings);
  return {
    server: settings.server,
    async prepare() {
      const token = settings.token === undefined ? '' : await settings.token();
      const headers: Record<string, string> = token === '' ? {} : { Authorization: `Bearer ${token}` };
      return { agent, headers };
    },
    close() {
      agent.destroy();
    },
  };
}
