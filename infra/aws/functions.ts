/**
 * The four functions the stack deploys and what each one needs: the trigger,
 * the secrets it reads, its environment. The environment and the IAM grants
 * both come from functionAccess, so a function may read a secret exactly
 * when its environment names it.
 */
import { ENV_REVISION_NAMESPACE } from '../../lib/adapters/revision-namespace.ts';
import { ENV_ROLLOUT_STALL_MS } from '../../lib/status-sync/rollout-state.ts';
import { ENV_REPAIR_MAX_EVICTIONS } from '../../lib/status-sync/repair-step.ts';
import { ENV_ALLOWED_CALLER_CIDRS, ENV_ROTATION_PERIOD_MS, ENV_SECRET_ARN } from '../../lib/auth/caller-config.ts';
import { ENV_METRICS_NAMESPACE } from '../../lib/metrics/catalogue.ts';
import { FUNCTION_DESCRIPTORS, readsCluster, type FunctionDescriptor, type FunctionName, type ListedDescriptor } from '../../lib/webhooks/descriptors.ts';
import type { ClusterCredentials } from './config.ts';

/** One function per descriptor (lib/webhooks/descriptors.ts), then the reconciler. */
export const STACK_FUNCTIONS: readonly StackFunctionName[] = [...FUNCTION_DESCRIPTORS.map((d) => d.name), 'status-sync'];
export type StackFunctionName = FunctionName | 'status-sync';

/**
 * The cluster variables of functions/shared/cluster.ts, spelt out because
 * that module loads client-node; test/infra checks that the two agree.
 */
export const CLUSTER_ENV = {
  kubeconfigSecretArn: 'KUBECONFIG_SECRET_ARN',
  eksClusterName: 'EKS_CLUSTER_NAME',
  eksEndpoint: 'EKS_ENDPOINT',
  eksCaData: 'EKS_CA_DATA',
} as const;

export interface FunctionSpec {
  /** Construct id, and the prefix of its outputs (PascalCase of the name). */
  id: string;
  description: string;
  /** An admission webhook behind a Function URL, or the scheduled reconciler. */
  trigger: 'function-url' | 'schedule';
  readsWebhookSecret: boolean;
  /** Rotates the webhook secret (reads and writes it) when rotation is on. */
  rotatesWebhookSecret: boolean;
  /** Reads the cluster, so it needs the cluster credentials. */
  readsCluster: boolean;
  /**
   * Reads it through the cached sources of functions/shared/cluster.ts, which
   * take the Kubernetes client settings; the reconciler reads uncached with
   * its own timeouts.
   */
  takesKubeSettings: boolean;
}

/** A function the API server calls; `whenItFails` is what a failed or throttled call costs the cluster (its alarms say it). */
type AdmissionSpec = FunctionSpec & { trigger: 'function-url'; whenItFails: string };

const WHEN_IT_FAILS: Readonly<Record<FunctionDescriptor['caller']['in'], string>> = {
  MutatingWebhookConfiguration: "the API server applied the webhook's failurePolicy",
  ValidatingWebhookConfiguration: "the API server applied the webhook's failurePolicy",
  // A conversion webhook has no failurePolicy: the request needing the conversion fails.
  CustomResourceDefinition: 'the API server could not convert SidecarSets, so reads and writes in the version it does not store failed',
};

const ADMISSION_KIND: Readonly<Record<FunctionDescriptor['caller']['in'], string>> = {
  MutatingWebhookConfiguration: 'mutating admission',
  ValidatingWebhookConfiguration: 'validating admission',
  CustomResourceDefinition: 'CRD conversion',
};

/** What each function the API server calls is, opening its Lambda description ("… webhook"). */
const TITLES: Readonly<Record<FunctionName, string>> = {
  'sidecarset-default': 'SidecarSet defaulting webhook',
  'sidecarset-validate': 'SidecarSet validating webhook',
  'pod-inject': 'Pod sidecar injection webhook',
  'pod-change': 'Pod change trigger webhook; pod-eviction webhook',
  'sidecarset-convert': 'SidecarSet CRD conversion webhook',
};

/** A function the API server calls, as its descriptor says: behind a Function URL, with the cluster exactly when it reads it. */
function calledFunctionSpec(descriptor: ListedDescriptor): AdmissionSpec {
  const cluster = readsCluster(descriptor);
  return {
    id: descriptor.name.split('-').map((part) => `${part.charAt(0).toUpperCase()}${part.slice(1)}`).join(''),
    description: `${TITLES[descriptor.name]} (${ADMISSION_KIND[descriptor.caller.in]}, Function URL)`,
    trigger: 'function-url',
    whenItFails: WHEN_IT_FAILS[descriptor.caller.in],
    readsWebhookSecret: true,
    rotatesWebhookSecret: false,
    readsCluster: cluster,
    // Every cluster-reading webhook reads through the cached sources.
    takesKubeSettings: cluster,
  };
}

export const FUNCTION_SPECS: Readonly<Record<FunctionName, AdmissionSpec> & Record<'status-sync', FunctionSpec>> = {
  ...(Object.fromEntries(FUNCTION_DESCRIPTORS.map((d) => [d.name, calledFunctionSpec(d)])) as Record<FunctionName, AdmissionSpec>),
  'status-sync': {
    id: 'StatusSync',
    description: 'SidecarSet status reconciler (EventBridge schedule)',
    trigger: 'schedule',
    readsWebhookSecret: false,
    rotatesWebhookSecret: true,
    readsCluster: true,
    takesKubeSettings: false,
  },
};

