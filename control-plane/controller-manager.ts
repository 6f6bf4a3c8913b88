/**
 * kube-controller-manager for the embedded cluster (and the Kruise e2e run),
 * built from k8s.io/kubernetes at the version
 * control-plane/tools/kube-controller-manager/go.mod pins (the API
 * server's), cached as every Go tool is (go-tool.ts), and its command line.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubernetesLdflags } from './build.ts';
import { ensureGoTool, type GoTool } from './go-tool.ts';

const KUBE_CONTROLLER_MANAGER: GoTool = {
  name: 'kube-controller-manager',
  moduleDir: join(dirname(fileURLToPath(import.meta.url)), 'tools', 'kube-controller-manager'),
  files: ['go.mod', 'go.sum'],
  versionOf: 'k8s.io/kubernetes',
  packagePath: 'k8s.io/kubernetes/cmd/kube-controller-manager',
  command: ['build'],
  ldflags: kubernetesLdflags,
};

let pending: Promise<{ path: string; version: string }> | undefined;

/** The binary, built only when not cached; one build per process however many callers ask at once. */
export function ensureKubeControllerManager(log: (line: string) => void): Promise<{ path: string; version: string }> {
  pending ??= ensureGoTool(KUBE_CONTROLLER_MANAGER, log).catch((error: unknown) => {
    pending = undefined;
    throw error;
  });
  return pending;
}

/**
 * What the embedded cluster runs: Deployments make ReplicaSets make pods,
 * StatefulSets, Jobs and CronJobs make theirs, owners' deletions reach what
 * they own, PodDisruptionBudgets count healthy pods, each namespace gets its
 * `default` ServiceAccount and the kube-root-ca.crt ConfigMap, and deleted
 * namespaces are emptied. Not the pod garbage collector: the test kubelet
 * binds no pod to a node, and it deletes unbound terminating pods itself.
 */
export const EMBEDDED_CONTROLLERS = [
  'deployment-controller',
  'replicaset-controller',
  'statefulset-controller',
  'job-controller',
  'cronjob-controller',
  'ttl-after-finished-controller',
  'garbage-collector-controller',
  'disruption-controller',
  'namespace-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'root-ca-certificate-publisher-controller',
  'validatingadmissionpolicy-status-controller',
] as const;

export interface ControllerManagerFlags {
  kubeconfig: string;
  controllers: readonly string[];
  /** The key the API server verifies service-account tokens with: the token controller signs with it. */
  serviceAccountKeyFile?: string;
  /** The CA put in tokens' secrets and kube-root-ca.crt ConfigMaps. */
  rootCaFile?: string;
}

/** Its flags: only the controllers named, no leader election (it is alone), nothing served (bound to loopback were it ever), one identity. */
export function controllerManagerArgs(flags: ControllerManagerFlags): string[] {
  return [
    `--kubeconfig=${flags.kubeconfig}`,
    `--controllers=${flags.controllers.join(',')}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    '--secure-port=0',
    '--use-service-account-credentials=false',
    '--authentication-skip-lookup=true',
    ...(flags.serviceAccountKeyFile !== undefined ? [`--service-account-private-key-file=${flags.serviceAccountKeyFile}`] : []),
    ...(flags.rootCaFile !== undefined ? [`--root-ca-file=${flags.rootCaFile}`] : []),
  ];
}
