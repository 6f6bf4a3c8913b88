/**
 * The project's own webhook configurations, for secret rotation: read them
 * and repoint one webhook's URL. Only the configurations named
 * WEBHOOK_CONFIGURATION_NAME are read or written, which is all that
 * infra/k8s/rbac.yaml grants (`resourceNames`).
 *
 * A URL is changed with a JSON Patch that first tests the URL it replaces:
 * if someone changed the configuration since it was read, the API server
 * refuses the patch (422) instead of overwriting their change, and the next
 * pass reads again.
 */
import { AdmissionregistrationV1Api, ApiException, type KubeConfig } from '@kubernetes/client-node';
import type { WebhookEndpoint, WebhookUrls } from '../auth/rotation.ts';
import { WEBHOOK_CONFIGURATION_NAME } from '../webhook-config/webhook-configurations.ts';
import { abortWith, clientNodeError } from './kubeconfig.ts';
import { callSignal, DEFAULT_CALL_TIMEOUT_MS } from './kube-status-sync.ts';

type Kind = WebhookEndpoint['configuration'];

export function kubeWebhookUrls(kc: KubeConfig, options: { name?: string; callTimeoutMs?: number } = {}): WebhookUrls {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const name = options.name ?? WEBHOOK_CONFIGURATION_NAME;
  const timeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;

  const read = async (kind: Kind, signal?: AbortSignal): Promise<WebhookEndpoint[] | undefined> => {
    try {
      const call = abortWith(callSignal(signal, timeoutMs));
      const config = kind === 'MutatingWebhookConfiguration' ? await api.readMutatingWebhookConfiguration({ name }, call) : await api.readValidatingWebhookConfiguration({ name }, call);
      return (config.webhooks ?? []).map((w, index) => ({ configuration: kind, webhook: w.name, index, url: w.clientConfig.url }));
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw clientNodeError(`get ${kind} ${name}`, error);
    }
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
      try {
        const call = abortWith(callSignal(signal, timeoutMs));
        if (endpoint.configuration === 'MutatingWebhookConfiguration') await api.patchMutatingWebhookConfiguration({ name, body }, call);
        else await api.patchValidatingWebhookConfiguration({ name, body }, call);
      } catch (error) {
        throw clientNodeError(`patch ${endpoint.configuration} ${name} (webhook "${endpoint.webhook}")`, error);
      }
    },
  };
}
