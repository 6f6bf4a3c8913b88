// A real etcd + kube-apiserver on loopback for tests (spec: control-plane.md),
// the way controller-runtime's envtest runs one: no kubelet or scheduler, and
// kube-controller-manager only when asked for (npm start asks). Everything lives in a throwaway temp dir and dies with
// stop(), with this process, or (through a watchdog) if this process is
// killed outright.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { ensureControlPlaneBinaries } from './build.ts';
import { controllerManagerArgs } from './controller-manager.ts';
import { startConversionWebhook, type ConversionWebhook } from './conversion-webhook.ts';
import { CONVERSION_URL_PLACEHOLDER, conversionUrlOf, CRD_NAME, withConversionClientConfig } from '../lib/crd/sidecarset-crd.ts';
import type { ControlPlaneBinaries } from './build.ts';

const loopback = '127.0.0.1';
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The project's RBAC manifest: the functions' identity gets exactly this. */
export const rbacManifestPath = join(repoRoot, 'infra', 'k8s', 'rbac.yaml');

/**
 * The user the functions authenticate as in most tests: a member of both of
 * rbac.yaml's groups (the webhooks' reader and the reconciler's writer), so
 * one credential can run every function. Deployments never do that: see
 * {@link webhooksUserName} and {@link statusSyncUserName}.
 */
export const functionsUserName = 'sidecarset-functions';

/** The admission webhooks' identity as deployed: group `sidecarset-webhooks` only (read-only). */
export const webhooksUserName = 'sidecarset-webhooks';

/**
 * The reconciler's identity as deployed: group `sidecarset-status-sync`, and
 * the username rbac.yaml's ValidatingAdmissionPolicy matches.
 */
export const statusSyncUserName = 'sidecarset-status-sync';

export type ControlPlaneUser = 'admin' | 'functions' | 'webhooks' | 'status-sync';

export interface ControlPlaneOptions {
  /** How long etcd and then kube-apiserver each get to become ready. Default 120 s. */
  readyTimeoutMs?: number;
  /** Prebuilt binaries; by default they are built (once) with ensureControlPlaneBinaries(). */
  binaries?: ControlPlaneBinaries;
  /**
   * More kube-apiserver flags, e.g. `--watch-cache=false`: lists are then read
   * from etcd, as before Kubernetes 1.34 served paginated lists from the
   * watch cache, so that compactEtcd() expires their continue tokens at once.
   */
  apiServerArgs?: readonly string[];
  /**
   * Runs kube-controller-manager (this binary, these controllers) once the
   * API server is ready, as the admin, signing service-account tokens with
   * the API server's key; ready when the `default` namespace has its
   * `default` ServiceAccount (when serviceaccount-controller runs).
   */
  controllerManager?: { binary: string; controllers: readonly string[] };
}

export interface ControlPlaneResponse {
  status: number;
  body: string;
  /** The response's `Warning` headers (unknown fields, deprecations), as the API server wrote them. */
  warnings: string[];
}

