/**
 * The one request function to the API server (kube-request.ts), with the
 * connection the webhooks make from settings they read themselves: first
 * against a stand-in HTTP server whose answers each test chooses, then
 * against the real kube-apiserver as the functions' least-privilege
 * identity, by token and by client certificate, and client-node's
 * credentials for a kubeconfig with an exec plugin.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { stringify } from 'yaml';
import { KubeApiError } from '../../lib/adapters/kube-api-error.ts';
import { expectObject, kubeClient, settingsConnection, type KubeClient, type KubeClientOptions, type KubeHttpsSettings } from '../../lib/adapters/kube-request.ts';
import { kubeClusterReader, kubeSidecarSetSource } from '../../lib/adapters/kube-sources.ts';
import { clusterReader, clusterSources } from '../../functions/shared/cluster.ts';
import { describeWithControlPlane } from '../../control-plane/availability.ts';
import { ensureControlPlaneBinaries } from '../../control-plane/build.ts';
import { startControlPlane, type ControlPlane } from '../../control-plane/harness.ts';
import { capturingLogger } from '../../testkit/reviews.ts';
import { testCa, type TestCa } from './certificates.ts';
import { sidecarSetCrd } from './permissive-crd.ts';

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

function statusBody(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

/** The client as the webhooks make it (no retries but of a kept-alive socket found closed), with a GET of a JSON object. */
interface TestClient extends KubeClient {
  getJson(path: string, operation: string, signal?: AbortSignal): Promise<unknown>;
}
type Settings = Partial<KubeHttpsSettings> & Pick<KubeClientOptions, 'maxResponseBytes'>;
function webhookClient(settings: KubeHttpsSettings & Settings): TestClient {
  const { maxResponseBytes, ...connection } = settings;
  const made = kubeClient(settingsConnection(connection), { retryDelaysMs: [], ...(maxResponseBytes === undefined ? {} : { maxResponseBytes }) });
  return { ...made, getJson: (path, operation, signal) => expectObject(made, { method: 'GET', path, operation, ...(signal === undefined ? {} : { signal }) }) };
}

async function failure(promise: Promise<unknown>): Promise<KubeApiError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(KubeApiError);
  return error as KubeApiError;
}

