/**
 * The fastify app serving the admission functions and the CRD conversion function locally, with the
 * same paths (`/<function>/<secret>`), authentication and answers as the
 * Lambda Function URLs, because both call the same HTTP handler, and their
 * metrics as Prometheus text on `/metrics` behind the same caller check.
 * buildApp does not listen: tests drive it with app.inject().
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { callerAllowed, NOT_FOUND, serveAuthenticatedAdmission, type HttpResponse } from '../../lib/webhooks/http-handler.ts';
import { REFUSED_CALLER } from '../../lib/webhooks/request-outcome.ts';
import { reviewFactOf } from '../../lib/webhooks/request-observer.ts';
import { isFunctionName } from '../../lib/webhooks/registry.ts';
import type { FunctionName } from '../../lib/webhooks/descriptors.ts';
import { MAX_WEBHOOK_TIMEOUT_MS } from '../../lib/webhooks/timeout.ts';
import { PROMETHEUS_CONTENT_TYPE } from '../../lib/metrics/prometheus.ts';
import type { AdmissionRuntime } from '../shared/compose.ts';

/**
 * How long the server waits on a connection, in ms. Fastify's defaults turn
 * Node's request timeout off, so without these a client that declares a body
 * and never sends it, or trickles its headers, holds a connection (and its
 * TLS state) as long as it likes.
 */
export interface ServerTimeouts {
  /** For the TLS handshake: on loopback or a LAN it takes milliseconds. */
  handshakeMs: number;
  /** From the connection (or a kept-alive request's first byte) to the end of the headers, which the API server sends at once. */
  headersMs: number;
  /** To the end of the body: at most 6 MB, from a client that gives up after its own timeout (at most 30 s) anyway. */
  requestMs: number;
  /** Socket inactivity while a request is open: above the longest review (the 30 s webhook timeout), which sends nothing until it answers. */
  idleMs: number;
  /**
   * An idle connection kept for the caller's next request. Above the API
   * server's own idle limit (Go's http.Transport, 90 s) so that the client
   * always closes first: a server closing a pooled connection just as the
   * client reuses it fails that webhook call.
   */
  keepAliveMs: number;
  /** How often Node checks headersMs and requestMs on open connections. */
  checkIntervalMs: number;
}

export const SERVER_TIMEOUTS: Readonly<ServerTimeouts> = {
  handshakeMs: 10_000,
  headersMs: 10_000,
  requestMs: MAX_WEBHOOK_TIMEOUT_MS,
  idleMs: MAX_WEBHOOK_TIMEOUT_MS + 10_000,
  keepAliveMs: 100_000,
  checkIntervalMs: 1_000,
};

export interface AppDeps {
  /** The functions served, by name: the admission functions and, for a cluster that converts through this server, sidecarset-convert. */
  runtimes: Readonly<Partial<Record<FunctionName, AdmissionRuntime>>>;
  /** Ready when every cluster source answers. The message is for the server's log: /readyz never shows it. */
  readiness: () => Promise<{ ready: boolean; message: string }>;
  https?: { key: string; cert: string };
  /** Defaults to {@link SERVER_TIMEOUTS}; tests shorten them. */
  timeouts?: Partial<ServerTimeouts>;
  /**
   * The counters `/metrics` shows as Prometheus text, to callers with the
   * webhook secret (as `/metrics/<secret>` or a Bearer token); without it
   * `/metrics` is a path like any other unknown one.
   */
  metrics?: { render(): string };
}

/** The path after `/metrics` (`/` or `/<secret>`), or undefined when the path is not the metrics one. */
function metricsRoute(path: string): string | undefined {
  const match = /^\/metrics(\/.*)?$/.exec(path);
  return match === null ? undefined : (match[1] ?? '/');
}

/** Fastify's own limit sits above the HTTP handler's so that the HTTP handler answers 413 with its message. */
const TRANSPORT_BODY_LIMIT_FACTOR = 2;

function send(reply: FastifyReply, response: HttpResponse): FastifyReply {
  return reply.code(response.statusCode).headers(response.headers).send(response.body);
}

/** The function and the path after it, from `/<function>` or `/<function>/<rest>`. */
function route(url: string): { fn: FunctionName; path: string } | undefined {
  const path = url.split('?')[0] ?? '';
  const match = /^\/([^/]+)(\/.*)?$/.exec(path);
  const fn = match?.[1];
  if (fn === undefined || !isFunctionName(fn)) return undefined;
  return { fn, path: match?.[2] ?? '/' };
}

/**
 * Answers `response` and closes the connection once it is sent, without
 * reading the request's body: for anyone who has not shown the secret, so a
 * stranger declaring a large body cannot keep the connection open.
 */
async function sendAndClose(reply: FastifyReply, response: HttpResponse): Promise<FastifyReply> {
  // Node ends the socket after a response carrying `Connection: close` and
  // does not wait for the rest of the body.
  return send(reply.header('connection', 'close'), response);
}

