/**
 * Reads the two objects that show OpenKruise's SidecarSet controller in a
 * cluster (lib/status-sync/kruise-controller.ts decides from them): the
 * manager Deployment and the mutating webhook configuration, each by name;
 * absent (404) is undefined.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { KRUISE_MANAGER_DEPLOYMENT, KRUISE_MUTATING_WEBHOOK_CONFIGURATION, KRUISE_NAMESPACE } from '../status-sync/kruise-controller.ts';
import { apiServerAnswered } from './kube-api-error.ts';
import { rawKubeClient } from './kube-raw.ts';

const TIMEOUT_MS = 10_000;

/** @throws KubeApiError when either cannot be read (forbidden, unreachable): whether Kruise runs there is then unknown. */
export async function readKruiseObjects(kc: KubeConfig): Promise<{ deployment: unknown; webhooks: unknown }> {
  const client = rawKubeClient(kc);
  const get = async (path: string, operation: string): Promise<unknown> => {
    const answer = await client.request('GET', path, operation, AbortSignal.timeout(TIMEOUT_MS));
    if (answer.status === 404) return undefined;
    if (answer.status !== 200) throw apiServerAnswered(operation, answer.status, answer.body);
    return answer.body;
  };
  const [deployment, webhooks] = await Promise.all([
    get(`/apis/apps/v1/namespaces/${KRUISE_NAMESPACE}/deployments/${KRUISE_MANAGER_DEPLOYMENT}`, `get Deployment ${KRUISE_NAMESPACE}/${KRUISE_MANAGER_DEPLOYMENT}`),
    get(`/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${KRUISE_MUTATING_WEBHOOK_CONFIGURATION}`, `get MutatingWebhookConfiguration ${KRUISE_MUTATING_WEBHOOK_CONFIGURATION}`),
  ]);
  return { deployment, webhooks };
}
