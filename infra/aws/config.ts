/**
 * The stack's settings, read from CDK context values (`-c key=value` on the
 * command line, cdk.json's "context", or App props in tests) and checked
 * before any resource is made, so that a typo fails synth with a message
 * naming the key instead of failing a deploy, or worse, deploying.
 */
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DEFAULT_MAX_LOAD_MS } from '../../lib/adapters/cached-list.ts';
import { ENV_REVISION_NAMESPACE, revisionNamespaceFromEnv } from '../../lib/adapters/revision-namespace.ts';
import { SourceOptionsError } from '../../lib/adapters/kube-sources.ts';
import { CallerNetworkError, parseCallerNetworks } from '../../lib/auth/caller-network.ts';
import { DEFAULT_METRICS_NAMESPACE, ENV_METRICS_NAMESPACE, metricsNamespaceFromEnv } from '../../lib/metrics/catalogue.ts';

/** A context value that cannot be used; synth stops with this message. */
export class ContextError extends Error {
  readonly key: string;
  /** @param howToSet false for a key that must not be set at all. */
  constructor(key: string, problem: string, howToSet = true) {
    super(`context "${key}" ${problem}${howToSet ? ` (set it with -c ${key}=VALUE)` : ''}`);
    this.name = 'ContextError';
    this.key = key;
  }
}

export interface FunctionSettings {
  timeoutSeconds: number;
  memoryMb: number;
  /** Reserved concurrency: a cost cap; undefined leaves the function unreserved. */
  reservedConcurrency: number | undefined;
}

/**
 * How the cluster-reading functions reach the cluster: a kubeconfig in a
 * Secrets Manager secret (the user's, or one created with a placeholder), or
 * on EKS a token made from each function's IAM role, so no long-lived
 * credential is stored at all.
 */
export type ClusterCredentials =
  /** `secretArn`: the webhooks' kubeconfig (read-only identity); `statusSyncSecretArn`: status-sync's (the writer). */
  | { kind: 'kubeconfig-secret'; secretArn: string | undefined; statusSyncSecretArn: string | undefined }
  | { kind: 'eks'; clusterName: string; endpoint: string; caData: string };

export interface StackConfig {
  stackName: string;
  /** The four admission functions share one setting each. */
  admission: FunctionSettings;
  statusSync: FunctionSettings & { rateMinutes: number; /** The queue's consumers at once (the SQS event source's maximum concurrency). */ queueConcurrency: number; /** ROLLOUT_STALL_MS in seconds. */ rolloutStallSeconds: number; /** REPAIR_MAX_EVICTIONS_PER_RESYNC. */ repairMaxEvictionsPerResync: number };
  logRetentionDays: RetentionDays;
  /** Complete ARN of a caller secret the user manages; one is generated when absent. */
  webhookSecretArn: string | undefined;
  cluster: ClusterCredentials;
  /** SNS topic the alarms notify; alarms only show in the console without one. */
  alarmTopicArn: string | undefined;
  /** Kubernetes client settings for the admission functions that read the cluster, as given (unset ones keep the functions' defaults). */
  kubeSettings: Readonly<Record<string, string>>;
  /** Addresses and CIDR blocks that may call the Function URLs at all (normalised, comma-separated); undefined allows any. */
  allowedCallerCidrs: string | undefined;
  /** How often status-sync rotates the webhook secret, in hours; 0 never does. */
  webhookSecretRotationHours: number;
  /** The namespace of the SidecarSets' ControllerRevisions (SIDECARSET_REVISION_NAMESPACE of the functions that read the cluster). */
  revisionNamespace: string;
  /** The CloudWatch namespace of the functions' metrics (METRICS_NAMESPACE), and of the dashboard and alarms that read them. */
  metricsNamespace: string;
  /** How the API server reaches the webhooks: public Function URLs, or a private REST API through a VPC endpoint in the cluster's VPC. */
  ingress: WebhookIngress;
  /** What synth reports as warnings on the stack (a deprecated key in use): usable, but to be changed. */
  warnings: readonly ContextWarning[];
}

/** A context value that works but should be changed; the stack reports it as a CDK warning. */
export interface ContextWarning {
  key: string;
  message: string;
}

