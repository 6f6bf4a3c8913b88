/**
 * The rollout view's cluster: which kubeconfig (as kubectl finds one, with
 * a running `npm start`'s embedded cluster before ~/.kube/config), and the
 * live sources over it: the reconciler's own pod lists and watches
 * (kube-pods.ts), its namespace snapshot (kube-namespaces.ts), the
 * SidecarSet list and watch (kube-sidecarsets.ts), and its Events telling a
 * revision it cannot write (kube-events.ts), all through one client; and
 * the reconciler's stall threshold, read from the environment as it reads it.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mutatingAdmissionPolicyInstalled } from '../../lib/adapters/kube-admission-policy-support.ts';
import { kubeRevisionFailures } from '../../lib/adapters/kube-events.ts';
import { kubeNamespaceSnapshot } from '../../lib/adapters/kube-namespaces.ts';
import { kubeSetPods } from '../../lib/adapters/kube-pods.ts';
import { kubeSidecarSetWatch } from '../../lib/adapters/kube-sidecarsets.ts';
import { discoveredSidecarSetVersion } from '../../lib/adapters/kube-sidecarsets-version.ts';
import { kubeConfigClient } from '../../lib/adapters/kubeconfig.ts';
import { millisecondsFromEnv } from '../../lib/adapters/kube-sources.ts';
import { DEFAULT_STALL_MS, ENV_ROLLOUT_STALL_MS } from '../../lib/status-sync/rollout-state.ts';
import { INJECTION_POLICY_NAME } from '../../lib/webhook-config/injection-policy.ts';
import type { StatusViewDeps } from '../../lib/status-view/look.ts';
import { clusterConfigured, clusterKubeConfig, ENV_KUBECONFIG } from '../shared/cluster.ts';
import { ConfigurationError, type Env } from '../shared/compose.ts';
import { clusterLines, type ClusterName } from '../shared/which-cluster.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where `npm start` writes the kubeconfig of its embedded cluster while it runs (removed when it stops). */
export const LOCAL_CLUSTER_KUBECONFIG = join(repoRoot, '.cache', 'local-cluster', 'kubeconfig');

/** The environment naming the view's cluster, and when it was a default rather than asked for, which one. */
export interface ChosenCluster {
  env: Env;
  /** How it was chosen, for the line naming it (`--kubeconfig FILE`, `KUBECONFIG=FILE`, ...). */
  how: string;
  /** The cluster was not named: which default is shown. */
  note?: string;
}

/** The variable that named the cluster in the environment, as said to the user. */
function fromEnv(env: Env): string {
  const file = env[ENV_KUBECONFIG] ?? '';
  if (file !== '') return `${ENV_KUBECONFIG}=${file}`;
  const set = ['KUBECONFIG_CONTENT', 'KUBECONFIG_SECRET_ARN', 'EKS_CLUSTER_NAME'].find((name) => (env[name] ?? '') !== '');
  return `${set ?? 'the environment'} set`;
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
  if (kubeconfig !== undefined) return { env: only(kubeconfig), how: `--kubeconfig ${kubeconfig}` };
  if (clusterConfigured(env)) return { env, how: fromEnv(env) };
  if (exists(LOCAL_CLUSTER_KUBECONFIG)) {
    const note = `the embedded cluster of npm start (${LOCAL_CLUSTER_KUBECONFIG})`;
    return { env: only(LOCAL_CLUSTER_KUBECONFIG), how: note, note };
  }
  const userConfig = join(home, '.kube', 'config');
  if (exists(userConfig)) return { env: only(userConfig), how: userConfig, note: `the cluster of ${userConfig}` };
  throw new ConfigurationError(`no cluster: give --kubeconfig FILE or set ${ENV_KUBECONFIG} (there is no ~/.kube/config, and no npm start cluster runs)`);
}

/** The running npm start's cluster of this checkout, as its kubeconfig names it; undefined when none runs or it cannot be read. */
function localCluster(exists: (path: string) => boolean): { name: ClusterName; kubeconfig: string } | undefined {
  if (!exists(LOCAL_CLUSTER_KUBECONFIG)) return undefined;
  try {
    const config = parse(readFileSync(LOCAL_CLUSTER_KUBECONFIG, 'utf8')) as { 'current-context'?: string; clusters?: { cluster?: { server?: string } }[] };
    const server = config.clusters?.[0]?.cluster?.server;
    return server === undefined ? undefined : { name: { context: config['current-context'] ?? '', server }, kubeconfig: relative(process.cwd(), LOCAL_CLUSTER_KUBECONFIG) };
  } catch {
    // Removed between the check and the read: npm start just stopped.
    return undefined;
  }
}

/**
 * The chosen cluster's client, after saying which cluster it is (and, when
 * npm start's embedded cluster runs and this is another, how to choose that).
 * @throws ConfigurationError or KubeconfigError naming what is wrong with it.
 */
export async function connectChosen(chosen: ChosenCluster, say: (text: string) => void, exists: (path: string) => boolean = existsSync): Promise<KubeConfig> {
  const kc = await clusterKubeConfig(chosen.env);
  const name = { context: kc.getCurrentContext(), server: kc.getCurrentCluster()?.server ?? '(no server)' };
  for (const line of clusterLines(name, chosen.how, localCluster(exists))) say(`${line}\n`);
  return kc;
}

/**
 * The live sources for the chosen cluster, named first on `say`.
 * @throws ConfigurationError or KubeconfigError naming what is wrong with it.
 */
export async function statusViewSources(chosen: ChosenCluster, say: (text: string) => void): Promise<StatusViewDeps> {
  const kc = await connectChosen(chosen, say);
  const client = kubeConfigClient(kc);
  return {
    sets: kubeSidecarSetWatch(client, discoveredSidecarSetVersion(client)),
    pods: kubeSetPods(client),
    namespaces: () => kubeNamespaceSnapshot(client),
    revisionFailures: kubeRevisionFailures(client),
    // The reconciler's threshold (ROLLOUT_STALL_MS, as the reconciler reads it): the view says Stalled when its reconcile does.
    stall: { stallMs: millisecondsFromEnv(chosen.env, ENV_ROLLOUT_STALL_MS, DEFAULT_STALL_MS, 1_000), nowMs: () => Date.now() },
    injectionPolicyInstalled: (signal) => mutatingAdmissionPolicyInstalled(client, INJECTION_POLICY_NAME, signal),
  };
}
