/**
 * What connections to the local server cost before anyone authenticates:
 * strangers declaring a 1 GB body they never send, and slow clients, against
 * the real server over real TLS with its production timeouts (or, for a
 * quick run, short ones). Every connection must be closed: strangers as soon
 * as their 404 is sent, slow clients by the timeouts.
 */
import type { FastifyInstance } from 'fastify';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { ADMISSION_FUNCTIONS } from '../../lib/webhooks/registry.ts';
import { buildApp, SERVER_TIMEOUTS, type ServerTimeouts } from '../../functions/server/app.ts';
import { ensureServingTls } from '../../functions/server/tls.ts';
import { admissionRuntime } from '../../functions/shared/compose.ts';
import { median, quantile } from '../bench/stats.ts';
import { capturingLogger, SECRET, STRANGER_SECRET } from '../reviews.ts';
import { closedWithin, openConnections, openTcp, openTls, postHeaders, trickle, type RawConnection } from '../tls-client.ts';
import type { Figures } from './figures.ts';

export interface StrangerConnectionOptions {
  /** Strangers, each declaring 1 GB. */
  strangers: number;
  /** Slow clients of each kind. */
  slowClients: number;
  /** Timeouts for the slow clients' server; production ones by default. Strangers always meet the production ones. */
  timeouts?: Partial<ServerTimeouts>;
}

const ONE_GB = 1_000_000_000;

/**
 * Timeouts of about a second, for the short runs: slow clients are cut off
 * quickly, while a TLS handshake on a busy machine still fits.
 */
export const QUICK_TIMEOUTS: Partial<ServerTimeouts> = { handshakeMs: 1_000, headersMs: 1_000, requestMs: 1_500, idleMs: 5_000, checkIntervalMs: 50 };

function row(what: string, closeMs: (number | undefined)[], openAfter: number): Figures {
  const closed = closeMs.filter((ms): ms is number => ms !== undefined).sort((a, b) => a - b);
  return {
    clients: what,
    connections: closeMs.length,
    closed: closed.length,
    closeMedianMs: closed.length > 0 ? Math.round(median(closed)) : '-',
    closeMaxMs: closed.length > 0 ? Math.round(quantile(closed, 1)) : '-',
    openOnServerAfter: openAfter,
  };
}

/**
 * Opens the connections and waits for each to close.
 * @throws Error when a connection outlived its bound, a stranger got anything but the 404, or the server still held a connection.
 */
export async function strangerConnections(options: StrangerConnectionOptions): Promise<Figures[]> {
  const timeouts = { ...SERVER_TIMEOUTS, ...options.timeouts };
  const dir = await mkdtemp(join(tmpdir(), 'sidecarset-strangers-'));
  const apps: FastifyInstance[] = [];
  const sockets: RawConnection[] = [];
  try {
    const tls = await ensureServingTls(join(dir, 'tls'));
    const sources = { sidecarSets: memorySidecarSetSource([]), namespaces: memoryNamespaceSource([]) };
    const logger = capturingLogger().logger;
    const serve = async (serverTimeouts: Partial<ServerTimeouts>) => {
      const app = buildApp({
        runtimes: Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, admissionRuntime(fn, { current: SECRET }, sources, logger)])),
        readiness: () => Promise.resolve({ ready: true, message: '' }),
        https: { key: tls.keyPem, cert: tls.certPem },
        timeouts: serverTimeouts,
      });
      apps.push(app);
      await app.listen({ host: '127.0.0.1', port: 0 });
      return { server: app.server, port: (app.server.address() as AddressInfo).port };
    };
    const rows: Figures[] = [];
    // How long to wait for a slow client to be cut off: ten times the timeout that should end it.
    const bound = (ms: number) => 10 * ms + 2 * timeouts.checkIntervalMs;

    // Strangers, against the production timeouts (which never fire here): the 404 at once and the connection closed, whatever they declared.
    const production = await serve(SERVER_TIMEOUTS);
    const strangerCloses: (number | undefined)[] = [];
    const batch = 100;
    for (let i = 0; i < options.strangers; i += batch) {
      const conns = await Promise.all(Array.from({ length: Math.min(batch, options.strangers - i) }, () => openTls(production.port, tls.caPem)));
      sockets.push(...conns);
      for (const conn of conns) conn.socket.write(postHeaders(`/pod-inject/${STRANGER_SECRET}`, ONE_GB));
      strangerCloses.push(...(await Promise.all(conns.map((conn) => closedWithin(conn.closed, 5_000)))));
      const answer = conns.map((conn) => conn.received().split('\r\n')[0]).find((line) => line !== 'HTTP/1.1 404 Not Found');
      if (answer !== undefined) throw new Error(`a stranger was answered ${JSON.stringify(answer)}, not the bare 404`);
    }
    rows.push(row('strangers declaring a 1 GB body, never sent', strangerCloses, await openConnections(production.server)));

    const { server, port } = await serve(timeouts);
    const slow: { what: string; boundMs: number; open: () => Promise<RawConnection> }[] = [
      { what: 'TCP only, never starting TLS', boundMs: bound(timeouts.handshakeMs), open: () => Promise.resolve(openTcp(port)) },
      { what: 'TLS, then silence', boundMs: bound(timeouts.headersMs), open: () => openTls(port, tls.caPem) },
      {
        what: 'headers trickled, a byte every 100 ms',
        boundMs: bound(timeouts.headersMs),
        open: async () => {
          const conn = await openTls(port, tls.caPem);
          trickle(conn.socket, postHeaders(`/pod-inject/${STRANGER_SECRET}`, 10).repeat(1_000));
          return conn;
        },
      },
      {
        what: 'with the secret, a body trickled and never finished',
        boundMs: bound(timeouts.requestMs),
        open: async () => {
          const conn = await openTls(port, tls.caPem);
          conn.socket.write(postHeaders(`/pod-inject/${SECRET}`, 10_000_000));
          trickle(conn.socket, ' '.repeat(10_000_000));
          return conn;
        },
      },
    ];
    for (const kind of slow) {
      const conns = await Promise.all(Array.from({ length: options.slowClients }, kind.open));
      sockets.push(...conns);
      const closes = await Promise.all(conns.map((conn) => closedWithin(conn.closed, kind.boundMs)));
      rows.push(row(kind.what, closes, await openConnections(server)));
    }

    const failed = rows.find((r) => r.closed !== r.connections || r.openOnServerAfter !== 0);
    if (failed !== undefined) throw new Error(`connections outlived their bound: ${JSON.stringify(failed)}`);
    return rows;
  } finally {
    for (const conn of sockets) conn.socket.destroy();
    for (const app of apps) await app.close();
    await rm(dir, { recursive: true, force: true });
  }
}