/**
 * `url`: a Function URL per admission function (public; the secret path and
 * the optional CIDR allowlist guard it). `private`: one private API Gateway
 * REST API reached only through an interface VPC endpoint (execute-api) made
 * in the cluster's VPC; no Function URL exists.
 */
export type WebhookIngress =
  | { kind: 'url' }
  | { kind: 'private'; vpcId: string; subnetIds: string[]; endpointAccess: EndpointAccess };

/**
 * Who may reach the private ingress's VPC endpoint. `callerSecurityGroupId`
 * (recommended): the stack makes the endpoint's security group, whose only
 * rule admits 443 from that group, a group only the EKS control plane's
 * network interfaces carry (one of the cluster's additional security
 * groups). The cluster security group is no such group: EKS managed node
 * groups carry it too, so any pod could call the endpoint.
 * `securityGroupId`: the user's own group for the endpoint, used as given.
 */
export type EndpointAccess = { callerSecurityGroupId: string } | { securityGroupId: string };

/**
 * Every context key with its default, for errors and documentation.
 * `undefined` defaults mean "absent unless set".
 */
export const CONTEXT_DEFAULTS = {
  stackName: 'ServerlessSidecarSet',
  admissionTimeoutSeconds: 10,
  admissionMemoryMb: 512,
  admissionReservedConcurrency: 20,
  statusSyncRateMinutes: 1,
  statusSyncTimeoutSeconds: 300,
  statusSyncMemoryMb: 512,
  statusSyncReservedConcurrency: 3,
  statusSyncQueueConcurrency: 2,
  rolloutStallSeconds: 60,
  repairMaxEvictionsPerResync: 5,
  logRetentionDays: 30,
  webhookSecretArn: undefined,
  kubeconfigSecretArn: undefined,
  statusSyncKubeconfigSecretArn: undefined,
  eksClusterName: undefined,
  eksEndpoint: undefined,
  eksCaData: undefined,
  alarmTopicArn: undefined,
  kubeApiTimeoutMs: undefined,
  sidecarSetCacheMaxStalenessMs: undefined,
  allowedCallerCidrs: undefined,
  webhookSecretRotationHours: 24,
  revisionNamespace: 'kruise-system',
  metricsNamespace: DEFAULT_METRICS_NAMESPACE,
  webhookIngress: 'url',
  webhookVpcId: undefined,
  webhookSubnetIds: undefined,
  webhookSecurityGroupId: undefined,
  webhookCallerSecurityGroupId: undefined,
} as const;

export type ContextKey = keyof typeof CONTEXT_DEFAULTS;

/** Context keys that become environment variables of the cluster-reading admission functions (read by lib/adapters/kube-sources.ts). */
export const KUBE_SETTING_VARIABLES = {
  kubeApiTimeoutMs: 'KUBE_API_TIMEOUT_MS',
  sidecarSetCacheMaxStalenessMs: 'SIDECARSET_CACHE_MAX_STALENESS_MS',
} as const satisfies Partial<Record<ContextKey, string>>;

/**
 * Keys that once meant something and no longer do, with why: synth refuses
 * them rather than deploy a setting that is silently ignored.
 */
export const RETIRED_CONTEXT_KEYS: Readonly<Record<string, string>> = {
  sidecarSetCacheTtlMs:
    'is no longer used: every review reads the SidecarSets fresh from the API server, and a recent list is served only while the API server cannot be read (sidecarSetCacheMaxStalenessMs); remove it',
};

/**
 * Keys that were renamed, by their old name: the old one is still read for
 * one release (docs/UPGRADING.md), as the functions read a renamed
 * environment variable (lib/adapters/renamed-variable.ts).
 */
export const RENAMED_CONTEXT_KEYS = {
  repairMaxEvictionsPerPass: 'repairMaxEvictionsPerResync',
} as const satisfies Readonly<Record<string, ContextKey>>;

export type DeprecatedContextKey = keyof typeof RENAMED_CONTEXT_KEYS;

/** Reads one context value; App#node.tryGetContext in the app, a map in tests. */
export type ContextReader = (key: string) => unknown;

