/**
 * The webhooks' {@link RevisionSource}: the ControllerRevisions that record
 * SidecarSet specs, read fresh from the API server through a
 * {@link RevisionReader} (the project's HTTPS client or client-node), one
 * call per read (a list, one per page of {@link REVISION_PAGE_SIZE}). Only a
 * set that pins a revision is read for, so nothing is cached: a revision the
 * reconciler registered a moment ago is seen.
 */
import { isObject, objectOf } from '../kube/json.ts';
import { labelValueErrors, qualifiedNameErrors } from '../kube/names.ts';
import type { RevisionSource } from '../ports.ts';
import { LABEL_SIDECARSET_NAME, type ControllerRevision } from '../sidecarset/revisions.ts';
import { asKubeApiError, KubeApiError } from './kube-api-error.ts';
import { DEFAULT_MAX_LOAD_MS } from './cached-list.ts';
import { getControllerRevisionOperation, listControllerRevisionsOperation, type RevisionReader } from './kube-sources.ts';

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
