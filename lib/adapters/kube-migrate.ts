/**
 * The migration preflight's reads (lib/migrate/gather.ts MigrationReads)
 * on a live cluster: GET requests only, through the KubeConfig's
 * credentials. Nothing here writes: the preflight must be safe to run
 * against a production cluster at any moment (test/migrate/ checks every
 * request it makes is a GET).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { isObject, objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject } from '../kube/types.ts';
import type { MigrationReads } from '../migrate/gather.ts';
import { SIDECARSET_CRD } from '../migrate/crd-versions.ts';
import { LABEL_SIDECARSET_NAME } from '../sidecarset/revisions.ts';
import { apiServerAnswered, KubeApiError } from './kube-api-error.ts';
import { rawKubeClient } from './kube-raw.ts';
import { kubeSetPods } from './kube-rollout.ts';
import { callSignal, DEFAULT_CALL_TIMEOUT_MS, kubeNamespaceSnapshot } from './kube-status-sync.ts';
import { makeKubeClients } from './kubeconfig.ts';

const PAGE_SIZE = 500;

export function kubeMigrationReads(kc: KubeConfig, options: { callTimeoutMs?: number } = {}): MigrationReads {
  const client = rawKubeClient(kc);
  const timeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;

  /** One GET; a 404 is undefined, any other non-200 a KubeApiError naming what was read. */
  async function getObject(path: string, operation: string, signal: AbortSignal | undefined): Promise<JsonObject | undefined> {
    const answer = await client.request('GET', path, operation, callSignal(signal, timeoutMs));
    if (answer.status === 404) return undefined;
    if (answer.status !== 200) throw apiServerAnswered(operation, answer.status, answer.body);
    if (!isObject(answer.body)) throw new KubeApiError(operation, 'the answer is not a JSON object', answer.status);
    return answer.body;
  }

  /** Every item of a list, page by page; a 404 (the resource is not served) is an empty list. */
  async function listAll(path: string, query: Record<string, string>, operation: string, signal: AbortSignal | undefined): Promise<JsonObject[]> {
    const items: JsonObject[] = [];
    let next: string | undefined;
    do {
      const params = new URLSearchParams({ ...query, limit: String(PAGE_SIZE) });
      if (next !== undefined) params.set('continue', next);
      const body = await getObject(`${path}?${params.toString()}`, operation, signal);
      if (body === undefined) return [];
      if (!Array.isArray(body.items)) throw new KubeApiError(operation, 'the answer is not a list (no items array)');
      for (const item of body.items) if (isObject(item)) items.push(item);
      const token = stringOf(objectOf(body.metadata)?.continue);
      next = token === undefined || token === '' ? undefined : token;
    } while (next !== undefined);
    return items;
  }

  return {
    deployment: (namespace, name, signal) => getObject(`/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/deployments/${encodeURIComponent(name)}`, `get Deployment ${namespace}/${name}`, signal),
    webhookConfiguration: (kind, name, signal) =>
      getObject(
        `/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations/${encodeURIComponent(name)}`,
        `get ${kind === 'mutating' ? 'Mutating' : 'Validating'}WebhookConfiguration ${name}`,
        signal,
      ),
    sidecarSetCrd: (signal) => getObject(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${SIDECARSET_CRD}`, `get CustomResourceDefinition ${SIDECARSET_CRD}`, signal),
    sidecarSets: async (signal) => (await listAll('/apis/apps.kruise.io/v1alpha1/sidecarsets', {}, 'list SidecarSets', signal)),
    sidecarSetRevisions: async (signal) =>
      (await listAll('/apis/apps/v1/controllerrevisions', { labelSelector: LABEL_SIDECARSET_NAME }, "list SidecarSets' ControllerRevisions", signal)),
    pods: kubeSetPods(kc),
    namespaces: kubeNamespaceSnapshot(makeKubeClients(kc)),
  };
}
