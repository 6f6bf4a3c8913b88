/**
 * The live cluster sources, kept apart from compose.ts so that functions that
 * never read the cluster (defaulting) do not bundle them.
 *
 * The webhooks read the cluster through the one request function
 * (kube-request.ts) with settings the project reads itself, and load
 * client-node only when the kubeconfig needs it for its credentials (an exec
 * plugin, an auth provider, ...): through a dynamic import, so that
 * the bundler puts client-node in a chunk of its own that a cold start loads
 * only then. Its import alone was most of a webhook's cold start.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { checkEksCluster } from '../../lib/adapters/eks-cluster.ts';
import { credentialsFromEnv, eksTokenSource } from '../../lib/adapters/eks-token.ts';
import { DEFAULT_RETRY_DELAYS_MS, kubeClient, settingsConnection, type KubeClient } from '../../lib/adapters/kube-request.ts';
import { discoveredSidecarSetVersion } from '../../lib/adapters/kube-sidecarsets-version.ts';
import {
  kubeClusterReader as storedVersionReader,
  kubeNamespaceSource,
  kubePodSource,
  kubeSidecarSetSource,
  retiredSourceSettings,
  sourceOptionsFromEnv,
  type ServerReader,
} from '../../lib/adapters/kube-sources.ts';
import type { KubeconfigSource } from '../../lib/adapters/kubeconfig-reader.ts';
import { kubeRevisionSource } from '../../lib/adapters/kube-revisions.ts';
import { revisionNamespaceFromEnv } from '../../lib/adapters/revision-namespace.ts';
import type { Logger } from '../../lib/ports.ts';
import { ConfigurationError, secretReader, type ClusterSources, type Env, type Overrides } from './compose.ts';

export const ENV_KUBECONFIG = 'KUBECONFIG';
export const ENV_KUBECONFIG_CONTENT = 'KUBECONFIG_CONTENT';
export const ENV_KUBECONFIG_SECRET_ARN = 'KUBECONFIG_SECRET_ARN';
/** On EKS: the cluster's name, endpoint and CA (base64 PEM); the token is made from the function's IAM role. */
export const ENV_EKS_CLUSTER_NAME = 'EKS_CLUSTER_NAME';
export const ENV_EKS_ENDPOINT = 'EKS_ENDPOINT';
export const ENV_EKS_CA_DATA = 'EKS_CA_DATA';

const KUBECONFIG_VARIABLES = [ENV_KUBECONFIG, ENV_KUBECONFIG_CONTENT, ENV_KUBECONFIG_SECRET_ARN] as const;
const EKS_HINT = `; on EKS, ${ENV_EKS_CLUSTER_NAME}, ${ENV_EKS_ENDPOINT} and ${ENV_EKS_CA_DATA} (a token from the function's IAM role)`;

const isSet = (env: Env, name: string): boolean => (env[name] ?? '') !== '';

/** True when the environment names a cluster (a kubeconfig or EKS). */
export function clusterConfigured(env: Env): boolean {
  return [...KUBECONFIG_VARIABLES, ENV_EKS_CLUSTER_NAME].some((k) => isSet(env, k));
}

