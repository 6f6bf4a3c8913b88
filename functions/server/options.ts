/** Command-line options of the local server (`npm start -- ...`). */

export interface ServerOptions {
  port: number;
  /** The cluster to serve; only this selects one (an exported KUBECONFIG does not). */
  kubeconfig?: string;
  /** Reconcile the --kubeconfig cluster's SidecarSets (statuses, rollouts, secret rotation): --reconcile. */
  reconcile?: boolean;
  tlsDir: string;
  tlsCert?: string;
  tlsKey?: string;
  /**
   * Run the test kubelet on the embedded cluster (--test-kubelet[=<readyDelayMs>]), with
   * --test-kubelet-pull-delay=<pullDelayMs> when given (else the kubelet's default).
   */
  testKubelet?: { readyDelayMs: number; pullDelayMs?: number };
  /** Leave kube-controller-manager out of the embedded cluster (--no-controller-manager). */
  noControllerManager?: boolean;
  /** Sort injected sidecar containers by name (--sort-sidecars-by-name; SORT_SIDECAR_CONTAINERS_BY_NAME=true does the same). */
  sortSidecarsByName?: boolean;
  /**
   * Which path injects (--injection policy|webhook; docs/INJECTION-POLICY.md). When absent: policy in the embedded
   * cluster (Kubernetes 1.36); for --kubeconfig, policy where the cluster serves MutatingAdmissionPolicy v1, else webhook.
   */
  injection?: 'webhook' | 'policy';
}

/** The test kubelet's readiness delay when --test-kubelet gives none. */
export const DEFAULT_TEST_KUBELET_READY_DELAY_MS = 1000;

export const SERVER_USAGE = `usage: npm start -- [--port N] [--kubeconfig FILE [--reconcile]] [--tls-dir DIR] [--tls-cert FILE --tls-key FILE] [--test-kubelet[=MS] [--test-kubelet-pull-delay=MS]] [--sort-sidecars-by-name] [--injection policy|webhook] [--no-controller-manager]
  --port N           HTTPS port on 127.0.0.1 (default 8443; 0 picks a free one)
  --kubeconfig FILE  serve the webhooks of this cluster instead of starting an embedded one (only this
                     option selects a cluster: an exported KUBECONFIG does not)
  --reconcile        with --kubeconfig: also reconcile that cluster's SidecarSets (statuses, in-place
                     rollouts of their pods, rotation of the webhook secret); refused where OpenKruise's own
                     SidecarSet controller runs. The embedded cluster is always reconciled.
  --tls-dir DIR      where the generated CA, certificate and secret are kept (default .cache/local-server)
  --tls-cert/--tls-key  serve this certificate instead of a generated one
  --test-kubelet[=MS]  embedded cluster only: a test kubelet starts new pods and restarts containers whose
                     image changes, ready MS ms later (default 1000), so in-place sidecar updates complete
  --test-kubelet-pull-delay=MS  with --test-kubelet: a restarted container whose image changed is ready
                     MS ms later still, as a kubelet pulling the image would be (default 5000)
  --sort-sidecars-by-name  inject sidecar containers sorted by name (Kruise 1.9's alpha gate
                     EnableSortSidecarContainerByName; the default is by SidecarSet name, each set's as written);
                     the functions take SORT_SIDECAR_CONTAINERS_BY_NAME=true, which this sets
  --injection policy|webhook  which path injects. policy (the default in the embedded cluster): the injection
                     MutatingAdmissionPolicy injects the sets it can with no webhook call, pod-inject the pods it
                     marks; webhook: pod-inject for every pod. With --kubeconfig the default is policy where the
                     cluster serves admissionregistration.k8s.io/v1 MutatingAdmissionPolicy (Kubernetes 1.36 or
                     later), else webhook (docs/INJECTION-POLICY.md)
  --no-controller-manager  embedded cluster only: run no kube-controller-manager (no Deployment, ReplicaSet,
                     StatefulSet, Job or garbage collection runs; pods are made by hand), as envtest does
  --help             this text
The port is checked before anything starts. SIGINT, SIGTERM, SIGHUP or the death of the parent process
(npm) stop the server and an embedded cluster, and remove its data and .cache/local-cluster/kubeconfig.`;

export class OptionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OptionsError';
  }
}

const TEST_KUBELET_FLAG = '--test-kubelet';
const PULL_DELAY_FLAG = '--test-kubelet-pull-delay';
const RECONCILE_FLAG = '--reconcile';
const SORT_FLAG = '--sort-sidecars-by-name';
const NO_CONTROLLER_MANAGER_FLAG = '--no-controller-manager';