/** Absent, null and '' all mean "use the default": the CLI can only pass strings. */
function raw(read: ContextReader, key: ContextKey | DeprecatedContextKey): unknown {
  const value = read(key);
  return value === undefined || value === null || value === '' ? undefined : value;
}

/**
 * A whole number from a number or a string of digits (the CLI passes `-c`
 * values as strings, cdk.json may hold numbers). Digits only: "1m" or "1e3"
 * are someone guessing a format.
 */
function wholeNumber(read: ContextReader, key: ContextKey | DeprecatedContextKey, fallback: number, min: number, max: number, unit: string, orElse = ''): number {
  const value = raw(read, key);
  if (value === undefined) return fallback;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ContextError(key, `must be a whole number of ${unit} from ${min} to ${max}${orElse}; got ${JSON.stringify(value)}`);
  }
  return n;
}

/** Reserved concurrency, or "none" for accounts whose concurrency quota leaves nothing to reserve. */
function reservedConcurrency(read: ContextReader, key: ContextKey, fallback: number): number | undefined {
  const value = raw(read, key);
  if (value === 'none') return undefined;
  // Zero would throttle every call: a disabled webhook, never a cost cap.
  return wholeNumber(read, key, fallback, 1, 10_000, 'concurrent executions', ', or "none"');
}

/**
 * A whole number under a renamed key, or under its deprecated name alone,
 * which is then reported in `warnings`. Both set to different numbers is an
 * error naming both: either could be the one meant.
 */
function renamedWholeNumber(read: ContextReader, deprecated: DeprecatedContextKey, warnings: ContextWarning[], ...range: [fallback: number, min: number, max: number, unit: string]): number {
  const key = RENAMED_CONTEXT_KEYS[deprecated];
  const current = raw(read, key) === undefined ? undefined : wholeNumber(read, key, ...range);
  const old = raw(read, deprecated) === undefined ? undefined : wholeNumber(read, deprecated, ...range);
  if (old === undefined) return current ?? range[0];
  if (current === undefined) {
    warnings.push({ key: deprecated, message: `context "${deprecated}" is deprecated: set ${key} instead (the old key is read until the next minor release)` });
    return old;
  }
  if (current !== old) throw new ContextError(key, `is ${current} but ${deprecated}, its deprecated name, is ${old}: unset ${deprecated}`, false);
  return current;
}

/**
 * status-sync's reserved concurrency: room for the queue's consumers and the
 * schedule's resync beside them, or the event source would be throttled.
 */
function statusSyncReserved(read: ContextReader): number | undefined {
  const reserved = reservedConcurrency(read, 'statusSyncReservedConcurrency', CONTEXT_DEFAULTS.statusSyncReservedConcurrency);
  const consumers = wholeNumber(read, 'statusSyncQueueConcurrency', CONTEXT_DEFAULTS.statusSyncQueueConcurrency, 2, 1000, 'concurrent consumers');
  if (reserved !== undefined && reserved < consumers + 1) {
    throw new ContextError('statusSyncReservedConcurrency', `must be at least statusSyncQueueConcurrency + 1 (${consumers + 1}: the queue's consumers and the schedule's resync), or "none"; got ${reserved}`);
  }
  return reserved;
}

