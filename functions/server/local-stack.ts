/**
 * A real cluster with this project installed, for `npm start` without a
 * cluster, `npm run demo` and the end-to-end tests: the control plane built
 * from Go modules (control-plane/), the project's CRD and RBAC, the
 * fastify webhook server (HTTPS on 127.0.0.1, the webhooks reading the
 * cluster as rbac.yaml's read-only identity), the webhook configurations
 * pointing at it and, when asked for, the status reconciler's loop (as
 * rbac.yaml's `sidecarset-status-sync`, so its ValidatingAdmissionPolicies
 * hold every write it makes, as in a deployment), which also rotates the webhook secret kept in the TLS
 * directory, as on AWS, when asked for, kube-controller-manager, and when asked for, the test kubelet
 * (control-plane/test-kubelet.ts), which starts pods and restarts containers
 * whose image changed, so that in-place sidecar updates complete.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { ENV_REVISION_NAMESPACE, inRevisionNamespace, revisionNamespaceFromEnv } from '../../lib/adapters/revision-namespace.ts';
import { parseObjects } from '../../lib/kube/yaml-objects.ts';
import { isObject } from '../../lib/kube/json.ts';
import type { JsonObject } from '../../lib/kube/types.ts';
import { DEFAULT_REVISION_NAMESPACE } from '../../lib/sidecarset/revisions.ts';
import { ensureSecretFile, fileSecretStore } from '../../lib/adapters/secret-file.ts';
import { parseJudgedSecretValue } from '../../lib/auth/secret-strength.ts';
import { callerNetworksFromEnv } from '../../lib/auth/caller-config.ts';
import { renderWebhookConfigurations, type InjectionMode } from '../../lib/webhook-config/webhook-configurations.ts';
import { applyInjectionPolicy } from './injection-policy-in-force.ts';
import type { Logger } from '../../lib/ports.ts';
import { ADMISSION_FUNCTIONS, FUNCTION_NAMES } from '../../lib/webhooks/registry.ts';
import { SIDECARSET_CONVERT } from '../../lib/webhooks/descriptors.ts';
import { CRD_NAME, withConversionClientConfig } from '../../lib/crd/sidecarset-crd.ts';
import { rbacManifestPath, startControlPlane, type ControlPlane, type ControlPlaneOptions, type ControlPlaneUser } from '../../control-plane/harness.ts';
import { EMBEDDED_CONTROLLERS, ensureKubeControllerManager } from '../../control-plane/controller-manager.ts';
import { startTestKubelet, type TestKubelet, type TestKubeletOptions } from '../../control-plane/test-kubelet.ts';
import { clusterSources } from '../shared/cluster.ts';
import { admissionRuntime, storedCallerSecrets, withInjectionOrder, type Env } from '../shared/compose.ts';
import { STATUS_SYNC } from '../../lib/status-sync/resync.ts';
import { composeStatusSync, ENV_STATUS_SYNC_INTERVAL_MS } from '../status-sync/compose.ts';
import { startStatusLoop, type StatusLoop } from '../status-sync/loop.ts';
import { buildApp } from './app.ts';
import { localRolloutTrigger, statusLoopTrigger, type AdmittedListener } from './local-trigger.ts';
import { ensureServingTls } from './tls.ts';
import { localMetrics } from './local-metrics.ts';
import type { MetricsRegistry } from '../../lib/metrics/registry.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const crdPath = join(projectRoot, 'infra', 'k8s', 'crd.yaml');

export interface LocalStack {
  cp: ControlPlane;
  /** https://127.0.0.1:<port> of the webhook server. */
  serverUrl: string;
  /** The secret the webhooks were installed with (rotation replaces it in {@link secretFile}). */
  secret: string;
  /** Where the secret is kept: the same JSON as the Secrets Manager secret. */
  secretFile: string;
  caPem: string;
  /** Lines the webhook server (and the status loop, if any) logged. */
  logs: string[];
  /** The status reconciler's loop, when {@link LocalStackOptions.statusSyncIntervalMs} asked for one. */
  statusLoop: StatusLoop | undefined;
  /** The test kubelet, when {@link LocalStackOptions.testKubelet} asked for one. */
  kubelet: TestKubelet | undefined;
  /** What `/metrics` shows: the webhooks' and the status loop's counters. */
  metrics: MetricsRegistry;
  /** API requests the status loop sent so far (0 without one). */
  statusSyncRequests: () => number;
  /**
   * Stops serving the webhooks (and the CRD's conversion), as when the
   * functions are unreachable; the cluster, the reconciler and the test
   * kubelet keep running until {@link stop}.
   */
  stopServer(): Promise<void>;
  stop(): Promise<void>;
}