/** Up to an hour: a longer delay is a typo, and would look like a hang. */
function delayOf(flag: string, what: string, text: string): number {
  const ms = /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
  if (!(ms <= 3_600_000)) throw new OptionsError(`${flag}= takes ${what} in milliseconds (0-3600000), got ${JSON.stringify(text)}`);
  return ms;
}

const VALUE_FLAGS = ['--port', '--kubeconfig', '--tls-dir', '--tls-cert', '--tls-key', '--injection'] as const;

export function parseServerOptions(argv: readonly string[], defaults: { tlsDir: string }): ServerOptions {
  const values = new Map<string, string>();
  let testKubelet: ServerOptions['testKubelet'];
  let pullDelayMs: number | undefined;
  let reconcile = false;
  let sortSidecarsByName = false;
  let noControllerManager = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === SORT_FLAG) {
      if (sortSidecarsByName) throw new OptionsError(`${SORT_FLAG} given twice`);
      sortSidecarsByName = true;
      continue;
    }
    if (arg === NO_CONTROLLER_MANAGER_FLAG) {
      if (noControllerManager) throw new OptionsError(`${NO_CONTROLLER_MANAGER_FLAG} given twice`);
      noControllerManager = true;
      continue;
    }
    if (arg === RECONCILE_FLAG) {
      if (reconcile) throw new OptionsError(`${RECONCILE_FLAG} given twice`);
      reconcile = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (flag === TEST_KUBELET_FLAG) {
      // Its value is optional, so only the `=` form takes one: the next argument is never consumed.
      if (testKubelet !== undefined) throw new OptionsError(`${TEST_KUBELET_FLAG} given twice`);
      testKubelet = { readyDelayMs: eq > 0 ? delayOf(TEST_KUBELET_FLAG, 'a readiness delay', arg.slice(eq + 1)) : DEFAULT_TEST_KUBELET_READY_DELAY_MS };
      continue;
    }
    if (flag === PULL_DELAY_FLAG) {
      if (pullDelayMs !== undefined) throw new OptionsError(`${PULL_DELAY_FLAG} given twice`);
      if (eq < 0) throw new OptionsError(`${PULL_DELAY_FLAG}= needs a pull delay in milliseconds`);
      pullDelayMs = delayOf(PULL_DELAY_FLAG, 'a pull delay', arg.slice(eq + 1));
      continue;
    }
    if (!(VALUE_FLAGS as readonly string[]).includes(flag)) throw new OptionsError(`unknown option ${arg}`);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === '') throw new OptionsError(`${flag} needs a value`);
    if (values.has(flag)) throw new OptionsError(`${flag} given twice`);
    values.set(flag, value);
  }
  const portText = values.get('--port') ?? '8443';
  const port = /^\d+$/.test(portText) ? Number(portText) : Number.NaN;
  if (!Number.isInteger(port) || port > 65535) throw new OptionsError(`--port must be 0-65535, got ${portText}`);
  const tlsCert = values.get('--tls-cert');
  const tlsKey = values.get('--tls-key');
  if ((tlsCert === undefined) !== (tlsKey === undefined)) throw new OptionsError('--tls-cert and --tls-key go together');
  const kubeconfig = values.get('--kubeconfig');
  if (pullDelayMs !== undefined) {
    if (testKubelet === undefined) throw new OptionsError(`${PULL_DELAY_FLAG} goes with ${TEST_KUBELET_FLAG}`);
    testKubelet = { ...testKubelet, pullDelayMs };
  }
  if (reconcile && kubeconfig === undefined) throw new OptionsError(`${RECONCILE_FLAG} goes with --kubeconfig FILE (the embedded cluster is always reconciled)`);
  const injection = values.get('--injection');
  if (injection !== undefined && injection !== 'webhook' && injection !== 'policy') throw new OptionsError(`--injection must be policy or webhook, not ${injection}`);
  return {
    ...(injection !== undefined ? { injection } : {}),
    port,
    tlsDir: values.get('--tls-dir') ?? defaults.tlsDir,
    ...(kubeconfig !== undefined ? { kubeconfig } : {}),
    ...(reconcile ? { reconcile } : {}),
    ...(tlsCert !== undefined && tlsKey !== undefined ? { tlsCert, tlsKey } : {}),
    ...(testKubelet !== undefined ? { testKubelet } : {}),
    ...(sortSidecarsByName ? { sortSidecarsByName } : {}),
    ...(noControllerManager ? { noControllerManager } : {}),
  };
}
