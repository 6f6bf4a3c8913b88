/**
 * The ControllerRevisions that record SidecarSet specs (rollout.md §2.1).
 * The webhooks' {@link RevisionSource} reads them fresh through a
 * {@link RevisionReader}, one call per read (a list, one per page of
 * {@link REVISION_PAGE_SIZE}): only a set that pins a revision is read for,
 * so nothing is cached and a revision the reconciler registered a moment ago
 * is seen. The reconciler's {@link RevisionStore} reads and writes them as
 * plain JSON, its lists paged like the pod lists.
 */
import { isObject, objectOf, stringMapOf, stringOf } from '../kube/json.ts';
import { labelValueErrors, qualifiedNameErrors } from '../kube/names.ts';
import type { RevisionSource, RevisionStore } from '../ports.ts';
import { ObjectExistsError, WriteConflictError } from '../ports/errors.ts';
import { earlierRevisionData, revisionJsonText, withRawData } from '../sidecarset/revision-data.ts';
import { LABEL_SIDECARSET_NAME, withOwnerApiVersion, type ControllerRevision } from '../sidecarset/revisions.ts';
import { GROUP } from '../sidecarset/types.ts';
import { apiServerAnswered, asKubeApiError, KubeApiError } from './kube-api-error.ts';
import { listAll, type PagedListOptions } from './kube-paged-list.ts';
import { isBareInvalid, isConflict, movedOn } from './kube-guarded-write.ts';
import { getObject, JSON_PATCH, JsonText, MERGE_PATCH, type KubeAnswer, type KubeClient, type KubeMethod } from './kube-request.ts';
import { DEFAULT_MAX_LOAD_MS } from './cached-list.ts';
import { getControllerRevisionOperation, listControllerRevisionsOperation, type RevisionReader } from './kube-sources.ts';
import { fixedSidecarSetVersion, type SidecarSetVersions } from './kube-sidecarsets-version.ts';

/** A label that cannot be part of a label selector, so no revision can carry it. */
export class RevisionSelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RevisionSelectorError';
  }
}

/**
 * The equality selector `kruise.io/sidecarset-name=<set>[,key=value...]`.
 * @throws RevisionSelectorError naming a key or value that is not a label key or value
 *   (`,` or `=` in one would change what the selector selects).
 */
export function revisionSelector(setName: string, labels: Readonly<Record<string, string>> = {}): string {
  const all: [string, string][] = [[LABEL_SIDECARSET_NAME, setName], ...Object.entries(labels).filter(([key]) => key !== LABEL_SIDECARSET_NAME)];
  return all
    .map(([key, value]) => {
      const keyProblems = qualifiedNameErrors(key);
      if (keyProblems.length > 0) throw new RevisionSelectorError(`${JSON.stringify(key)} is not a label key: ${keyProblems.join('; ')}`);
      const valueProblems = labelValueErrors(value);
      if (valueProblems.length > 0) throw new RevisionSelectorError(`label ${key}=${JSON.stringify(value)} cannot be selected: ${valueProblems.join('; ')}`);
      return `${key}=${value}`;
    })
    .join(',');
}

export interface KubeRevisionSourceOptions {
  /** The longest one API call may take, whatever the caller's own deadline. Default 5000 ms (KUBE_API_TIMEOUT_MS). */
  apiTimeoutMs?: number;
  /** Revisions per page of a list. Default {@link REVISION_PAGE_SIZE}. */
  pageSize?: number;
  /** Pages read at most before the list is refused as too long. Default {@link MAX_REVISION_PAGES}. */
  maxPages?: number;
}

/** A list of revisions is read in pages of this many: one answer stays small whatever the namespace holds. */
export const REVISION_PAGE_SIZE = 100;
/** Pages read at most: 5,000 revisions, fifty times a set's largest history (revisionHistoryLimit is at most 100). */
export const MAX_REVISION_PAGES = 50;

/**
 * Runs one call with the caller's signal bounded by `timeoutMs`; the timer
 * goes with the call (AbortSignal.timeout's would outlive it).
 */
async function bounded<T>(timeoutMs: number, signal: AbortSignal | undefined, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  const combined = signal === undefined ? controller.signal : AbortSignal.any([signal, controller.signal]);
  try {
    return await call(combined);
  } finally {
    clearTimeout(timer);
  }
}