export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  url: string;
  /** PEM of the CA that signed the API server's serving certificate. */
  caCert: string;
  /** A token in system:masters. */
  adminToken: string;
  /** A token for the functions' least-privilege user, bound by infra/k8s/rbac.yaml. */
  functionsToken: string;
  /** The throwaway directory holding etcd's data, keys, certs and tokens; removed by stop(). */
  dir: string;
  pids: { etcd: number; kubeApiserver: number; controllerManager?: number };
  /** A kubeconfig (YAML text) that authenticates as the given user. */
  kubeconfig(user: ControlPlaneUser): string;
  /** One HTTPS request to the API server as the given user; an object body is sent as JSON. */
  request(
    user: ControlPlaneUser,
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<ControlPlaneResponse>;
  /**
   * Server-side applies every object in a YAML (or JSON) text as the admin.
   * The SidecarSet CRD with infra/k8s/crd.yaml's placeholder conversion URL
   * is applied pointing at {@link conversion} instead.
   */
  apply(manifests: string): Promise<void>;
  /**
   * The SidecarSet CRD's conversion webhook every control plane runs: the
   * project's sidecarset-convert webhook on 127.0.0.1, real TLS
   * (control-plane/conversion-webhook.ts). Stopped by stop().
   */
  conversion: ConversionWebhook;
  /** http://127.0.0.1:<port> of etcd's client API (no TLS, no auth: loopback only). */
  etcdUrl: string;
  /**
   * Stops kube-apiserver alone (SIGTERM, as a rolling restart does); etcd and
   * everything stored stay. Connections to the URL are refused until
   * startApiServer().
   */
  stopApiServer(): Promise<void>;
  /** Starts kube-apiserver again on the same port, certificates and etcd, and waits for /readyz. */
  startApiServer(): Promise<void>;
  /**
   * Compacts etcd up to its current revision, as kube-apiserver does every
   * five minutes: list continue tokens and resourceVersions from before now
   * become too old (410 Gone) for lists read from etcd (see apiServerArgs;
   * the watch cache keeps serving its own snapshots for a while). Returns
   * the revision compacted to.
   */
  compactEtcd(): Promise<number>;
  /** Stops both processes (SIGTERM, then SIGKILL after a grace period) and removes dir. Idempotent. */
  stop(): Promise<void>;
}

const stopGraceMs = 10_000;
const outputTailBytes = 16_384;

/** A child process whose recent output is kept for error messages. */
interface Managed {
  name: string;
  child: ChildProcess;
  pid: number;
  exited: Promise<void>;
  hasExited(): boolean;
  tail(): string;
}

/** What must be undone if this process ends before stop() runs. */
interface Live {
  processes: Managed[];
  watchdog?: ChildProcess;
  dir: string;
}

const live = new Set<Live>();

