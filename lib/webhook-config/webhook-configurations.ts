/**
 * The Mutating- and ValidatingWebhookConfiguration that point the API server
 * at the functions, rendered for one deployment (Lambda Function URLs or the
 * local server). Choices, with their reasons:
 *
 * The webhooks are the descriptors' (lib/webhooks/descriptors.ts): each
 * function registered in a webhook configuration gets one webhook there,
 * with the rules, failure policy, reinvocation policy and side effects its
 * descriptor gives (and the reasons for them), and any further webhook its
 * descriptor adds at the same URL (pod-change's pod-eviction). Common to all:
 *
 * - `matchPolicy: Equivalent`, AdmissionReview v1, and the deployment's
 *   timeout.
 * - A webhook that skips excluded namespaces is never sent objects of the
 *   system namespaces, the deployment's extra excluded ones, or namespaces
 *   labelled with the opt-out label.
 */
import { isObject, objectOf } from '../kube/json.ts';
import { FUNCTION_DESCRIPTORS, type FailurePolicy, type NamedWebhook, type WebhookRegistration } from '../webhooks/descriptors.ts';
import type { AdmissionFunctionName } from '../webhooks/registry.ts';
import { POD_INJECT_MATCH_CONDITIONS } from './pod-inject-conditions.ts';

export const WEBHOOK_CONFIGURATION_NAME = 'serverless-sidecarset';
export const OPT_OUT_LABEL = 'sidecarset.kruise.io/injection';
export const OPT_OUT_VALUE = 'disabled';
export const SYSTEM_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease'] as const;

export type { FailurePolicy };

export interface WebhookTarget {
  /** The https URL the API server calls, including the secret path segment. */
  url: string;
}

export interface WebhookRenderOptions {
  targets: Readonly<Record<AdmissionFunctionName, WebhookTarget>>;
  /** PEM of the CA that signed the serving certificate; omitted for publicly trusted certificates (Function URLs). */
  caPem?: string;
  /** The failure policy of the webhooks whose descriptor leaves it to the deployment (pod-inject); `Fail` when absent. */
  podFailurePolicy?: FailurePolicy;
  /** 1-30 seconds; the API server's default is 10. */
  timeoutSeconds?: number;
  /** Extra namespaces never sent to the pod webhook (e.g. where the functions' own tooling runs). */
  excludedNamespaces?: readonly string[];
  /**
   * Which path injects (docs/INJECTION-POLICY.md): `webhook` (the default) calls pod-inject for every pod;
   * `policy` calls it only for the pods the injection policy marked or could not vouch for (podInjectMatchConditions).
   */
  injection?: InjectionMode;
}

export type InjectionMode = 'webhook' | 'policy';

/** The namespaces whose objects a webhook that skips excluded namespaces (and the injection policy) is sent. */
export function injectableNamespaces(excluded: readonly string[]): Record<string, unknown> {
  return {
    matchExpressions: [
      { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: excluded },
      { key: OPT_OUT_LABEL, operator: 'NotIn', values: [OPT_OUT_VALUE] },
    ],
  };
}

/** Invalid render options. */
export class ManifestOptionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestOptionsError';
  }
}

function clientConfig(target: WebhookTarget, caPem: string | undefined): Record<string, unknown> {
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    throw new ManifestOptionsError(`webhook URL ${JSON.stringify(target.url)} is not a URL`);
  }
  // The API server's own rules for clientConfig.url.
  if (url.protocol !== 'https:') throw new ManifestOptionsError(`webhook URL ${target.url} must be https`);
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ManifestOptionsError(`webhook URL ${url.origin}${url.pathname.replace(/\/[^/]+$/, '/…')} may not carry a query, fragment or user info`);
  }
  return caPem === undefined ? { url: target.url } : { url: target.url, caBundle: Buffer.from(caPem).toString('base64') };
}

/** A descriptor of a function the API server calls through a webhook configuration (the conversion function's caller is the CRD). */
type Registered = Extract<(typeof FUNCTION_DESCRIPTORS)[number], { answers: 'AdmissionReview' }>;

/** One webhook, its fields in the order the API server prints them. */
function webhookOf(name: string, caller: WebhookRegistration | NamedWebhook, client: Record<string, unknown>, options: WebhookRenderOptions, timeoutSeconds: number, excluded: readonly string[]): Record<string, unknown> {
  return {
    name: `${name}.sidecarset.kruise.io`,
    clientConfig: client,
    rules: caller.rules,
    failurePolicy: caller.failurePolicy === 'deployment' ? (options.podFailurePolicy ?? 'Fail') : caller.failurePolicy,
    ...(caller.reinvocationPolicy !== undefined ? { reinvocationPolicy: caller.reinvocationPolicy } : {}),
    ...(caller.skipsExcludedNamespaces ? { namespaceSelector: injectableNamespaces(excluded) } : {}),
    sideEffects: caller.sideEffects,
    admissionReviewVersions: ['v1'],
    // A webhook's own timeout is a bound, never raised by the deployment's.
    timeoutSeconds: caller.timeoutSeconds === undefined ? timeoutSeconds : Math.min(caller.timeoutSeconds, timeoutSeconds),
    matchPolicy: 'Equivalent',
    ...(caller.matchConditions !== undefined ? { matchConditions: caller.matchConditions } : {}),
    ...(name === 'pod-inject' && options.injection === 'policy' ? { matchConditions: POD_INJECT_MATCH_CONDITIONS } : {}),
  };
}