/** The revisions in namespace `namespace`, read through `reader`. */
export function kubeRevisionSource(reader: RevisionReader, namespace: string, options: KubeRevisionSourceOptions = {}): RevisionSource {
  const timeoutMs = options.apiTimeoutMs ?? DEFAULT_MAX_LOAD_MS;
  const pageSize = options.pageSize ?? REVISION_PAGE_SIZE;
  const maxPages = options.maxPages ?? MAX_REVISION_PAGES;
  return {
    namespace,
    async get(name, signal) {
      const operation = getControllerRevisionOperation(namespace, name);
      // An empty name would read the list of all of them.
      if (name === '') throw new KubeApiError(operation, 'a ControllerRevision name cannot be empty');
      try {
        return (await bounded(timeoutMs, signal, (s) => reader.readControllerRevision(namespace, name, s))) as ControllerRevision | undefined;
      } catch (error) {
        throw asKubeApiError(operation, error);
      }
    },
    async list(setName, labels, signal) {
      const selector = revisionSelector(setName, labels);
      const operation = listControllerRevisionsOperation(namespace, selector);
      const out: ControllerRevision[] = [];
      let token: string | undefined;
      for (let page = 1; ; page++) {
        let body: unknown;
        try {
          const from = token;
          body = await bounded(timeoutMs, signal, (s) => reader.listControllerRevisions(namespace, selector, s, { limit: pageSize, ...(from === undefined ? {} : { continue: from }) }));
        } catch (error) {
          throw asKubeApiError(operation, error);
        }
        if (!isObject(body) || !Array.isArray(body.items)) throw new KubeApiError(operation, 'the answer is not a list (no items array)');
        const items: unknown[] = body.items;
        if (!items.every(isObject)) throw new KubeApiError(operation, 'the list holds an item that is not an object');
        out.push(...items);
        const next = objectOf(body.metadata)?.continue;
        if (typeof next !== 'string' || next === '') return out;
        if (page >= maxPages) throw new KubeApiError(operation, `more than ${maxPages * pageSize} ControllerRevisions carry these labels (read in pages of ${pageSize}); a set's history is at most a few dozen`);
        token = next;
      }
    },
  };
}

const enc = encodeURIComponent;

/**
 * The API server refused a patch of a ControllerRevision as a change of its
 * immutable `data`: it re-encoded the stored bytes with Go's encoding/json,
 * and they came out different (data written with `&`, `<`, `>`, U+2028 or
 * U+2029 raw, which Go escapes).
 */
function refusedAsDataChange(answer: KubeAnswer): boolean {
  if (answer.status !== 422) return false;
  const causes = objectOf(objectOf(answer.body)?.details)?.causes;
  return Array.isArray(causes) && causes.some((cause) => stringOf(objectOf(cause)?.field) === 'data');
}

/** The ControllerRevisions of one namespace, over the API server (see {@link kubeRevisionStore}). */
class RevisionRequests {
  private readonly client: KubeClient;
  private readonly namespace: string;
  private readonly versions: SidecarSetVersions;
  private readonly base: string;
  private readonly paging: PagedListOptions;

  constructor(client: KubeClient, namespace: string, options: { pageSize?: number; onPage?: PagedListOptions['onPage']; versions?: SidecarSetVersions }) {
    this.client = client;
    this.namespace = namespace;
    this.versions = options.versions ?? fixedSidecarSetVersion('v1alpha1');
    this.base = `/apis/apps/v1/namespaces/${enc(namespace)}/controllerrevisions`;
    this.paging = { maxPageSize: options.pageSize ?? REVISION_PAGE_SIZE, ...(options.onPage === undefined ? {} : { onPage: options.onPage }) };
  }

  /** Every write here is safe to repeat (see {@link kubeRevisionStore}): sent `guarded`. */
  private write(method: KubeMethod, path: string, operation: string, signal: AbortSignal | undefined, body: unknown, contentType?: string): Promise<KubeAnswer> {
    return this.client.request({ method, path, operation, body, guarded: true, ...(contentType === undefined ? {} : { contentType }), ...(signal === undefined ? {} : { signal }) });
  }

  /**
   * Replaces a revision with `changed` (as read, its resourceVersion the
   * precondition), `data` sent as the bytes an earlier version of this
   * project stored, which a replace compares as they are.
   */
  private putWithEarlierData(changed: ControllerRevision, operation: string, signal: AbortSignal | undefined): Promise<KubeAnswer> {
    return this.write('PUT', `${this.base}/${enc(stringOf(changed.metadata?.name) ?? '')}`, operation, signal, new JsonText(withRawData(changed, earlierRevisionData(changed))));
  }

  get(name: string, signal: AbortSignal | undefined): Promise<ControllerRevision | undefined> {
    return getObject(this.client, `${this.base}/${enc(name)}`, `get ControllerRevision "${this.namespace}/${name}"`, signal);
  }

  /** Paged like the pod lists (limit and continue, each page's bytes bounded): a namespace may hold any number of revisions. */
  async list(selector: string, operation: string, signal: AbortSignal | undefined): Promise<ControllerRevision[]> {
    return (await listAll(this.client, this.base, { labelSelector: selector }, operation, signal, this.paging)).items;
  }

  async create(revision: ControllerRevision, signal: AbortSignal | undefined): Promise<ControllerRevision> {
    const operation = `create ControllerRevision "${this.namespace}/${stringOf(revision.metadata?.name) ?? ''}"`;
    // `data` byte for byte as Kruise's Go writes it: a later patch is refused unless Go's encoding gives the same bytes.
    const owned = withOwnerApiVersion(revision, `${GROUP}/${await this.versions.current(signal)}`);
    const answer = await this.write('POST', this.base, operation, signal, new JsonText(revisionJsonText(owned)));
    if (answer.status === 409) throw new ObjectExistsError(`${operation}: a ControllerRevision of that name exists`);
    if (answer.status < 200 || answer.status > 299 || !isObject(answer.body)) throw apiServerAnswered(operation, answer.status, answer.body);
    return answer.body;
  }

