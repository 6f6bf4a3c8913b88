/**
 * Composition, once per cold start (or server start): configuration from the
 * environment, the caller secret, the cluster sources, the logger. Anything
 * missing or malformed stops start-up with a message naming it; a function
 * that cannot authenticate callers or reach its cluster must not serve.
 */
import { jsonLogger, stdoutSink } from '../../lib/adapters/json-logger.ts';
import { metricsNamespaceFromEnv } from '../../lib/metrics/catalogue.ts';
import { emfRecorder } from '../../lib/metrics/emf-recorder.ts';
import { NO_METRICS, type AdmissionMetrics, type MetricsRecorder } from '../../lib/metrics/facts.ts';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { secretsManagerReader } from '../../lib/adapters/secrets-manager.ts';
import { statusSyncTriggerFromEnv } from '../../lib/adapters/queue-rollout-trigger.ts';
import type { SqsQueueOptions } from '../../lib/adapters/sqs-set-queue.ts';
import { parseSecretValue, type CallerSecrets } from '../../lib/auth/caller-auth.ts';
import { callerNetworksFromEnv, callerSecretSource, ENV_SECRET_ARN, secretRefreshMsFromEnv, type Platform } from '../../lib/auth/caller-config.ts';
import type { CallerNetworks } from '../../lib/auth/caller-network.ts';
import { refreshingSecrets, type RefreshingSecrets } from '../../lib/auth/secret-refresh.ts';
import { systemClock, type Clock, type Logger, type NamespaceSource, type PodSource, type RevisionSource, type RolloutTrigger, type SidecarSetSource } from '../../lib/ports.ts';
import { DEFAULT_MAX_BODY_BYTES, type HttpHandlerConfig } from '../../lib/webhooks/http-handler.ts';
import { readsCluster, type FunctionName } from '../../lib/webhooks/descriptors.ts';
import { descriptorOf } from '../../lib/webhooks/registry.ts';
import { sortSidecarsByNameFromEnv } from '../../lib/webhooks/injection-order.ts';

export type Env = Readonly<Record<string, string | undefined>>;


/** Start-up configuration that cannot be used. */
export class ConfigurationError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConfigurationError';
  }
}

export interface ClusterSources {
  sidecarSets: SidecarSetSource;
  namespaces: NamespaceSource;
  /** The ControllerRevisions pinned revisions are read from (absent: a pinning set cannot be decided). */
  revisions?: RevisionSource;
  /** Single pods by name (absent: an eviction the pod-eviction webhook judges is refused, unread). */
  pods?: PodSource;
  /** The API server the sources read, for logs. */
  server: string;
}

export interface Overrides {
  /** Reads a Secrets Manager secret; defaults to the AWS SDK client. */
  readSecret?: (secretId: string) => Promise<string>;
  logger?: Logger;
  /** The time injection records in pod annotations; tests fix it. */
  clock?: Clock;
  /** How the rollout trigger reaches SQS; defaults to the AWS SDK's endpoint and protocol (tests point it at a local SQS-compatible server). */
  statusSyncQueue?: SqsQueueOptions;
  /**
   * Where metrics go. By default a Lambda function writes them as EMF lines
   * to standard output, beside its log lines; a caller that gives its own
   * logger (a test, a tool) took the output over, so it gets no metric lines
   * unless it gives a recorder too.
   */
  metrics?: MetricsRecorder;
  /** Told the age of each stale list a cluster source serves (the function's StaleListAge metric). */
  staleServed?: (ageMs: number) => void;
}

/**
 * The metrics recorder of a Lambda function: the override, else EMF lines on
 * standard output in the METRICS_NAMESPACE namespace (see
 * {@link Overrides.metrics} for when there are none).
 * @throws ConfigurationError when METRICS_NAMESPACE cannot be a CloudWatch namespace.
 */
export function lambdaMetrics(env: Env, overrides: Overrides, logger: Logger): MetricsRecorder {
  if (overrides.metrics !== undefined) return overrides.metrics;
  if (overrides.logger !== undefined) return NO_METRICS;
  let namespace: string;
  try {
    namespace = metricsNamespaceFromEnv(env);
  } catch (error) {
    throw new ConfigurationError((error as Error).message, { cause: error });
  }
  return emfRecorder({
    namespace,
    write: stdoutSink,
    onError: (message) => {
      logger.warn('metrics not written', { error: message });
    },
  });
}

