/**
 * The fault proxy against plain local servers: an HTTP server for whole
 * requests, an echo server for chunk-level behaviour. Timing assertions are
 * lower bounds derived from the configured delays (timers never fire early),
 * or "not within" windows with wide margins.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { request, createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { startFaultProxy, type FaultProxy } from '../../testkit/faults/fault-proxy.ts';

const LOOPBACK = '127.0.0.1';

function listen(server: Server | HttpServer): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, LOOPBACK, () => {
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server | HttpServer): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => {
      resolve();
    });
  });
}

interface Answer {
  status: number;
  body: string;
}

/** One GET on a fresh connection (no keep-alive), failing after `timeoutMs`. */
function get(port: number, path: string, timeoutMs = 5_000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: LOOPBACK, port, path, agent: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'TIMEOUT' })));
    req.on('error', reject);
    req.end();
  });
}

/** The error code a promise rejects with, or `resolved`. */
async function failureCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
}

/** How a new connection ends when nothing is sent: its error code (at connect or later), or `closed`. */
function fateOfConnection(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: LOOPBACK, port });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      resolve(error.code ?? 'error');
    });
    socket.on('close', () => {
      resolve('closed');
    });
  });
}

/** A raw connection and a way to read what arrives next. */
async function rawConnection(port: number): Promise<{ socket: Socket; next: () => Promise<string>; closed: Promise<string> }> {
  const socket = connect({ host: LOOPBACK, port });
  const chunks: string[] = [];
  let waiter: (() => void) | undefined;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    chunks.push(chunk);
    waiter?.();
  });
  const closed = new Promise<string>((resolve) => {
    socket.on('error', (error: NodeJS.ErrnoException) => {
      resolve(error.code ?? 'error');
    });
    socket.on('close', () => {
      resolve('closed');
    });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const next = async (): Promise<string> => {
    while (chunks.length === 0) await new Promise<void>((resolve) => (waiter = resolve));
    return chunks.shift() ?? '';
  };
  return { socket, next, closed };
}

describe('the fault proxy', () => {
  let http: HttpServer;
  let echo: Server;
  let httpPort: number;
  let echoPort: number;
  const proxies: FaultProxy[] = [];

  const proxyTo = async (targetPort: number): Promise<FaultProxy> => {
    const proxy = await startFaultProxy({ targetPort });
    proxies.push(proxy);
    return proxy;
  };

  beforeAll(async () => {
    http = createHttpServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', connection: 'close' });
      res.end(`hello ${req.url ?? ''}`);
    });
    echo = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.pipe(socket);
    });
    httpPort = await listen(http);
    echoPort = await listen(echo);
  });

  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  });

  afterAll(async () => {
    http.closeAllConnections();
    await Promise.all([closeServer(http), closeServer(echo)]);
  });

  it('forwards requests and answers untouched and counts connections and bytes', async () => {
    const proxy = await proxyTo(httpPort);
    const answer = await get(proxy.port, '/a');
    expect(answer).toEqual({ status: 200, body: 'hello /a' });
    const counters = proxy.counters();
    expect(counters.connections).toBe(1);
    expect(counters.bytesToTarget).toBeGreaterThan('GET /a HTTP/1.1\r\n'.length);
    expect(counters.bytesFromTarget).toBeGreaterThan('hello /a'.length);
    expect(counters.resets).toBe(0);
  });

  it('delays each connection by at least the configured latency', async () => {
    const proxy = await proxyTo(httpPort);
    proxy.slow({ perConnectionMs: 300 });
    const started = performance.now();
    await expect(get(proxy.port, '/slow')).resolves.toEqual({ status: 200, body: 'hello /slow' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(295);
  });

  it('delays every chunk in both directions', async () => {
    const proxy = await proxyTo(echoPort);
    proxy.slow({ perChunkMs: 150 });
    const { socket, next } = await rawConnection(proxy.port);
    const started = performance.now();
    socket.write('ping');
    expect(await next()).toBe('ping');
    // Once on the way there, once on the way back.
    expect(performance.now() - started).toBeGreaterThanOrEqual(295);
    socket.destroy();
  });

  it('resets open connections and every new one until the mode changes', async () => {
    const proxy = await proxyTo(echoPort);
    const open = await rawConnection(proxy.port);
    open.socket.write('hi');
    expect(await open.next()).toBe('hi');
    proxy.reset();
    expect(await open.closed).toBe('ECONNRESET');
    // The proxy accepts, then resets: the client sees it at connect or on its first read.
    expect(await fateOfConnection(proxy.port)).toBe('ECONNRESET');
    expect(proxy.counters().resets).toBe(2);
    proxy.passThrough();
    const after = await rawConnection(proxy.port);
    after.socket.write('back');
    expect(await after.next()).toBe('back');
    after.socket.destroy();
  });

  it('accepts but never answers in a blackhole, and delivers what it held once it heals', async () => {
    const proxy = await proxyTo(httpPort);
    proxy.blackhole();
    expect(await failureCode(get(proxy.port, '/lost', 400))).toBe('TIMEOUT');
    expect(proxy.counters()).toMatchObject({ connections: 1, bytesToTarget: 0, bytesFromTarget: 0 });
    const held = get(proxy.port, '/held', 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    proxy.passThrough();
    await expect(held).resolves.toEqual({ status: 200, body: 'hello /held' });
  });

  it('refuses connections while stopped and serves again on the same port after start', async () => {
    const proxy = await proxyTo(echoPort);
    const port = proxy.port;
    const open = await rawConnection(port);
    await proxy.stop();
    expect(await open.closed).toBe('closed');
    expect(await fateOfConnection(port)).toBe('ECONNREFUSED');
    await proxy.start();
    expect(proxy.port).toBe(port);
    const again = await rawConnection(port);
    again.socket.write('again');
    expect(await again.next()).toBe('again');
    again.socket.destroy();
  });

  it('resets the client when the target refuses the connection', async () => {
    const gone = createServer();
    const port = await listen(gone);
    await closeServer(gone);
    const proxy = await proxyTo(port);
    expect(await failureCode(get(proxy.port, '/nobody'))).toBe('ECONNRESET');
    expect(proxy.counters().targetFailures).toBe(1);
  });
});
