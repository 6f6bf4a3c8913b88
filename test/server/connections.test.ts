/**
 * What a connection to the local server may cost, over real TLS sockets: a
 * stranger's is closed as soon as its 404 is sent, whatever body it
 * declared; a slow client is cut off by the timeouts; a caller with the
 * secret keeps its connection for the next review, as the API server's pool
 * expects.
 *
 * The slow-client cases run with short timeouts injected through the app's
 * options (about a second, asserted with a 20 s bound); the production
 * values are asserted separately.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import type { SidecarSetSource } from '../../lib/ports.ts';
import { HANDLER_GRACE_MS } from '../../lib/webhooks/http-handler.ts';
import { ADMISSION_FUNCTIONS } from '../../lib/webhooks/registry.ts';
import { MAX_WEBHOOK_TIMEOUT_MS } from '../../lib/webhooks/timeout.ts';
import { buildApp, SERVER_TIMEOUTS, type ServerTimeouts } from '../../functions/server/app.ts';
import { ensureServingTls, type ServingTls } from '../../functions/server/tls.ts';
import { admissionRuntime } from '../../functions/shared/compose.ts';
import { QUICK_TIMEOUTS } from '../../testkit/reliability/stranger-connections.ts';
import { capturingLogger, podReview, SECRET, sidecarSetReview, STRANGER_SECRET } from '../../testkit/reviews.ts';
import { closedWithin, openConnections, openTcp, openTls as openRawTls, postHeaders as post, trickle, type RawConnection } from '../../testkit/tls-client.ts';

/** Half the shortest production timeout (10 s): a stranger's connection closed within it was not closed by a timeout. */
const PROMPTLY_MS = 5_000;
/** The bound for a slow client cut off by a short timeout (QUICK_TIMEOUTS, at most 1.5 s): over 10x the longest of them. */
const CUT_OFF_MS = 20_000;


let dir: string;
let tls: ServingTls;
const opened: Socket[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sidecarset-conn-'));
  tls = await ensureServingTls(join(dir, 'tls'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  for (const socket of opened.splice(0)) socket.destroy();
});

/** A TLS connection to the app, closed after the test. */
async function openTls(port: number): Promise<RawConnection> {
  const connection = await openRawTls(port, tls.caPem);
  opened.push(connection.socket);
  return connection;
}

async function startApp(timeouts?: Partial<ServerTimeouts>, sidecarSets: SidecarSetSource = memorySidecarSetSource([])): Promise<{ app: FastifyInstance; port: number }> {
  const sources = { sidecarSets, namespaces: memoryNamespaceSource([]) };
  const logger = capturingLogger().logger;
  const app = buildApp({
    runtimes: Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, admissionRuntime(fn, { current: SECRET }, sources, logger)])),
    readiness: () => Promise.resolve({ ready: true, message: '' }),
    https: { key: tls.keyPem, cert: tls.certPem },
    ...(timeouts ? { timeouts } : {}),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, port: (app.server.address() as AddressInfo).port };
}

const ONE_GB = 1_000_000_000;

describe('a stranger to the server (production timeouts)', () => {
  let app: FastifyInstance;
  let port: number;
  beforeAll(async () => {
    ({ app, port } = await startApp());
  });
  afterAll(async () => {
    await app.close();
  });

  it.each([
    ['a wrong secret', `/pod-inject/${STRANGER_SECRET}`],
    ['no secret', '/pod-inject'],
    ['an unknown path', '/nowhere'],
  ])('gets its 404 and a closed connection at once, having declared 1 GB of body it never sends, with %s', async (_name, path) => {
    const conn = await openTls(port);
    conn.socket.write(`${post(path, ONE_GB)}{"some":"of the body"`);
    const elapsed = await closedWithin(conn.closed, PROMPTLY_MS);
    expect(conn.received()).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(conn.received().toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(conn.received()).toMatch(/\r\n\r\n\{"message":"Not Found"\}$/);
    expect(elapsed).toBeDefined();
  });

  it.each(['/healthz', '/readyz'])('gets its %s answer and a closed connection', async (path) => {
    const conn = await openTls(port);
    conn.socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const elapsed = await closedWithin(conn.closed, PROMPTLY_MS);
    expect(conn.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(elapsed).toBeDefined();
  });

  it('holds nothing after 300 strangers, each declaring 1 GB: every connection is closed', async () => {
    const strangers = 300;
    const batch = 50;
    const answers: string[] = [];
    for (let i = 0; i < strangers; i += batch) {
      const conns = await Promise.all(Array.from({ length: batch }, () => openTls(port)));
      for (const conn of conns) conn.socket.write(post(`/sidecarset-validate/${STRANGER_SECRET}`, ONE_GB));
      const elapsed = await Promise.all(conns.map((conn) => closedWithin(conn.closed, PROMPTLY_MS)));
      expect(elapsed.filter((e) => e === undefined)).toHaveLength(0);
      answers.push(...conns.map((conn) => conn.received().split('\r\n')[0] ?? ''));
    }
    expect(new Set(answers)).toEqual(new Set(['HTTP/1.1 404 Not Found']));
    const open = await openConnections(app.server);
    expect(open).toBe(0);
  }, 120_000);
});

describe('a caller with the secret (production timeouts)', () => {
  let app: FastifyInstance;
  let port: number;
  beforeAll(async () => {
    ({ app, port } = await startApp());
  });
  afterAll(async () => {
    await app.close();
  });

  it('keeps its connection for the next review, as the API server pools them', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: tls.caPem, servername: 'localhost' });
    const body = JSON.stringify(sidecarSetReview('uid-keep'));
    const review = () =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port, method: 'POST', path: `/sidecarset-default/${SECRET}`, agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
          (res) => {
            res.resume();
            res.on('end', () => {
              resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket });
            });
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    try {
      expect(await review()).toEqual({ status: 200, reused: false });
      expect(await review()).toEqual({ status: 200, reused: true });
    } finally {
      agent.destroy();
    }
  });
});

