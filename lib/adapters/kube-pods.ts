/**
 * Pods on the API server: the resync's paged list of every pod (reduced to
 * summaries page by page), a set's pods whole (rollout.md §0), a watch that
 * says when they changed, and the rollout's guarded writes. Plain JSON
 * throughout (kube-request.ts): a pod's JSON Patch paths are computed from
 * the pod exactly as stored.
 */
import type { JsonPatchOperation } from '../admission/json-patch.ts';
import type { Pod } from '../kube/types.ts';
import type { PodPages, PodWrite, PodWriter, SetPodSource } from '../ports.ts';
import { WriteConflictError } from '../ports/errors.ts';
import { summarizePod } from '../sidecarset/status.ts';
import { apiServerAnswered } from './kube-api-error.ts';
import { listAll, pagedList, type PagedListOptions } from './kube-paged-list.ts';
import { isBareInvalid, isConflict, movedOn, resourceVersionOf } from './kube-guarded-write.ts';
import { JSON_PATCH, STRATEGIC_MERGE_PATCH, type KubeClient } from './kube-request.ts';
import { watchEvents, watchForChange } from './kube-watch.ts';
import { MAX_POD_PAGE_SIZE } from './pod-page-size.ts';

const enc = encodeURIComponent;

/** The most pods per page: the API server's recommended chunk size, as kubectl uses (smaller when pods are big: pod-page-size.ts). */
export const DEFAULT_POD_PAGE_SIZE = MAX_POD_PAGE_SIZE;

/** How a pod list is paged: the most per page, and who is called back with each page (tests, benchmarks). */
export interface PodListOptions {
  pageSize?: number;
  onPage?: PagedListOptions['onPage'];
}

function listOptions(options: PodListOptions): PagedListOptions {
  return { maxPageSize: options.pageSize ?? DEFAULT_POD_PAGE_SIZE, ...(options.onPage === undefined ? {} : { onPage: options.onPage }) };
}

function podsPath(namespace: string | undefined): string {
  return namespace === undefined ? '/api/v1/pods' : `/api/v1/namespaces/${enc(namespace)}/pods`;
}

/**
 * Every pod, page by page, each reduced to a PodSummary as soon as its own
 * bytes arrive (kube-request.ts `list`): the resync never holds a page of
 * whole pods, whatever they weigh. Plain JSON, not a typed client, whose
 * model classes take about twice JSON.parse's time for fields thrown away at
 * once. A page with no complete answer is asked for again with the same
 * continue token (the same snapshot), not failing the resync on one dropped connection.
 */
export function kubePodPages(client: KubeClient, options: PodListOptions = {}): PodPages {
  const paging = listOptions(options);
  return {
    async *pages(signal) {
      // Each pod is summarised as soon as its bytes are parsed: the whole pod is garbage before the next one is read.
      for await (const page of pagedList(client, podsPath(undefined), {}, 'list pods', signal, paging, (item) => summarizePod(item as Pod))) {
        yield page.items;
      }
    },
  };
}

/** How long one watch of a set's pods runs before the server ends it (a follower then lists afresh): longer than a Lambda's follow budget. */
const POD_WATCH_SECONDS = 300;

/** One set's pods, whole, with the list's resourceVersion; a watch from it. */
export function kubeSetPods(client: KubeClient, options: PodListOptions = {}): SetPodSource {
  const paging = listOptions(options);
  const selection = (labelSelector: string): Record<string, string> => (labelSelector === '' ? {} : { labelSelector });
  return {
    async list(scope, signal) {
      const operation = `list pods${scope.namespace === undefined ? '' : ` in namespace "${scope.namespace}"`}${scope.labelSelector === '' ? '' : ` with selector "${scope.labelSelector}"`}`;
      const { items, resourceVersion } = await listAll(client, podsPath(scope.namespace), selection(scope.labelSelector), operation, signal, paging);
      return { pods: items, resourceVersion };
    },
    changed(scope, resourceVersion, ignore, timeoutMs, signal, predicate) {
      return watchForChange(client, podsPath(scope.namespace), selection(scope.labelSelector), resourceVersion, ignore, timeoutMs, signal, predicate);
    },
    watch(scope, resourceVersion, sink, signal) {
      // Each change is the pod as stored, whole (plain JSON, as the list's items are).
      return watchEvents(client, podsPath(scope.namespace), selection(scope.labelSelector), resourceVersion, sink, signal, POD_WATCH_SECONDS);
    },
  };
}

/** The resourceVersion a patch's first op tests, if it does. */
function testedVersion(operations: readonly JsonPatchOperation[]): string | undefined {
  const first = operations[0];
  return first?.op === 'test' && first.path === '/metadata/resourceVersion' && typeof first.value === 'string' ? first.value : undefined;
}

/**
 * The rollout's pod writes. Each is safe to send again after no answer
 * (`guarded`, kube-request.ts): the image patch tests the pod's
 * resourceVersion first (a repeat after the first landed fails its test and
 * counts as a conflict: the next reconcile reads the pod as it is), and the
 * condition patch sets the same values again.
 */
export function kubePodWriter(client: KubeClient): PodWriter {
  async function send(path: string, operation: string, body: unknown, contentType: string, signal: AbortSignal | undefined, tested?: string): Promise<PodWrite> {
    const answer = await client.request({ method: 'PATCH', path, operation, body, contentType, guarded: true, ...(signal === undefined ? {} : { signal }) });
    if (answer.status === 404) return { outcome: 'gone' };
    const conflict = isConflict(answer) || (tested !== undefined && isBareInvalid(answer) && (await movedOn(client, path, tested, operation, signal)));
    if (conflict) throw new WriteConflictError(`${operation}: the pod changed since it was read`);
    if (answer.status < 200 || answer.status > 299) throw apiServerAnswered(operation, answer.status, answer.body);
    return { outcome: 'written', resourceVersion: resourceVersionOf(answer.body) };
  }
  return {
    patch(namespace, name, operations: readonly JsonPatchOperation[], signal) {
      return send(`/api/v1/namespaces/${enc(namespace)}/pods/${enc(name)}`, `patch pod "${namespace}/${name}"`, operations, JSON_PATCH, signal, testedVersion(operations));
    },
    patchStatus(namespace, name, patch, signal) {
      return send(`/api/v1/namespaces/${enc(namespace)}/pods/${enc(name)}/status`, `patch status of pod "${namespace}/${name}"`, patch, STRATEGIC_MERGE_PATCH, signal);
    },
  };
}
