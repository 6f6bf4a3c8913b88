/**
 * A TCP proxy on 127.0.0.1 that puts faults between a client and a server:
 * latency, resets, a blackhole, the listener going away. It forwards bytes
 * without reading them, so TLS passes through untouched and the server's
 * certificate (IP SAN 127.0.0.1) still verifies: point a kubeconfig's
 * `server` at the proxy and the client cannot tell it from the API server,
 * until a fault is switched on.
 *
 * Each direction of a connection forwards one chunk at a time (the source is
 * paused meanwhile), so a delay or a blackhole holds data back without
 * buffering without bound, and bytes are never reordered.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

const LOOPBACK = '127.0.0.1';

/**
 * - `pass`: bytes are forwarded (after any configured delay);
 * - `reset`: every open connection was reset (RST) when the mode was set, and
 *   every new one is reset as soon as it is accepted;
 * - `blackhole`: connections are accepted and nothing is forwarded either way,
 *   nor answered; held bytes flow on when the mode leaves `blackhole`, as TCP
 *   retransmits once a partition heals.
 */
export type FaultMode = 'pass' | 'reset' | 'blackhole';

export interface FaultDelay {
  /** Added once per connection, before the target is dialled. */
  perConnectionMs?: number;
  /** Added before every chunk, in both directions. */
  perChunkMs?: number;
}

export interface FaultCounters {
  /** Connections accepted (including those reset at once). */
  connections: number;
  /** Connections open now. */
  open: number;
  /** Bytes forwarded from clients to the target. */
  bytesToTarget: number;
  /** Bytes forwarded from the target to clients. */
  bytesFromTarget: number;
  /** Client connections the proxy reset on purpose (the `reset` mode). */
  resets: number;
  /** Client connections dropped because the target could not be reached or failed. */
  targetFailures: number;
}

export interface FaultProxy {
  /** The port on 127.0.0.1; the same across stop() and start(). */
  readonly port: number;
  readonly mode: FaultMode;
  /** Forward everything, without delay. */
  passThrough(): void;
  /** Forward with the given latency (the mode becomes `pass`). */
  slow(delay: FaultDelay): void;
  /** Reset every open connection, and every new one until the mode changes. */
  reset(): void;
  /** Accept connections and hold every byte until the mode changes. */
  blackhole(): void;
  /** Close the listener (new connections are refused) and close every open connection. */
  stop(): Promise<void>;
  /** Listen again on the same port, keeping the mode and delay. */
  start(): Promise<void>;
  counters(): FaultCounters;
  /** stop(), for good. */
  close(): Promise<void>;
}

export interface FaultProxyOptions {
  /** The port on 127.0.0.1 to forward to. */
  targetPort: number;
  /** The port to listen on; 0 (the default) picks a free one, kept for restarts. */
  port?: number;
}

interface Connection {
  client: Socket;
  target: Socket | undefined;
  closed: boolean;
}

/** Read through a call: the flag changes across the awaits that surround its checks. */
function isClosed(conn: Connection): boolean {
  return conn.closed;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    // A held connection must not keep a finished test process alive.
    setTimeout(resolve, ms).unref();
  });
}

function resetSocket(socket: Socket | undefined): void {
  if (socket === undefined || socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    // Not connected yet (or no longer a TCP handle): a plain destroy still drops it.
    socket.destroy();
  }
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: LOOPBACK, port, exclusive: true }, () => {
      server.off('error', reject);
      const address = server.address();
      if (address === null || typeof address === 'string') reject(new Error('the proxy has no TCP address'));
      else resolve(address.port);
    });
  });
}