export function buildApp(deps: AppDeps): FastifyInstance {
  const maxBody = Math.max(0, ...Object.values(deps.runtimes).map((r) => r.config.maxBodyBytes));
  const timeouts = { ...SERVER_TIMEOUTS, ...deps.timeouts };
  // Node's own options, read when the server is created (fastify does not set these two).
  const nodeServerOptions = { headersTimeout: timeouts.headersMs, connectionsCheckingInterval: timeouts.checkIntervalMs };
  const app = Fastify({
    logger: false,
    bodyLimit: maxBody * TRANSPORT_BODY_LIMIT_FACTOR,
    requestTimeout: timeouts.requestMs,
    connectionTimeout: timeouts.idleMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    ...(deps.https ? { https: { ...deps.https, ...nodeServerOptions, handshakeTimeout: timeouts.handshakeMs } } : { http: nodeServerOptions }),
  }) as unknown as FastifyInstance;

  // The HTTP handler parses and checks the body itself (content type, size, JSON),
  // exactly as on Lambda, so fastify hands it over untouched.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
    done(null, body);
  });

  // Strangers are turned away before their body is read. A caller let in
  // is remembered with its route, so the handler neither routes nor checks
  // the caller (re-reading the secret) again.
  const admitted = new WeakMap<FastifyRequest, { path: string; runtime: AdmissionRuntime }>();
  const metricsReaders = new WeakSet<FastifyRequest>();
  // The functions share one caller access, so any one's configuration checks a metrics reader.
  const anyRuntime = Object.values(deps.runtimes)[0];
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    if (path === '/healthz' || path === '/readyz') return;
    const metricsPath = deps.metrics === undefined ? undefined : metricsRoute(path);
    if (metricsPath !== undefined) {
      const caller = { path: metricsPath, authorization: request.headers.authorization, sourceIp: request.socket.remoteAddress };
      if (anyRuntime === undefined || !(await callerAllowed(anyRuntime.config, caller))) {
        await sendAndClose(reply, NOT_FOUND);
        return reply;
      }
      metricsReaders.add(request);
      return undefined;
    }
    const target = route(request.url);
    const runtime = target ? deps.runtimes[target.fn] : undefined;
    // The socket's peer, never X-Forwarded-For: a header is whatever the caller writes.
    const caller = { path: target?.path ?? '', authorization: request.headers.authorization, sourceIp: request.socket.remoteAddress };
    if (!target || !runtime || !(await callerAllowed(runtime.config, caller))) {
      // Counted as the Lambda handler counts a stranger at a function's URL.
      if (runtime !== undefined) runtime.deps.metrics?.review(reviewFactOf(REFUSED_CALLER));
      await sendAndClose(reply, NOT_FOUND);
      return reply;
    }
    admitted.set(request, { path: target.path, runtime });
    return undefined;
  });

  // Health answers are for anyone, so they close the connection too: only
  // callers with the secret keep one open.
  const status = (statusCode: number, text: string): HttpResponse => ({ statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: text }) });
  app.get('/healthz', async (_request, reply) => sendAndClose(reply, status(200, 'ok')));
  app.get('/readyz', async (_request, reply) => {
    // Why it is not ready (the API server's address, its error) is in the log, not here.
    const { ready } = await deps.readiness();
    return sendAndClose(reply, ready ? status(200, 'ready') : status(503, 'not ready'));
  });

  const metrics = deps.metrics;
  if (metrics !== undefined) {
    const scrape = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      if (!metricsReaders.has(request)) return send(reply, NOT_FOUND);
      return reply.code(200).header('content-type', PROMETHEUS_CONTENT_TYPE).send(metrics.render());
    };
    app.get('/metrics', scrape);
    app.get('/metrics/*', scrape);
  }

  const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const caller = admitted.get(request);
    // Only a health path gets here without the hook's admission (e.g. POST /healthz).
    if (caller === undefined) return send(reply, NOT_FOUND);
    const { path, runtime } = caller;
    const body = typeof request.body === 'string' ? request.body : '';
    const query = request.query as Record<string, string | undefined>;
    const headers: Record<string, string | undefined> = {};
    for (const [k, v] of Object.entries(request.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const response = await serveAuthenticatedAdmission(
      {
        method: request.method,
        path,
        headers,
        timeout: query.timeout,
        body,
        bodyBytes: Buffer.byteLength(body),
        requestId: request.id,
        sourceIp: request.socket.remoteAddress,
      },
      runtime.config,
      runtime.deps,
    );
    return send(reply, response);
  };
  app.all('/*', serve);

  // Methods `all` does not route (PROPFIND, SEARCH...) land here: from a
  // caller with the secret they get the HTTP handler's 405, as on Lambda; a stranger
  // was already turned away by the onRequest hook.
  app.setNotFoundHandler(serve);
  app.setErrorHandler(async (error: { statusCode?: number; message: string }, _request, reply) => {
    // Fastify's own refusals (a body over the transport limit, a broken
    // connection): a short message, never a stack trace.
    const statusCode = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    return reply.code(statusCode).send({ message: statusCode === 413 ? 'the body is too large' : 'the request failed' });
  });
  return app;
}