describe('the request function, against a stand-in server', () => {
  let server: Server;
  let base: string;
  let seen: { url: string; headers: IncomingMessage['headers']; socket: number; closed: Promise<void> }[] = [];
  let connections = 0;
  let respond: (request: IncomingMessage, response: ServerResponse, nthOnSocket: number) => void = () => undefined;
  const clients: TestClient[] = [];
  const client = (settings: Settings = {}): TestClient => {
    const made = webhookClient({ server: base, ...settings });
    clients.push(made);
    return made;
  };

  beforeAll(async () => {
    const served = new WeakMap<object, { id: number; count: number }>();
    server = createServer((request, response) => {
      let socket = served.get(request.socket);
      if (socket === undefined) {
        socket = { id: ++connections, count: 0 };
        served.set(request.socket, socket);
      }
      socket.count++;
      const closed = new Promise<void>((resolve) => {
        response.once('close', () => {
          if (!response.writableEnded) resolve();
        });
      });
      seen.push({ url: request.url ?? '', headers: request.headers, socket: socket.id, closed });
      respond(request, response, socket.count);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(() => {
    for (const made of clients.splice(0)) made.close();
    server.closeAllConnections();
    seen = [];
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => { resolve(); }));
  });

  it('GETs the path under the server URL and parses the JSON answer', async () => {
    respond = (_request, response) => { json(response, 200, { kind: 'NamespaceList', items: [] }); };
    const prefixed = webhookClient({ server: `${base}/k8s/clusters/c-1/` });
    clients.push(prefixed);
    await expect(prefixed.getJson('/api/v1/namespaces', 'list namespaces')).resolves.toEqual({ kind: 'NamespaceList', items: [] });
    expect(seen[0]).toMatchObject({ url: '/k8s/clusters/c-1/api/v1/namespaces' });
    expect(seen[0]?.headers).toMatchObject({ accept: 'application/json', 'user-agent': 'serverless-sidecarset' });
  });

  it('asks for the bearer token before every request, so a renewed token is used at once', async () => {
    respond = (_request, response) => { json(response, 200, {}); };
    let n = 0;
    const made = client({ token: () => `token-${++n}` });
    await made.getJson('/a', 'read a');
    await made.getJson('/a', 'read a');
    expect(seen.map((s) => s.headers.authorization)).toEqual(['Bearer token-1', 'Bearer token-2']);
  });

  it('sends no Authorization header without a token', async () => {
    respond = (_request, response) => { json(response, 200, {}); };
    await client({ token: () => '' }).getJson('/a', 'read a');
    expect(seen[0]?.headers.authorization).toBeUndefined();
  });

  it('keeps the connection open for the next request', async () => {
    respond = (_request, response) => { json(response, 200, {}); };
    const made = client();
    for (let i = 0; i < 3; i++) await made.getJson('/a', 'read a');
    expect(new Set(seen.map((s) => s.socket)).size).toBe(1);
  });

  it('sends a GET again on a new connection when the server closed the kept-alive one', async () => {
    // The second request on a socket finds it reset, as after a Lambda thaw.
    respond = (request, response, nthOnSocket) => {
      if (nthOnSocket > 1) request.socket.destroy();
      else json(response, 200, { n: seen.length });
    };
    const made = client();
    await made.getJson('/a', 'read a');
    await expect(made.getJson('/a', 'read a')).resolves.toEqual({ n: 3 });
    expect(seen).toHaveLength(3);
    expect(seen[1]?.socket).toBe(seen[0]?.socket);
    expect(seen[2]?.socket).not.toBe(seen[0]?.socket);
  });

  it.each([
    { answer: 'a 403 Status', status: 403, body: statusBody(403, 'Forbidden', 'namespaces "a" is forbidden'), message: 'the API server answered 403: namespaces "a" is forbidden' },
    { answer: 'a 404 Status', status: 404, body: statusBody(404, 'NotFound', 'namespaces "a" not found'), message: 'the API server answered 404: namespaces "a" not found' },
    { answer: 'a 500 that is not a Status', status: 500, body: 'oops', message: 'the API server answered 500' },
    { answer: 'a 401 with an empty body', status: 401, body: '', message: 'the API server answered 401' },
  ])('fails with the status code and the API server\'s explanation on $answer', async ({ status, body, message }) => {
    respond = (_request, response) => {
      if (typeof body === 'string') {
        response.writeHead(status, { 'content-type': 'text/plain' });
        response.end(body);
      } else json(response, status, body);
    };
    const error = await failure(client().getJson('/api/v1/namespaces/a', 'get namespace "a"'));
    expect(error).toMatchObject({ message, code: status, operation: 'get namespace "a"' });
  });

  it('never follows a redirect, which would carry the token elsewhere', async () => {
    respond = (request, response) => {
      if (request.url === '/moved') json(response, 200, {});
      else {
        response.writeHead(302, { location: `${base}/moved` });
        response.end();
      }
    };
    const error = await failure(client({ token: () => 'secret' }).getJson('/a', 'read a'));
    expect(error).toMatchObject({ code: 302, message: 'the API server answered 302' });
    expect(seen.map((s) => s.url)).toEqual(['/a']);
  });

  it.each([
    ['declared in Content-Length', (response: ServerResponse) => { json(response, 200, { data: 'x'.repeat(2_000) }); }],
    [
      'sent in chunks without a length',
      (response: ServerResponse) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write(`{"data":"${'x'.repeat(600)}`);
        response.write('x'.repeat(600));
        response.end('x"}');
      },
    ],
  ])('refuses an answer larger than the bound, %s', async (_how, send) => {
    respond = (_request, response) => { send(response); };
    const error = await failure(client({ maxResponseBytes: 1_000 }).getJson('/a', 'read a'));
    expect(error.message).toBe('the answer is larger than 1000 bytes');
  });

  it('reads a gzipped answer, and bounds it after decompression', async () => {
    const body = JSON.stringify({ items: ['x'.repeat(5_000)] });
    respond = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      response.end(gzipSync(body));
    };
    await expect(client().getJson('/a', 'read a')).resolves.toEqual(JSON.parse(body));
    expect(seen[0]?.headers['accept-encoding']).toBe('gzip');
    const error = await failure(client({ maxResponseBytes: 1_000 }).getJson('/a', 'read a'));
    expect(error.message).toBe('the answer is larger than 1000 bytes');
  });

  it('fails when a 200 answer is not JSON', async () => {
    respond = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>');
    };
    await expect(failure(client().getJson('/a', 'read a'))).resolves.toMatchObject({ message: 'the answer is not JSON', code: 200 });
  });

  it('abandons the request when the signal aborts, and says why', async () => {
    respond = () => undefined;
    const controller = new AbortController();
    const pending = client().getJson('/slow', 'read slow', controller.signal);
    setTimeout(() => { controller.abort(new Error('deadline')); }, 50);
    const error = await failure(pending);
    expect(error.message).toBe('the request failed: the request was abandoned (deadline)');
    // The server sees the connection closed: the request was cancelled, not just forgotten.
    await seen[0]?.closed;
  });

  it('sends nothing when the signal has already aborted', async () => {
    const error = await failure(client().getJson('/a', 'read a', AbortSignal.abort(new Error('too late'))));
    expect(error.message).toMatch(/^the request failed: the request was abandoned \(too late\)/);
    expect(seen).toHaveLength(0);
  });

  it('names the network error when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => { resolve(); }));
    const error = await failure(client({ server: `http://127.0.0.1:${port}` }).getJson('/a', 'read a'));
    expect(error.message).toMatch(/^the request failed: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
  });
});


