/**
 * `npm run -s migrate -- fence` on a live cluster (functions/migrate/fence.ts
 * FenceCluster): the pods that carry `kruise.io/sidecarset-hash`, page by
 * page (kube-paged-list.ts, bounded in bytes as every pod list is), each
 * reduced as it arrives to what the fence is computed from; the stored
 * SidecarSets, the namespaces' labels, pod-inject's registration and the
 * sets' ControllerRevisions once; a pod read again after a conflict; the guarded write
 * (kube-pods.ts kubePodWriter: a JSON Patch testing the resourceVersion).
 */
import { pointer, type JsonPatchOperation } from '../admission/json-patch.ts';
import { isObject, objectOf, stringOf } from '../kube/json.ts';
import type { JsonObject, Pod } from '../kube/types.ts';
import type { FenceValues } from '../migrate/fence-backfill.ts';
import type { FenceCluster } from '../migrate/fence-run.ts';
import { ListExpiredError, WriteConflictError } from '../ports/errors.ts';
import { ANNOTATION_FENCE_CONTAINERS, ANNOTATION_FENCE_KEYS } from '../sidecarset/rollout-fence.ts';
import { ANNOTATION_HASH } from '../sidecarset/types.ts';
import { labelsOf } from '../sidecarset/match.ts';
import { listAll, pagedList } from './kube-paged-list.ts';
import { kubePodWebhook } from './kube-pod-webhook.ts';
import { kubeRevisionStore } from './kube-revisions.ts';
import { kubePodGetter } from './kube-pod-get.ts';
import { DEFAULT_POD_PAGE_SIZE, kubePodWriter, type PodListOptions } from './kube-pods.ts';
import type { KubeClient } from './kube-request.ts';
import { keptSidecarSet, listSidecarSets } from './kube-sidecarsets.ts';
import { discoveredSidecarSetVersion } from './kube-sidecarsets-version.ts';

/** A listed pod as the fence reads it (metadata, containers' names, images and restartPolicy); undefined when it carries no hash annotation. */
function keptPod(item: Record<string, unknown>): Pod | undefined {
  const metadata = objectOf(item.metadata);
  const annotations = objectOf(metadata?.annotations);
  if (annotations === undefined || !Object.hasOwn(annotations, ANNOTATION_HASH)) return undefined;
  const spec = objectOf(item.spec);
  const slim = (list: unknown): JsonObject[] | undefined =>
    Array.isArray(list) ? list.filter(isObject).map((c) => ({ name: c.name, image: c.image, ...(c.restartPolicy === undefined ? {} : { restartPolicy: c.restartPolicy }) })) : undefined;
  const kept = { ...metadata };
  delete kept.managedFields;
  const initContainers = slim(spec?.initContainers);
  return { metadata: kept, spec: { containers: (slim(spec?.containers) ?? []) as NonNullable<Pod['spec']>['containers'], ...(initContainers === undefined ? {} : { initContainers }) } } as Pod;
}

/** The attempts at a pod list whose continue token keeps expiring (each starts over; the run skips the pods it has seen). */
const MAX_LIST_ATTEMPTS = 3;

/**
 * The JSON Patch writing the fence onto `pod` as read: its first operation
 * tests the pod's resourceVersion, so a pod changed since (a fence written
 * meanwhile, a container replaced) is refused as a conflict, not overwritten.
 */
export function fencePatch(pod: Pod, fence: FenceValues): JsonPatchOperation[] {
  const resourceVersion = stringOf(objectOf(pod.metadata)?.resourceVersion) ?? '';
  const values = { [ANNOTATION_FENCE_CONTAINERS]: fence.containers, [ANNOTATION_FENCE_KEYS]: fence.keys };
  const ops: JsonPatchOperation[] = [{ op: 'test', path: '/metadata/resourceVersion', value: resourceVersion }];
  if (!isObject(objectOf(pod.metadata)?.annotations)) return [...ops, { op: 'add', path: '/metadata/annotations', value: values }];
  for (const [key, value] of Object.entries(values)) ops.push({ op: 'add', path: pointer(['metadata', 'annotations', key]), value });
  return ops;
}

/** {@link FenceCluster} through `client`; the revisions are read from `revisionNamespace`. */
export function kubeFenceCluster(client: KubeClient, revisionNamespace: string, options: PodListOptions = {}): FenceCluster {
  const versions = discoveredSidecarSetVersion(client);
  const revisions = kubeRevisionStore(client, revisionNamespace, { versions });
  const getPod = kubePodGetter(client);
  const writer = kubePodWriter(client);
  return {
    async *podPages(namespace, signal) {
      const path = namespace === undefined ? '/api/v1/pods' : `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`;
      const operation = `list pods${namespace === undefined ? '' : ` in namespace "${namespace}"`}`;
      const paging = { maxPageSize: options.pageSize ?? DEFAULT_POD_PAGE_SIZE, ...(options.onPage === undefined ? {} : { onPage: options.onPage }) };
      for (let attempt = 1; ; attempt++) {
        try {
          for await (const page of pagedList(client, path, {}, operation, signal, paging, keptPod)) {
            yield page.items.filter((p): p is Pod => p !== undefined);
          }
          return;
        } catch (error) {
          if (!(error instanceof ListExpiredError) || attempt >= MAX_LIST_ATTEMPTS) throw error;
        }
      }
    },
    async sidecarSets(signal) {
      return (await listSidecarSets(client, versions, signal, keptSidecarSet)).items;
    },
    async namespaceLabels(signal) {
      const items = (await listAll(client, '/api/v1/namespaces', {}, 'list namespaces', signal)).items;
      return new Map(items.map((ns) => [stringOf(objectOf(ns.metadata)?.name) ?? '', labelsOf(ns)] as const));
    },
    podWebhook: (signal) => kubePodWebhook(client).selectors(signal),
    revisions: (signal) => revisions.listAll(signal),
    getPod: (namespace, name, signal) => getPod(namespace, name, signal),
    async patchPod(pod, fence, signal) {
      try {
        return (await writer.patch(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', fencePatch(pod, fence), signal)).outcome;
      } catch (error) {
        if (error instanceof WriteConflictError) return 'conflict';
        throw error;
      }
    },
  };
}
