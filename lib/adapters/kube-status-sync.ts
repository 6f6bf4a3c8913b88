/**
 * The status reconciler's I/O with the API server: the paged pod list, the
 * Namespace labels of one pass, status patches and events. Reads are never
 * cached here: a status must come from the cluster as it is now.
 */
import {
  ApiException,
  CoreV1Event,
  PatchStrategy,
  setHeaderOptions,
  V1EventSource,
  V1ObjectMeta,
  V1ObjectReference,
  type KubeConfig,
} from '@kubernetes/client-node';
import { isObject, stringMapOf } from '../kube/json.ts';
import type { Pod } from '../kube/types.ts';
import type { NamespaceSource, PodEventSink, PodPages, SidecarSetEventSink, SidecarSetStatusWriter } from '../ports.ts';
import type { NamespaceLabels } from '../sidecarset/match.ts';
import { summarizePod } from '../sidecarset/status.ts';
import { API_VERSION, GROUP, KIND, VERSION } from '../sidecarset/types.ts';
import { StatusConflictError } from '../status-sync/errors.ts';
import { KubeApiError } from './kube-api-error.ts';
import { pagedList, type PagedListOptions } from './kube-paged-list.ts';
import { rawKubeClient, type RawKubeClient, type RequestRetry } from './kube-raw.ts';
import { MAX_POD_PAGE_SIZE } from './pod-page-size.ts';
import { abortWith, clientNodeError, type KubeClients } from './kubeconfig.ts';
import { SIDECARSET_PLURAL } from './kube-sources.ts';

/** The most pods per page: the API server's recommended chunk size, as kubectl uses (smaller when pods are big: pod-page-size.ts). */
export const DEFAULT_POD_PAGE_SIZE = MAX_POD_PAGE_SIZE;
/** The longest one page (or one other call) may take. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

export interface StatusSyncAdapterOptions {
  /** The longest one attempt of a request may take. Default {@link DEFAULT_CALL_TIMEOUT_MS}. */
  callTimeoutMs?: number;
  /** Told before a request is sent again (kube-raw.ts says which are). */
  onRetry?: (retry: RequestRetry) => void;
}

/** The raw client of the reconciler's adapters: attempts bounded by `callTimeoutMs`, reads retried, retries told. */
export function reconcilerClient(kc: KubeConfig, options: StatusSyncAdapterOptions & { retryDelaysMs?: readonly number[]; writes?: 'guarded' | 'once' }): RawKubeClient {
  return rawKubeClient(kc, {
    attemptTimeoutMs: options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    ...(options.retryDelaysMs === undefined ? {} : { retryDelaysMs: options.retryDelaysMs }),
    ...(options.writes === undefined ? {} : { writes: options.writes }),
    ...(options.onRetry === undefined ? {} : { onRetry: options.onRetry }),
  });
}

/** The caller's signal, if any, bounded by a per-call timeout. */
export function callSignal(signal: AbortSignal | undefined, timeoutMs: number): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
}

const LIST_PODS = 'list pods';

/**
 * Every pod, page by page, each reduced to a PodSummary as soon as its page
 * arrives, so that what the pass holds is one page (bounded in bytes:
 * pod-page-size.ts) and the summaries.
 *
 * Why not CoreV1Api.listPodForAllNamespaces: its typed deserialisation walks
 * every field of every pod into model classes, which measured about twice the
 * time of JSON.parse alone (some 70 us per realistic pod, seconds per 100k)
 * for fields that are thrown away at once. This reads the page's JSON
 * through the same KubeConfig authentication and TLS settings, keeps what
 * status needs, and lets the page go before asking for the next one.
 *
 * A page that got no complete answer (a dropped connection, a slow answer)
 * is asked for again (kube-raw.ts): the continue token names the same
 * snapshot, so the list goes on where it was instead of failing the whole
 * pass (at 100,000 pods, 200 pages) on one dropped connection.
 */