/**
 * The Kubernetes identity a cluster-reading function runs as (infra/k8s/rbac.yaml):
 * the webhooks share the read-only group, status-sync is the writer, whose
 * exact username the pod-writes ValidatingAdmissionPolicy matches.
 */
export interface KubernetesIdentity {
  username: string;
  group: string;
}

export const WEBHOOKS_IDENTITY: KubernetesIdentity = { username: 'sidecarset-webhooks', group: 'sidecarset-webhooks' };
export const STATUS_SYNC_IDENTITY: KubernetesIdentity = { username: 'sidecarset-status-sync', group: 'sidecarset-status-sync' };

/** Which identity a function gets: the writer for the reconciler, the reader for every webhook. */
export function kubernetesIdentity(spec: FunctionSpec): KubernetesIdentity {
  return spec.trigger === 'schedule' ? STATUS_SYNC_IDENTITY : WEBHOOKS_IDENTITY;
}

/** What the stack hands its functions: the caller secret and the way to the cluster. */
export interface StackInputs {
  webhookSecretArn: string;
  /** The kubeconfig secret's ARN, or the EKS settings (no secret). */
  cluster: { kind: 'kubeconfig-secret'; secretArn: string; statusSyncSecretArn: string } | Extract<ClusterCredentials, { kind: 'eks' }>;
  /** Kubernetes client settings for the functions that take them, by variable name. */
  kubeSettings: Readonly<Record<string, string>>;
  /** The caller network allowlist for the Function URLs, when there is one. */
  allowedCallerCidrs?: string | undefined;
  /** How often the webhook secret is rotated, in hours; 0 never. */
  webhookSecretRotationHours: number;
  /** Where the SidecarSets' ControllerRevisions live. */
  revisionNamespace: string;
  /** The CloudWatch namespace every function writes its metrics to. */
  metricsNamespace: string;
  /** How long a rollout's updated pods may stay unavailable before it is reported stalled (status-sync's ROLLOUT_STALL_MS), in seconds. */
  rolloutStallSeconds?: number;
  /** How many uninjected pods a resync may try to evict (status-sync's REPAIR_MAX_EVICTIONS_PER_RESYNC). */
  repairMaxEvictionsPerResync?: number;
}

export interface FunctionAccess {
  /** The function's environment: secret ARNs (never values: those are read once per cold start) and settings. */
  environment: Record<string, string>;
  /** The secrets it may read (secretsmanager:GetSecretValue). */
  secretArns: string[];
  /** The secrets it may also write (secretsmanager:PutSecretValue): the webhook secret, for the rotator only. */
  writableSecretArns: string[];
}

/** One function's environment and the secrets it may read, from one place. */
export function functionAccess(spec: FunctionSpec, inputs: StackInputs): FunctionAccess {
  // Every function writes metrics; the dashboard and alarms read the same namespace.
  const environment: Record<string, string> = { [ENV_METRICS_NAMESPACE]: inputs.metricsNamespace };
  const secretArns: string[] = [];
  const writableSecretArns: string[] = [];
  const rotates = spec.rotatesWebhookSecret && inputs.webhookSecretRotationHours > 0;
  if (spec.readsWebhookSecret || rotates) {
    environment[ENV_SECRET_ARN] = inputs.webhookSecretArn;
    secretArns.push(inputs.webhookSecretArn);
  }
  if (rotates) {
    environment[ENV_ROTATION_PERIOD_MS] = String(inputs.webhookSecretRotationHours * 3_600_000);
    writableSecretArns.push(inputs.webhookSecretArn);
  }
  if (spec.trigger === 'function-url' && inputs.allowedCallerCidrs !== undefined) environment[ENV_ALLOWED_CALLER_CIDRS] = inputs.allowedCallerCidrs;
  if (spec.trigger === 'schedule' && inputs.rolloutStallSeconds !== undefined) environment[ENV_ROLLOUT_STALL_MS] = String(inputs.rolloutStallSeconds * 1000);
  if (spec.trigger === 'schedule' && inputs.repairMaxEvictionsPerResync !== undefined) environment[ENV_REPAIR_MAX_EVICTIONS] = String(inputs.repairMaxEvictionsPerResync);
  if (spec.readsCluster) {
    const { cluster } = inputs;
    if (cluster.kind === 'kubeconfig-secret') {
      // Each identity its own credential: a webhook never holds the writer's.
      const kubeconfig = kubernetesIdentity(spec) === STATUS_SYNC_IDENTITY ? cluster.statusSyncSecretArn : cluster.secretArn;
      environment[CLUSTER_ENV.kubeconfigSecretArn] = kubeconfig;
      secretArns.push(kubeconfig);
    } else {
      // The token is made from the role's own credentials (a presigned sts:GetCallerIdentity, which needs no IAM grant).
      environment[CLUSTER_ENV.eksClusterName] = cluster.clusterName;
      environment[CLUSTER_ENV.eksEndpoint] = cluster.endpoint;
      environment[CLUSTER_ENV.eksCaData] = cluster.caData;
    }
    // The webhooks read pinned revisions there, the reconciler writes them: one namespace for all.
    environment[ENV_REVISION_NAMESPACE] = inputs.revisionNamespace;
  }
  if (spec.takesKubeSettings) Object.assign(environment, inputs.kubeSettings);
  return { environment, secretArns, writableSecretArns };
}
