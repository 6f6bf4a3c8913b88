/**
 * The fastify app serving the three admission functions locally, with the
 * same paths (`/<function>/<secret>`), authentication and answers as the
 * Lambda Function URLs, because both call the same HTTP door. buildApp does
 * not listen: tests drive it with app.inject().
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { callerAllowed, NOT_FOUND, serveAdmission, type HttpResponse } from '../../lib/webhooks/http-door.ts';
import { isAdmissionFunction, type AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import type { AdmissionRuntime } from '../shared/compose.ts';

export interface AppDeps {
  runtimes: Readonly<Partial<Record<AdmissionFunctionName, AdmissionRuntime>>>;
  /** Ready when every cluster source answers; the message says what is not. */
  readiness: () => Promise<{ ready: boolean; message: string }>;
  https?: { key: string; cert: string };
}

/** Fastify's own limit sits above the door's so that the door answers 413 with its message. */
const TRANSPORT_BODY_LIMIT_FACTOR = 2;

function send(reply: FastifyReply, response: HttpResponse): FastifyReply {
  return reply.code(response.statusCode).headers(response.headers).send(response.body);
}

/** The function and the path after it, from `/<function>` or `/<function>/<rest>`. */
function route(url: string): { fn: AdmissionFunctionName; path: string } | undefined {
  const path = url.split('?')[0] ?? '';
  const match = /^\/([^/]+)(\/.*)?$/.exec(path);
  const fn = match?.[1];
  if (fn === undefined || !isAdmissionFunction(fn)) return undefined;
  return { fn, path: match?.[2] ?? '/' };
}

export function buildApp(deps: AppDeps): FastifyInstance {
  const maxBody = Math.max(0, ...Object.values(deps.runtimes).map((r) => r.config.maxBodyBytes));
  const app = Fastify({
    logger: false,
    bodyLimit: maxBody * TRANSPORT_BODY_LIMIT_FACTOR,
    ...(deps.https ? { https: deps.https } : {}),
  }) as unknown as FastifyInstance;

  // The door parses and checks the body itself (content type, size, JSON),
  // exactly as on Lambda, so fastify hands it over untouched.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
    done(null, body);
  });

  // Strangers are turned away before their body is read.
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0];
    if (path === '/healthz' || path === '/readyz') return;
    const target = route(request.url);
    const runtime = target ? deps.runtimes[target.fn] : undefined;
    // The socket's peer, never X-Forwarded-For: a header is whatever the caller writes.
    const caller = { path: target?.path ?? '', authorization: request.headers.authorization, sourceIp: request.socket.remoteAddress };
    if (!target || !runtime || !(await callerAllowed(runtime.config, caller))) {
      await send(reply, NOT_FOUND);
      return reply;
    }
    return undefined;
  });

  app.get('/healthz', async (_request, reply) => reply.code(200).send({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const { ready, message } = await deps.readiness();
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', message });
  });

  const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const target = route(request.url);
    const runtime = target ? deps.runtimes[target.fn] : undefined;
    if (!target || !runtime) return send(reply, NOT_FOUND);
    const body = typeof request.body === 'string' ? request.body : '';
    const query = request.query as Record<string, string | undefined>;
    const headers: Record<string, string | undefined> = {};
    for (const [k, v] of Object.entries(request.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const response = await serveAdmission(
      {
        method: request.method,
        path: target.path,
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
  // caller with the secret they get the door's 405, as on Lambda; a stranger
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