/** A function's webhooks: its own, then those its descriptor adds at the same URL (alsoAs). */
function webhooksOf(descriptor: Registered, options: WebhookRenderOptions, timeoutSeconds: number, excluded: readonly string[]): Record<string, unknown>[] {
  const { caller } = descriptor;
  const client = clientConfig(options.targets[descriptor.name], options.caPem);
  const further = (caller.alsoAs ?? []).map((named) => webhookOf(named.name, named, client, options, timeoutSeconds, excluded));
  return [webhookOf(descriptor.name, caller, client, options, timeoutSeconds, excluded), ...further];
}

/** The descriptors registered in one webhook configuration, in the list's order. */
export function registeredIn(kind: WebhookRegistration['in']): Registered[] {
  return FUNCTION_DESCRIPTORS.filter((d): d is Registered => d.caller.in === kind);
}

/** The names of the webhooks a configuration of this kind is rendered with (the doctor checks none is missing). */
export function webhookNamesIn(kind: WebhookRegistration['in']): string[] {
  return registeredIn(kind).flatMap((d) => [d.name, ...(d.caller.alsoAs ?? []).map((w) => w.name)]).map((n) => `${n}.sidecarset.kruise.io`);
}

/** A namespace's name: a DNS-1123 label. */
const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The namespaces never sent to pod-inject: the system ones and the deployment's extra ones, each once.
 * @throws ManifestOptionsError for a name that cannot be a namespace's.
 */
export function excludedNamespaces(extra: readonly string[] = []): string[] {
  const bad = extra.find((n) => !NAMESPACE_NAME.test(n));
  if (bad !== undefined) throw new ManifestOptionsError(`${JSON.stringify(bad)} cannot be a namespace's name (lowercase letters, digits and '-', at most 63, starting and ending alphanumeric)`);
  return [...new Set([...SYSTEM_NAMESPACES, ...extra])];
}

/** The eviction policy's name in infra/k8s/rbac.yaml, and its variable naming the namespaces kept from pod-inject. */
export const EVICTION_POLICY_NAME = 'sidecarset-status-sync-evictions';
const EXCLUDED_VARIABLE = 'excludedNamespaces';

/**
 * The RBAC objects with the eviction policy's excluded namespaces set to
 * `excluded` (a CEL list of string literals: namespace names are DNS
 * labels, nothing to escape), so the reconciler may evict in no namespace
 * the webhook configurations keep from pod-inject.
 * @throws ManifestOptionsError when the policy or its variable is missing (a changed rbac.yaml).
 */
export function withEvictionNamespaces(objects: readonly unknown[], excluded: readonly string[]): unknown[] {
  type Variable = { name: string; expression: string };
  const isPolicy = (object: unknown): object is { spec: { variables: Variable[] } } & Record<string, unknown> =>
    isObject(object) && object.kind === 'ValidatingAdmissionPolicy' && objectOf(object.metadata)?.name === EVICTION_POLICY_NAME && Array.isArray(objectOf(object.spec)?.variables);
  const policy = objects.find(isPolicy);
  if (policy === undefined || !policy.spec.variables.some((v) => v.name === EXCLUDED_VARIABLE)) {
    throw new ManifestOptionsError(`rbac.yaml has no ValidatingAdmissionPolicy ${EVICTION_POLICY_NAME} with a variable ${EXCLUDED_VARIABLE}`);
  }
  const expression = `[${excluded.map((n) => `'${n}'`).join(', ')}]`;
  const variables = policy.spec.variables.map((v) => (v.name === EXCLUDED_VARIABLE ? { ...v, expression } : v));
  return objects.map((object) => (object === policy ? { ...policy, spec: { ...policy.spec, variables } } : object));
}

/** Both webhook configurations, as API objects: one webhook per descriptor registered in each, and those it adds (alsoAs). */
export function renderWebhookConfigurations(options: WebhookRenderOptions): Record<string, unknown>[] {
  const timeoutSeconds = options.timeoutSeconds ?? 10;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 30) {
    throw new ManifestOptionsError(`timeoutSeconds must be an integer from 1 to 30, got ${timeoutSeconds}`);
  }
  const excluded = excludedNamespaces(options.excludedNamespaces);
  const metadata = { name: WEBHOOK_CONFIGURATION_NAME, labels: { 'app.kubernetes.io/part-of': 'serverless-sidecarset' } };
  return (['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'] as const).map((kind) => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata,
    webhooks: registeredIn(kind).flatMap((descriptor) => webhooksOf(descriptor, options, timeoutSeconds, excluded)),
  }));
}
