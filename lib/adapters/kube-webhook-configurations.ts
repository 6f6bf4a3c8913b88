/**
 * Admission webhook configurations: one read by kind and name (the
 * migration's preflight, the check for OpenKruise's own), and the project's
 * own configurations for secret rotation: read them and repoint one
 * webhook's URL. Rotation reads and writes only the configurations named
 * WEBHOOK_CONFIGURATION_NAME, which is all that infra/k8s/rbac.yaml grants
 * (`resourceNames`).
 *
 * A URL is changed with a JSON Patch that first tests the URL it replaces:
 * if someone changed the configuration since it was read, the API server
 * refuses the patch (422) instead of overwriting their change, and the next
 * pass reads again.
 */
import { objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import type { WebhookEndpoint, WebhookUrls } from '../auth/rotation.ts';
import { WEBHOOK_CONFIGURATION_NAME } from '../webhook-config/webhook-configurations.ts';
import { expectObject, getObject, JSON_PATCH, type KubeClient } from './kube-request.ts';

type Kind = WebhookEndpoint['configuration'];

const pathOf = (kind: Kind, name: string): string => `/apis/admissionregistration.k8s.io/v1/${kind.toLowerCase()}s/${encodeURIComponent(name)}`;

/** A Mutating- or ValidatingWebhookConfiguration as stored; undefined when there is none of that name. */
export function readWebhookConfiguration(client: KubeClient, kind: Kind, name: string, signal: AbortSignal | undefined): Promise<JsonObject | undefined> {
  return getObject(client, pathOf(kind, name), `get ${kind} ${name}`, signal);
}

export function kubeWebhookUrls(client: KubeClient, options: { name?: string } = {}): WebhookUrls {
  const name = options.name ?? WEBHOOK_CONFIGURATION_NAME;

  const read = async (kind: Kind, signal?: AbortSignal): Promise<WebhookEndpoint[] | undefined> => {
    const config = await readWebhookConfiguration(client, kind, name, signal);
    if (config === undefined) return undefined;
    const webhooks = Array.isArray(config.webhooks) ? config.webhooks : [];
    return webhooks.map((w: unknown, index) => {
      const webhook = objectOf(w);
      const endpoint: WebhookEndpoint = { configuration: kind, webhook: stringOf(webhook?.name) ?? '', index, url: stringOf(objectOf(webhook?.clientConfig)?.url) };
      return endpoint;
    });
  };

  return {
    async list(signal) {
      const mutating = await read('MutatingWebhookConfiguration', signal);
      const validating = await read('ValidatingWebhookConfiguration', signal);
      if (mutating === undefined && validating === undefined) return undefined;
      return [...(mutating ?? []), ...(validating ?? [])];
    },
    async setUrl(endpoint, url, signal) {
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
