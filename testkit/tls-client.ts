/**
 * A raw client for the local server's TLS port: what a stranger or a slow
 * client does byte by byte, which an HTTP client library would not let a
 * test do (declare a body and never send it, trickle headers).
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';

export interface RawConnection<S extends Socket = Socket> {
  socket: S;
  /** Everything received so far, as latin1 text. */
  received(): string;
  /** Resolves with the ms from opening to the socket's close. */
  closed: Promise<number>;
}

function watch<S extends Socket>(socket: S): RawConnection<S> {
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => undefined);
  const started = performance.now();
  const closed = new Promise<number>((resolve) => {
    socket.once('close', () => {
      resolve(performance.now() - started);
    });
  });
  return { socket, received: () => Buffer.concat(chunks).toString('latin1'), closed };
}

/** A TLS connection to 127.0.0.1:`port` verified against `ca` for localhost, once the handshake is done. */
export async function openTls(port: number, ca: string): Promise<RawConnection<TLSSocket>> {
  const connection = watch(tlsConnect({ host: '127.0.0.1', port, ca, servername: 'localhost' }));
  await new Promise<void>((resolve, reject) => {
    connection.socket.once('secureConnect', resolve);
    connection.socket.once('error', reject);
  });
  return connection;
}

/** A plain TCP connection to the TLS port, which never starts the handshake. */
export function openTcp(port: number): RawConnection {
  return watch(tcpConnect({ host: '127.0.0.1', port }));
}

/** The ms until `closed` settles, or undefined when the connection is still open after `ms`. */
export async function closedWithin(closed: Promise<number>, ms: number): Promise<number | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const gaveUp = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      resolve(undefined);
    }, ms);
  });
  try {
    return await Promise.race([closed, gaveUp]);
  } finally {
    clearTimeout(timer);
  }
}

/** Headers of a POST to `path` declaring a body of `length` bytes. */
export function postHeaders(path: string, length: number): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
}

/** Writes one character of `text` every `everyMs` until it runs out or the socket closes. */
export function trickle(socket: Socket, text: string, everyMs = 100): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= text.length) clearInterval(timer);
    else socket.write(text.charAt(i++));
  }, everyMs);
  socket.once('close', () => {
    clearInterval(timer);
  });
}

/** The server's open connections. */
export function openConnections(server: { getConnections(cb: (error: Error | null, count: number) => void): void }): Promise<number> {
  return new Promise((resolve, reject) => {
    server.getConnections((error, count) => {
      if (error) reject(error);
      else resolve(count);
    });
  });
}