function optionalString(read: ContextReader, key: ContextKey): string | undefined {
  const value = raw(read, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ContextError(key, `must be a string; got ${JSON.stringify(value)}`);
  return value.trim();
}

/**
 * A complete secret ARN, with the 6-character suffix Secrets Manager adds:
 * the IAM grant is then exactly that secret, where a partial ARN would need
 * a wildcard suffix.
 */
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/;
const TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/;

function arn(read: ContextReader, key: ContextKey, pattern: RegExp, what: string): string | undefined {
  const value = optionalString(read, key);
  if (value !== undefined && !pattern.test(value)) throw new ContextError(key, `must be ${what}; got ${JSON.stringify(value)}`);
  return value;
}

const secretArn = (read: ContextReader, key: ContextKey) =>
  arn(read, key, SECRET_ARN, 'the complete ARN of a Secrets Manager secret (ending in its 6-character suffix)');

/** CloudWatch Logs accepts only these retention periods. */
const RETENTION_DAYS = new Map<number, RetentionDays>(
  Object.values(RetentionDays)
    .filter((v): v is RetentionDays => typeof v === 'number' && v !== RetentionDays.INFINITE)
    .map((d) => [d, d]),
);

function retentionDays(read: ContextReader): RetentionDays {
  const key = 'logRetentionDays';
  const days = wholeNumber(read, key, CONTEXT_DEFAULTS.logRetentionDays, 1, 3653, 'days');
  const retention = RETENTION_DAYS.get(days);
  if (retention === undefined) throw new ContextError(key, `must be one of ${[...RETENTION_DAYS.keys()].join(', ')}; got ${days}`);
  return retention;
}

/**
 * The Kubernetes client settings, checked by the functions' own parser so
 * that synth accepts exactly what a cold start accepts. That parser lives
 * beside client-node, which takes about a second to load, so it is loaded
 * only when a setting is given.
 */
async function kubeSettings(read: ContextReader): Promise<{ env: Record<string, string>; apiTimeoutMs: number }> {
  const env: Record<string, string> = {};
  const keyOf: Record<string, ContextKey> = {};
  for (const [key, variable] of Object.entries(KUBE_SETTING_VARIABLES) as [ContextKey, string][]) {
    const value = raw(read, key);
    if (value === undefined) continue;
    if (typeof value !== 'number' && typeof value !== 'string') throw new ContextError(key, `must be a number; got ${JSON.stringify(value)}`);
    env[variable] = String(value).trim();
    keyOf[variable] = key;
  }
  if (Object.keys(env).length === 0) return { env, apiTimeoutMs: DEFAULT_MAX_LOAD_MS };
  const { sourceOptionsFromEnv, SourceOptionsError } = await import('../../lib/adapters/kube-sources.ts');
  try {
    return { env, apiTimeoutMs: sourceOptionsFromEnv(env).apiTimeoutMs };
  } catch (error) {
    const key = error instanceof SourceOptionsError ? keyOf[error.variable] : undefined;
    if (error instanceof SourceOptionsError && key !== undefined) {
      throw new ContextError(key, error.message.slice(error.variable.length + 1));
    }
    throw error;
  }
}

const EKS_KEYS = ['eksClusterName', 'eksEndpoint', 'eksCaData'] as const;
const EKS_CLUSTER_NAME = /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/;

/**
 * The cluster credentials: EKS when its settings are given (all three, as
 * `aws eks describe-cluster` shows them), else the kubeconfig secret.
 */
function clusterCredentials(read: ContextReader): ClusterCredentials {
  const kubeconfigSecretArn = secretArn(read, 'kubeconfigSecretArn');
  const statusSyncSecretArn = secretArn(read, 'statusSyncKubeconfigSecretArn');
  const given = EKS_KEYS.filter((key) => raw(read, key) !== undefined);
  if (given.length === 0) return { kind: 'kubeconfig-secret', secretArn: kubeconfigSecretArn, statusSyncSecretArn };
  if (kubeconfigSecretArn !== undefined || statusSyncSecretArn !== undefined) {
    throw new ContextError(kubeconfigSecretArn !== undefined ? 'kubeconfigSecretArn' : 'statusSyncKubeconfigSecretArn', `cannot be set together with ${given.join(', ')}: the functions reach the cluster either with a kubeconfig or with their EKS role`);
  }
  const missing = EKS_KEYS.find((key) => !given.includes(key));
  if (missing !== undefined) throw new ContextError(missing, `must be set too when ${given.join(', ')} is (EKS needs the cluster's name, endpoint and CA data)`);
  const clusterName = optionalString(read, 'eksClusterName') ?? '';
  if (!EKS_CLUSTER_NAME.test(clusterName)) throw new ContextError('eksClusterName', `must be an EKS cluster name; got ${JSON.stringify(clusterName)}`);
  const endpoint = optionalString(read, 'eksEndpoint') ?? '';
  if (!URL.canParse(endpoint) || new URL(endpoint).protocol !== 'https:') {
    throw new ContextError('eksEndpoint', `must be the cluster's https:// endpoint (aws eks describe-cluster: .cluster.endpoint); got ${JSON.stringify(endpoint)}`);
  }
  const caData = optionalString(read, 'eksCaData') ?? '';
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(caData) || !Buffer.from(caData, 'base64').toString('utf8').includes('-----BEGIN CERTIFICATE-----')) {
    throw new ContextError('eksCaData', 'must be base64 of the cluster CA\'s PEM certificate (aws eks describe-cluster: .cluster.certificateAuthority.data)');
  }
  return { kind: 'eks', clusterName, endpoint, caData };
}