/** Where the cluster credentials come from: exactly one of three variables. */
export function kubeconfigSource(env: Env, overrides: Overrides = {}): KubeconfigSource {
  const set = KUBECONFIG_VARIABLES.filter((k) => isSet(env, k));
  if (set.length === 0) {
    throw new ConfigurationError(
      `no cluster credentials: set ${ENV_KUBECONFIG} (a file), ${ENV_KUBECONFIG_CONTENT} (its YAML) or ${ENV_KUBECONFIG_SECRET_ARN} (a Secrets Manager secret)${EKS_HINT}`,
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

/**
 * The EKS cluster from the environment, authenticated as the function's IAM
 * role (the credentials Lambda puts in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
 * and AWS_SESSION_TOKEN, read again at every token refresh).
 */
function eksCluster(env: Env) {
  const missing = [ENV_EKS_ENDPOINT, ENV_EKS_CA_DATA, 'AWS_REGION'].filter((k) => !isSet(env, k));
  if (missing.length > 0) throw new ConfigurationError(`${ENV_EKS_CLUSTER_NAME} is set, so ${missing.join(' and ')} must be too`);
  const settings = { clusterName: env[ENV_EKS_CLUSTER_NAME] ?? '', endpoint: env[ENV_EKS_ENDPOINT] ?? '', caData: env[ENV_EKS_CA_DATA] ?? '' };
  // Checked now, so that a function without role credentials fails its cold start, not its first request.
  credentialsFromEnv(env);
  const cluster = checkEksCluster(settings);
  const tokens = eksTokenSource({ clusterName: cluster.clusterName, region: env.AWS_REGION ?? '', credentials: () => credentialsFromEnv(env) });
  return { settings, cluster, tokens };
}

/** True when EKS is configured; refuses EKS and a kubeconfig together. */
function usesEks(env: Env): boolean {
  if (!isSet(env, ENV_EKS_CLUSTER_NAME)) return false;
  const both = KUBECONFIG_VARIABLES.filter((k) => isSet(env, k));
  if (both.length > 0) throw new ConfigurationError(`set either ${ENV_EKS_CLUSTER_NAME} or ${both.join(', ')}, not both`);
  return true;
}

/**
 * How the webhooks' requests are sent, each bounded by the cache's
 * KUBE_API_TIMEOUT_MS: once (the stale-socket repeat aside), unless the API
 * server answers 429 (as it does for a moment after the SidecarSet CRD
 * changes): then again after 250 ms and 1 s while the review's time lasts.
 */
const WEBHOOK_REQUESTS = { retryDelaysMs: DEFAULT_RETRY_DELAYS_MS, retryOn: 'overload' } as const;

/**
 * The configured cluster as client-node's KubeConfig, for the status
 * reconciler: EKS with the function's IAM role when EKS_CLUSTER_NAME is set,
 * else a kubeconfig (see {@link kubeconfigSource}).
 * @throws ConfigurationError, KubeconfigError or EksAuthError naming what is wrong.
 */
export async function clusterKubeConfig(env: Env, overrides: Overrides = {}): Promise<KubeConfig> {
  if (usesEks(env)) {
    const { settings, tokens } = eksCluster(env);
    const { eksKubeConfig } = await import('../../lib/adapters/eks-kubeconfig.ts');
    return eksKubeConfig(settings, tokens);
  }
  const { readKubeconfig } = await import('../../lib/adapters/kubeconfig-reader.ts');
  const kubeconfig = await readKubeconfig(kubeconfigSource(env, overrides));
  const { kubeConfigOf } = await import('../../lib/adapters/kubeconfig.ts');
  return kubeConfigOf(kubeconfig);
}

/**
 * What the webhooks read the cluster through: the one request function,
 * its credentials from client-node only when the kubeconfig needs what only
 * client-node does. Retried only when the API server answers 429 (it asks
 * to be asked again), or a kept-alive socket is found closed: a review's
 * deadline is seconds, and the cache bridges a failed read.
 * @throws ConfigurationError, KubeconfigError or EksAuthError naming what is wrong.
 */
export async function clusterReader(env: Env, logger: Logger, overrides: Overrides = {}): Promise<ServerReader> {
  // Each call bounded by KUBE_API_TIMEOUT_MS, a SidecarSet list's pages each (kube-sources.ts: a whole list may take longer).
  const requests = { ...WEBHOOK_REQUESTS, attemptTimeoutMs: sourceOptionsFromEnv(env).apiTimeoutMs };
  // SidecarSets are read in the version the cluster stores, found once (kube-sidecarsets-version.ts).
  const kubeClusterReader = (client: KubeClient): ServerReader => storedVersionReader(client, discoveredSidecarSetVersion(client));
  if (usesEks(env)) {
    const { cluster, tokens } = eksCluster(env);
    return kubeClusterReader(kubeClient(settingsConnection({ server: cluster.server, ca: cluster.caPem, token: () => tokens.token() }), requests));
  }
  // Imported here: a YAML parser is all it adds, and on EKS nothing needs one.
  const { kubeconfigHttpsSettings, readKubeconfig } = await import('../../lib/adapters/kubeconfig-reader.ts');
  const kubeconfig = await readKubeconfig(kubeconfigSource(env, overrides));
  if (kubeconfig.clientNodeOnly.length === 0) return kubeClusterReader(kubeClient(settingsConnection(await kubeconfigHttpsSettings(kubeconfig)), requests));
  // Said once per cold start: it explains a slower one.
  logger.info('reading the cluster through client-node', { needs: kubeconfig.clientNodeOnly.join(', ') });
  const { kubeConfigOf, kubeConfigClient } = await import('../../lib/adapters/kubeconfig.ts');
  return kubeClusterReader(kubeConfigClient(kubeConfigOf(kubeconfig), requests));
}

/**
 * The live SidecarSet, Namespace and ControllerRevision sources for the
 * configured cluster, read fresh for every review; the revisions in
 * SIDECARSET_REVISION_NAMESPACE (default kruise-system); and single pods by
 * name (the pod an Eviction names), each one GET.
 */
export async function clusterSources(env: Env, logger: Logger, overrides: Overrides = {}): Promise<ClusterSources> {
  const settings = sourceOptionsFromEnv(env);
  const revisionNamespace = revisionNamespaceFromEnv(env);
  // Said once per cold start: a setting that no longer does anything is not ignored silently.
  for (const detail of retiredSourceSettings(env)) logger.warn('setting no longer read', { detail });
  const reader = await clusterReader(env, logger, overrides);
  const options = {
    ...settings,
    onStale: (report: { message: string; ageMs: number }) => {
      logger.warn('served a stale list', { detail: report.message, ageMs: report.ageMs });
      overrides.staleServed?.(report.ageMs);
    },
  };
  return {
    sidecarSets: kubeSidecarSetSource(reader, options),
    namespaces: kubeNamespaceSource(reader, options),
    revisions: kubeRevisionSource(reader, revisionNamespace, { apiTimeoutMs: settings.apiTimeoutMs }),
    pods: kubePodSource(reader),
    server: reader.server,
  };
}
