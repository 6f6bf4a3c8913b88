/**
 * The live cluster sources (client-node), kept apart from compose.ts so that
 * functions that never read the cluster do not bundle or load client-node.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { eksKubeConfig } from '../../lib/adapters/eks-kubeconfig.ts';
import { credentialsFromEnv, eksTokenSource } from '../../lib/adapters/eks-token.ts';
import { loadKubeConfig, makeKubeClients, type KubeconfigSource } from '../../lib/adapters/kubeconfig.ts';
import { kubeNamespaceSource, kubeSidecarSetSource, sourceOptionsFromEnv } from '../../lib/adapters/kube-sources.ts';
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
function eksClusterKubeConfig(env: Env): KubeConfig {
  const missing = [ENV_EKS_ENDPOINT, ENV_EKS_CA_DATA, 'AWS_REGION'].filter((k) => !isSet(env, k));
  if (missing.length > 0) throw new ConfigurationError(`${ENV_EKS_CLUSTER_NAME} is set, so ${missing.join(' and ')} must be too`);
  // Checked now, so that a function without role credentials fails its cold start, not its first request.
  credentialsFromEnv(env);
  const region = env.AWS_REGION ?? '';
  const clusterName = env[ENV_EKS_CLUSTER_NAME] ?? '';
  const tokens = eksTokenSource({ clusterName, region, credentials: () => credentialsFromEnv(env) });
  return eksKubeConfig({ clusterName, endpoint: env[ENV_EKS_ENDPOINT] ?? '', caData: env[ENV_EKS_CA_DATA] ?? '' }, tokens);
}

/**
 * The configured cluster's KubeConfig: EKS with the function's IAM role when
 * EKS_CLUSTER_NAME is set, else a kubeconfig (see {@link kubeconfigSource}).
 * @throws ConfigurationError, KubeconfigError or EksAuthError naming what is wrong.
 */
export async function clusterKubeConfig(env: Env, overrides: Overrides = {}): Promise<KubeConfig> {
  if (isSet(env, ENV_EKS_CLUSTER_NAME)) {
    const both = KUBECONFIG_VARIABLES.filter((k) => isSet(env, k));
    if (both.length > 0) throw new ConfigurationError(`set either ${ENV_EKS_CLUSTER_NAME} or ${both.join(', ')}, not both`);
    return eksClusterKubeConfig(env);
  }
  return loadKubeConfig(kubeconfigSource(env, overrides));
}

/** The live SidecarSet and Namespace sources for the configured cluster. */
export async function clusterSources(env: Env, logger: Logger, overrides: Overrides = {}): Promise<ClusterSources> {
  const kc = await clusterKubeConfig(env, overrides);
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