/**
 * The trigger STATUS_SYNC_QUEUE_URL configures (set names sent to
 * status-sync's queue), or none when it is unset.
 * @throws ConfigurationError when the retired STATUS_SYNC_FUNCTION is set.
 */
function rolloutTrigger(env: Env, overrides: Overrides): RolloutTrigger | undefined {
  try {
    return statusSyncTriggerFromEnv(env, overrides.statusSyncQueue ?? {});
  } catch (error) {
    throw new ConfigurationError((error as Error).message, { cause: error });
  }
}

/** Builds the cluster sources; only functions that read the cluster import one (it pulls in client-node). */
export type ClusterComposer = (env: Env, logger: Logger, overrides: Overrides) => Promise<ClusterSources>;

export function secretReader(overrides: Overrides): (id: string) => Promise<string> {
  return overrides.readSecret ?? secretsManagerReader();
}

/** The caller secrets: fixed (the environment), re-read on an interval (a stored secret), or 'insecure' when explicitly allowed. */
export type CallerSecretsHandle = CallerSecrets | 'insecure' | RefreshingSecrets;

function isRefreshing(secrets: CallerSecretsHandle): secrets is RefreshingSecrets {
  return typeof secrets === 'object' && 'refresh' in secrets;
}

/** The secrets a handle holds now; undefined when callers are not authenticated. */
export function currentSecrets(secrets: CallerSecretsHandle): CallerSecrets | undefined {
  if (secrets === 'insecure') return undefined;
  return isRefreshing(secrets) ? secrets.current() : secrets;
}

/**
 * Secrets read from a store (Secrets Manager, the local server's file) and
 * re-read every WEBHOOK_SECRET_REFRESH_MS, so a rotation reaches this process
 * in bounded time. The first read happens here: a bad value stops start-up.
 */
export async function storedCallerSecrets(read: () => Promise<string>, what: string, env: Env, logger: Logger): Promise<RefreshingSecrets> {
  const readParsed = async () => parseSecretValue(await read(), what);
  return refreshingSecrets({ initial: await readParsed(), read: readParsed, intervalMs: secretRefreshMsFromEnv(env), logger });
}

/** Who may call: the caller secrets and the network allowlist, from the environment. */
export interface CallerAccess {
  secrets: CallerSecretsHandle;
  networks: CallerNetworks | undefined;
}

/**
 * The caller access the environment configures.
 * @throws CallerSecretError, CallerNetworkError or SecretReadError naming what is wrong.
 */
export async function loadCallerAccess(env: Env, logger: Logger, overrides: Overrides = {}, platform: Platform = 'local'): Promise<CallerAccess> {
  const source = callerSecretSource(env, platform);
  const networks = callerNetworksFromEnv(env);
  switch (source.kind) {
    case 'env':
      return { secrets: source.secrets, networks };
    case 'insecure':
      return { secrets: 'insecure', networks };
    case 'secrets-manager': {
      const reader = secretReader(overrides);
      return { secrets: await storedCallerSecrets(() => reader(source.secretId), `secret ${ENV_SECRET_ARN}=${source.secretId}`, env, logger), networks };
    }
  }
}

/** Functions that read the cluster, as their descriptors say (defaulting needs nothing but the object). */
export function needsCluster(fn: FunctionName): boolean {
  return readsCluster(descriptorOf(fn));
}

/** What one admission function serves with. */
export interface AdmissionRuntime {
  config: HttpHandlerConfig;
  deps: { sidecarSets: SidecarSetSource; namespaces: NamespaceSource; revisions?: RevisionSource; pods?: PodSource; clock: Clock; logger: Logger; rollout?: RolloutTrigger; metrics?: AdmissionMetrics; sortSidecarsByName?: boolean };
}

/**
 * The runtime with the injection order of the environment
 * (SORT_SIDECAR_CONTAINERS_BY_NAME, lib/webhooks/injection-order.ts): only
 * pod-inject reads it.
 * @throws ConfigurationError naming the variable when its value is neither true nor false.
 */
export function withInjectionOrder(runtime: AdmissionRuntime, env: Env): AdmissionRuntime {
  let sortSidecarsByName: boolean;
  try {
    sortSidecarsByName = sortSidecarsByNameFromEnv(env);
  } catch (error) {
    throw new ConfigurationError((error as Error).message, { cause: error });
  }
  return sortSidecarsByName ? { ...runtime, deps: { ...runtime.deps, sortSidecarsByName } } : runtime;
}