/** The allowlist, checked by the functions' own parser so that synth accepts exactly what a cold start accepts. */
function allowedCallerCidrs(read: ContextReader): string | undefined {
  const key = 'allowedCallerCidrs';
  const value = raw(read, key);
  if (value === undefined) return undefined;
  const text = Array.isArray(value) && value.every((v) => typeof v === 'string') ? value.join(',') : value;
  if (typeof text !== 'string') throw new ContextError(key, `must be a comma-separated list of addresses and CIDR blocks; got ${JSON.stringify(value)}`);
  try {
    return parseCallerNetworks(text, key)?.entries.join(',');
  } catch (error) {
    if (error instanceof CallerNetworkError) throw new ContextError(key, error.message.slice(key.length + 2));
    throw error;
  }
}

/** The revision namespace, checked by the functions' own parser so that synth accepts exactly what a cold start accepts. */
function revisionNamespace(read: ContextReader): string {
  const key = 'revisionNamespace';
  const value = raw(read, key);
  if (value === undefined) return CONTEXT_DEFAULTS.revisionNamespace;
  if (typeof value !== 'string') throw new ContextError(key, `must be a namespace name; got ${JSON.stringify(value)}`);
  try {
    return revisionNamespaceFromEnv({ [ENV_REVISION_NAMESPACE]: value.trim() });
  } catch (error) {
    if (error instanceof SourceOptionsError) throw new ContextError(key, error.message.slice(error.variable.length + 1));
    throw error;
  }
}

/** The metrics namespace, checked by the functions' own parser so that synth accepts exactly what a cold start accepts. */
function metricsNamespace(read: ContextReader): string {
  const key = 'metricsNamespace';
  const value = raw(read, key);
  if (value === undefined) return CONTEXT_DEFAULTS.metricsNamespace;
  if (typeof value !== 'string') throw new ContextError(key, `must be a CloudWatch namespace; got ${JSON.stringify(value)}`);
  try {
    return metricsNamespaceFromEnv({ [ENV_METRICS_NAMESPACE]: value });
  } catch (error) {
    throw new ContextError(key, (error as Error).message.slice(ENV_METRICS_NAMESPACE.length + 1));
  }
}

const PRIVATE_KEYS = ['webhookVpcId', 'webhookSubnetIds'] as const;
/** The endpoint's access: exactly one of the two (see EndpointAccess). */
const ACCESS_KEYS = ['webhookCallerSecurityGroupId', 'webhookSecurityGroupId'] as const;

/** A security group id from the context, or a ContextError naming the key. */
function securityGroupId(read: ContextReader, key: (typeof ACCESS_KEYS)[number]): string {
  const id = optionalString(read, key) ?? '';
  if (!/^sg-[0-9a-f]{8,17}$/.test(id)) throw new ContextError(key, `must be a security group id (sg-…); got ${JSON.stringify(id)}`);
  return id;
}

/** What each value webhookIngress=private needs is. */
const PRIVATE_NEEDS: Readonly<Record<string, string>> = {
  webhookVpcId: 'the cluster\'s VPC id (vpc-…)',
  webhookSubnetIds: 'the subnets for the endpoint, comma-separated (subnet-…)',
  webhookCallerSecurityGroupId: 'a security group only the EKS control plane\'s interfaces carry (sg-…; or webhookSecurityGroupId: your own group for the endpoint)',
};