/** Waits until the CRD is Established, as kubectl wait does. */
export async function waitForCrd(cp: ControlPlane, name: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await cp.request('admin', 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    if (res.status === 200) {
      const crd = JSON.parse(res.body) as { status?: { conditions?: { type: string; status: string }[] } };
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    }
    if (Date.now() > deadline) throw new Error(`CRD ${name} not established after ${timeoutMs} ms: ${res.status} ${res.body}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Waits until SidecarSets can be listed in both versions again: the API
 * server re-initialises a custom resource's storage when its CRD changes
 * (here, its conversion webhook), and answers 429 "storage is
 * (re)initializing" meanwhile, which a webhook would pass on as a failure.
 */
export async function waitForSidecarSetStorage(cp: ControlPlane, timeoutMs = 30_000): Promise<void> {
  await waitUntilReadable(cp, 'admin', ['/apis/apps.kruise.io/v1beta1/sidecarsets?limit=1', '/apis/apps.kruise.io/v1alpha1/sidecarsets?limit=1'], timeoutMs, 'the SidecarSet storage');
}

/** Waits until `identity` GETs each of `paths` with 200, in order, within `timeoutMs` in all; polled every 100 ms. */
async function waitUntilReadable(cp: ControlPlane, identity: ControlPlaneUser, paths: readonly string[], timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const path of paths) {
    for (;;) {
      const res = await cp.request(identity, 'GET', path);
      if (res.status === 200) break;
      if (Date.now() > deadline) throw new Error(`${what} still cannot GET ${path} after ${timeoutMs} ms: ${res.status} ${res.body}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Waits until the functions identity can read what the functions read. The
 * API server's RBAC authorizer learns new bindings from a watch, so for a
 * moment after rbac.yaml is applied the identity is refused, and a pod
 * created then would fail its admission (the webhook cannot list SidecarSets).
 */
export async function waitForFunctionsAccess(cp: ControlPlane, timeoutMs = 30_000, revisionNamespace = DEFAULT_REVISION_NAMESPACE): Promise<void> {
  await waitUntilReadable(cp, 'functions', [...webhookReads(revisionNamespace), '/api/v1/pods?limit=1'], timeoutMs, 'the functions identity');
}

/** What the admission webhooks read: SidecarSets, Namespaces and the pinned ControllerRevisions. */
function webhookReads(revisionNamespace: string): string[] {
  return ['/apis/apps.kruise.io/v1alpha1/sidecarsets', '/api/v1/namespaces?limit=1', `/apis/apps/v1/namespaces/${revisionNamespace}/controllerrevisions?limit=1`];
}

/**
 * Waits until the two identities a local stack runs as (as deployments do:
 * rbac.yaml's read-only webhooks and the reconciler, whom its policies hold)
 * can read what each reads.
 */
async function waitForDeployedIdentities(cp: ControlPlane, revisionNamespace: string, timeoutMs = 30_000): Promise<void> {
  await waitUntilReadable(cp, 'webhooks', webhookReads(revisionNamespace), timeoutMs, 'the webhooks identity');
  await waitUntilReadable(cp, 'status-sync', [...webhookReads(revisionNamespace), '/api/v1/pods?limit=1'], timeoutMs, 'the reconciler identity');
}

export interface LocalStackOptions {
  podFailurePolicy?: 'Fail' | 'Ignore';
  /**
   * Which path injects: `policy` (the default: Kubernetes 1.36 serves it) installs the injection policy and calls
   * pod-inject only for the pods it marks; `webhook` calls pod-inject for every pod (docs/INJECTION-POLICY.md).
   */
  injection?: InjectionMode;
  /** Also write each log line here (the server's stdout, for `npm start`). */
  echo?: (line: string) => void;
  /**
   * Where the CA, serving certificate and webhook secret are kept, and kept
   * after stop() (npm start's --tls-dir); by default a temporary directory
   * removed by stop().
   */
  tlsDir?: string;
  /** The webhook server's port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number;
  /** Runs the status reconciler every this many ms (a resync at once); unset or 0 runs none. */
  statusSyncIntervalMs?: number;
  /** The status loop's longest silence while resyncs change nothing (see resync-log.ts). */
  statusSyncHeartbeatMs?: number;
  /**
   * Runs kube-controller-manager beside the API server (Deployments,
   * ReplicaSets, StatefulSets, Jobs, garbage collection, PDBs,
   * ServiceAccounts: control-plane/controller-manager.ts), built first when
   * not cached. Off by default: most tests want no controller deleting or
   * making pods behind them.
   */
  controllerManager?: boolean;
  /** Runs the test kubelet with these options (its errors go to the log); unset runs none. */
  testKubelet?: TestKubeletOptions;
  /**
   * Told about each SidecarSet change the validating webhook admits, in
   * place of the status loop (tests record them); by default the status
   * loop, when one runs.
   */
  admitted?: AdmittedListener;
  /**
   * Caller and rotation settings, as the functions' environment holds them:
   * ALLOWED_CALLER_CIDRS, WEBHOOK_SECRET_REFRESH_MS,
   * WEBHOOK_SECRET_ROTATION_PERIOD_MS, WEBHOOK_SECRET_ROTATION_MARGIN_MS;
   * and SIDECARSET_REVISION_NAMESPACE (its RBAC is installed there).
   */
  env?: Env;
}

/** infra/k8s/rbac.yaml with its ControllerRevision objects in `namespace`, as YAML. */
export async function revisionRbacYaml(namespace: string): Promise<string> {
  const objects = inRevisionNamespace(parseObjects(await readFile(rbacManifestPath, 'utf8'), 'rbac.yaml'), namespace);
  return objects.map((o) => stringify(o)).join('---\n');
}

/** infra/k8s/crd.yaml with its conversion webhook at `url`, trusting `caPem`: the CRD a local server installs. */
export async function localCrd(url: string, caPem: string): Promise<JsonObject> {
  const crd = parseObjects(await readFile(crdPath, 'utf8'), 'crd.yaml').find((o) => isObject(o.metadata) && o.metadata.name === CRD_NAME);
  if (crd === undefined) throw new Error(`${crdPath} holds no CustomResourceDefinition ${CRD_NAME}`);
  return withConversionClientConfig(crd, { url, caBundle: Buffer.from(caPem).toString('base64') });
}

/**
 * The webhook URL prefixes a local server deploys (each function's path,
 * before the secret): the only URLs its reconciler writes a secret into.
 */
export function localDeployedUrls(serverUrl: string): string[] {
  return FUNCTION_NAMES.map((fn) => `${serverUrl}/${fn}/`);
}

/** The control plane's options: kube-controller-manager (built when not cached, its build's lines to `echo`) when asked for. */
async function controlPlaneOptions(options: LocalStackOptions): Promise<ControlPlaneOptions> {
  if (options.controllerManager !== true) return {};
  const { path } = await ensureKubeControllerManager((line) => options.echo?.(line));
  return { controllerManager: { binary: path, controllers: EMBEDDED_CONTROLLERS } };
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const cp = await startControlPlane(await controlPlaneOptions(options));
  const tlsDir = options.tlsDir ?? (await mkdtemp(join(tmpdir(), 'sidecarset-tls-')));
  const removeTlsDir = () => (options.tlsDir === undefined ? rm(tlsDir, { recursive: true, force: true }) : Promise.resolve());
  const logs: string[] = [];
  let statusLoop: StatusLoop | undefined;
  let statusSyncRequests = (): number => 0;
  try {
    const env = options.env ?? {};
    const revisionNamespace = revisionNamespaceFromEnv(env);
    await cp.apply(await readFile(crdPath, 'utf8'));
    // The harness installed rbac.yaml as it is (kruise-system); another revision namespace gets its own Role.
    if (revisionNamespace !== DEFAULT_REVISION_NAMESPACE) await cp.apply(await revisionRbacYaml(revisionNamespace));
    await waitForCrd(cp, 'sidecarsets.apps.kruise.io');
    await waitForDeployedIdentities(cp, revisionNamespace);
    const tls = await ensureServingTls(tlsDir);
    const secretFile = join(tlsDir, 'webhook-secret');
    await ensureSecretFile(secretFile);
    const store = fileSecretStore(secretFile);
    const secret = parseJudgedSecretValue(await store.read(), secretFile).current;
    const sink = (line: string) => {
      logs.push(line);
      options.echo?.(line);
    };
    const logger: Logger = jsonLogger({ function: 'server' }, sink);
    const metrics = localMetrics();
    // The webhooks read as the read-only identity, the reconciler writes as its own (held by rbac.yaml's policies), as deployed.
    const sources = await clusterSources({ KUBECONFIG_CONTENT: cp.kubeconfig('webhooks'), [ENV_REVISION_NAMESPACE]: revisionNamespace }, logger, { staleServed: metrics.staleServed });
    const secrets = await storedCallerSecrets(() => store.read(), `secret file ${secretFile}`, env, logger);
    const networks = callerNetworksFromEnv(env);
    let markInstalled = (): void => undefined;
    // Unknown until the server listens: until then the rotation writes no secret.
    let deployed: string[] | undefined = undefined;
    const installed = new Promise<void>((resolve) => {
      markInstalled = resolve;
    });
    // Started before the webhooks serve, so that the first admitted change already has a loop to start.
    if (options.statusSyncIntervalMs !== undefined && options.statusSyncIntervalMs > 0) {
      // Its interval is the loop's: the heartbeat Lease's duration follows it.
      const statusSync = await composeStatusSync({ ...env, KUBECONFIG_CONTENT: cp.kubeconfig('status-sync'), [ENV_STATUS_SYNC_INTERVAL_MS]: String(options.statusSyncIntervalMs) }, { logger: jsonLogger({ function: STATUS_SYNC }, sink), secretStore: store, metrics: metrics.recorder });
      statusSyncRequests = statusSync.requests;
      // Its resyncs wait for the CRD's conversion to point at this server (below): a rotation racing that repoint would lose its guarded patch.
      const resync: typeof statusSync.resync = async (signal) => {
        // A stop (or a failed start) aborts the wait; the resync then answers for the aborted signal as any resync does.
        await Promise.race([
          installed,
          new Promise<void>((resolve) => {
            signal?.addEventListener('abort', () => {
              resolve();
            }, { once: true });
          }),
        ]);
        return statusSync.resync(signal, deployed);
      };
      statusLoop = startStatusLoop({ resync, runController: statusSync.runController, intervalMs: options.statusSyncIntervalMs, logger: statusSync.logger, ...(options.statusSyncHeartbeatMs !== undefined ? { heartbeatMs: options.statusSyncHeartbeatMs } : {}) });
    }
    const rollout = options.admitted !== undefined ? localRolloutTrigger(options.admitted) : statusLoopTrigger(statusLoop);
    const runtimes = Object.fromEntries(
      FUNCTION_NAMES.map((fn) => [fn, withInjectionOrder(admissionRuntime(fn, secrets, sources, jsonLogger({ function: fn }, sink), undefined, networks, rollout, metrics.recorder.admission(fn)), env)]),
    );
    const app = buildApp({ runtimes, metrics: metrics.registry, https: { cert: tls.certPem, key: tls.keyPem }, readiness: () => Promise.resolve({ ready: true, message: '' }) });
    await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
    const address = app.server.address();
    if (address === null || typeof address !== 'object') throw new Error('server has no address');
    const serverUrl = `https://127.0.0.1:${address.port}`;
    let closing: Promise<void> | undefined;
    const closeServer = (): Promise<void> => (closing ??= app.close());
    deployed = localDeployedUrls(serverUrl);
    const targets = Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, { url: `${serverUrl}/${fn}/${secret}` }])) as Record<(typeof ADMISSION_FUNCTIONS)[number], { url: string }>;
    const injection = options.injection ?? 'policy';
    const manifests = renderWebhookConfigurations({ targets, caPem: tls.caPem, injection, ...(options.podFailurePolicy ? { podFailurePolicy: options.podFailurePolicy } : {}) });
    // The CRD converts through this server from now on (the harness's own webhook did until it listened),
    // with the secret the rotation keeps current in the CRD as in the webhook configurations.
    await cp.apply(JSON.stringify(await localCrd(`${serverUrl}/${SIDECARSET_CONVERT.name}/${secret}`, tls.caPem)));
    await waitForSidecarSetStorage(cp);
    // After the CRD is served (the policy resolves its paramKind when it is created), and in force before the
    // webhooks: its probe SidecarSet must reach neither them nor, through them, the reconciler.
    if (injection === 'policy') await applyInjectionPolicy(cp);
    await cp.apply(manifests.map((m) => stringify(m)).join('---\n'));
    markInstalled();
    let kubelet: TestKubelet | undefined;
    if (options.testKubelet !== undefined) {
      const kubeletLogger = jsonLogger({ function: 'test-kubelet' }, sink);
      kubelet = startTestKubelet(cp, {
        onError: (message) => {
          kubeletLogger.warn(message);
        },
        ...options.testKubelet,
      });
    }
    return {
      cp,
      serverUrl,
      secret,
      secretFile,
      caPem: tls.caPem,
      logs,
      statusLoop,
      kubelet,
      metrics: metrics.registry,
      statusSyncRequests: () => statusSyncRequests(),
      stopServer: closeServer,
      stop: async () => {
        await kubelet?.stop();
        await statusLoop?.stop();
        await closeServer();
        await cp.stop();
        await removeTlsDir();
      },
    };
  } catch (error) {
    await statusLoop?.stop();
    await cp.stop();
    await removeTlsDir();
    throw error;
  }
}
