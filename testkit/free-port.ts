/**
 * A loopback port free at the moment of asking (the server that found it is
 * closed again), for a process the test starts that must listen on a port
 * it is told: `npm start --port`, a command a doc page runs.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