describeWithControlPlane('the request function, against a real kube-apiserver as the functions identity', () => {
  let cp: ControlPlane | undefined;
  let dir: string;
  let clientCa: TestCa;
  const clients: TestClient[] = [];
  const running = (): ControlPlane => {
    if (cp === undefined) throw new Error('the control plane did not start');
    return cp;
  };
  const client = (settings: Settings = {}): TestClient => {
    const made = webhookClient({ server: running().url, ca: running().caCert, token: () => running().functionsToken, ...settings });
    clients.push(made);
    return made;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kube-https-test-'));
    clientCa = testCa('functions client CA');
    const clientCaFile = join(dir, 'client-ca.crt');
    await writeFile(clientCaFile, clientCa.certPem);
    const binaries = await ensureControlPlaneBinaries();
    // Client certificates signed by this CA authenticate as their common name.
    cp = await startControlPlane({ binaries, apiServerArgs: [`--client-ca-file=${clientCaFile}`] });
    await cp.apply(JSON.stringify(sidecarSetCrd));
    for (;;) {
      const res = await cp.request('admin', 'GET', '/apis/apps.kruise.io/v1alpha1/sidecarsets');
      if (res.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const created = await cp.request('admin', 'POST', '/apis/apps.kruise.io/v1alpha1/sidecarsets', {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'mesh' },
      spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'mesh', image: 'envoy:1', notInKruise: { kept: [1] } }] },
    });
    expect(created.status).toBe(201);
    await cp.request('admin', 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { team: 'a' } } });
  }, 35 * 60_000);

  afterEach(() => {
    for (const made of clients.splice(0)) made.close();
  });

  afterAll(async () => {
    await cp?.stop();
    await rm(dir, { recursive: true, force: true });
  }, 5 * 60_000);

  it('lists SidecarSets with a bearer token, over TLS checked against the cluster CA, every field kept', async () => {
    const sets = await kubeSidecarSetSource(kubeClusterReader(client())).list();
    expect(sets.map((s) => s.metadata?.name)).toEqual(['mesh']);
    expect(sets[0]?.spec?.containers?.[0]).toMatchObject({ notInKruise: { kept: [1] } });
    expect(sets[0]?.metadata).toMatchObject({ uid: expect.any(String), resourceVersion: expect.any(String) });
  });

  it('reads a namespace, and reads one that does not exist as absent', async () => {
    const reader = kubeClusterReader(client());
    const signal = new AbortController().signal;
    await expect(reader.readNamespace('team-a', signal)).resolves.toMatchObject({ metadata: { name: 'team-a', labels: { team: 'a' } } });
    await expect(reader.readNamespace('no-such-namespace', signal)).resolves.toBeUndefined();
  });

  it('authenticates with a client certificate as a member of the webhooks group (the read-only identity)', async () => {
    const { certPem, keyPem } = clientCa.client('sidecarset-pod-inject', ['sidecarset-webhooks']);
    const sets = await client({ cert: certPem, key: keyPem, token: () => '' }).getJson('/apis/apps.kruise.io/v1alpha1/sidecarsets', 'list SidecarSets');
    expect(sets).toMatchObject({ items: [{ metadata: { name: 'mesh' } }] });
  });

  it('is refused (401) with a client certificate from a CA the API server does not trust', async () => {
    const { certPem, keyPem } = testCa('stranger CA').client('sidecarset-functions');
    const error = await failure(client({ cert: certPem, key: keyPem, token: () => '' }).getJson('/api/v1/namespaces/team-a', 'get namespace "team-a"'));
    expect(error.code).toBe(401);
  });

  it('refuses a server whose certificate does not chain to the configured CA', async () => {
    const error = await failure(client({ ca: testCa('another CA').certPem }).getJson('/api/v1/namespaces/team-a', 'get namespace "team-a"'));
    expect(error.code).toBeUndefined();
    expect(error.message).toMatch(/^the request failed: .*(self-signed|unable to (get|verify)|certificate)/i);
  });

  it('checks the certificate against tls-server-name instead of the URL host', async () => {
    const served = new X509Certificate(await readFile(join(running().dir, 'certs', 'apiserver.crt'), 'utf8'));
    expect(served.subjectAltName).toContain('DNS:kubernetes.default');
    await expect(client({ servername: 'kubernetes.default' }).getJson('/api/v1/namespaces/team-a', 'get namespace')).resolves.toMatchObject({ kind: 'Namespace' });
    const error = await failure(client({ servername: 'not-the-api-server.example' }).getJson('/api/v1/namespaces/team-a', 'get namespace'));
    expect(error.message).toMatch(/not-the-api-server\.example/);
  });

  it('maps a 403 and a 404 to the status code and the API server\'s message', async () => {
    const forbidden = await failure(client().getJson('/api/v1/namespaces/team-a/secrets', 'list secrets'));
    expect(forbidden).toMatchObject({ code: 403, operation: 'list secrets' });
    expect(forbidden.message).toMatch(/^the API server answered 403: secrets is forbidden: User "sidecarset-functions" cannot list resource "secrets"/);
    const missing = await failure(client().getJson('/apis/apps.kruise.io/v1alpha1/sidecarsets/nope', 'get SidecarSet "nope"'));
    expect(missing).toMatchObject({ code: 404, message: 'the API server answered 404: sidecarsets.apps.kruise.io "nope" not found' });
  });

  it('abandons a request mid-answer when the signal aborts', async () => {
    // A watch answers at once and never ends: only the abort can stop it.
    const controller = new AbortController();
    const pending = client().getJson('/apis/apps.kruise.io/v1alpha1/sidecarsets?watch=true', 'watch SidecarSets', controller.signal);
    setTimeout(() => { controller.abort(new Error('deadline')); }, 300);
    const started = performance.now();
    const error = await failure(pending);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error.message).toMatch(/^the request failed: the request was abandoned \(deadline\)/);
  });

  describe('which client the functions read the cluster with', () => {
    it('uses the HTTPS client for a kubeconfig with a token', async () => {
      const { logger, lines } = capturingLogger();
      const reader = await clusterReader({ KUBECONFIG_CONTENT: running().kubeconfig('functions') }, logger);
      expect(lines).toEqual([]);
      await expect(reader.listSidecarSets(new AbortController().signal)).resolves.toMatchObject({ items: [{ metadata: { name: 'mesh' } }] });
    });

    it('says once at cold start that SIDECARSET_CACHE_TTL_MS is no longer read, and reads fresh all the same', async () => {
      const { logger, entries } = capturingLogger();
      const sources = await clusterSources({ KUBECONFIG_CONTENT: running().kubeconfig('functions'), SIDECARSET_CACHE_TTL_MS: '60000' }, logger);
      expect(entries()).toEqual([
        expect.objectContaining({ level: 'warn', message: 'setting no longer read', detail: expect.stringMatching(/^SIDECARSET_CACHE_TTL_MS=60000 is no longer read: /) as unknown }),
      ]);
      const before = await sources.sidecarSets.list();
      const name = 'fresh-after-retired-ttl';
      const res = await running().request('admin', 'POST', '/apis/apps.kruise.io/v1alpha1/sidecarsets', {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name },
        spec: { selector: { matchLabels: { app: 'x' } }, containers: [{ name: 'c', image: 'c:1' }] },
      });
      expect(res.status).toBe(201);
      const after = await sources.sidecarSets.list();
      expect(after.map((set) => set.metadata?.name)).toEqual([...before.map((set) => set.metadata?.name), name].sort());
      expect((await running().request('admin', 'DELETE', `/apis/apps.kruise.io/v1alpha1/sidecarsets/${name}`)).status).toBe(200);
    });

    it('uses the HTTPS client for a kubeconfig file with a token-file and a CA file beside it', async () => {
      await writeFile(join(dir, 'token'), `${running().functionsToken}\n`);
      await writeFile(join(dir, 'ca.crt'), running().caCert);
      const file = join(dir, 'token-file.yaml');
      await writeFile(
        file,
        stringify({
          clusters: [{ name: 'c', cluster: { server: running().url, 'certificate-authority': 'ca.crt' } }],
          users: [{ name: 'fn', user: { 'token-file': 'token' } }],
          contexts: [{ name: 'x', context: { cluster: 'c', user: 'fn' } }],
          'current-context': 'x',
        }),
      );
      const sources = await clusterSources({ KUBECONFIG: file }, capturingLogger().logger);
      await expect(sources.namespaces.labels(['team-a'])).resolves.toEqual(new Map([['team-a', { team: 'a', 'kubernetes.io/metadata.name': 'team-a' }]]));
    });

    it('falls back to client-node for a kubeconfig with an exec plugin, which then runs and authenticates', async () => {
      // The plugin is a real process printing an ExecCredential with the functions token.
      const plugin = join(dir, 'credential-plugin.mjs');
      await writeFile(
        plugin,
        `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: ${JSON.stringify(running().functionsToken)} } }));\n`,
      );
      const file = join(dir, 'exec.yaml');
      await writeFile(
        file,
        stringify({
          clusters: [{ name: 'c', cluster: { server: running().url, 'certificate-authority-data': Buffer.from(running().caCert).toString('base64') } }],
          users: [{ name: 'fn', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [plugin], interactiveMode: 'Never' } } }],
          contexts: [{ name: 'x', context: { cluster: 'c', user: 'fn' } }],
          'current-context': 'x',
        }),
      );
      const { logger, entries } = capturingLogger();
      const reader = await clusterReader({ KUBECONFIG: file }, logger);
      expect(entries()).toEqual([expect.objectContaining({ message: 'reading the cluster through client-node', needs: 'users[].user.exec' })]);
      const sets = await kubeSidecarSetSource(reader).list();
      expect(sets.map((s) => s.metadata?.name)).toEqual(['mesh']);
    });
  });
});
