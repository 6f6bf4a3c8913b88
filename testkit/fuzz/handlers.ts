/**
 * The two ways the fuzzer reaches the admission functions, both as the
 * platform runs them: the Lambda handler with Function URL events, and the
 * fastify server over real HTTPS on 127.0.0.1. Both serve from one cluster
 * view that each input sets before it is sent, so an input carries its own
 * SidecarSets and Namespaces without a cold start per input.
 */
import type { FastifyInstance } from 'fastify';
import { Agent, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { memoryNamespaceSource } from '../../lib/adapters/memory.ts';
import type { Namespace } from '../../lib/kube/types.ts';
import type { Clock, Logger, NamespaceSource, SidecarSetSource } from '../../lib/ports.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { ADMISSION_FUNCTIONS, type AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { buildApp } from '../../functions/server/app.ts';
import { generateServingTls } from '../../functions/server/tls.ts';
import { admissionLambda, type FunctionUrlHandler } from '../../functions/shared/admission-lambda.ts';
import { admissionRuntime } from '../../functions/shared/compose.ts';
import { functionUrlEvent, SECRET } from '../reviews.ts';

/** What the functions see of the cluster for one input. */
export interface Cluster {
  sidecarSets: readonly SidecarSet[];
  namespaces: readonly Namespace[];
}

export const EMPTY_CLUSTER: Cluster = { sidecarSets: [], namespaces: [] };

/** The fixed time injection records, so that a patch can be recomputed by the core. */
export const FUZZ_NOW = new Date('2026-11-30T12:00:00.000Z');
export const fuzzClock: Clock = { now: () => FUZZ_NOW };

/**
 * Logs are dropped: a long run would otherwise keep every line. What the
 * logger is handed must still serialise, so each call is checked.
 */
export const discardingLogger: Logger = {
  info: (message, fields) => void JSON.stringify({ message, ...fields }),
  warn: (message, fields) => void JSON.stringify({ message, ...fields }),
  error: (message, fields) => void JSON.stringify({ message, ...fields }),
};

/** One HTTP request as either handler carries it. */
export interface HandlerRequest {
  fn: AdmissionFunctionName;
  body: Buffer;
  method?: string;
  /** The path after `/<function>`; `/<secret>` by default. */
  path?: string;
  headers?: Record<string, string>;
  /** The query string without `?`; `timeout=10s` by default, as the API server sends it. */
  query?: string;
  /** Send no Content-Type at all (otherwise application/json unless `headers` says). */
  dropContentType?: boolean;
}

/** What came back, with the time it took. */
export interface HandlerAnswer {
  status: number;
  contentType: string | undefined;
  /** The Allow header, which a 405 carries. */
  allow: string | undefined;
  body: string;
  ms: number;
}

export interface WebhookHandler {
  readonly name: 'lambda' | 'https';
  send(request: HandlerRequest): Promise<HandlerAnswer>;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/**
 * The cluster view both handlers read; `current` is swapped per input. The
 * SidecarSets are served frozen, as the client-node source serves its cached
 * list to every request: a handler that edited one would throw here rather
 * than change what the next request sees.
 */
export class ClusterView {
  #current: Cluster = EMPTY_CLUSTER;
  #sets: readonly SidecarSet[] = [];
  get current(): Cluster {
    return this.#current;
  }
  set current(cluster: Cluster) {
    this.#current = cluster;
    this.#sets = deepFreeze(structuredClone(cluster.sidecarSets));
  }
  readonly sidecarSets: SidecarSetSource = { list: () => Promise.resolve(this.#sets) };
  readonly namespaces: NamespaceSource = {
    labels: (names, signal) => memoryNamespaceSource(this.current.namespaces).labels(names, signal),
  };
}

const DEFAULT_QUERY = 'timeout=10s';

/** The Lambda handlers of the three functions, composed once as on a cold start. */
export async function lambdaHandler(view: ClusterView): Promise<WebhookHandler> {
  const handlers = new Map<AdmissionFunctionName, FunctionUrlHandler>();
  for (const fn of ADMISSION_FUNCTIONS) {
    handlers.set(
      fn,
      await admissionLambda(fn, {
        env: { WEBHOOK_SECRET: SECRET },
        overrides: { logger: discardingLogger, clock: fuzzClock },
        cluster: () => Promise.resolve({ sidecarSets: view.sidecarSets, namespaces: view.namespaces, server: 'memory' }),
      }),
    );
  }
  return {
    name: 'lambda',
    async send(req) {
      const handler = handlers.get(req.fn);
      if (handler === undefined) throw new Error(`no handler for ${req.fn}`);
      // Function URLs deliver a JSON body as text and anything else as base64;
      // base64 always is exact for arbitrary bytes.
      const event = functionUrlEvent({
        body: '',
        method: req.method ?? 'POST',
        path: req.path ?? `/${SECRET}`,
        query: req.query ?? DEFAULT_QUERY,
        headers: { 'content-length': String(req.body.length), ...req.headers },
      });
      event.body = req.body.toString('base64');
      event.isBase64Encoded = true;
      if (req.dropContentType === true) Reflect.deleteProperty(event.headers, 'content-type');
      const started = performance.now();
      const result = await handler(event);
      const ms = performance.now() - started;
      if (typeof result === 'string') throw new Error('the handler answered with the bare-string shorthand');
      const headers = result.headers ?? {};
      return {
        status: result.statusCode ?? 0,
        contentType: headers['content-type']?.toString(),
        allow: headers.allow?.toString(),
        body: result.body ?? '',
        ms,
      };
    },
  };
}

/** The fastify app serving the three functions over HTTPS on 127.0.0.1, and its handler. */
export async function httpsHandler(view: ClusterView): Promise<WebhookHandler & { close(): Promise<void>; readonly staleSockets: number }> {
  const tls = generateServingTls();
  const sources = { sidecarSets: view.sidecarSets, namespaces: view.namespaces };
  const app: FastifyInstance = buildApp({
    runtimes: Object.fromEntries(
      ADMISSION_FUNCTIONS.map((fn) => [fn, admissionRuntime(fn, { current: SECRET }, sources, discardingLogger, fuzzClock)]),
    ),
    readiness: () => Promise.resolve({ ready: true, message: 'memory' }),
    https: { key: tls.keyPem, cert: tls.certPem },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  const agent = new Agent({ keepAlive: true, maxSockets: 4, ca: tls.caPem });
  const exchange = (req: HandlerRequest, fresh = false): Promise<HandlerAnswer & { staleSocket?: boolean }> => {
    const path = `/${req.fn}${req.path ?? `/${SECRET}`}`;
    const query = req.query ?? DEFAULT_QUERY;
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const outgoing = request(
        {
          host: '127.0.0.1',
          port,
          ca: tls.caPem,
          agent: fresh ? false : agent,
          path: query === '' ? path : `${path}?${query}`,
          method: req.method ?? 'POST',
          headers: {
            ...(req.dropContentType === true ? {} : { 'content-type': 'application/json' }),
            'content-length': req.body.length,
            ...req.headers,
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            resolve({
              status: response.statusCode ?? 0,
              contentType: response.headers['content-type'],
              allow: response.headers.allow,
              body: Buffer.concat(chunks).toString('utf8'),
              ms: performance.now() - started,
            });
          });
          response.on('error', reject);
        },
      );
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed while idle fails on reuse:
        // Node's documented race (see request.reusedSocket), not an answer.
        if (outgoing.reusedSocket && error.code === 'ECONNRESET') {
          resolve({ status: 0, contentType: undefined, allow: undefined, body: '', ms: 0, staleSocket: true });
        } else {
          reject(error);
        }
      });
      outgoing.end(req.body);
    });
  };
  let staleSockets = 0;
  return {
    name: 'https',
    async send(req) {
      const answer = await exchange(req);
      if (answer.staleSocket !== true) return answer;
      staleSockets++;
      // Once more, on a connection of its own; a reset there is the server's.
      return exchange(req, true);
    },
    get staleSockets() {
      return staleSockets;
    },
    async close() {
      agent.destroy();
      await app.close();
    },
  };
}