/** Starts a proxy on 127.0.0.1 in `pass` mode. */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  let mode: FaultMode = 'pass';
  let delay: Required<FaultDelay> = { perConnectionMs: 0, perChunkMs: 0 };
  const counters = { connections: 0, bytesToTarget: 0, bytesFromTarget: 0, resets: 0, targetFailures: 0 };
  const open = new Set<Connection>();
  // Resolved (and replaced) whenever the mode leaves `blackhole`.
  let release: () => void = () => undefined;
  let released: Promise<void> = Promise.resolve();

  const setMode = (next: FaultMode): void => {
    if (next === 'blackhole' && mode !== 'blackhole') {
      released = new Promise((resolve) => {
        release = resolve;
      });
    }
    if (next !== 'blackhole') release();
    mode = next;
  };
  const held = async (): Promise<void> => {
    while (mode === 'blackhole') await released;
  };

  /** `end` lets written bytes drain before the FIN; `close` drops them; `reset` sends an RST. */
  const drop = (conn: Connection, how: 'end' | 'close' | 'reset'): void => {
    if (conn.closed) return;
    conn.closed = true;
    open.delete(conn);
    for (const socket of [conn.client, conn.target]) {
      if (how === 'reset') resetSocket(socket);
      else if (how === 'end') socket?.destroySoon();
      else socket?.destroy();
    }
  };

  /** Forwards `from` to `to()` one chunk at a time, through the delay and the blackhole. */
  const forward = (conn: Connection, from: Socket, to: () => Promise<Socket>, count: (bytes: number) => void): void => {
    let tail = Promise.resolve();
    const step = (work: () => Promise<void>): void => {
      tail = tail.then(work).catch(() => {
        drop(conn, 'close');
      });
    };
    from.on('data', (chunk: Buffer) => {
      from.pause();
      step(async () => {
        await held();
        if (delay.perChunkMs > 0) await sleep(delay.perChunkMs);
        // A blackhole may have begun during the delay.
        await held();
        if (isClosed(conn)) return;
        const target = await to();
        if (isClosed(conn)) return;
        count(chunk.length);
        if (!target.write(chunk)) await new Promise((resolve) => target.once('drain', resolve));
        from.resume();
      });
    });
    // Either side going away closes the connection once what it sent has been forwarded.
    from.on('close', () => {
      // A client gone before the target was dialled leaves nothing to forward: no need to dial it.
      if (conn.target === undefined) {
        drop(conn, 'close');
        return;
      }
      step(async () => {
        await held();
        drop(conn, 'end');
      });
    });
  };

  const accept = (client: Socket): void => {
    counters.connections += 1;
    client.on('error', () => undefined);
    if (mode === 'reset') {
      counters.resets += 1;
      resetSocket(client);
      return;
    }
    const conn: Connection = { client, target: undefined, closed: false };
    open.add(conn);
    const dialled = (async (): Promise<Socket> => {
      await held();
      if (delay.perConnectionMs > 0) await sleep(delay.perConnectionMs);
      await held();
      if (isClosed(conn)) throw new Error('closed before the target was dialled');
      return new Promise<Socket>((resolve, reject) => {
        const target = connect({ host: LOOPBACK, port: options.targetPort });
        conn.target = target;
        target.once('connect', () => {
          resolve(target);
        });
        target.on('error', (error) => {
          // The client cannot be told why: it sees its connection reset, as through a real middlebox.
          if (!conn.closed) counters.targetFailures += 1;
          drop(conn, 'reset');
          reject(error);
        });
        forward(conn, target, () => Promise.resolve(client), (bytes) => {
          counters.bytesFromTarget += bytes;
        });
      });
    })();
    // Rejections are handled where the target is awaited; this one only keeps it from being unhandled.
    dialled.catch(() => undefined);
    forward(conn, client, () => dialled, (bytes) => {
      counters.bytesToTarget += bytes;
    });
  };

  let server: Server | undefined;
  let port = options.port ?? 0;

  const start = async (): Promise<void> => {
    if (server !== undefined) return;
    const next = createServer(accept);
    port = await listen(next, port);
    server = next;
  };
  const stop = async (): Promise<void> => {
    const current = server;
    server = undefined;
    for (const conn of [...open]) drop(conn, 'close');
    if (current !== undefined) await new Promise<void>((resolve) => current.close(() => { resolve(); }));
  };

  await start();
  return {
    get port() {
      return port;
    },
    get mode() {
      return mode;
    },
    passThrough() {
      delay = { perConnectionMs: 0, perChunkMs: 0 };
      setMode('pass');
    },
    slow(next) {
      delay = { perConnectionMs: next.perConnectionMs ?? 0, perChunkMs: next.perChunkMs ?? 0 };
      setMode('pass');
    },
    reset() {
      setMode('reset');
      for (const conn of [...open]) {
        counters.resets += 1;
        drop(conn, 'reset');
      }
    },
    blackhole() {
      setMode('blackhole');
    },
    stop,
    start,
    counters: () => ({ ...counters, open: open.size }),
    async close() {
      // Whatever is held must not wait for a release that will never come.
      setMode('pass');
      await stop();
    },
  };
}
