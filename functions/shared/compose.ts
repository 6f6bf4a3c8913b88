/**
 * Composition, once per cold start (or server start): configuration from the
 * environment, the caller secret, the cluster sources, the logger. Anything
 * missing or malformed stops start-up with a message naming it; a function
 * that cannot authenticate callers or reach its cluster must not serve.
 */
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { loadKubeConfig, makeKubeClients, type KubeconfigSource } from '../../lib/adapters/kubeconfig.ts';
import { kubeNamespaceSource, kubeSidecarSetSource, sourceOptionsFromEnv } from '../../lib/adapters/kube-sources.ts';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { secretsManagerReader } from '../../lib/adapters/secrets-manager.ts';
import { parseSecretValue, type CallerSecrets } from '../../lib/auth/caller-auth.ts';
import { callerSecretSource, ENV_SECRET_ARN } from '../../lib/auth/caller-config.ts';
import { systemClock, type Logger, type NamespaceSource, type SidecarSetSource } from '../../lib/ports.ts';
import { DEFAULT_MAX_BODY_BYTES, type HttpDoorConfig } from '../../lib/webhooks/http-door.ts';
import type { AdmissionFunctionName } from '../../lib/webhooks/registry.ts';

type Env = Readonly<Record<string, string | undefined>>;

export const ENV_KUBECONFIG = 'KUBECONFIG';
export const ENV_KUBECONFIG_CONTENT = 'KUBECONFIG_CONTENT';
export const ENV_KUBECONFIG_SECRET_ARN = 'KUBECONFIG_SECRET_ARN';

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
  /** The API server the sources read, for logs. */
  server: string;
}

export interface Overrides {
  /** Reads a Secrets Manager secret; defaults to the AWS SDK client. */
  readSecret?: (secretId: string) => Promise<string>;
  logger?: Logger;
}

function secretReader(overrides: Overrides): (id: string) => Promise<string> {
  return overrides.readSecret ?? secretsManagerReader();
}

/** The caller secrets, or 'insecure' when explicitly allowed. */
export async function loadCallerSecrets(env: Env, overrides: Overrides = {}): Promise<CallerSecrets | 'insecure'> {
  const source = callerSecretSource(env);
  switch (source.kind) {
    case 'env':
      return source.secrets;
    case 'insecure':
      return 'insecure';
    case 'secrets-manager':
      return parseSecretValue(await secretReader(overrides)(source.secretId), `secret ${ENV_SECRET_ARN}=${source.secretId}`);
  }
}

/** Where the cluster credentials come from: exactly one of three variables. */
export function kubeconfigSource(env: Env, overrides: Overrides = {}): KubeconfigSource {
  const set = [ENV_KUBECONFIG, ENV_KUBECONFIG_CONTENT, ENV_KUBECONFIG_SECRET_ARN].filter((k) => (env[k] ?? '') !== '');
  if (set.length === 0) {
    throw new ConfigurationError(
      `no cluster credentials: set ${ENV_KUBECONFIG} (a file), ${ENV_KUBECONFIG_CONTENT} (its YAML) or ${ENV_KUBECONFIG_SECRET_ARN} (a Secrets Manager secret)`,
    );
  }
  if (set.length > 1) throw new ConfigurationError(`set only one of ${set.join(', ')}`);
  const file = env[ENV_KUBECONFIG];
  if (file !== undefined && file !== '') {
    // kubectl's path list syntax is not supported: one file, said plainly.
    if (file.includes(':')) throw new ConfigurationError(`${ENV_KUBECONFIG} must name one file, not a list: ${file}`);
    return { file };
  }
  if ((env[ENV_KUBECONFIG_CONTENT] ?? '') !== '') return { envVar: ENV_KUBECONFIG_CONTENT, env };
  const arn = env[ENV_KUBECONFIG_SECRET_ARN] ?? '';
  return { load: () => secretReader(overrides)(arn), description: `Secrets Manager secret ${arn}` };
}

/** The live SidecarSet and Namespace sources for the configured cluster. */
export async function clusterSources(env: Env, logger: Logger, overrides: Overrides = {}): Promise<ClusterSources> {
  const kc = await loadKubeConfig(kubeconfigSource(env, overrides));
  const clients = makeKubeClients(kc);
  const options = {
    ...sourceOptionsFromEnv(env),
    onStale: (report: { message: string; ageMs: number }) => {
      logger.warn('served a stale list', { detail: report.message, ageMs: report.ageMs });
    },
  };
  return {
    sidecarSets: kubeSidecarSetSource(clients, options),
    namespaces: kubeNamespaceSource(clients, options),
    server: clients.server,
  };
}

/** Functions that read the cluster; defaulting needs nothing but the object. */
export function needsCluster(fn: AdmissionFunctionName): boolean {
  return fn !== 'sidecarset-default';
}

/** What one admission function serves with. */
export interface AdmissionRuntime {
  config: HttpDoorConfig;
  deps: { sidecarSets: SidecarSetSource; namespaces: NamespaceSource; clock: typeof systemClock; logger: Logger };
}

/** Sources for a function that never reads the cluster (defaulting). */
const NO_CLUSTER = { sidecarSets: memorySidecarSetSource([]), namespaces: memoryNamespaceSource([]) };

/** One function's runtime from parts composed once (shared by the functions of one server). */
export function admissionRuntime(
  fn: AdmissionFunctionName,
  secrets: CallerSecrets | 'insecure',
  sources: Pick<ClusterSources, 'sidecarSets' | 'namespaces'> | undefined,
  logger: Logger,
): AdmissionRuntime {
  const { sidecarSets, namespaces } = needsCluster(fn) && sources ? sources : NO_CLUSTER;
  return { config: { fn, secrets, maxBodyBytes: DEFAULT_MAX_BODY_BYTES }, deps: { sidecarSets, namespaces, clock: systemClock, logger } };
}

export function warnIfInsecure(secrets: CallerSecrets | 'insecure', logger: Logger): void {
  if (secrets === 'insecure') logger.warn('callers are not authenticated (ALLOW_UNAUTHENTICATED_CALLERS=true): local development only');
}

/** Everything one admission function (a Lambda) needs, from the environment. */
export async function composeAdmission(fn: AdmissionFunctionName, env: Env, overrides: Overrides = {}): Promise<AdmissionRuntime> {
  const logger = overrides.logger ?? jsonLogger({ function: fn });
  const secrets = await loadCallerSecrets(env, overrides);
  warnIfInsecure(secrets, logger);
  const sources = needsCluster(fn) ? await clusterSources(env, logger, overrides) : undefined;
  return admissionRuntime(fn, secrets, sources, logger);
}
