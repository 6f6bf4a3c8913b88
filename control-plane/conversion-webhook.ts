/**
 * The SidecarSet CRD's conversion webhook for every control plane the tests
 * start: the project's own door for sidecarset-convert (lib/webhooks/
 * http-door.ts: caller check by secret path, envelope, the conversion, its
 * log line), served over real TLS on 127.0.0.1. It serves with the API
 * server's own serving certificate (issued for 127.0.0.1 by the API
 * server's CA, which the harness already trusts), so the CRD's caBundle is
 * that CA. The harness points any SidecarSet CRD it applies with the
 * placeholder conversion URL (infra/k8s/crd.yaml's) at this server, so every
 * suite that installs the CRD stores v1beta1 and converts through the
 * project's function.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { memoryNamespaceSource, memorySidecarSetSource } from '../lib/adapters/memory.ts';
import { SIDECARSET_CONVERT } from '../lib/webhooks/descriptors.ts';
import { DEFAULT_MAX_BODY_BYTES, serveAdmission, type HttpRequest } from '../lib/webhooks/http-door.ts';
import { systemClock, type Logger } from '../lib/ports.ts';

/** How many of the webhook's log lines are kept (for a failing test's message). */
const KEPT_LINES = 200;

export interface ConversionWebhook {
  /** https://127.0.0.1:<port>/sidecarset-convert/<secret>: what the CRD's clientConfig.url names. */
  url: string;
  /** The CA that signed the serving certificate, as PEM. */
  caPem: string;
  /** How many ConversionReviews it answered (converted or failed). */
  readonly reviews: number;
  /** Its last log lines (the door's one line per request), newest last. */
  readonly logs: readonly string[];
  stop(): Promise<void>;
}

/** Starts the webhook on a free port of 127.0.0.1 with the given serving certificate (a chain) and key. */
export async function startConversionWebhook(tls: { certPem: string; keyPem: string; caPem: string }): Promise<ConversionWebhook> {
  const secret = randomBytes(32).toString('base64url');
  const logs: string[] = [];
  let reviews = 0;
  const line = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    logs.push(JSON.stringify({ level, message, ...fields }));
    if (logs.length > KEPT_LINES) logs.shift();
  };
  const logger: Logger = { info: line('info'), warn: line('warn'), error: line('error') };
  const prefix = `/${SIDECARSET_CONVERT.name}`;
  const config = { fn: SIDECARSET_CONVERT.name, maxBodyBytes: DEFAULT_MAX_BODY_BYTES, secrets: { current: secret } };
  const deps = { sidecarSets: memorySidecarSetSource([]), namespaces: memoryNamespaceSource([]), clock: systemClock, logger };
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      // Past twice the door's limit the rest is not kept: the door answers 413 from the count.
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
        if (response.statusCode === 200) reviews++;
        res.writeHead(response.statusCode, response.headers).end(response.body);
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  // The handler's code is a lazily imported module: loaded now, not in the API server's first call's deadline.
  await SIDECARSET_CONVERT.handler.load();
  return {
    url: `https://127.0.0.1:${port}${prefix}/${secret}`,
    caPem: tls.caPem,
    get reviews() {
      return reviews;
    },
    get logs() {
      return logs;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
