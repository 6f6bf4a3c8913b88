/**
 * Checks the webhook port before anything is started, so that a second
 * `npm start` fails in a moment with what to do, not after booting a whole
 * cluster with `EADDRINUSE`.
 */
import { createServer } from 'node:net';

export class PortInUseError extends Error {
  readonly port: number;

  constructor(port: number) {
    super(
      `port ${port} on 127.0.0.1 is in use: another npm start may be running (stop it; \`ss -ltnp 'sport = :${port}'\` shows which process holds it), ` +
        `or serve on another port with \`npm start -- --port N\` (0 picks a free one)`,
    );
    this.name = 'PortInUseError';
    this.port = port;
  }
}

/**
 * Resolves when `port` can be bound on 127.0.0.1 (it is released again at
 * once); port 0 always can. Another process may still take it before the
 * server binds it, which then fails as it did before this check.
 * @throws PortInUseError when it is taken; other errors (EACCES) as they are.
 */
export async function assertPortFree(port: number): Promise<void> {
  if (port === 0) return;
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(port) : error);
    });
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      server.close(() => {
        resolve();
      });
    });
  });
}
