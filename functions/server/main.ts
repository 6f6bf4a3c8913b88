/**
 * `npm start`: the four admission webhooks over HTTPS on 127.0.0.1, with the
 * same paths and caller authentication as the Lambda functions, and the
 * status reconciler as a loop (every STATUS_SYNC_INTERVAL_MS, default 30 s;
 * 0 turns it off).
 *
 * - With --kubeconfig FILE: serves that cluster's webhooks, and writes the
 *   manifests to apply. Its SidecarSets are reconciled (statuses, rollouts,
 *   secret rotation) only with --reconcile too, and never where OpenKruise's
 *   own SidecarSet controller runs (lib/status-sync/kruise-controller.ts).
 *   Only the option selects a cluster: a KUBECONFIG (or KUBECONFIG_CONTENT,
 *   KUBECONFIG_SECRET_ARN, EKS_CLUSTER_NAME) exported for other tools must
 *   not have its pods rolled by a command run to try the project; it is
 *   named at start and left alone.
 * - Without: starts an embedded cluster (etcd and kube-apiserver built
 *   from Go modules), installs the CRD, RBAC and webhook configurations, and
 *   writes a kubeconfig for the user.
 */
import { rmSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { ensureSecretFile, fileSecretStore } from '../../lib/adapters/secret-file.ts';
import { parseJudgedSecretValue } from '../../lib/auth/secret-strength.ts';
import { ENV_REVISION_NAMESPACE, revisionNamespaceFromEnv } from '../../lib/adapters/revision-namespace.ts';
import { DEFAULT_REVISION_NAMESPACE } from '../../lib/sidecarset/revisions.ts';
import { sidecarSetReadiness } from '../../lib/adapters/readiness.ts';
import { CallerSecretError } from '../../lib/auth/caller-auth.ts';
import { callerNetworksFromEnv, ENV_ALLOWED_CALLER_CIDRS, ENV_ROTATION_MARGIN_MS, ENV_ROTATION_PERIOD_MS, ENV_SECRET_REFRESH_MS } from '../../lib/auth/caller-config.ts';
import type { SecretStore } from '../../lib/auth/rotation.ts';
import { excludedNamespaces, injectableNamespaces, renderWebhookConfigurations, type InjectionMode } from '../../lib/webhook-config/webhook-configurations.ts';
import { renderInjectionPolicy } from '../../lib/webhook-config/injection-policy.ts';
import { servesMutatingAdmissionPolicy } from '../../lib/adapters/kube-admission-policy-support.ts';
import { ADMISSION_FUNCTIONS, FUNCTION_NAMES, type AdmissionFunctionName } from '../../lib/webhooks/registry.ts';
import { localMetrics } from './local-metrics.ts';
import { clusterKubeConfig, clusterSources, ENV_EKS_CLUSTER_NAME, ENV_KUBECONFIG, ENV_KUBECONFIG_CONTENT, ENV_KUBECONFIG_SECRET_ARN } from '../shared/cluster.ts';
import { readKruiseObjects } from '../../lib/adapters/kube-kruise-presence.ts';
import { kubeConfigClient } from '../../lib/adapters/kubeconfig.ts';
import { errorMessage } from '../../lib/errors.ts';
import { kruiseControllerSigns, kruiseRefusal } from '../../lib/status-sync/kruise-controller.ts';
import { admissionRuntime, currentSecrets, loadCallerAccess, storedCallerSecrets, warnIfInsecure, withInjectionOrder, type CallerAccess } from '../shared/compose.ts';
import { composeStatusSync, statusSyncHeartbeatFromEnv, statusSyncIntervalFromEnv } from '../status-sync/compose.ts';
import { startStatusLoop, type StatusLoop } from '../status-sync/loop.ts';
import { buildApp } from './app.ts';
import { watchLifetime } from './lifetime.ts';
import { localCrd, localDeployedUrls, revisionRbacYaml, startLocalStack, type LocalStack } from './local-stack.ts';
import { statusLoopTrigger } from './local-trigger.ts';
import { OptionsError, parseServerOptions, SERVER_USAGE, type ServerOptions } from './options.ts';
import { ENV_SORT_SIDECARS_BY_NAME } from '../../lib/webhooks/injection-order.ts';
import { assertPortFree } from './port-check.ts';
import { removeServingFile, writeServingFile } from './serving-file.ts';
import { DEFAULT_PULL_DELAY_MS } from '../../control-plane/test-kubelet.ts';
import { CA_FILE, ensureServingTls } from './tls.ts';

const SECRET_FILE = 'webhook-secret';
const logger = jsonLogger({ function: 'server' });
const say = (text: string) => process.stderr.write(`${text}\n`);

/**
 * The local server's caller access: a configured secret, or the secret kept
 * beside the certificate (generated once), which the server re-reads on an
 * interval and its status loop rotates, as on AWS.
 */
async function localCallerAccess(tlsDir: string, env: NodeJS.ProcessEnv): Promise<CallerAccess & { store?: SecretStore }> {
  try {
    return await loadCallerAccess(env, logger);
  } catch (error) {
    if (!(error instanceof CallerSecretError) || !error.message.startsWith('no caller secret')) throw error;
  }
  const path = join(tlsDir, SECRET_FILE);
  await ensureSecretFile(path);
  const store = fileSecretStore(path);
  // The webhooks check only a secret's form (the strength dictionaries stay out of their bundles); a file kept here is judged once, before anything serves it.
  parseJudgedSecretValue(await store.read(), `secret file ${path}`);
  return { secrets: await storedCallerSecrets(() => store.read(), `secret file ${path}`, env, logger), networks: callerNetworksFromEnv(env), store };
}

function statusLoopNote(intervalMs: number, reconcile = true): string {
  if (!reconcile) return 'SidecarSets in that cluster are not reconciled (no status written, no pod rolled, no secret rotated): start with --reconcile to reconcile them.';
  return intervalMs === 0
    ? 'SidecarSet statuses are not reconciled (STATUS_SYNC_INTERVAL_MS=0).'
    : `SidecarSet statuses are reconciled every ${intervalMs / 1000} s (STATUS_SYNC_INTERVAL_MS).`;
}

/** Serves a cluster the user already has. */
async function serveCluster(options: ServerOptions, baseEnv: NodeJS.ProcessEnv): Promise<void> {
  const intervalMs = statusSyncIntervalFromEnv(baseEnv);
  await assertPortFree(options.port);
  const env = baseEnv;
  const reconcile = options.reconcile === true;
  // Before anything is generated or served: a refusal leaves nothing behind.
  if (reconcile && intervalMs > 0) await refuseBesideKruise(env);
  // Settings and secrets first: a bad one is named before the cluster is asked anything.
  const access = await localCallerAccess(options.tlsDir, env);
  warnIfInsecure(access, logger);
  // The path of the manifests written below (none are with --tls-cert).
  const injection = options.tlsCert === undefined ? await clusterInjection(options, env) : undefined;
  const metrics = localMetrics();
  const sources = await clusterSources(env, logger, { staleServed: metrics.staleServed });
  // Started before the webhooks serve, so that an admitted SidecarSet change can start its reconcile at once.
  let statusLoop: StatusLoop | undefined;
  let deployed: string[] | undefined = undefined;
  if (reconcile && intervalMs > 0) {
    const statusSync = await composeStatusSync(env, { metrics: metrics.recorder, ...(access.store !== undefined ? { secretStore: access.store } : {}) });
    // Its rotation writes a secret only into this server's own URLs, known once it listens (below).
    statusLoop = startStatusLoop({ resync: (signal) => statusSync.resync(signal, deployed), runController: statusSync.runController, intervalMs, heartbeatMs: statusSyncHeartbeatFromEnv(env), logger: statusSync.logger });
  }
  const rollout = statusLoopTrigger(statusLoop);
  // Every function, the CRD's conversion webhook included: the CRD printed below converts through this server.
  const runtimes = Object.fromEntries(
    FUNCTION_NAMES.map((fn) => [fn, withInjectionOrder(admissionRuntime(fn, access.secrets, sources, jsonLogger({ function: fn }), undefined, access.networks, rollout, metrics.recorder.admission(fn)), env)]),
  );
  const generated = options.tlsCert === undefined ? await ensureServingTls(options.tlsDir) : undefined;
  const cert = generated?.certPem ?? (await readFile(options.tlsCert ?? '', 'utf8'));
  const key = generated?.keyPem ?? (await readFile(options.tlsKey ?? '', 'utf8'));
  const app = buildApp({
    runtimes,
    metrics: metrics.registry,
    https: { cert, key },
    readiness: sidecarSetReadiness(sources.sidecarSets, sources.server, logger),
  });
  await app.listen({ host: '127.0.0.1', port: options.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  deployed = localDeployedUrls(`https://127.0.0.1:${port}`);
  const secrets = currentSecrets(access.secrets);
  const secretPath = secrets === undefined ? '' : `/${secrets.current}`;
  const targets = Object.fromEntries(ADMISSION_FUNCTIONS.map((fn) => [fn, { url: `https://127.0.0.1:${port}/${fn}${secretPath}` }])) as Record<AdmissionFunctionName, { url: string }>;
  writeServingFile(options.tlsDir, port);
  logger.info('serving', { cluster: sources.server, port });
  if (generated !== undefined && injection !== undefined) {
    const webhooksFile = join(options.tlsDir, 'webhooks.yaml');
    const manifests = renderWebhookConfigurations({ targets, caPem: generated.caPem, injection });
    await writeFile(webhooksFile, manifests.map((m) => stringify(m)).join('---\n'), { mode: 0o600 });
    // The policy after the CRD (its paramKind), in a file of its own: the last to apply.
    const policyFile = join(options.tlsDir, 'injection-policy.yaml');
    if (injection === 'policy') await writeFile(policyFile, renderInjectionPolicy(injectableNamespaces(excludedNamespaces())).map((m) => stringify(m)).join('---\n'), { mode: 0o600 });
    else rmSync(policyFile, { force: true });
    // The CRD stores v1beta1 and converts v1alpha1 through this server's sidecarset-convert.
    const crdFile = join(options.tlsDir, 'crd.yaml');
    await writeFile(crdFile, stringify(await localCrd(`https://127.0.0.1:${port}/sidecarset-convert${secretPath}`, generated.caPem)), { mode: 0o600 });
    // The RBAC as shipped grants the ControllerRevisions in kruise-system; another namespace gets its own copy.
    const revisionNamespace = revisionNamespaceFromEnv(env);
    let rbacFile = 'infra/k8s/rbac.yaml';
    if (revisionNamespace !== DEFAULT_REVISION_NAMESPACE) {
      rbacFile = join(options.tlsDir, 'rbac.yaml');
      await writeFile(rbacFile, await revisionRbacYaml(revisionNamespace), { mode: 0o600 });
    }
    say(`\nServing ${sources.server} on https://127.0.0.1:${port} (CA: ${join(options.tlsDir, CA_FILE)}).`);
    say(`Install the CRD (its conversion webhook is this server), the RBAC and the webhook configurations${injection === 'policy' ? ', then the injection policy,' : ''} in that cluster`);
    say(`(server-side: the CRD with both versions is larger than client-side apply's 256 KiB annotation):\n`);
    say(`  kubectl apply --server-side -f ${crdFile} -f ${rbacFile} -f ${webhooksFile}${injection === 'policy' ? ` -f ${policyFile}` : ''}\n`);
    say(injectionNote(injection, options.injection !== undefined));
    say('The API server must reach 127.0.0.1 on this machine.');
    say(`Metrics as Prometheus text: https://127.0.0.1:${port}/metrics, with the webhook secret as a Bearer token (docs/METRICS.md).`);
    say(`${statusLoopNote(intervalMs, reconcile)} Press Ctrl-C to stop.`);
  } else say(statusLoopNote(intervalMs, reconcile));
  watchLifetime({
    logger,
    stop: async () => {
      await statusLoop?.stop();
      await app.close();
    },
    cleanupSync: () => {
      removeServingFile(options.tlsDir);
    },
  });
}

/** The path for a cluster of the user's: as asked, else the policy where the cluster serves MutatingAdmissionPolicy v1. */
async function clusterInjection(options: ServerOptions, env: NodeJS.ProcessEnv): Promise<InjectionMode> {
  if (options.injection !== undefined) return options.injection;
  const client = kubeConfigClient(await clusterKubeConfig(env));
  try {
    return (await servesMutatingAdmissionPolicy(client)) ? 'policy' : 'webhook';
  } catch (error) {
    throw new Error(`cannot tell whether ${client.server} serves MutatingAdmissionPolicy v1 (${errorMessage(error)}): start with --injection policy or --injection webhook`, { cause: error });
  }
}

function injectionNote(injection: InjectionMode, asked: boolean): string {
  if (injection === 'policy') return 'Injection: the MutatingAdmissionPolicy injects the SidecarSets it takes, pod-inject the pods it marks (docs/INJECTION-POLICY.md).';
  return asked
    ? 'Injection: pod-inject for every pod (--injection webhook).'
    : 'Injection: pod-inject for every pod: the cluster serves no MutatingAdmissionPolicy v1 (Kubernetes 1.36 or later; docs/INJECTION-POLICY.md).';
}

/** @throws Error naming the signs when OpenKruise's SidecarSet controller runs in the cluster, or when that cannot be told. */
async function refuseBesideKruise(env: NodeJS.ProcessEnv): Promise<void> {
  const kc = await clusterKubeConfig(env);
  const server = kc.getCurrentCluster()?.server ?? 'the cluster';
  let objects;
  try {
    objects = await readKruiseObjects(kubeConfigClient(kc));
  } catch (error) {
    throw new Error(`refusing to reconcile ${server}: cannot tell whether OpenKruise's own SidecarSet controller runs there (${errorMessage(error)})`, { cause: error });
  }
  const signs = kruiseControllerSigns(objects.deployment, objects.webhooks);
  if (signs.length > 0) throw new Error(kruiseRefusal(server, signs));
}

/** The variables that name a cluster to the functions, set in this environment: npm start takes none of them. */
function ignoredClusterVariables(env: NodeJS.ProcessEnv): string[] {
  return [ENV_KUBECONFIG, ENV_KUBECONFIG_CONTENT, ENV_KUBECONFIG_SECRET_ARN, ENV_EKS_CLUSTER_NAME].filter((name) => (env[name] ?? '') !== '');
}

/** Starts an embedded cluster with everything installed; it and the kubeconfig go when the server does. */
async function serveEmbedded(options: ServerOptions): Promise<void> {
  const intervalMs = statusSyncIntervalFromEnv(process.env);
  const heartbeatMs = statusSyncHeartbeatFromEnv(process.env);
  await assertPortFree(options.port);
  const dir = resolve('.cache/local-cluster');
  const kubeconfig = join(dir, 'kubeconfig');
  const started: { stack?: LocalStack } = {};
  // From here on, a signal or the parent's death stops whatever has started
  // (during the boot, the exit that follows lets the control plane harness
  // kill what it started).
  watchLifetime({
    logger,
    stop: async () => {
      await started.stack?.stop();
    },
    cleanupSync: () => {
      rmSync(kubeconfig, { force: true });
      removeServingFile(options.tlsDir);
    },
  });
  const withControllerManager = options.noControllerManager !== true;
  say(
    `No cluster configured: starting an embedded one (etcd, kube-apiserver${withControllerManager ? ' and kube-controller-manager' : '; no kube-controller-manager (--no-controller-manager)'}; ` +
      'the first start builds them from Go modules, which takes minutes).',
  );
  // The caller, rotation and revision-namespace settings only: the embedded cluster brings its own credentials.
  const env = Object.fromEntries(
    [ENV_ALLOWED_CALLER_CIDRS, ENV_SECRET_REFRESH_MS, ENV_ROTATION_PERIOD_MS, ENV_ROTATION_MARGIN_MS, ENV_REVISION_NAMESPACE, ENV_SORT_SIDECARS_BY_NAME].map((key) => [key, process.env[key]]),
  );
  if (options.sortSidecarsByName === true) env[ENV_SORT_SIDECARS_BY_NAME] = 'true';
  const stack = await startLocalStack({
    port: options.port,
    echo: (line) => process.stdout.write(`${line}\n`),
    statusSyncIntervalMs: intervalMs,
    statusSyncHeartbeatMs: heartbeatMs,
    env,
    // Kept, like a given cluster's: `npm run manifests -- --local` reads the CA and the secret there.
    tlsDir: options.tlsDir,
    controllerManager: withControllerManager,
    ...(options.testKubelet !== undefined ? { testKubelet: options.testKubelet } : {}),
    ...(options.injection !== undefined ? { injection: options.injection } : {}),
  });
  started.stack = stack;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(kubeconfig, stack.cp.kubeconfig('admin'), { mode: 0o600 });
  } catch (error) {
    await stack.stop();
    throw error;
  }
  writeServingFile(options.tlsDir, Number(new URL(stack.serverUrl).port));
  logger.info('embedded cluster', { apiServer: stack.cp.url, webhooks: stack.serverUrl, kubeconfig, etcdPid: stack.cp.pids.etcd, apiServerPid: stack.cp.pids.kubeApiserver, controllerManagerPid: stack.cp.pids.controllerManager });
  say(`\nThe embedded cluster is ready at ${stack.cp.url}, its webhooks served on ${stack.serverUrl}.`);
  say(`Use it with:\n`);
  say(`  kubectl --kubeconfig ${kubeconfig} apply -f examples/sidecarset.yaml`);
  say(`  kubectl --kubeconfig ${kubeconfig} apply -f examples/pod.yaml`);
  say(`  kubectl --kubeconfig ${kubeconfig} get pod web -o yaml`);
  say(`  kubectl --kubeconfig ${kubeconfig} get sidecarsets\n`);
  say(injectionNote(options.injection ?? 'policy', true));
  say(statusLoopNote(intervalMs));
  say(
    withControllerManager
      ? 'kube-controller-manager runs Deployments, ReplicaSets, StatefulSets, Jobs, CronJobs, garbage collection, PodDisruptionBudgets and ServiceAccounts (--no-controller-manager leaves it out).'
      : 'No kube-controller-manager runs (--no-controller-manager): a Deployment makes no pods; create pods directly.',
  );
  if (options.testKubelet === undefined) say('No kubelet runs: pods stay Pending (a Deployment stays 0/N ready) unless you start with --test-kubelet.');
  say(`Metrics as Prometheus text: ${stack.serverUrl}/metrics, with the webhook secret as a Bearer token (docs/METRICS.md).`);
  if (options.testKubelet !== undefined) {
    const pullDelayMs = options.testKubelet.pullDelayMs ?? DEFAULT_PULL_DELAY_MS;
    say(`A test kubelet starts new pods and restarts containers whose image changes, ready ${options.testKubelet.readyDelayMs} ms later (--test-kubelet), ${pullDelayMs} ms more when it pulls a new image (--test-kubelet-pull-delay).`);
  }
  say('Press Ctrl-C to stop; the cluster, its data and the kubeconfig are removed.');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${SERVER_USAGE}\n`);
    return;
  }
  const options = parseServerOptions(argv, { tlsDir: resolve('.cache/local-server') });
  if (options.kubeconfig !== undefined) {
    if (options.noControllerManager === true) throw new Error('--no-controller-manager goes with the embedded cluster; --kubeconfig names a cluster that runs its own');
    if (options.testKubelet !== undefined) {
      throw new Error('--test-kubelet runs only with the embedded cluster, and --kubeconfig names a cluster of its own: a real cluster has real kubelets');
    }
    await serveCluster(options, { ...process.env, KUBECONFIG: options.kubeconfig, KUBECONFIG_CONTENT: '', KUBECONFIG_SECRET_ARN: '', EKS_CLUSTER_NAME: '', ...(options.sortSidecarsByName === true ? { [ENV_SORT_SIDECARS_BY_NAME]: 'true' } : {}) });
    return;
  }
  const ignored = ignoredClusterVariables(process.env);
  if (ignored.length > 0) {
    const kubeconfig = process.env[ENV_KUBECONFIG] ?? '';
    say(
      `${ignored.join(', ')} ${ignored.length === 1 ? 'is' : 'are'} set, but npm start serves a cluster only when given --kubeconfig FILE ` +
        `(so that a cluster exported for other tools never has its pods rolled): ${ignored.length === 1 ? 'it is' : 'they are'} ignored, and an embedded cluster is started. ` +
        `To serve that cluster: npm start -- --kubeconfig ${kubeconfig === '' ? 'FILE' : kubeconfig} [--reconcile]`,
    );
  }
  await serveEmbedded(options);
}

main().catch((error: unknown) => {
  if (error instanceof OptionsError) say(`${error.message}\n${SERVER_USAGE}`);
  else say(`server: ${(error as Error).message}`);
  // Exit rather than wait: whatever did start (a half-booted cluster) is
  // killed by the exit hooks, and nothing else must keep the process alive.
  process.exit(2);
});
