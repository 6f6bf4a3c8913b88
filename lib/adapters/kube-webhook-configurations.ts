/**
 * Admission webhook configurations: one read by kind and name (the
 * migration's preflight, the check for OpenKruise's own), and the project's
 * own configurations for secret rotation: read them and repoint one
 * webhook's URL. Rotation reads and writes only the configurations named
 * WEBHOOK_CONFIGURATION_NAME and the SidecarSet CRD (its conversion
 * webhook's URL carries the same secret), which is all that
 * infra/k8s/rbac.yaml grants (`resourceNames`).
 *
 * A URL is changed with a JSON Patch that first tests the URL it replaces:
 * if someone changed the configuration since it was read, the API server
 * refuses the patch (422) instead of overwriting their change, and the next
 * resync reads again.
 */
import { objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import type { WebhookEndpoint, WebhookUrls } from '../auth/rotation.ts';
import { WEBHOOK_CONFIGURATION_NAME } from '../webhook-config/webhook-configurations.ts';
import { CRD_NAME } from '../crd/sidecarset-crd.ts';
import { expectObject, getObject, JSON_PATCH, type KubeClient } from './kube-request.ts';

type Kind = Exclude<WebhookEndpoint['configuration'], 'CustomResourceDefinition'>;

const pathOf = (kind: Kind, name: string): string => `/apis/admissionregistration.k8s.io/v1/${kind.toLowerCase()}s/${encodeURIComponent(name)}`;

/** A Mutating- or ValidatingWebhookConfiguration as stored; undefined when there is none of that name. */
export function readWebhookConfiguration(client: KubeClient, kind: Kind, name: string, signal: AbortSignal | undefined): Promise<JsonObject | undefined> {
  return getObject(client, pathOf(kind, name), `get ${kind} ${name}`, signal);
}

const CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`;
const CONVERSION_URL_PATH = '/spec/conversion/webhook/clientConfig/url';

/** The SidecarSet CRD's conversion webhook as an endpoint, when the CRD exists and names a URL (a Service reference is not ours to rotate). */
async function crdConversionEndpoint(client: KubeClient, signal: AbortSignal | undefined): Promise<WebhookEndpoint | undefined> {
  const crd = await getObject(client, CRD_PATH, `get CustomResourceDefinition ${CRD_NAME}`, signal);
  const url = stringOf(objectOf(objectOf(objectOf(objectOf(crd?.spec)?.conversion)?.webhook)?.clientConfig)?.url);
  return url === undefined ? undefined : { configuration: 'CustomResourceDefinition', webhook: `${CRD_NAME} conversion`, index: 0, url };
}

/** The webhooks of configuration `name` of `kind` with their URLs; undefined when it does not exist. */
async function webhookEndpoints(client: KubeClient, kind: Kind, name: string, signal?: AbortSignal): Promise<WebhookEndpoint[] | undefined> {
  const config = await readWebhookConfiguration(client, kind, name, signal);
  if (config === undefined) return undefined;
  const webhooks = Array.isArray(config.webhooks) ? config.webhooks : [];
  return webhooks.map((w: unknown, index) => {
    const webhook = objectOf(w);
    const endpoint: WebhookEndpoint = { configuration: kind, webhook: stringOf(webhook?.name) ?? '', index, url: stringOf(objectOf(webhook?.clientConfig)?.url) };
    return endpoint;
  });
}

/** Points the CRD's conversion webhook at `url`, only if it still points where `endpoint` was read. */
async function setConversionUrl(client: KubeClient, endpoint: WebhookEndpoint, url: string, signal: AbortSignal | undefined): Promise<void> {
  const body = [
    { op: 'test', path: CONVERSION_URL_PATH, value: endpoint.url },
    { op: 'replace', path: CONVERSION_URL_PATH, value: url },
  ];
  await expectObject(client, { method: 'PATCH', path: CRD_PATH, operation: `patch CustomResourceDefinition ${CRD_NAME} (conversion webhook)`, body, contentType: JSON_PATCH, ...(signal === undefined ? {} : { signal }) });
}

export function kubeWebhookUrls(client: KubeClient, options: { name?: string } = {}): WebhookUrls {
  const name = options.name ?? WEBHOOK_CONFIGURATION_NAME;

  const read = (kind: Kind, signal?: AbortSignal) => webhookEndpoints(client, kind, name, signal);
  return {
    async list(signal) {
      const mutating = await read('MutatingWebhookConfiguration', signal);
      const validating = await read('ValidatingWebhookConfiguration', signal);
      if (mutating === undefined && validating === undefined) return undefined;
      const conversion = await crdConversionEndpoint(client, signal);
      return [...(mutating ?? []), ...(validating ?? []), ...(conversion === undefined ? [] : [conversion])];
    },
    async setUrl(endpoint, url, signal) {
      if (endpoint.configuration === 'CustomResourceDefinition') return setConversionUrl(client, endpoint, url, signal);
      const path = `/webhooks/${endpoint.index}/clientConfig/url`;
      const body = [
        { op: 'test', path: `/webhooks/${endpoint.index}/name`, value: endpoint.webhook },
        { op: 'test', path, value: endpoint.url },
        { op: 'replace', path, value: url },
      ];
      const operation = `patch ${endpoint.configuration} ${name} (webhook "${endpoint.webhook}")`;
      await expectObject(client, { method: 'PATCH', path: pathOf(endpoint.configuration, name), operation, body, contentType: JSON_PATCH, ...(signal === undefined ? {} : { signal }) });
    },
  };
}
