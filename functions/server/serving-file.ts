/**
 * The port a running `npm start` listens on, kept beside its CA and secret
 * (`<tls-dir>/serving.json`, with its pid) while it runs, so that
 * `npm run manifests -- --local` renders that server's URLs when it was
 * started with `--port 0` or another port. Removed when the server stops; a
 * file whose process is gone (a server killed outright) is not believed.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SERVING_FILE = 'serving.json';

export function writeServingFile(tlsDir: string, port: number): void {
  mkdirSync(tlsDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(tlsDir, SERVING_FILE), `${JSON.stringify({ port, pid: process.pid })}\n`, { mode: 0o600 });
}

/** Removes the file when it is this process's (another server may have written its own since). */
export function removeServingFile(tlsDir: string): void {
  if (servingOf(tlsDir)?.pid === process.pid) rmSync(join(tlsDir, SERVING_FILE), { force: true });
}

function servingOf(tlsDir: string): { port: number; pid: number } | undefined {
  try {
    const value = JSON.parse(readFileSync(join(tlsDir, SERVING_FILE), 'utf8')) as { port?: unknown; pid?: unknown };
    return typeof value.port === 'number' && typeof value.pid === 'number' ? { port: value.port, pid: value.pid } : undefined;
  } catch {
    return undefined;
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The port of the npm start serving with this TLS directory now; undefined when none runs. */
export function runningServerPort(tlsDir: string): number | undefined {
  const serving = servingOf(tlsDir);
  return serving !== undefined && running(serving.pid) ? serving.port : undefined;
}
