/**
 * The live cluster sources (client-node), kept apart from compose.ts so that
 * functions that never read the cluster do not bundle or load client-node.
 */
import { loadKubeConfig, makeKubeClients, type KubeconfigSource } from '../../lib/adapters/kubeconfig.ts';
import { kubeNamespaceSource, kubeSidecarSetSource, sourceOptionsFromEnv } from '../../lib/adapters/kube-sources.ts';
import type { Logger } from '../../lib/ports.ts';
import { ConfigurationError, secretReader, type ClusterSources, type Env, type Overrides } from './compose.ts';

export const ENV_KUBECONFIG = 'KUBECONFIG';
export const ENV_KUBECONFIG_CONTENT = 'KUBECONFIG_CONTENT';
export const ENV_KUBECONFIG_SECRET_ARN = 'KUBECONFIG_SECRET_ARN';

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