export function kubePodPages(kc: KubeConfig, options: StatusSyncAdapterOptions & { pageSize?: number; retryDelaysMs?: readonly number[]; onPage?: PagedListOptions['onPage'] } = {}): PodPages {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new KubeApiError(LIST_PODS, 'the KubeConfig has no current cluster');
  const client = reconcilerClient(kc, options);
  const listOptions: PagedListOptions = { maxPageSize: options.pageSize ?? DEFAULT_POD_PAGE_SIZE, ...(options.onPage === undefined ? {} : { onPage: options.onPage }) };
  return {
    async *pages(signal) {
      for await (const page of pagedList(client, '/api/v1/pods', {}, LIST_PODS, signal, listOptions)) {
        // Summaries only: the page's whole pods are garbage before the next page is asked for.
        yield page.items.map((item) => summarizePod(item as Pod));
      }
    },
  };
}

type Labels = Readonly<Record<string, string>>;

/**
 * Namespace labels for one pass: the first call lists every namespace (a
 * few calls however many namespaces there are, instead of one GET each); a
 * name the list did not have (created since) is read on its own. Make one
 * per pass so that every pass sees current labels.
 */
export function kubeNamespaceSnapshot(clients: Pick<KubeClients, 'core'>, options: StatusSyncAdapterOptions = {}): NamespaceSource {
  const timeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  let listed: Promise<Map<string, Labels>> | undefined;

  async function listAll(signal: AbortSignal | undefined): Promise<Map<string, Labels>> {
    const all = new Map<string, Labels>();
    let next: string | undefined;
    do {
      try {
        const list = await clients.core.listNamespace({ limit: DEFAULT_POD_PAGE_SIZE, ...(next !== undefined ? { _continue: next } : {}) }, abortWith(callSignal(signal, timeoutMs)));
        for (const ns of list.items) if (ns.metadata?.name !== undefined) all.set(ns.metadata.name, stringMapOf(ns.metadata.labels));
        next = list.metadata?._continue === '' ? undefined : list.metadata?._continue;
      } catch (error) {
        throw clientNodeError('list namespaces', error);
      }
    } while (next !== undefined);
    return all;
  }

  async function readOne(name: string, signal: AbortSignal | undefined): Promise<Labels | undefined> {
    try {
      const ns = await clients.core.readNamespace({ name }, abortWith(callSignal(signal, timeoutMs)));
      return stringMapOf(ns.metadata?.labels);
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw clientNodeError(`get namespace "${name}"`, error);
    }
  }

  return {
    async labels(names, signal) {
      if (listed === undefined) {
        listed = listAll(signal);
        // A failed list is not kept: a later call of the same pass tries again.
        listed.catch(() => {
          listed = undefined;
        });
      }
      const all = await listed;
      const out = new Map<string, Labels>();
      const missing: string[] = [];
      for (const name of new Set(names)) {
        const labels = all.get(name);
        if (labels !== undefined) out.set(name, labels);
        else if (name !== '') missing.push(name);
      }
      for (const [name, labels] of await Promise.all(missing.map(async (name) => [name, await readOne(name, signal)] as const))) {
        if (labels === undefined) continue;
        all.set(name, labels);
        out.set(name, labels);
      }
      return out satisfies NamespaceLabels;
    },
  };
}

/**
 * Status writes as merge patches of the `status` subresource. client-node's
 * patch calls send JSON Patch by default; the Content-Type header is set to
 * merge patch per call (wire.md). The patch carries
 * `metadata.resourceVersion`, which the API server treats as a precondition:
 * a set changed since it was read answers 409 instead of being overwritten.
 */
export function kubeStatusWriter(clients: Pick<KubeClients, 'customObjects'>, options: StatusSyncAdapterOptions = {}): SidecarSetStatusWriter {
  const timeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  return {
    async patchStatus(name, resourceVersion, status, signal) {
      const body = { ...(resourceVersion !== undefined ? { metadata: { resourceVersion } } : {}), status };
      try {
        await clients.customObjects.patchClusterCustomObjectStatus(
          { group: GROUP, version: VERSION, plural: SIDECARSET_PLURAL, name, body },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch, abortWith(callSignal(signal, timeoutMs))),
        );
        return 'written';
      } catch (error) {
        if (error instanceof ApiException && error.code === 409) {
          throw new StatusConflictError(name, `SidecarSet "${name}" changed since resourceVersion ${resourceVersion ?? '(none)'}`, { cause: error });
        }
        if (error instanceof ApiException && error.code === 404) return 'gone';
        throw clientNodeError(`patch status of SidecarSet "${name}"`, error);
      }
    },
    async get(name, signal) {
      try {
        const set: unknown = await clients.customObjects.getClusterCustomObject(
          { group: GROUP, version: VERSION, plural: SIDECARSET_PLURAL, name },
          abortWith(callSignal(signal, timeoutMs)),
        );
        if (!isObject(set)) throw new KubeApiError(`get SidecarSet "${name}"`, 'the answer is not an object');
        return set;
      } catch (error) {
        if (error instanceof ApiException && error.code === 404) return undefined;
        throw clientNodeError(`get SidecarSet "${name}"`, error);
      }
    },
  };
}