function killAllNow(): void {
  for (const entry of live) {
    entry.watchdog?.kill('SIGKILL');
    for (const managed of entry.processes) {
      if (!managed.hasExited()) managed.child.kill('SIGKILL');
    }
    rmSync(entry.dir, { recursive: true, force: true });
  }
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  killAllNow();
  uninstallExitHooks();
  // Let the signal do what it would have done without our handler, unless
  // someone else (npm start's graceful shutdown) handles it and exits.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

let hooksInstalled = false;

// Installed only while a control plane runs: a SIGINT/SIGTERM listener
// replaces Node's default of exiting, which nobody else should inherit.
function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', killAllNow);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

function uninstallExitHooks(): void {
  if (!hooksInstalled) return;
  hooksInstalled = false;
  process.off('exit', killAllNow);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
}

/** Free loopback ports, all held at once so that none is handed out twice. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolvePromise, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, loopback, () => {
            resolvePromise(server);
          });
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolvePromise) => {
          server.close(() => {
            resolvePromise();
          });
        }),
    ),
  );
  return ports;
}

async function start(name: string, binary: string, args: readonly string[], cwd: string): Promise<Managed> {
  const child = spawn(binary, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  // A binary that cannot be run surfaces as an 'error' event, not a throw.
  await new Promise<void>((resolvePromise, reject) => {
    child.once('spawn', resolvePromise);
    child.once('error', (error) => {
      reject(new Error(`cannot run ${name} (${binary}): ${error.message}`));
    });
  });
  if (child.pid === undefined) throw new Error(`${name} did not start (${binary})`);
  let output = '';
  let exitedFlag = false;
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-outputTailBytes);
  };
  // Reading both pipes also keeps a chatty server from blocking on a full pipe.
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  // Later errors (a failed kill) must not crash the test process as unhandled events.
  child.on('error', (error) => {
    keep(Buffer.from(`\n[${name}: ${error.message}]\n`));
  });
  const exited = new Promise<void>((resolvePromise) => {
    child.once('exit', (code, signal) => {
      exitedFlag = true;
      keep(Buffer.from(`\n[${name} exited: ${signal ?? `code ${code}`}]\n`));
      resolvePromise();
    });
  });
  return { name, child, pid: child.pid, exited, hasExited: () => exitedFlag, tail: () => output };
}

/**
 * A shell that kills the servers and removes the dir when our end of its stdin
 * closes, which the kernel does when this process dies, even by SIGKILL, when
 * no exit hook can run. stop() kills it first, so a normal stop never reaches it.
 */
function startWatchdog(pids: readonly number[], dir: string): ChildProcess {
  const script = [
    'read -r _ignored',
    `kill -TERM ${pids.join(' ')} 2>/dev/null`,
    'sleep 5',
    `kill -KILL ${pids.join(' ')} 2>/dev/null`,
    'rm -rf "$1"',
  ].join('; ');
  const watchdog = spawn('/bin/sh', ['-c', script, 'control-plane-watchdog', dir], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  // Neither the shell nor its stdin pipe should keep this process alive.
  watchdog.unref();
  watchdog.stdin.on('error', () => undefined);
  // A pipe to a child is a net.Socket, though typed as a plain Writable.
  (watchdog.stdin as unknown as { unref(): void }).unref();
  return watchdog;
}

async function terminate(managed: Managed): Promise<void> {
  if (managed.hasExited()) return;
  managed.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<'timeout'>((resolvePromise) => {
    timer = setTimeout(() => {
      resolvePromise('timeout');
    }, stopGraceMs);
  });
  const outcome = await Promise.race([managed.exited, graceOver]);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    managed.child.kill('SIGKILL');
    await managed.exited;
  }
}

interface HttpOptions {
  method: string;
  url: string;
  ca?: string;
  token?: string;
  body?: string;
  contentType?: string;
}

function httpCall(options: HttpOptions): Promise<ControlPlaneResponse> {
  return new Promise((resolvePromise, reject) => {
    const url = new URL(options.url);
    if (url.hostname !== loopback) {
      reject(new Error(`refusing to contact ${url.hostname}: the control plane is on ${loopback} only`));
      return;
    }
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      // Node sends a DELETE's (or GET's) body without a length unless told
      // one: the API server would ignore it, and read it as the next request.
      headers['Content-Length'] = String(Buffer.byteLength(options.body));
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      url,
      { method: options.method, headers, ...(options.ca === undefined ? {} : { ca: options.ca }), timeout: 30_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          // rawHeaders keeps each Warning header apart (headers.warning joins them with commas).
          const warnings = res.rawHeaders.filter((_, i) => i % 2 === 1 && res.rawHeaders[i - 1]?.toLowerCase() === 'warning');
          resolvePromise({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), warnings });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${options.method} ${options.url} timed out`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolvePromise) => setTimeout(resolvePromise, ms));
}

/** Polls until probe() is true; fails early if the process dies, with its output. */
async function waitUntilReady(managed: Managed, deadlineMs: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  let lastError = '';
  while (Date.now() < deadline) {
    if (managed.hasExited()) {
      throw new Error(`${managed.name} exited before becoming ready. Its output ends:\n${managed.tail()}`);
    }
    try {
      if (await probe()) return;
      lastError = '';
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    await sleep(250);
  }
  throw new Error(
    `${managed.name} was not ready within ${deadlineMs} ms${lastError === '' ? '' : ` (last probe: ${lastError})`}. ` +
      `Its output ends:\n${managed.tail()}`,
  );
}

interface ControllerManagerContext {
  dir: string;
  kubeconfig: string;
  ca: string;
  serviceAccountKeyFile: string;
  readyTimeoutMs: number;
  request: ControlPlane['request'];
  started(managed: Managed): void;
}

/** kube-controller-manager beside the API server, ready once the controllers it was given have started (see ControlPlaneOptions). */
async function startControllerManager(wanted: { binary: string; controllers: readonly string[] }, ctx: ControllerManagerContext): Promise<Managed> {
  const kubeconfigFile = join(ctx.dir, 'controller-manager.kubeconfig');
  const rootCaFile = join(ctx.dir, 'ca.crt');
  await writeFile(kubeconfigFile, ctx.kubeconfig, { mode: 0o600 });
  await writeFile(rootCaFile, ctx.ca, { mode: 0o600 });
  const args = controllerManagerArgs({ kubeconfig: kubeconfigFile, controllers: wanted.controllers, serviceAccountKeyFile: ctx.serviceAccountKeyFile, rootCaFile });
  const managed = await start('kube-controller-manager', wanted.binary, args, ctx.dir);
  ctx.started(managed);
  if (wanted.controllers.includes('serviceaccount-controller')) {
    await waitUntilReady(managed, ctx.readyTimeoutMs, async () => (await ctx.request('admin', 'GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200);
  }
  return managed;
}

/** The serving certificate kube-apiserver generates in --cert-dir is a chain ending in its own CA. */
function caFromServingBundle(bundle: string): string {
  const pems = bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const ca = pems.find((pem) => new X509Certificate(pem).ca);
  if (ca === undefined) throw new Error('the API server serving certificate bundle holds no CA certificate');
  return `${ca}\n`;
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/**
 * `object` as the harness applies it: the SidecarSet CRD whose conversion
 * names the placeholder URL points at the harness's conversion webhook.
 */
function pointedAtConversion(object: KubeObject, webhook: ConversionWebhook): KubeObject {
  if (object.kind !== 'CustomResourceDefinition' || object.metadata?.name !== CRD_NAME || conversionUrlOf(object) !== CONVERSION_URL_PLACEHOLDER) return object;
  const crd: Parameters<typeof withConversionClientConfig>[0] = { ...object };
  return withConversionClientConfig(crd, { url: webhook.url, caBundle: Buffer.from(webhook.caPem).toString('base64') });
}

interface KubeObject {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown };
}

/**
 * Starts etcd and kube-apiserver on free loopback ports, waits for /readyz and
 * applies infra/k8s/rbac.yaml. Call stop() when done.
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  const binaries = options.binaries ?? (await ensureControlPlaneBinaries());

  const dir = await mkdtemp(join(tmpdir(), 'sidecarset-control-plane-'));
  const entry: Live = { processes: [], dir };
  live.add(entry);
  installExitHooks();

  let stopping: Promise<void> | undefined;
  let conversion: ConversionWebhook | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await conversion?.stop();
      entry.watchdog?.kill('SIGKILL');
      // The API server first, so it does not spend the grace period retrying a gone etcd.
      for (const managed of [...entry.processes].reverse()) await terminate(managed);
      await rm(dir, { recursive: true, force: true });
      live.delete(entry);
      if (live.size === 0) uninstallExitHooks();
    })();
    return stopping;
  };

  try {
    const [etcdClientPort, etcdPeerPort, apiPort] = (await freePorts(3)) as [number, number, number];
    const etcdUrl = `http://${loopback}:${etcdClientPort}`;
    const etcdPeerUrl = `http://${loopback}:${etcdPeerPort}`;
    const url = `https://${loopback}:${apiPort}`;

    const adminToken = randomBytes(24).toString('hex');
    const functionsToken = randomBytes(24).toString('hex');
    const webhooksToken = randomBytes(24).toString('hex');
    const statusSyncToken = randomBytes(24).toString('hex');
    const certDir = join(dir, 'certs');
    await mkdir(certDir);
    const tokensFile = join(dir, 'tokens.csv');
    await writeFile(
      tokensFile,
      `${adminToken},admin,admin,"system:masters"\n` +
        `${functionsToken},${functionsUserName},${functionsUserName},"sidecarset-webhooks,sidecarset-status-sync"\n` +
        `${webhooksToken},${webhooksUserName},${webhooksUserName},"sidecarset-webhooks"\n` +
        `${statusSyncToken},${statusSyncUserName},${statusSyncUserName},"sidecarset-status-sync"\n`,
      { mode: 0o600 },
    );
    const serviceAccountKeyFile = join(dir, 'service-account.key');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await writeFile(serviceAccountKeyFile, privateKey.export({ type: 'pkcs1', format: 'pem' }), { mode: 0o600 });

    const etcd = await start(
      'etcd',
      binaries.etcd,
      [
        '--name=control-plane',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${etcdPeerUrl}`,
        `--initial-advertise-peer-urls=${etcdPeerUrl}`,
        `--initial-cluster=control-plane=${etcdPeerUrl}`,
        // Test data need not survive a crash; fsync would dominate on slow disks.
        '--unsafe-no-fsync=true',
      ],
      dir,
    );
    entry.processes.push(etcd);
    await waitUntilReady(etcd, readyTimeoutMs, async () => {
      const res = await httpCall({ method: 'GET', url: `${etcdUrl}/health` });
      return res.status === 200 && (JSON.parse(res.body) as { health?: unknown }).health === 'true';
    });

    const apiServerArgs = [
      `--etcd-servers=${etcdUrl}`,
      `--bind-address=${loopback}`,
      `--advertise-address=${loopback}`,
      `--secure-port=${apiPort}`,
      // A restart finds the certificates here and keeps serving with them.
      `--cert-dir=${certDir}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      `--service-account-issuer=${url}`,
      `--service-account-key-file=${serviceAccountKeyFile}`,
      `--service-account-signing-key-file=${serviceAccountKeyFile}`,
      `--token-auth-file=${tokensFile}`,
      '--authorization-mode=RBAC',
      // No controller-manager creates default service accounts to admit pods against.
      '--disable-admission-plugins=ServiceAccount',
      '--allow-privileged=true',
      // Nothing else serves the kubernetes Service's endpoints on 127.0.0.1.
      '--endpoint-reconciler-type=none',
      ...(options.apiServerArgs ?? []),
    ];

    // The API server writes its self-signed serving certificate before it
    // listens; until the file appears the probe just fails and is retried.
    let caCert: string | undefined;
    let kubeApiserver: Managed | undefined;
    const launchApiServer = async (): Promise<void> => {
      const managed = await start('kube-apiserver', binaries.kubeApiserver, apiServerArgs, dir);
      entry.processes = [...entry.processes.filter((p) => p.name !== 'kube-apiserver'), managed];
      kubeApiserver = managed;
      // The watchdog knows pids: a new API server needs a new watchdog.
      entry.watchdog?.kill('SIGKILL');
      entry.watchdog = startWatchdog(entry.processes.map((p) => p.pid), dir);
      await waitUntilReady(managed, readyTimeoutMs, async () => {
        caCert ??= caFromServingBundle(await readFile(join(certDir, 'apiserver.crt'), 'utf8'));
        const res = await httpCall({ method: 'GET', url: `${url}/readyz`, ca: caCert, token: adminToken });
        return res.status === 200;
      });
    };
    await launchApiServer();
    if (caCert === undefined) throw new Error('unreachable: ready without a CA');
    const ca = caCert;
    // The API server's own certificate is for 127.0.0.1 and signed by the CA the harness trusts: the webhook serves with it.
    const webhook = await startConversionWebhook({ certFile: join(certDir, 'apiserver.crt'), keyFile: join(certDir, 'apiserver.key'), caPem: ca });
    conversion = webhook;

    const tokens: Record<ControlPlaneUser, string> = { admin: adminToken, functions: functionsToken, webhooks: webhooksToken, 'status-sync': statusSyncToken };
    const request: ControlPlane['request'] = (user, method, path, body, contentType) =>
      httpCall({
        method,
        url: `${url}${path}`,
        ca,
        token: tokens[user],
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
        ...(contentType === undefined ? {} : { contentType }),
      });

    const discovery = new Map<string, ApiResource[]>();
    const resourceFor = async (apiVersion: string, kind: string): Promise<ApiResource> => {
      let resources = discovery.get(apiVersion);
      if (resources === undefined) {
        const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
        const res = await request('admin', 'GET', path);
        if (res.status !== 200) throw new Error(`discovery of ${apiVersion} failed: ${res.status} ${res.body}`);
        resources = (JSON.parse(res.body) as { resources: ApiResource[] }).resources;
        discovery.set(apiVersion, resources);
      }
      const resource = resources.find((candidate) => candidate.kind === kind && !candidate.name.includes('/'));
      if (resource === undefined) throw new Error(`the API server serves no ${kind} in ${apiVersion}`);
      return resource;
    };

    const apply = async (manifests: string): Promise<void> => {
      for (const document of parseAllDocuments(manifests)) {
        if (document.errors.length > 0) throw new Error(`invalid manifest: ${document.errors.join('; ')}`);
        const given = document.toJS() as KubeObject | null;
        if (given === null) continue;
        const object = pointedAtConversion(given, webhook);
        const { apiVersion, kind, metadata } = object;
        if (typeof apiVersion !== 'string' || typeof kind !== 'string' || typeof metadata?.name !== 'string') {
          throw new Error('every manifest object needs apiVersion, kind and metadata.name');
        }
        const resource = await resourceFor(apiVersion, kind);
        const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
        const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : 'default';
        const scope = resource.namespaced ? `/namespaces/${encodeURIComponent(namespace)}` : '';
        const path = `${base}${scope}/${resource.name}/${encodeURIComponent(metadata.name)}`;
        // Server-side apply creates or updates alike; JSON is valid YAML.
        const res = await request(
          'admin',
          'PATCH',
          `${path}?fieldManager=control-plane-harness&force=true`,
          object,
          'application/apply-patch+yaml',
        );
        if (res.status !== 200 && res.status !== 201) {
          throw new Error(`applying ${kind} ${metadata.name} failed: ${res.status} ${res.body}`);
        }
      }
    };

    await apply(await readFile(rbacManifestPath, 'utf8'));

    const kubeconfig = (user: ControlPlaneUser): string =>
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'control-plane',
            cluster: { server: url, 'certificate-authority-data': Buffer.from(ca).toString('base64') },
          },
        ],
        users: [{ name: user, user: { token: tokens[user] } }],
        contexts: [{ name: user, context: { cluster: 'control-plane', user } }],
        'current-context': user,
      });

    const controllerManager =
      options.controllerManager === undefined
        ? undefined
        : await startControllerManager(options.controllerManager, {
            dir,
            kubeconfig: kubeconfig('admin'),
            ca,
            serviceAccountKeyFile,
            readyTimeoutMs,
            request,
            // Before it is waited for: a failed wait's stop() must kill it too.
            started: (managed) => {
              entry.processes.push(managed);
              entry.watchdog?.kill('SIGKILL');
              entry.watchdog = startWatchdog(entry.processes.map((p) => p.pid), dir);
            },
          });

    return {
      url,
      caCert: ca,
      adminToken,
      functionsToken,
      dir,
      pids: {
        etcd: etcd.pid,
        get kubeApiserver() {
          return kubeApiserver?.pid ?? 0;
        },
        ...(controllerManager !== undefined ? { controllerManager: controllerManager.pid } : {}),
      },
      etcdUrl,
      async stopApiServer() {
        if (kubeApiserver !== undefined) await terminate(kubeApiserver);
      },
      async startApiServer() {
        if (kubeApiserver !== undefined && !kubeApiserver.hasExited()) throw new Error('kube-apiserver is already running');
        await launchApiServer();
      },
      async compactEtcd() {
        // etcd's JSON gateway: read the current revision, then compact to it.
        const range = await httpCall({ method: 'POST', url: `${etcdUrl}/v3/kv/range`, body: JSON.stringify({ key: Buffer.from('/').toString('base64') }) });
        const revision = Number((JSON.parse(range.body) as { header?: { revision?: string } }).header?.revision);
        if (range.status !== 200 || !Number.isSafeInteger(revision)) throw new Error(`cannot read etcd's revision: ${range.status} ${range.body}`);
        const compacted = await httpCall({ method: 'POST', url: `${etcdUrl}/v3/kv/compaction`, body: JSON.stringify({ revision: String(revision), physical: true }) });
        if (compacted.status !== 200) throw new Error(`etcd compaction to ${revision} failed: ${compacted.status} ${compacted.body}`);
        return revision;
      },
      kubeconfig,
      request,
      apply,
      conversion: webhook,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
