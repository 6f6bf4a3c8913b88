/**
 * The rollout's I/O with the API server (rollout.md §0, §1.5, §2.1): whole
 * pods of one set's scope, the guarded pod writes, a watch that says when a
 * set's pods changed, and the ControllerRevisions. Plain JSON throughout
 * (kube-raw.ts): a pod's JSON Patch paths are computed from the pod exactly
 * as stored.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { JsonPatchOperation } from '../admission/json-patch.ts';
import { isObject, objectOf, stringMapOf, stringOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import type { PodScope, PodWrite, PodWriter, RevisionStore, SetPodSource } from '../ports.ts';
import { earlierRevisionData, revisionJsonText, withRawData } from '../sidecarset/revision-data.ts';
import { LABEL_SIDECARSET_NAME, type ControllerRevision } from '../sidecarset/revisions.ts';
import { ListExpiredError, ObjectExistsError, WriteConflictError } from '../status-sync/errors.ts';
import { apiServerAnswered, KubeApiError } from './kube-api-error.ts';
import { pagedList, type PagedListOptions } from './kube-paged-list.ts';
import { JSON_PATCH, JsonText, MERGE_PATCH, STRATEGIC_MERGE_PATCH, type RawAnswer, type RawKubeClient } from './kube-raw.ts';
import { DEFAULT_POD_PAGE_SIZE, reconcilerClient, type StatusSyncAdapterOptions } from './kube-status-sync.ts';
import { revisionSelector } from './kube-revisions.ts';
import { watchForChange } from './kube-watch.ts';

const enc = encodeURIComponent;

function podsPath(namespace: string | undefined): string {
  return namespace === undefined ? '/api/v1/pods' : `/api/v1/namespaces/${enc(namespace)}/pods`;
}

/** A precondition answers 409; some API servers answer a failed `test` operation 422 with the patch library's words. */
function isConflict(answer: RawAnswer): boolean {
  if (answer.status === 409) return true;
  if (answer.status !== 422) return false;
  const message = stringOf(objectOf(answer.body)?.message) ?? (typeof answer.body === 'string' ? answer.body : '');
  return /test(ing value)? .*failed|test operation/i.test(message);
}

/**
 * kube-apiserver 1.36 answers a JSON Patch it cannot apply, a failed `test`
 * included, with a bare 422 (reason Invalid, no causes), the same for any op.
 * Whether the tested version moved on is then read from the object itself.
 */
function isBareInvalid(answer: RawAnswer): boolean {
  const body = objectOf(answer.body);
  return answer.status === 422 && stringOf(body?.reason) === 'Invalid' && !Array.isArray(objectOf(body?.details)?.causes);
}

/** The resourceVersion a patch's first op tests, if it does. */
function testedVersion(operations: readonly JsonPatchOperation[]): string | undefined {
  const first = operations[0];
  return first?.op === 'test' && first.path === '/metadata/resourceVersion' && typeof first.value === 'string' ? first.value : undefined;
}

/** Whether the object at `path` is gone or stored at another version than `tested`: the patch's test failed. */
async function movedOn(client: RawKubeClient, path: string, tested: string, operation: string, signal: AbortSignal | undefined): Promise<boolean> {
  const answer = await client.request('GET', path, `${operation} (reading it after a refused patch)`, signal);
  if (answer.status === 404) return true;
  return answer.status === 200 && resourceVersionOf(answer.body) !== tested;
}

function resourceVersionOf(body: unknown): string {
  return stringOf(objectOf(objectOf(body)?.metadata)?.resourceVersion) ?? '';
}

/** The attempts at a pod list whose continue token keeps expiring. */
const MAX_LIST_ATTEMPTS = 3;

