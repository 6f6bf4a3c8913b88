/**
 * The migration preflight's reads (lib/migrate/gather.ts MigrationReads)
 * on a live cluster, composed from the resource adapters: GET requests
 * only. Nothing here writes: the preflight must be safe to run against a
 * production cluster at any moment (test/migrate/ checks every request it
 * makes is a GET).
 */
import type { JsonObject } from '../kube/types.ts';
import type { MigrationReads } from '../migrate/gather.ts';
import { SIDECARSET_CRD } from '../migrate/crd-versions.ts';
import { LABEL_SIDECARSET_NAME } from '../sidecarset/revisions.ts';
import { KubeApiError } from './kube-api-error.ts';
import { readCrd } from './kube-crds.ts';
import { readDeployment } from './kube-deployments.ts';
import { kubeNamespaceSnapshot } from './kube-namespaces.ts';
import { listAll } from './kube-paged-list.ts';
import { kubeSetPods } from './kube-pods.ts';
import type { KubeClient } from './kube-request.ts';
import { LIST_SIDECARSETS } from './kube-sidecarsets.ts';
import { discoveredSidecarSetVersion, sidecarSetsPath } from './kube-sidecarsets-version.ts';
import { internalSidecarSets } from '../conversion/internal-model.ts';
import { readWebhookConfiguration } from './kube-webhook-configurations.ts';

export function kubeMigrationReads(client: KubeClient): MigrationReads {
  // The sets in the version the cluster stores (v1beta1 once Kruise 1.9's CRD is installed), then in the internal model.
  const versions = discoveredSidecarSetVersion(client);
  /** Every item of a list, page by page; a 404 (the resource is not served) is an empty list. */
  async function every(path: string, query: Record<string, string>, operation: string, signal: AbortSignal | undefined): Promise<JsonObject[]> {
    try {
      return (await listAll(client, path, query, operation, signal)).items;
    } catch (error) {
      if (error instanceof KubeApiError && error.code === 404) return [];
      throw error;
    }
  }

  return {
    deployment: (namespace, name, signal) => readDeployment(client, namespace, name, signal),
    webhookConfiguration: (kind, name, signal) => readWebhookConfiguration(client, kind === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration', name, signal),
    sidecarSetCrd: (signal) => readCrd(client, SIDECARSET_CRD, signal),
    sidecarSets: async (signal) => [...internalSidecarSets(await every(sidecarSetsPath(await versions.current(signal)), {}, LIST_SIDECARSETS, signal))],
    sidecarSetRevisions: (signal) => every('/apis/apps/v1/controllerrevisions', { labelSelector: LABEL_SIDECARSET_NAME }, "list SidecarSets' ControllerRevisions", signal),
    pods: kubeSetPods(client),
    namespaces: kubeNamespaceSnapshot(client),
  };
}
