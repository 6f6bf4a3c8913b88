/**
 * One request to the API server with a JSON body and a JSON answer, through
 * a KubeConfig's authentication and TLS settings, without client-node's typed
 * models: they turn timestamps into Date objects and drop fields they do not
 * know, and a pod read and written back here must stay exactly as stored.
 */
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
}

export interface RawKubeClient {
  readonly server: string;
  /**
   * Sends one request; every HTTP status is an answer (the caller decides).
   * @throws KubeApiError without a status code when there was no complete answer (refused, reset, timed out).
   */
  request(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, operation: string, signal: AbortSignal, body?: unknown, contentType?: string): Promise<RawAnswer>;
  /**
   * Like {@link request}, and a non-2xx status is a KubeApiError carrying the
   * status code and the API server's explanation.
   */
  expect2xx(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, operation: string, signal: AbortSignal, body?: unknown, contentType?: string): Promise<unknown>;
}

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

export function rawKubeClient(kc: KubeConfig): RawKubeClient {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new KubeApiError('connect to the API server', 'the KubeConfig has no current cluster');
  const server = cluster.server.replace(/\/$/, '');
  const http = new IsomorphicFetchHttpLibrary();
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
  const request: RawKubeClient['request'] = async (method, path, operation, signal, body, contentType) => {
    const context = new RequestContext(`${server}${path}`, METHODS[method]);
    context.setHeaderParam('Accept', 'application/json');
    if (body !== undefined) {
      context.setHeaderParam('Content-Type', contentType ?? 'application/json');
      context.setBody(body instanceof JsonText ? body.text : JSON.stringify(body));
    }
    let status: number;
    let text: string;
    try {
      await kc.applySecurityAuthentication(context);
      reuse(context);
      context.setSignal(signal);
      const response = await http.send(context).toPromise();
      status = response.httpStatusCode;
      text = await response.body.text();
    } catch (error) {
      throw clientNodeError(operation, error);
    }
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON (a proxy's error page): kept as text for the message.
    }
    return { status, body: parsed };
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