  async setNumber(revision: ControllerRevision, number: number, signal: AbortSignal | undefined): Promise<ControllerRevision> {
    const name = stringOf(revision.metadata?.name) ?? '';
    const operation = `renumber ControllerRevision "${this.namespace}/${name}"`;
    const path = `${this.base}/${enc(name)}`;
    const tested = stringOf(revision.metadata?.resourceVersion) ?? '';
    const ops = [
      { op: 'test', path: '/metadata/resourceVersion', value: tested },
      { op: 'replace', path: '/revision', value: number },
    ];
    let answer = await this.write('PATCH', path, operation, signal, ops, JSON_PATCH);
    // Data an earlier version of this project wrote (& < > U+2028 U+2029 raw) cannot be patched: written again as stored.
    if (refusedAsDataChange(answer)) answer = await this.putWithEarlierData({ ...revision, revision: number }, operation, signal);
    const conflict = answer.status === 404 || isConflict(answer) || (isBareInvalid(answer) && (await movedOn(this.client, path, tested, operation, signal)));
    if (conflict) throw new WriteConflictError(`${operation}: it changed since it was read`);
    if (answer.status < 200 || answer.status > 299 || !isObject(answer.body)) throw apiServerAnswered(operation, answer.status, answer.body);
    return answer.body;
  }

  async patchLabels(name: string, labels: Readonly<Record<string, string>>, signal: AbortSignal | undefined): Promise<void> {
    // A JSON merge patch: a strategic-merge patch of a revision as stored (its `data` holds
    // `$patch: replace` directives) is refused 422 as a change of the immutable `data`.
    const operation = `label ControllerRevision "${this.namespace}/${name}"`;
    const path = `${this.base}/${enc(name)}`;
    let answer = await this.write('PATCH', path, operation, signal, { metadata: { labels } }, MERGE_PATCH);
    if (refusedAsDataChange(answer)) {
      const current = await this.client.request({ method: 'GET', path, operation: `${operation} (reading it after a refused patch)`, ...(signal === undefined ? {} : { signal }) });
      if (current.status === 200 && isObject(current.body)) {
        const read: ControllerRevision = current.body;
        answer = await this.putWithEarlierData({ ...read, metadata: { ...read.metadata, labels: { ...stringMapOf(read.metadata?.labels), ...labels } } }, operation, signal);
      }
    }
    if (answer.status < 200 || answer.status > 299) throw apiServerAnswered(operation, answer.status, answer.body);
  }

  async delete(revision: ControllerRevision, signal: AbortSignal | undefined): Promise<void> {
    const name = stringOf(revision.metadata?.name) ?? '';
    const operation = `delete ControllerRevision "${this.namespace}/${name}"`;
    const uid = stringOf(revision.metadata?.uid);
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', ...(uid === undefined ? {} : { preconditions: { uid } }) };
    const answer = await this.write('DELETE', `${this.base}/${enc(name)}`, operation, signal, body);
    // Gone already, or replaced by another of the same name (a precondition 409): either way not ours to delete now.
    if (answer.status === 404 || answer.status === 409) return;
    if (answer.status < 200 || answer.status > 299) throw apiServerAnswered(operation, answer.status, answer.body);
  }
}

/**
 * The ControllerRevisions. Each write is safe to send again after no answer
 * (`guarded`, kube-request.ts): a repeated create's AlreadyExists makes
 * registration read the revision back, the renumbering tests the
 * resourceVersion, the labels patch sets the same values, and a repeated
 * delete's 404 or 409 counts as done. The owner reference is in the version
 * the sets are stored and read in (`versions`; v1alpha1 when not given), as
 * Kruise writes it: v1beta1 under Kruise 1.9's CRD.
 */
export function kubeRevisionStore(
  client: KubeClient,
  namespace: string,
  options: { pageSize?: number; onPage?: PagedListOptions['onPage']; versions?: SidecarSetVersions } = {},
): RevisionStore {
  const requests = new RevisionRequests(client, namespace, options);
  // Own properties, not the class's methods: callers spread a store to replace one of them.
  return {
    namespace,
    get: (name, signal) => requests.get(name, signal),
    // Async, so that a name that cannot be selected rejects rather than throws; the selector is the webhooks' (keys checked too).
    list: async (setName, labels = {}, signal) => requests.list(revisionSelector(setName, labels), `list ControllerRevisions of SidecarSet "${setName}"`, signal),
    listAll: (signal) => requests.list(LABEL_SIDECARSET_NAME, `list ControllerRevisions in "${namespace}"`, signal),
    create: (revision, signal) => requests.create(revision, signal),
    setNumber: (revision, number, signal) => requests.setNumber(revision, number, signal),
    patchLabels: (name, labels, signal) => requests.patchLabels(name, labels, signal),
    delete: (revision, signal) => requests.delete(revision, signal),
  };
}
