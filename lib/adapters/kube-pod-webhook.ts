/**
 * The pod-inject webhook as registered in the project's
 * MutatingWebhookConfiguration: which namespaces and pods the API server sends
 * to it (its namespaceSelector and objectSelector, as rendered from
 * lib/webhook-config/webhook-configurations.ts and whatever a deployment
 * excluded). The reconciler reads it before evicting a pod to have it
 * recreated injected: a pod the webhook is never called for would come back
 * just as uninjected. Reads only the configuration rbac.yaml already lets the
 * reconciler get (by name, for secret rotation).
 */
import { objectOf, stringOf } from '../kube/json.ts';
import type { PodWebhookSource } from '../ports.ts';
import { WEBHOOK_CONFIGURATION_NAME } from '../webhook-config/webhook-configurations.ts';
import { readWebhookConfiguration } from './kube-webhook-configurations.ts';
import type { KubeClient } from './kube-request.ts';

/** The pod webhook's name in the configuration (webhook-configurations.ts names each `<function>.sidecarset.kruise.io`). */
export const POD_WEBHOOK_NAME = 'pod-inject.sidecarset.kruise.io';

export function kubePodWebhook(client: KubeClient, options: { name?: string } = {}): PodWebhookSource {
  return {
    async selectors(signal) {
      const config = await readWebhookConfiguration(client, 'MutatingWebhookConfiguration', options.name ?? WEBHOOK_CONFIGURATION_NAME, signal);
      const webhooks: unknown[] = Array.isArray(config?.webhooks) ? config.webhooks : [];
      const webhook = webhooks.map(objectOf).find((w) => stringOf(w?.name) === POD_WEBHOOK_NAME);
      if (webhook === undefined) return undefined;
      return {
        ...(webhook.namespaceSelector == null ? {} : { namespaceSelector: webhook.namespaceSelector }),
        ...(webhook.objectSelector == null ? {} : { objectSelector: webhook.objectSelector }),
      };
    },
  };
}
