/**
 * The rollout view's cluster: which kubeconfig (as kubectl finds one, with
 * a running `npm start`'s embedded cluster before ~/.kube/config), and the
 * live sources over it: the reconciler's own pod lists and watches
 * (kube-pods.ts), its namespace snapshot (kube-namespaces.ts), the
 * SidecarSet list and watch (kube-sidecarsets.ts), and its Events telling a
 * revision it cannot write (kube-events.ts), all through one client; and
 * the reconciler's stall threshold, read from the environment as it reads it.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubeRevisionFailures } from '../../lib/adapters/kube-events.ts';
import { kubeNamespaceSnapshot } from '../../lib/adapters/kube-namespaces.ts';
import { kubeSetPods } from '../../lib/adapters/kube-pods.ts';
import { kubeSidecarSetWatch } from '../../lib/adapters/kube-sidecarsets.ts';
import { discoveredSidecarSetVersion } from '../../lib/adapters/kube-sidecarsets-version.ts';
import { kubeConfigClient } from '../../lib/adapters/kubeconfig.ts';
import { millisecondsFromEnv } from '../../lib/adapters/kube-sources.ts';
import { DEFAULT_STALL_MS, ENV_ROLLOUT_STALL_MS } from '../../lib/status-sync/rollout-state.ts';
import type { StatusViewDeps } from '../../lib/status-view/look.ts';
import { clusterConfigured, clusterKubeConfig, ENV_KUBECONFIG } from '../shared/cluster.ts';
import { ConfigurationError, type Env } from '../shared/compose.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where `npm start` writes the kubeconfig of its embedded cluster while it runs (removed when it stops). */
export const LOCAL_CLUSTER_KUBECONFIG = join(repoRoot, '.cache', 'local-cluster', 'kubeconfig');

/** The environment naming the view's cluster, and when it was a default rather than asked for, which one. */
export interface ChosenCluster {
  env: Env;
  /** Said on standard error: the cluster was not named, so the user learns which one is shown. */
  note?: string;
}

/**
 * `--kubeconfig FILE` first (it replaces any cluster the environment names,
 * as with `npm start`); then the environment (KUBECONFIG, KUBECONFIG_CONTENT,
 * KUBECONFIG_SECRET_ARN, EKS_CLUSTER_NAME, as the functions read it); then
 * the embedded cluster of a running `npm start`; then ~/.kube/config.
 * @throws ConfigurationError when none is there.
 */
export function chooseCluster(kubeconfig: string | undefined, env: Env, exists: (path: string) => boolean = existsSync, home: string = homedir()): ChosenCluster {
  const only = (file: string): Env => ({ ...env, [ENV_KUBECONFIG]: file, KUBECONFIG_CONTENT: '', KUBECONFIG_SECRET_ARN: '', EKS_CLUSTER_NAME: '' });
  if (kubeconfig !== undefined) return { env: only(kubeconfig) };
  if (clusterConfigured(env)) return { env };
  if (exists(LOCAL_CLUSTER_KUBECONFIG)) return { env: only(LOCAL_CLUSTER_KUBECONFIG), note: `the embedded cluster of npm start (${LOCAL_CLUSTER_KUBECONFIG})` };
  const userConfig = join(home, '.kube', 'config');
  if (exists(userConfig)) return { env: only(userConfig), note: `the cluster of ${userConfig}` };
  throw new ConfigurationError(`no cluster: give --kubeconfig FILE or set ${ENV_KUBECONFIG} (there is no ~/.kube/config, and no npm start cluster runs)`);
}

/**
 * The live sources for the chosen cluster.
 * @throws ConfigurationError or KubeconfigError naming what is wrong with it.
 */
export async function statusViewSources(chosen: ChosenCluster): Promise<StatusViewDeps> {
  const kc = await clusterKubeConfig(chosen.env);
  const client = kubeConfigClient(kc);
  return {
    sets: kubeSidecarSetWatch(client, discoveredSidecarSetVersion(client)),
    pods: kubeSetPods(client),
    namespaces: () => kubeNamespaceSnapshot(client),
    revisionFailures: kubeRevisionFailures(client),
    // The reconciler's threshold (ROLLOUT_STALL_MS, as the reconciler reads it): the view says Stalled when its pass does.
    stall: { stallMs: millisecondsFromEnv(chosen.env, ENV_ROLLOUT_STALL_MS, DEFAULT_STALL_MS, 1_000), nowMs: () => Date.now() },
  };
}
