/**
 * Composition, once per cold start (or server start): configuration from the
 * environment, the caller secret, the cluster sources, the logger. Anything
 * missing or malformed stops start-up with a message naming it; a function
 * that cannot authenticate callers or reach its cluster must not serve.
 */
import { jsonLogger } from '../../lib/adapters/json-logger.ts';
import { memoryNamespaceSource, memorySidecarSetSource } from '../../lib/adapters/memory.ts';
import { secretsManagerReader } from '../../lib/adapters/secrets-manager.ts';
import { parseSecretValue, type CallerSecrets } from '../../lib/auth/caller-auth.ts';
import { callerSecretSource, ENV_SECRET_ARN } from '../../lib/auth/caller-config.ts';
import { systemClock, type Clock, type Logger, type NamespaceSource, type SidecarSetSource } from '../../lib/ports.ts';
import { DEFAULT_MAX_BODY_BYTES, type HttpDoorConfig } from '../../lib/webhooks/http-door.ts';
import type { AdmissionFunctionName } from '../../lib/webhooks/registry.ts';

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
  /** The API server the sources read, for logs. */
  server: string;
}

export interface Overrides {
  /** Reads a Secrets Manager secret; defaults to the AWS SDK client. */
  readSecret?: (secretId: string) => Promise<string>;
  logger?: Logger;
  /** The time injection records in pod annotations; tests fix it. */
  clock?: Clock;
}

/** Builds the cluster sources; only functions that read the cluster import one (it pulls in client-node). */
export type ClusterComposer = (env: Env, logger: Logger, overrides: Overrides) => Promise<ClusterSources>;

export function secretReader(overrides: Overrides): (id: string) => Promise<string> {
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

/** Functions that read the cluster; defaulting needs nothing but the object. */
export function needsCluster(fn: AdmissionFunctionName): boolean {
  return fn !== 'sidecarset-default';
}

/** What one admission function serves with. */
export interface AdmissionRuntime {
  config: HttpDoorConfig;
  deps: { sidecarSets: SidecarSetSource; namespaces: NamespaceSource; clock: Clock; logger: Logger };
}

/** Sources for a function that never reads the cluster (defaulting). */
const NO_CLUSTER = { sidecarSets: memorySidecarSetSource([]), namespaces: memoryNamespaceSource([]) };

/** One function's runtime from parts composed once (shared by the functions of one server). */
export function admissionRuntime(
  fn: AdmissionFunctionName,
  secrets: CallerSecrets | 'insecure',
  sources: Pick<ClusterSources, 'sidecarSets' | 'namespaces'> | undefined,
  logger: Logger,
  clock: Clock = systemClock,
): AdmissionRuntime {
  const { sidecarSets, namespaces } = needsCluster(fn) && sources ? sources : NO_CLUSTER;
  return { config: { fn, secrets, maxBodyBytes: DEFAULT_MAX_BODY_BYTES }, deps: { sidecarSets, namespaces, clock, logger } };
}

export function warnIfInsecure(secrets: CallerSecrets | 'insecure', logger: Logger): void {
  if (secrets === 'insecure') logger.warn('callers are not authenticated (ALLOW_UNAUTHENTICATED_CALLERS=true): local development only');
}

/**
 * Everything one admission function (a Lambda) needs, from the environment.
 * `cluster` is required exactly for the functions that read the cluster.
 */
export async function composeAdmission(
  fn: AdmissionFunctionName,
  env: Env,
  overrides: Overrides = {},
  cluster?: ClusterComposer,
): Promise<AdmissionRuntime> {
  const logger = overrides.logger ?? jsonLogger({ function: fn });
  const secrets = await loadCallerSecrets(env, overrides);
  warnIfInsecure(secrets, logger);
  if (needsCluster(fn) && cluster === undefined) throw new ConfigurationError(`${fn} needs a cluster source`);
  const sources = needsCluster(fn) && cluster ? await cluster(env, logger, overrides) : undefined;
  return admissionRuntime(fn, secrets, sources, logger, overrides.clock);
}
