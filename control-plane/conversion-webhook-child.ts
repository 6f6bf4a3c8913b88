/**
 * The harness's conversion webhook in a process of its own (started by
 * conversion-webhook.ts with fork()): the project's sidecarset-convert webhook
 * over HTTPS on 127.0.0.1. Its own process, so that a test blocking its
 * event loop (spawnSync of a Lambda bundle, a long synchronous check) never
 * leaves the API server's conversions waiting. It reads the serving
 * certificate, key and secret from its environment, reports its port on the
 * IPC channel, sends each log line there, and exits when the channel closes.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { memoryNamespaceSource, memorySidecarSetSource } from '../lib/adapters/memory.ts';
import { SIDECARSET_CONVERT } from '../lib/webhooks/descriptors.ts';
import { DEFAULT_MAX_BODY_BYTES, serveAdmission, type HttpRequest } from '../lib/webhooks/http-handler.ts';
import { systemClock, type Logger } from '../lib/ports.ts';

const send = (message: unknown): void => {
  process.send?.(message);
};

const line = (level: string) => (message: string, fields?: Record<string, unknown>) => {
  send({ line: JSON.stringify({ level, message, ...fields }) });
};
const logger: Logger = { info: line('info'), warn: line('warn'), error: line('error') };

try {
  const secret = process.env.CONVERSION_WEBHOOK_SECRET ?? '';
  const prefix = `/${SIDECARSET_CONVERT.name}`;
  const config = { fn: SIDECARSET_CONVERT.name, maxBodyBytes: DEFAULT_MAX_BODY_BYTES, secrets: { current: secret } };
  const deps = { sidecarSets: memorySidecarSetSource([]), namespaces: memoryNamespaceSource([]), clock: systemClock, logger };
  const server = createServer({ cert: readFileSync(process.env.CONVERSION_WEBHOOK_CERT ?? '', 'utf8'), key: readFileSync(process.env.CONVERSION_WEBHOOK_KEY ?? '', 'utf8') }, (req, res) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      // Past twice the HTTP handler's limit the rest is not kept: the HTTP handler answers 413 from the count.
      if (bytes <= DEFAULT_MAX_BODY_BYTES * 2) chunks.push(chunk);
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'https://127.0.0.1');
      const path = url.pathname.startsWith(`${prefix}/`) ? url.pathname.slice(prefix.length) : url.pathname === prefix ? '/' : '';
      const headers: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      const request: HttpRequest = {
        method: req.method ?? 'GET',
        path,
        headers,
        timeout: url.searchParams.get('timeout') ?? undefined,
        body: Buffer.concat(chunks).toString('utf8'),
        bodyBytes: bytes,
        sourceIp: req.socket.remoteAddress,
      };
      void serveAdmission(request, config, deps).then((response) => {
        res.writeHead(response.statusCode, response.headers).end(response.body);
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  // The handler's code is a lazily imported module: loaded now, not in the API server's first call's deadline.
  await SIDECARSET_CONVERT.handler.load();
  process.on('disconnect', () => {
    server.closeAllConnections();
    server.close();
    process.exit(0);
  });
  send({ port: (server.address() as AddressInfo).port });
} catch (error) {
  send({ error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}
