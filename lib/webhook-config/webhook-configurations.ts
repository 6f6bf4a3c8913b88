/**
 * The Mutating- and ValidatingWebhookConfiguration that point the API server
 * at the functions, rendered for one deployment (Lambda Function URLs or the
 * local server). Choices, with their reasons:
 *
 * - SidecarSet defaulting and validation fail closed (`Fail`): a SidecarSet
 *   stored without defaults or hashes, or with a conflict, would inject wrong
 *   sidecars later. Only SidecarSet writes are blocked during an outage.
 * - Pod injection is configurable. `Fail` guarantees every matching pod gets
 *   its sidecars but blocks pod creation in the selected namespaces while the
 *   function is unreachable; `Ignore` keeps pods flowing and creates them
 *   without sidecars (status-sync reports them as not injected).
 * - Pod injection runs with `reinvocationPolicy: IfNeeded`: injection is
 *   idempotent, and a re-run sees containers other webhooks added
 *   (transferEnv, shared volumes).
 * - System namespaces and namespaces labelled with the opt-out label are never
 *   sent to the pod webhook.
 */
import type { AdmissionFunctionName } from '../webhooks/registry.ts';

export const WEBHOOK_CONFIGURATION_NAME = 'serverless-sidecarset';
export const OPT_OUT_LABEL = 'sidecarset.kruise.io/injection';
export const OPT_OUT_VALUE = 'disabled';
export const SYSTEM_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease'] as const;

export type FailurePolicy = 'Fail' | 'Ignore';

export interface WebhookTarget {
  /** The https URL the API server calls, including the secret path segment. */
  url: string;
}

export interface WebhookRenderOptions {
  targets: Readonly<Record<AdmissionFunctionName, WebhookTarget>>;
  /** PEM of the CA that signed the serving certificate; omitted for publicly trusted certificates (Function URLs). */
  caPem?: string;
  podFailurePolicy?: FailurePolicy;
  /** 1-30 seconds; the API server's default is 10. */
  timeoutSeconds?: number;
  /** Extra namespaces never sent to the pod webhook (e.g. where the functions' own tooling runs). */
  excludedNamespaces?: readonly string[];
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

const SIDECARSET_RULE = {
  apiGroups: ['apps.kruise.io'],
  apiVersions: ['v1alpha1'],
  resources: ['sidecarsets'],
  operations: ['CREATE', 'UPDATE'],
  scope: 'Cluster',
};

/** Both webhook configurations, as API objects. */
export function renderWebhookConfigurations(options: WebhookRenderOptions): Record<string, unknown>[] {
  const timeoutSeconds = options.timeoutSeconds ?? 10;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 30) {
    throw new ManifestOptionsError(`timeoutSeconds must be an integer from 1 to 30, got ${timeoutSeconds}`);
  }
  const common = { sideEffects: 'None', admissionReviewVersions: ['v1'], timeoutSeconds, matchPolicy: 'Equivalent' };
  const excluded = [...new Set([...SYSTEM_NAMESPACES, ...(options.excludedNamespaces ?? [])])];
  const metadata = { name: WEBHOOK_CONFIGURATION_NAME, labels: { 'app.kubernetes.io/part-of': 'serverless-sidecarset' } };
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata,
      webhooks: [
        {
          name: 'sidecarset-default.sidecarset.kruise.io',
          clientConfig: clientConfig(options.targets['sidecarset-default'], options.caPem),
          rules: [SIDECARSET_RULE],
          failurePolicy: 'Fail',
          reinvocationPolicy: 'Never',
          ...common,
        },
        {
          name: 'pod-inject.sidecarset.kruise.io',
          clientConfig: clientConfig(options.targets['pod-inject'], options.caPem),
          rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'], scope: 'Namespaced' }],
          failurePolicy: options.podFailurePolicy ?? 'Fail',
          reinvocationPolicy: 'IfNeeded',
          namespaceSelector: {
            matchExpressions: [
              { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: excluded },
              { key: OPT_OUT_LABEL, operator: 'NotIn', values: [OPT_OUT_VALUE] },
            ],
          },
          ...common,
        },
      ],
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata,
      webhooks: [
        {
          name: 'sidecarset-validate.sidecarset.kruise.io',
          clientConfig: clientConfig(options.targets['sidecarset-validate'], options.caPem),
          rules: [SIDECARSET_RULE],
          failurePolicy: 'Fail',
          ...common,
          // An admitted change starts the reconciler's pass at once (an
          // asynchronous invoke of status-sync, or the local loop), a side
          // effect the webhook skips on dry runs; "None" would tell the API
          // server there is none to skip.
          sideEffects: 'NoneOnDryRun',
        },
      ],
    },
  ];
}