/** The component events name as their source. */
export const EVENT_SOURCE = 'sidecarset-status-sync';
/**
 * Where events about a cluster-scoped object go: client-go's recorder uses
 * `default` too, and `kubectl describe` finds them there.
 */
export const EVENT_NAMESPACE = 'default';

/** A DNS-1123 label from an object name (a SidecarSet name may hold upper case and edge dashes). */
function eventNamePrefix(objectName: string, fallback: string): string {
  const label = objectName.toLowerCase().replace(/[^a-z0-9-]/g, '').replace(/^-+|-+$/g, '');
  return `${label === '' ? fallback : label}.`;
}

interface EventTarget {
  namespace: string;
  involvedObject: { apiVersion: string; kind: string; name: string; uid: string; namespace?: string };
  /** For the error message, e.g. `SidecarSet "agent"`. */
  what: string;
}

type EventOptions = StatusSyncAdapterOptions & { now?: () => Date };

/** Creates one new core/v1 Event (generated name, never updated). */
function eventCreator(clients: Pick<KubeClients, 'core'>, options: EventOptions) {
  const timeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const now = options.now ?? (() => new Date());
  return async (target: EventTarget, event: { type: string; reason: string; message: string }, signal: AbortSignal | undefined): Promise<void> => {
    const at = now();
    // The typed API serialises through its model classes, so the body is built from them.
    const body = Object.assign(new CoreV1Event(), {
      metadata: Object.assign(new V1ObjectMeta(), { generateName: eventNamePrefix(target.involvedObject.name, target.involvedObject.kind.toLowerCase()), namespace: target.namespace }),
      involvedObject: Object.assign(new V1ObjectReference(), target.involvedObject),
      type: event.type,
      reason: event.reason,
      // events.k8s.io caps notes at 1 kB; stay inside it for either API.
      message: event.message.slice(0, 1024),
      source: Object.assign(new V1EventSource(), { component: EVENT_SOURCE }),
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
    });
    try {
      await clients.core.createNamespacedEvent({ namespace: target.namespace, body }, abortWith(callSignal(signal, timeoutMs)));
    } catch (error) {
      throw clientNodeError(`create event on ${target.what}`, error);
    }
  };
}

/**
 * Core/v1 Events about SidecarSets (needs `create` on events, and nothing
 * more: each event is new, with a generated name, never updated).
 */
export function kubeEventSink(clients: Pick<KubeClients, 'core'>, options: EventOptions = {}): SidecarSetEventSink {
  const create = eventCreator(clients, options);
  return {
    record: (event, signal) =>
      create(
        {
          namespace: EVENT_NAMESPACE,
          involvedObject: { apiVersion: API_VERSION, kind: KIND, name: event.sidecarSet.name, uid: event.sidecarSet.uid },
          what: `SidecarSet "${event.sidecarSet.name}"`,
        },
        event,
        signal,
      ),
  };
}

/** Core/v1 Events about pods, in the pod's namespace, as Kruise's recorder writes them for a HotUpgrade flip. */
export function kubePodEventSink(clients: Pick<KubeClients, 'core'>, options: EventOptions = {}): PodEventSink {
  const create = eventCreator(clients, options);
  return {
    record: (event, signal) =>
      create(
        {
          namespace: event.pod.namespace,
          involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: event.pod.namespace, name: event.pod.name, uid: event.pod.uid },
          what: `pod ${event.pod.namespace}/${event.pod.name}`,
        },
        event,
        signal,
      ),
  };
}