/** One error naming every missing value of webhookIngress=private, and how to set them all. */
function missingContext(keys: readonly string[]): ContextError {
  const error = new ContextError(keys[0] ?? '', '', false);
  error.message = `context ${keys.map((k) => `"${k}"`).join(', ')} must be set with webhookIngress=private: ${keys.map((k) => `${k}, ${PRIVATE_NEEDS[k] ?? ''}`).join('; ')} (set them with ${keys.map((k) => `-c ${k}=VALUE`).join(' ')})`;
  return error;
}

/**
 * The webhooks' ingress: `url` (the default) or `private`, which needs the
 * cluster's VPC, the subnets to place the endpoint's interfaces in (one per
 * Availability Zone the control plane's interfaces use) and who may reach
 * the endpoint (EndpointAccess).
 */
function webhookIngress(read: ContextReader): WebhookIngress {
  const kind = optionalString(read, 'webhookIngress') ?? CONTEXT_DEFAULTS.webhookIngress;
  const given = [...PRIVATE_KEYS, ...ACCESS_KEYS].filter((key) => raw(read, key) !== undefined);
  if (kind === 'url') {
    if (given.length > 0) throw new ContextError(given[0] ?? 'webhookVpcId', 'is only used with webhookIngress=private; remove it or set webhookIngress=private');
    return { kind: 'url' };
  }
  if (kind !== 'private') throw new ContextError('webhookIngress', `must be "url" (public Function URLs) or "private" (a private REST API through a VPC endpoint); got ${JSON.stringify(kind)}`);
  const access = ACCESS_KEYS.filter((key) => given.includes(key));
  // Every value still missing, at once: one run per missing value is a slow way to learn a list.
  const missing = [...PRIVATE_KEYS.filter((key) => !given.includes(key)), ...(access.length === 0 ? [ACCESS_KEYS[0]] : [])];
  if (missing.length > 1) throw missingContext(missing);
  if (missing[0] !== undefined && missing[0] !== ACCESS_KEYS[0]) throw new ContextError(missing[0], 'must be set with webhookIngress=private (the cluster\'s VPC id and the subnets for the endpoint)');
  if (access.length !== 1) {
    throw new ContextError(
      'webhookCallerSecurityGroupId',
      access.length === 0
        ? 'must be set with webhookIngress=private: a security group only the EKS control plane\'s interfaces carry (an additional security group of the cluster), the only source the endpoint admits (or webhookSecurityGroupId: your own group for the endpoint)'
        : 'and webhookSecurityGroupId cannot both be set: the first makes the endpoint\'s security group, the second is your own',
    );
  }
  const vpcId = optionalString(read, 'webhookVpcId') ?? '';
  if (!/^vpc-[0-9a-f]{8,17}$/.test(vpcId)) throw new ContextError('webhookVpcId', `must be a VPC id (vpc-…); got ${JSON.stringify(vpcId)}`);
  const subnetText = raw(read, 'webhookSubnetIds');
  const subnetIds = (Array.isArray(subnetText) ? subnetText.map(String) : String(subnetText).split(',')).map((id) => id.trim()).filter((id) => id !== '');
  const badSubnet = subnetIds.find((id) => !/^subnet-[0-9a-f]{8,17}$/.test(id));
  if (subnetIds.length === 0 || badSubnet !== undefined) {
    throw new ContextError('webhookSubnetIds', `must be a comma-separated list of subnet ids (subnet-…); got ${JSON.stringify(badSubnet ?? subnetText)}`);
  }
  if (new Set(subnetIds).size !== subnetIds.length) throw new ContextError('webhookSubnetIds', 'names a subnet twice');
  const endpointAccess: EndpointAccess =
    access[0] === 'webhookCallerSecurityGroupId'
      ? { callerSecurityGroupId: securityGroupId(read, 'webhookCallerSecurityGroupId') }
      : { securityGroupId: securityGroupId(read, 'webhookSecurityGroupId') };
  return { kind: 'private', vpcId, subnetIds, endpointAccess };
}

const STACK_NAME = /^[A-Za-z][A-Za-z0-9-]{0,127}$/;

/**
 * The stack's configuration from context values, every one checked.
 * @throws ContextError naming the key, what it must be and what it was.
 */
