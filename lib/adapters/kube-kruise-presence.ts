/**
 * Reads the two objects that show OpenKruise's SidecarSet controller in a
 * cluster (lib/status-sync/kruise-controller.ts decides from them): the
 * manager Deployment and the mutating webhook configuration, each by name;
 * absent (404) is undefined.
 */
import { KRUISE_MANAGER_DEPLOYMENT, KRUISE_MUTATING_WEBHOOK_CONFIGURATION, KRUISE_NAMESPACE } from '../status-sync/kruise-controller.ts';
import { readDeployment } from './kube-deployments.ts';
import type { KubeClient } from './kube-request.ts';
import { readWebhookConfiguration } from './kube-webhook-configurations.ts';

const TIMEOUT_MS = 10_000;

/** @throws KubeApiError when either cannot be read (forbidden, unreachable): whether Kruise runs there is then unknown. */
export async function readKruiseObjects(client: KubeClient): Promise<{ deployment: unknown; webhooks: unknown }> {
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  const [deployment, webhooks] = await Promise.all([
    readDeployment(client, KRUISE_NAMESPACE, KRUISE_MANAGER_DEPLOYMENT, signal),
    readWebhookConfiguration(client, 'MutatingWebhookConfiguration', KRUISE_MUTATING_WEBHOOK_CONFIGURATION, signal),
  ]);
  return { deployment, webhooks };
}