/** Functions that tell the reconciler about admitted changes, as their descriptors say (the SidecarSet validating webhook: it sees every admitted one, after defaulting). */
export function triggersRollout(fn: FunctionName): boolean {
  return descriptorOf(fn).triggersReconcile;
}

/** Sources for a function that never reads the cluster (defaulting). */
const NO_CLUSTER = { sidecarSets: memorySidecarSetSource([]), namespaces: memoryNamespaceSource([]) };

/** The HTTP handler's view of the caller access: re-read secrets are read through a getter, so every request sees the latest. */
function doorConfig(fn: FunctionName, secrets: CallerSecretsHandle, networks: CallerNetworks | undefined): HttpHandlerConfig {
  const common = { fn, maxBodyBytes: DEFAULT_MAX_BODY_BYTES, ...(networks !== undefined ? { callerNetworks: networks } : {}) };
  if (!isRefreshing(secrets)) return { ...common, secrets };
  return {
    ...common,
    get secrets() {
      return secrets.current();
    },
    refreshSecrets: () => secrets.refresh(),
  };
}

/** One function's runtime from parts composed once (shared by the functions of one server). */
export function admissionRuntime(
  fn: FunctionName,
  secrets: CallerSecretsHandle,
  sources: Pick<ClusterSources, 'sidecarSets' | 'namespaces' | 'revisions' | 'pods'> | undefined,
  logger: Logger,
  clock: Clock = systemClock,
  networks?: CallerNetworks,
  rollout?: RolloutTrigger,
  metrics?: AdmissionMetrics,
): AdmissionRuntime {
  // Each function gets the sources its descriptor says it reads, and nothing else.
  const { reads } = descriptorOf(fn);
  const sidecarSets = reads.sidecarSets && sources ? sources.sidecarSets : NO_CLUSTER.sidecarSets;
  const namespaces = reads.namespaces && sources ? sources.namespaces : NO_CLUSTER.namespaces;
  const trigger = triggersRollout(fn) ? rollout : undefined;
  const revisions = reads.revisions ? sources?.revisions : undefined;
  const pods = reads.pods ? sources?.pods : undefined;
  return {
    config: doorConfig(fn, secrets, networks),
    deps: {
      sidecarSets,
      namespaces,
      ...(revisions !== undefined ? { revisions } : {}),
      ...(pods !== undefined ? { pods } : {}),
      clock,
      logger,
      ...(trigger !== undefined ? { rollout: trigger } : {}),
      ...(metrics !== undefined ? { metrics } : {}),
    },
  };
}

export function warnIfInsecure(access: CallerAccess, logger: Logger): void {
  if (access.secrets === 'insecure') logger.warn('callers are not authenticated (ALLOW_UNAUTHENTICATED_CALLERS=true): local development only');
  if (access.networks !== undefined) logger.info('callers limited to networks', { networks: access.networks.entries });
}

/**
 * Everything one admission function (a Lambda) needs, from the environment.
 * `cluster` is required exactly for the functions that read the cluster.
 */
export async function composeAdmission(
  fn: FunctionName,
  env: Env,
  overrides: Overrides = {},
  cluster?: ClusterComposer,
): Promise<AdmissionRuntime> {
  const logger = overrides.logger ?? jsonLogger({ function: fn });
  // This composes the Lambda functions: a Function URL is public, so never unauthenticated.
  const access = await loadCallerAccess(env, logger, overrides, 'lambda');
  warnIfInsecure(access, logger);
  if (needsCluster(fn) && cluster === undefined) throw new ConfigurationError(`${fn} needs a cluster source`);
  const metrics = lambdaMetrics(env, overrides, logger).admission(fn);
  const staleServed = (ageMs: number) => {
    metrics.staleServed(ageMs);
  };
  const sources = needsCluster(fn) && cluster ? await cluster(env, logger, { ...overrides, staleServed }) : undefined;
  const rollout = triggersRollout(fn) ? rolloutTrigger(env, overrides) : undefined;
  return withInjectionOrder(admissionRuntime(fn, access.secrets, sources, logger, overrides.clock, access.networks, rollout, metrics), env);
}
