/**
 * The fastify app over real HTTPS with the generated local certificate: what
 * the API server does when the webhook configuration's caBundle is ca.crt.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { X509Certificate } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { ADMISSION_FUNCTIONS } from '../../lib/webhooks/registry.ts';
import { buildApp } from '../../functions/server/app.ts';
import { CA_FILE, CERT_FILE, ensureServingTls, KEY_FILE, type ServingTls } from '../../functions/server/tls.ts';
import { admissionRuntime } from '../../functions/shared/compose.ts';
import { capturingLogger, SECRET, sidecarSetReview } from '../../testkit/reviews.ts';

interface Answer {
  status: number;
  body: string;
}

/** One HTTPS request to the server on 127.0.0.1, checked against `ca` for `servername`. */
function call(port: number, options: { path: string; method?: string; body?: string; ca?: string; servername?: string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: options.path,
        method: options.method ?? 'GET',
        headers: options.body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(options.body) },
        ...(options.ca === undefined ? {} : { ca: options.ca }),
        // Node checks the certificate against the servername when one is set, else against the host.
        ...(options.servername === undefined ? {} : { servername: options.servername }),
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        });
        response.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('the server over HTTPS with a generated certificate', () => {
  let dir: string;
  let tls: ServingTls & { generated: boolean };
  let app: FastifyInstance;
  let port: number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sidecarset-tls-'));
    tls = await ensureServingTls(join(dir, 'tls'));
    const logger = capturingLogger().logger;
    const sources = { sidecarSets: memorySidecarSetSource([]), namespaces: memoryNamespaceSource([]) };
    app = buildApp({
      runtimes: Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, admissionRuntime(fn, { current: SECRET }, sources, logger)])),
      readiness: () => Promise.resolve({ ready: true, message: 'ok' }),
      https: { key: tls.keyPem, cert: tls.certPem },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('generates a CA, a certificate and a key on first use', async () => {
    expect(tls.generated).toBe(true);
    expect(await readFile(join(dir, 'tls', CA_FILE), 'utf8')).toBe(tls.caPem);
    expect(await readFile(join(dir, 'tls', CERT_FILE), 'utf8')).toBe(tls.certPem);
    expect(await readFile(join(dir, 'tls', KEY_FILE), 'utf8')).toBe(tls.keyPem);
    expect((await stat(join(dir, 'tls', KEY_FILE))).mode & 0o777).toBe(0o600);
  });

  it('issues a certificate for IP 127.0.0.1 and DNS localhost, signed by the CA', () => {
    const cert = new X509Certificate(tls.certPem);
    const ca = new X509Certificate(tls.caPem);
    expect(cert.subjectAltName?.split(', ').sort()).toEqual(['DNS:localhost', 'IP Address:127.0.0.1']);
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.checkHost('localhost')).toBe('localhost');
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkIssued(ca)).toBe(true);
    expect(ca.ca).toBe(true);
    expect(cert.ca).toBe(false);
  });

  it('answers a client that verifies against the CA, for 127.0.0.1', async () => {
    const answer = await call(port, { path: '/healthz', ca: tls.caPem });
    expect(answer).toEqual({ status: 200, body: '{"status":"ok"}' });
  });

  it('answers a client that verifies against the CA, for localhost', async () => {
    const answer = await call(port, { path: '/healthz', ca: tls.caPem, servername: 'localhost' });
    expect(answer.status).toBe(200);
  });

  it('serves an admission review over the verified connection', async () => {
    const answer = await call(port, {
      path: `/sidecarset-default/${SECRET}?timeout=10s`,
      method: 'POST',
      body: JSON.stringify(sidecarSetReview('uid-https')),
      ca: tls.caPem,
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).response).toMatchObject({ uid: 'uid-https', allowed: true, patchType: 'JSONPatch' });
  });

  it('is refused by a client that does not trust the CA', async () => {
    await expect(call(port, { path: '/healthz' })).rejects.toMatchObject({ code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
  });

  it('is refused by a client that expects another name', async () => {
    await expect(call(port, { path: '/healthz', ca: tls.caPem, servername: 'webhook.example.com' })).rejects.toMatchObject({
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
  });

  it('reuses the files on a second start in the same directory', async () => {
    const again = await ensureServingTls(join(dir, 'tls'));
    expect(again.generated).toBe(false);
    expect({ caPem: again.caPem, certPem: again.certPem, keyPem: again.keyPem }).toEqual({ caPem: tls.caPem, certPem: tls.certPem, keyPem: tls.keyPem });
  });

  it('generates new files when the kept certificate is unreadable', async () => {
    const other = join(dir, 'broken');
    await mkdir(other);
    await copyFile(join(dir, 'tls', CA_FILE), join(other, CA_FILE));
    await copyFile(join(dir, 'tls', KEY_FILE), join(other, KEY_FILE));
    await writeFile(join(other, CERT_FILE), 'not a certificate');
    const second = await ensureServingTls(other);
    expect(second.generated).toBe(true);
    expect(second.caPem).not.toBe(tls.caPem);
    expect(new X509Certificate(second.certPem).verify(new X509Certificate(second.caPem).publicKey)).toBe(true);
    expect(await readFile(join(other, CERT_FILE), 'utf8')).toBe(second.certPem);
  });
});