describe('a caller with the secret (short timeouts)', () => {
  it('gets the answer of a review that takes longer than the request timeout: it bounds receiving the request, not deciding it', async () => {
    const requestMs = QUICK_TIMEOUTS.requestMs ?? 0;
    const slowList: SidecarSetSource = {
      list: () =>
        new Promise((resolve) => {
          setTimeout(() => {
            resolve([]);
          }, 2 * requestMs);
        }),
    };
    const { app, port } = await startApp(QUICK_TIMEOUTS, slowList);
    try {
      const conn = await openTls(port);
      const body = JSON.stringify(podReview('uid-slow'));
      conn.socket.write(`${post(`/pod-inject/${SECRET}?timeout=10s`, Buffer.byteLength(body))}${body}`);
      // The answer, not the connection's end: a caller's connection is kept alive.
      for (const deadline = performance.now() + 10 * requestMs; !conn.received().includes('uid-slow') && performance.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(conn.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(conn.received()).toContain('"uid":"uid-slow"');
    } finally {
      await app.close();
    }
  });
});

describe('the production timeouts', () => {
  it('are set on the server', async () => {
    const { app } = await startApp();
    try {
      expect({
        headersTimeout: app.server.headersTimeout,
        requestTimeout: app.server.requestTimeout,
        keepAliveTimeout: app.server.keepAliveTimeout,
        timeout: app.server.timeout,
      }).toEqual({
        headersTimeout: SERVER_TIMEOUTS.headersMs,
        requestTimeout: SERVER_TIMEOUTS.requestMs,
        keepAliveTimeout: SERVER_TIMEOUTS.keepAliveMs,
        timeout: SERVER_TIMEOUTS.idleMs,
      });
    } finally {
      await app.close();
    }
  });

  it('fit an admission webhook', () => {
    // A review may take the whole webhook timeout without a byte on the socket.
    expect(SERVER_TIMEOUTS.idleMs).toBeGreaterThan(MAX_WEBHOOK_TIMEOUT_MS + HANDLER_GRACE_MS);
    // The API server (Go's http.Transport) drops idle connections after 90 s: it must close first.
    expect(SERVER_TIMEOUTS.keepAliveMs).toBeGreaterThan(90_000);
    // Node refuses a headers timeout above the request timeout.
    expect(SERVER_TIMEOUTS.headersMs).toBeLessThanOrEqual(SERVER_TIMEOUTS.requestMs);
    expect(SERVER_TIMEOUTS).toEqual({ handshakeMs: 10_000, headersMs: 10_000, requestMs: 30_000, idleMs: 40_000, keepAliveMs: 100_000, checkIntervalMs: 1_000 });
  });
});

describe('a slow client (short timeouts)', () => {
  let app: FastifyInstance;
  let port: number;
  beforeAll(async () => {
    ({ app, port } = await startApp(QUICK_TIMEOUTS));
  });
  afterAll(async () => {
    await app.close();
  });

  it('is cut off when it opens a TCP connection and never starts TLS', async () => {
    const conn = openTcp(port);
    opened.push(conn.socket);
    expect(await closedWithin(conn.closed, CUT_OFF_MS)).toBeDefined();
  });

  it('is cut off when it finishes TLS and sends nothing', async () => {
    const conn = await openTls(port);
    expect(await closedWithin(conn.closed, CUT_OFF_MS)).toBeDefined();
  });

  it('is cut off when it trickles its headers, a byte every 100 ms', async () => {
    const conn = await openTls(port);
    trickle(conn.socket, post(`/pod-inject/${SECRET}`, 10).repeat(100));
    expect(await closedWithin(conn.closed, CUT_OFF_MS)).toBeDefined();
  });

  it('is cut off, even with the secret, when it trickles a body it never finishes', async () => {
    const conn = await openTls(port);
    conn.socket.write(post(`/pod-inject/${SECRET}`, 1_000_000));
    trickle(conn.socket, ' '.repeat(1_000_000));
    expect(await closedWithin(conn.closed, CUT_OFF_MS)).toBeDefined();
  });

  it('is cut off, even with the secret, when it declares a body and goes quiet', async () => {
    const conn = await openTls(port);
    conn.socket.write(`${post(`/pod-inject/${SECRET}`, 1_000)}{"a":`);
    expect(await closedWithin(conn.closed, CUT_OFF_MS)).toBeDefined();
  });
});