export function kubeSetPods(kc: KubeConfig, options: StatusSyncAdapterOptions & { pageSize?: number; onPage?: PagedListOptions['onPage'] } = {}): SetPodSource {
  const client = reconcilerClient(kc, options);
  const listOptions: PagedListOptions = { maxPageSize: options.pageSize ?? DEFAULT_POD_PAGE_SIZE, ...(options.onPage === undefined ? {} : { onPage: options.onPage }) };
  const watch = new Watch(kc);

  async function listOnce(scope: PodScope, signal: AbortSignal | undefined): Promise<{ pods: Pod[]; resourceVersion: string }> {
    const operation = `list pods${scope.namespace === undefined ? '' : ` in namespace "${scope.namespace}"`}${scope.labelSelector === '' ? '' : ` with selector "${scope.labelSelector}"`}`;
    const pods: Pod[] = [];
    let resourceVersion = '';
    const query: Record<string, string> = scope.labelSelector === '' ? {} : { labelSelector: scope.labelSelector };
    for await (const page of pagedList(client, podsPath(scope.namespace), query, operation, signal, listOptions)) {
      for (const item of page.items) pods.push(item);
      resourceVersion = page.resourceVersion;
    }
    return { pods, resourceVersion };
  }

  return {
    async list(scope, signal) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await listOnce(scope, signal);
        } catch (error) {
          if (!(error instanceof ListExpiredError) || attempt >= MAX_LIST_ATTEMPTS) throw error;
        }
      }
    },
    changed(scope, resourceVersion, ignore, timeoutMs, signal) {
      return watchForChange(watch, podsPath(scope.namespace), scope.labelSelector === '' ? {} : { labelSelector: scope.labelSelector }, resourceVersion, ignore, timeoutMs, signal);
    },
  };
}

/**
 * The rollout's pod writes. Each is safe to send again after no answer
 * (kube-raw.ts `writes: 'guarded'`): the image patch tests the pod's
 * resourceVersion first (a repeat after the first landed fails its test and
 * counts as a conflict: the next pass reads the pod as it is), and the
 * condition patch sets the same values again.
 */