export async function readStackConfig(read: ContextReader): Promise<StackConfig> {
  const warnings: ContextWarning[] = [];
  for (const [key, why] of Object.entries(RETIRED_CONTEXT_KEYS)) {
    const value: unknown = read(key);
    if (value !== undefined && value !== null && value !== '') throw new ContextError(key, why, false);
  }
  const stackName = optionalString(read, 'stackName') ?? CONTEXT_DEFAULTS.stackName;
  if (!STACK_NAME.test(stackName)) {
    throw new ContextError('stackName', `must start with a letter and hold only letters, digits and '-' (at most 128); got ${JSON.stringify(stackName)}`);
  }
  // The API server waits at most 30 s for a webhook (timeoutSeconds 1-30).
  const admissionTimeoutSeconds = wholeNumber(read, 'admissionTimeoutSeconds', CONTEXT_DEFAULTS.admissionTimeoutSeconds, 1, 30, 'seconds');
  const kube = await kubeSettings(read);
  // A Kubernetes call that outlives the function turns a clean 503 into a
  // Lambda timeout; both reach failurePolicy, but only one says why.
  if (kube.apiTimeoutMs >= admissionTimeoutSeconds * 1000) {
    throw new ContextError(
      'admissionTimeoutSeconds',
      `(${admissionTimeoutSeconds} s) must be longer than the Kubernetes API timeout (kubeApiTimeoutMs, ${kube.apiTimeoutMs} ms), so that a slow API server is answered with a 503 before Lambda cuts the call off`,
    );
  }
  return {
    stackName,
    admission: {
      timeoutSeconds: admissionTimeoutSeconds,
      memoryMb: wholeNumber(read, 'admissionMemoryMb', CONTEXT_DEFAULTS.admissionMemoryMb, 128, 10_240, 'MB'),
      reservedConcurrency: reservedConcurrency(read, 'admissionReservedConcurrency', CONTEXT_DEFAULTS.admissionReservedConcurrency),
    },
    statusSync: {
      // EventBridge rates start at one minute; beyond a day statuses are too stale to be worth showing.
      rateMinutes: wholeNumber(read, 'statusSyncRateMinutes', CONTEXT_DEFAULTS.statusSyncRateMinutes, 1, 1440, 'minutes'),
      timeoutSeconds: wholeNumber(read, 'statusSyncTimeoutSeconds', CONTEXT_DEFAULTS.statusSyncTimeoutSeconds, 1, 900, 'seconds'),
      memoryMb: wholeNumber(read, 'statusSyncMemoryMb', CONTEXT_DEFAULTS.statusSyncMemoryMb, 128, 10_240, 'MB'),
      reservedConcurrency: statusSyncReserved(read),
      // The event source's maximum concurrency starts at 2.
      queueConcurrency: wholeNumber(read, 'statusSyncQueueConcurrency', CONTEXT_DEFAULTS.statusSyncQueueConcurrency, 2, 1000, 'concurrent consumers'),
      rolloutStallSeconds: wholeNumber(read, 'rolloutStallSeconds', CONTEXT_DEFAULTS.rolloutStallSeconds, 1, 86_400, 'seconds'),
      repairMaxEvictionsPerResync: renamedWholeNumber(read, 'repairMaxEvictionsPerPass', warnings, CONTEXT_DEFAULTS.repairMaxEvictionsPerResync, 0, 1000, 'pods'),
    },
    logRetentionDays: retentionDays(read),
    webhookSecretArn: secretArn(read, 'webhookSecretArn'),
    cluster: clusterCredentials(read),
    alarmTopicArn: arn(read, 'alarmTopicArn', TOPIC_ARN, 'the ARN of an SNS topic'),
    kubeSettings: kube.env,
    allowedCallerCidrs: allowedCallerCidrs(read),
    // A year at most; 0 turns rotation off.
    webhookSecretRotationHours: wholeNumber(read, 'webhookSecretRotationHours', CONTEXT_DEFAULTS.webhookSecretRotationHours, 0, 8784, 'hours', ' (0 turns rotation off)'),
    revisionNamespace: revisionNamespace(read),
    metricsNamespace: metricsNamespace(read),
    ingress: webhookIngress(read),
    warnings,
  };
}
