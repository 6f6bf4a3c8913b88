/** The migration commands' cluster: the kubeconfig chosen as `npm run status` chooses it, the preflight's read-only sources over it, and what `fence` reads and writes. */
import { kubeFenceCluster } from '../../lib/adapters/kube-fence-backfill.ts';
import { kubeMigrationReads } from '../../lib/adapters/kube-migrate.ts';
import { kubeConfigClient } from '../../lib/adapters/kubeconfig.ts';
import { revisionNamespaceFromEnv } from '../../lib/adapters/revision-namespace.ts';
import type { Env } from '../shared/compose.ts';
import { chooseCluster, connectChosen } from '../status-view/compose.ts';
import type { Connected } from './cli.ts';

/**
 * @throws ConfigurationError or KubeconfigError naming what is wrong with the kubeconfig.
 */
export async function migrationSources(kubeconfig: string | undefined, env: Env, note: (text: string) => void): Promise<Connected> {
  const revisionNamespace = revisionNamespaceFromEnv(env);
  const kc = await connectChosen(chooseCluster(kubeconfig, env), note);
  const client = kubeConfigClient(kc);
  return { reads: kubeMigrationReads(client), revisionNamespace, server: client.server, fence: kubeFenceCluster(client, revisionNamespace) };
}
