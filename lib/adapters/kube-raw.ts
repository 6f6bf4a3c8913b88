/**
 * One request to the API server with a JSON body and a JSON answer, through
 * a KubeConfig's authentication and TLS settings, without client-node's typed
 * models: they turn timestamps into Date objects and drop fields they do not
 * know, and a pod read and written back here must stay exactly as stored.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { HttpMethod, IsomorphicFetchHttpLibrary, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { isObject } from '../kube/json.ts';
import { apiServerAnswered, KubeApiError } from './kube-api-error.ts';
import { clientNodeError } from './kubeconfig.ts';

/** The content types of the patches the API server takes. */
export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

/** A body already written as JSON text, sent as it is (bytes that must reach the API server exactly). */
export class JsonText {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

export interface RawAnswer {
  status: number;
  /** The parsed answer; the raw text when it is not JSON. */
  body: unknown;
  /** The answer's size in bytes, when it was read with a cap. */
  bytes?: number;
}

/** The verbs the raw client sends. */
export type RawMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RawKubeClient {
  readonly server: string;
  /**
   * Sends one request, and sends it again when that is safe (see
   * {@link RawClientOptions}); every HTTP status is an answer (the caller decides).
   * @param signal the caller's deadline (the pass's): retries stop with it.
   * @throws KubeApiError without a status code when there was no complete answer (refused, reset, timed
   *   out) after the retries; AnswerTooLargeError when the answer passed `maxBytes`.
   */
  request(method: RawMethod, path: string, operation: string, signal: AbortSignal | undefined, body?: unknown, contentType?: string, maxBytes?: number): Promise<RawAnswer>;
  /**
   * Like {@link request}, and a non-2xx status is a KubeApiError carrying the
   * status code and the API server's explanation.
   */
  expect2xx(method: RawMethod, path: string, operation: string, signal: AbortSignal | undefined, body?: unknown, contentType?: string): Promise<unknown>;
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

/** One request sent again: what, which attempt comes next, and why. */
export interface RequestRetry {
  operation: string;
  method: RawMethod;
  /** The attempt about to be made (2 for the first retry). */
  attempt: number;
  reason: string;
}

/**
 * When a request is sent again (docs/RELIABILITY.md, "Retries"):
 * - a read (GET) after no complete answer (refused, reset, its attempt timed
 *   out) or an answer that says "try again" (429, 500, 502, 503, 504);
 * - a write only when the client is made with `writes: 'guarded'` (the
 *   caller's writes are all safe to repeat: a JSON Patch that tests the
 *   resourceVersion first, a create that answers AlreadyExists, a delete
 *   with a uid precondition, a merge patch setting the same values), and
 *   then only after no complete answer or a 429, which the API server sends
 *   before doing anything: a 5xx to a write may have been applied.
 * Every retry waits its delay first; none starts once the caller's signal ended.
 */
export interface RawClientOptions {
  /** The longest one attempt may take; unset, only the caller's signal bounds it. */
  attemptTimeoutMs?: number;
  /** Pauses before the retries; one more attempt per entry. Default {@link DEFAULT_RETRY_DELAYS_MS}. */
  retryDelaysMs?: readonly number[];
  /** Default 'once': writes are sent once. */
  writes?: 'guarded' | 'once';
  /** Told before every retry (the reconciler counts and logs them). */
  onRetry?: (retry: RequestRetry) => void;
}

/** Three attempts in all: a dropped connection or a slow answer costs a retry, not the pass. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [250, 1_000];

/** Statuses that ask for another try: overload (429), and, for reads only, the server's own trouble. */
const RETRY_READ_STATUSES = new Set([429, 500, 502, 503, 504]);
const RETRY_WRITE_STATUSES = new Set([429]);

const METHODS = { GET: HttpMethod.GET, POST: HttpMethod.POST, PUT: HttpMethod.PUT, PATCH: HttpMethod.PATCH, DELETE: HttpMethod.DELETE } as const;

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/**
 * How long one client sends its requests through the same dispatcher (its
 * connection pool). client-node makes a new one for every request, so each
 * request was a new TCP connection and TLS handshake (a 1,000-pod rollout
 * opened 2,164 connections): cheap next to the API server on one machine, a
 * network round trip or more each against a remote one. A fresh pool now and
 * then still picks up rotated client certificates from the KubeConfig, and a
 * Lambda thawed after a minute does not start on connections that went stale.
 */
export const DISPATCHER_REUSE_MS = 60_000;

export function rawKubeClient(kc: KubeConfig, options: RawClientOptions = {}): RawKubeClient {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new KubeApiError('connect to the API server', 'the KubeConfig has no current cluster');
  const server = cluster.server.replace(/\/$/, '');
  const http = new IsomorphicFetchHttpLibrary();
  const delays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  let shared: { dispatcher: Dispatcher; since: number } | undefined;
  /** The request's dispatcher: the shared one while it is young enough, else the one client-node just made, shared from now on. */
  const reuse = (context: RequestContext): void => {
    const fresh = context.getDispatcher();
    if (fresh === undefined) return;
    const now = performance.now();
    if (shared !== undefined && now - shared.since < DISPATCHER_REUSE_MS) {
      context.setDispatcher(shared.dispatcher);
      return;
    }
    const old = shared?.dispatcher;
    shared = { dispatcher: fresh, since: now };
    // Graceful: requests still on the old pool finish, then its connections close.
    old?.close().catch(() => undefined);
  };
  /** One attempt, bounded by the caller's signal and the attempt timeout. */
  const once = async (method: RawMethod, path: string, operation: string, signal: AbortSignal | undefined, body: unknown, contentType: string | undefined, maxBytes: number | undefined): Promise<RawAnswer> => {
    const context = new RequestContext(`${server}${path}`, METHODS[method]);
    context.setHeaderParam('Accept', 'application/json');
    if (body !== undefined) {
      context.setHeaderParam('Content-Type', contentType ?? 'application/json');
      context.setBody(body instanceof JsonText ? body.text : JSON.stringify(body));
    }
    const timeout = options.attemptTimeoutMs === undefined ? undefined : AbortSignal.timeout(options.attemptTimeoutMs);
    const bounded = timeout === undefined ? signal : signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
    let status: number;
    let text: string;
    let bytes: number | undefined;
    try {
      await kc.applySecurityAuthentication(context);
      reuse(context);
      if (bounded !== undefined) context.setSignal(bounded);
      const response = await http.send(context).toPromise();
      status = response.httpStatusCode;
      if (maxBytes === undefined) text = await response.body.text();
      else ({ text, bytes } = await boundedText(response.body.stream(), maxBytes, operation));
    } catch (error) {
      if (error instanceof AnswerTooLargeError) throw error;
      throw clientNodeError(operation, error);
    }
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON (a proxy's error page): kept as text for the message.
    }
    return { status, body: parsed, ...(bytes === undefined ? {} : { bytes }) };
  };
  const request: RawKubeClient['request'] = async (method, path, operation, signal, body, contentType, maxBytes) => {
    const retries = method === 'GET' || options.writes === 'guarded';
    const again = method === 'GET' ? RETRY_READ_STATUSES : RETRY_WRITE_STATUSES;
    for (let attempt = 1; ; attempt++) {
      const delay = retries ? delays[attempt - 1] : undefined;
      let reason: string;
      try {
        const answer = await once(method, path, operation, signal, body, contentType, maxBytes);
        if (delay === undefined || !again.has(answer.status) || signal?.aborted === true) return answer;
        reason = `the API server answered ${answer.status}`;
      } catch (error) {
        // An answer too large is an answer: asking again gets the same one.
        if (error instanceof AnswerTooLargeError || signal?.aborted === true) throw error;
        const failure = error instanceof KubeApiError ? error : clientNodeError(operation, error);
        if (delay === undefined) throw attempt === 1 ? failure : new KubeApiError(operation, `${failure.message} (${attempt} attempts)`, failure.code, { cause: failure });
        reason = failure.message;
      }
      options.onRetry?.({ operation, method, attempt: attempt + 1, reason });
      try {
        await sleep(delay, undefined, signal === undefined ? {} : { signal });
      } catch {
        throw new KubeApiError(operation, `${reason} (${attempt} attempts; the deadline ended before the next)`);
      }
    }
  };
  return {
    server,
    request,
    async expect2xx(method, path, operation, signal, body, contentType) {
      const answer = await request(method, path, operation, signal, body, contentType);
      if (answer.status < 200 || answer.status > 299) throw apiServerAnswered(operation, answer.status, answer.body);
      if (!isObject(answer.body)) throw new KubeApiError(operation, 'the answer is not a JSON object', answer.status);
      return answer.body;
    },
  };
}

/** The answer's text, refused once it passes `maxBytes` (checked as the bytes arrive: a huge page is never held whole). */
async function boundedText(stream: ReadableStream<Uint8Array> | null | undefined, maxBytes: number, operation: string): Promise<{ text: string; bytes: number }> {
  if (stream === null || stream === undefined) return { text: '', bytes: 0 };
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new AnswerTooLargeError(operation, maxBytes);
    }
    chunks.push(value);
  }
  return { text: Buffer.concat(chunks, size).toString('utf8'), bytes: size };
}