export function kubePodWriter(kc: KubeConfig, options: StatusSyncAdapterOptions = {}): PodWriter {
  const client = reconcilerClient(kc, { ...options, writes: 'guarded' });
  async function send(path: string, operation: string, body: unknown, contentType: string, signal: AbortSignal | undefined, tested?: string): Promise<PodWrite> {
    const answer = await client.request('PATCH', path, operation, signal, body, contentType);
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

/**
 * The API server refused a patch of a ControllerRevision as a change of its
 * immutable `data`: it re-encoded the stored bytes with Go's encoding/json,
 * and they came out different (data written with `&`, `<`, `>`, U+2028 or
 * U+2029 raw, which Go escapes).
 */
function refusedAsDataChange(answer: RawAnswer): boolean {
  if (answer.status !== 422) return false;
  const causes = objectOf(objectOf(answer.body)?.details)?.causes;
  return Array.isArray(causes) && causes.some((cause) => stringOf(objectOf(cause)?.field) === 'data');
}

/**
 * The ControllerRevisions. Each write is safe to send again after no answer
 * (kube-raw.ts `writes: 'guarded'`): a repeated create answers
 * AlreadyExists (ObjectExistsError, which registration reads as "someone
 * wrote it": it reads the revision back), the renumbering tests the
 * resourceVersion, the labels patch sets the same values, and a repeated
 * delete answers 404 or its uid precondition's 409, both taken as done.
 */
export function kubeRevisionStore(kc: KubeConfig, namespace: string, options: StatusSyncAdapterOptions = {}): RevisionStore {
  const client: RawKubeClient = reconcilerClient(kc, { ...options, writes: 'guarded' });
  const base = `/apis/apps/v1/namespaces/${enc(namespace)}/controllerrevisions`;
  /**
   * Replaces a revision with `changed` (as read, its resourceVersion the
   * precondition), `data` sent as the bytes an earlier version of this
   * project stored, which a replace compares as they are.
   */
  const putWithEarlierData = (changed: ControllerRevision, operation: string, signal: AbortSignal | undefined): Promise<RawAnswer> =>
    client.request('PUT', `${base}/${enc(stringOf(changed.metadata?.name) ?? '')}`, operation, signal, new JsonText(withRawData(changed, earlierRevisionData(changed))));
  const items = (body: unknown, operation: string): ControllerRevision[] => {
    const list = objectOf(body)?.items;
    if (!Array.isArray(list)) throw new KubeApiError(operation, 'the answer is not a list (no items array)');
    return list.filter(isObject);
  };
  const listWith = async (selector: string, operation: string, signal: AbortSignal | undefined) =>
    items(await client.expect2xx('GET', `${base}?labelSelector=${enc(selector)}`, operation, signal), operation);
  return {
    namespace,
    async get(name, signal) {
      const operation = `get ControllerRevision "${namespace}/${name}"`;
      const answer = await client.request('GET', `${base}/${enc(name)}`, operation, signal);
      if (answer.status === 404) return undefined;
      if (answer.status !== 200 || !isObject(answer.body)) throw apiServerAnswered(operation, answer.status, answer.body);
      return answer.body;
    },
    // Async, so that a name that cannot be selected rejects rather than throws.
    async list(setName, labels = {}, signal) {
      // The webhooks' selector builder: one rule for what can be selected, keys checked too.
      return listWith(revisionSelector(setName, labels), `list ControllerRevisions of SidecarSet "${setName}"`, signal);
    },
    listAll(signal) {
      return listWith(LABEL_SIDECARSET_NAME, `list ControllerRevisions in "${namespace}"`, signal);
    },
    async create(revision, signal) {
      const name = stringOf(revision.metadata?.name) ?? '';
      const operation = `create ControllerRevision "${namespace}/${name}"`;
      // `data` byte for byte as Kruise's Go writes it: the API server keeps the bytes it is sent, and a later
      // patch (a renumbering, a label) is refused unless Go's encoding of them gives the same bytes.
      const answer = await client.request('POST', base, operation, signal, new JsonText(revisionJsonText(revision)));
      if (answer.status === 409) throw new ObjectExistsError(`${operation}: a ControllerRevision of that name exists`);
      if (answer.status < 200 || answer.status > 299 || !isObject(answer.body)) throw apiServerAnswered(operation, answer.status, answer.body, { whole: true });
      return answer.body;
    },
    async setNumber(revision, number, signal) {
      const name = stringOf(revision.metadata?.name) ?? '';
      const operation = `renumber ControllerRevision "${namespace}/${name}"`;
      const tested = stringOf(revision.metadata?.resourceVersion) ?? '';
      const ops = [
        { op: 'test', path: '/metadata/resourceVersion', value: tested },
        { op: 'replace', path: '/revision', value: number },
      ];
      let answer = await client.request('PATCH', `${base}/${enc(name)}`, operation, signal, ops, JSON_PATCH);
      // Data an earlier version of this project wrote (& < > U+2028 U+2029 raw) cannot be patched: written again as stored.
      if (refusedAsDataChange(answer)) answer = await putWithEarlierData({ ...revision, revision: number }, operation, signal);
      const conflict = answer.status === 404 || isConflict(answer) || (isBareInvalid(answer) && (await movedOn(client, `${base}/${enc(name)}`, tested, operation, signal)));
      if (conflict) throw new WriteConflictError(`${operation}: it changed since it was read`);
      if (answer.status < 200 || answer.status > 299 || !isObject(answer.body)) throw apiServerAnswered(operation, answer.status, answer.body, { whole: true });
      return answer.body;
    },
    async patchLabels(name, labels, signal) {
      // A JSON merge patch: a strategic-merge patch of a revision as stored (its `data` holds
      // `$patch: replace` directives) is refused 422 as a change of the immutable `data`.
      const operation = `label ControllerRevision "${namespace}/${name}"`;
      let answer = await client.request('PATCH', `${base}/${enc(name)}`, operation, signal, { metadata: { labels } }, MERGE_PATCH);
      if (refusedAsDataChange(answer)) {
        const current = await client.request('GET', `${base}/${enc(name)}`, `${operation} (reading it after a refused patch)`, signal);
        if (current.status === 200 && isObject(current.body)) {
          const read: ControllerRevision = current.body;
          answer = await putWithEarlierData({ ...read, metadata: { ...read.metadata, labels: { ...stringMapOf(read.metadata?.labels), ...labels } } }, operation, signal);
        }
      }
      if (answer.status < 200 || answer.status > 299) throw apiServerAnswered(operation, answer.status, answer.body, { whole: true });
    },
    async delete(revision, signal) {
      const name = stringOf(revision.metadata?.name) ?? '';
      const operation = `delete ControllerRevision "${namespace}/${name}"`;
      const uid = stringOf(revision.metadata?.uid);
      const body = { apiVersion: 'v1', kind: 'DeleteOptions', ...(uid === undefined ? {} : { preconditions: { uid } }) };
      const answer = await client.request('DELETE', `${base}/${enc(name)}`, operation, signal, body);
      // Gone already, or replaced by another of the same name (a precondition 409): either way not ours to delete now.
      if (answer.status === 404 || answer.status === 409) return;
      if (answer.status < 200 || answer.status > 299) throw apiServerAnswered(operation, answer.status, answer.body);
    },
  };
}
