/**
 * The live sources: SidecarSets and Namespace labels read from the API server
 * through a small port ({@link ClusterReader}), fresh for every review
 * (cached-list.ts): a pod created after a SidecarSet's CREATE or UPDATE has
 * returned is admitted against that version of the set, on a warm Lambda and
 * on the local server alike. Concurrent reviews share a read only when it
 * started after each of them arrived, and the last good answer bridges a
 * brief API outage (bounded, reported through `onStale`).
 *
 * One implementation of the port, {@link kubeClusterReader}, over the one
 * request function (kube-request.ts), whichever connection it has (the
 * settings the project reads itself, or client-node's KubeConfig for
 * kubeconfigs that need it): this module loads no client-node.
 */
import { isObject, stringMapOf } from '../kube/json.ts';
import type { NamespaceSource, PodSource, SidecarSetSource } from '../ports.ts';
import type { Pod } from '../kube/types.ts';
import { getPodOperation, podPath } from './kube-pod-get.ts';
import type { NamespaceLabels } from '../sidecarset/match.ts';
import type { SidecarSet } from '../sidecarset/types.ts';
import {
  cachedList,
  DEFAULT_MAX_LOAD_MS,
  DEFAULT_MAX_STALENESS_MS,
  type CacheClock,
  type CachedList,
  type StaleReport,
} from './cached-list.ts';
import { apiServerAnswered, asKubeApiError, KubeApiError } from './kube-api-error.ts';
import { getNamespaceOperation } from './kube-namespaces.ts';
import { getObject, type KubeClient } from './kube-request.ts';
import { getSidecarSetOperation, keptSidecarSet, LIST_SIDECARSETS, listSidecarSets, sidecarSetPath } from './kube-sidecarsets.ts';
import { fixedSidecarSetVersion, type SidecarSetVersions } from './kube-sidecarsets-version.ts';
import { internalSidecarSets } from '../conversion/internal-model.ts';
import { VERSION } from '../sidecarset/types.ts';
import { applyDelta, indexSnapshot, listedVersions, METADATA_LIST_ACCEPT, planDelta, tableVersions, type ListedVersion, type SnapshotIndex } from './sidecarset-delta.ts';
import { listSidecarSetTable } from './kube-sidecarset-table.ts';

/** How the live sources bound their calls and bridge outages. */
export interface KubeSourceOptions {
  /** The oldest answer served when the API cannot be read. Default 60000 ms. */
  maxStalenessMs?: number;
  /** The longest one API call may take, whatever the caller's own deadline. Default 5000 ms. */
  apiTimeoutMs?: number;
  /**
   * The longest a whole SidecarSet list may take, its pages each bounded by
   * the client's attempt timeout (clusterReader gives it `apiTimeoutMs`).
   * Default {@link LIST_LOAD_CALLS} times `apiTimeoutMs`.
   */
  listLoadMs?: number;
  /** Told whenever a stale answer is served (log it as a warning). */
  onStale?: (report: StaleReport) => void;
  clock?: CacheClock;
}

/** The settings {@link sourceOptionsFromEnv} reads. */
export interface KubeSourceSettings {
  maxStalenessMs: number;
  apiTimeoutMs: number;
}

/** An environment setting that is not a usable value; thrown at cold start. */
export class SourceOptionsError extends Error {
  readonly variable: string;
  constructor(variable: string, problem: string) {
    super(`${variable} ${problem}`);
    this.name = 'SourceOptionsError';
    this.variable = variable;
  }
}

/**
 * A duration setting from the environment; unset or empty means `fallback`.
 * @throws SourceOptionsError naming the variable when it is not whole milliseconds >= `min`.
 */
export function millisecondsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  variable: string,
  fallback: number,
  min: number,
): number {
  const raw = env[variable]?.trim();
  if (raw === undefined || raw === '') return fallback;
  // Digits only: "10s" or "2e3" are someone guessing the format, and Number()
  // would read "" as 0 and "1e3" as 1000 without a word.
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new SourceOptionsError(variable, `must be a whole number of milliseconds, at least ${min}; got "${raw}"`);
  }
  return value;
}

/**
 * The variable that once set how long a SidecarSet list was reused. Every
 * review now reads the sets fresh, so it is no longer read; the functions
 * say so at cold start (see {@link retiredSourceSettings}) rather than
 * ignore it without a word.
 */
export const RETIRED_CACHE_TTL_VARIABLE = 'SIDECARSET_CACHE_TTL_MS';

/** Why a variable the environment still sets is no longer read; one line each, for a cold-start warning. */
export function retiredSourceSettings(env: Readonly<Record<string, string | undefined>>): string[] {
  const value = env[RETIRED_CACHE_TTL_VARIABLE]?.trim();
  if (value === undefined || value === '') return [];
  return [
    `${RETIRED_CACHE_TTL_VARIABLE}=${value} is no longer read: every review reads the SidecarSets fresh from the API server, and a recent list is served only while the API server cannot be read (SIDECARSET_CACHE_MAX_STALENESS_MS); remove it`,
  ];
}

/**
 * The sources' settings from the environment: SIDECARSET_CACHE_MAX_STALENESS_MS
 * (default 60000; 0 never serves a stale answer) and KUBE_API_TIMEOUT_MS
 * (default 5000, the cap on one API call). Unset or empty means the default.
 * @throws SourceOptionsError naming the variable and the value it could not use.
 */
export function sourceOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): KubeSourceSettings {
  return {
    maxStalenessMs: millisecondsFromEnv(env, 'SIDECARSET_CACHE_MAX_STALENESS_MS', DEFAULT_MAX_STALENESS_MS, 0),
    apiTimeoutMs: millisecondsFromEnv(env, 'KUBE_API_TIMEOUT_MS', DEFAULT_MAX_LOAD_MS, 1),
  };
}

/** How many calls' time a whole SidecarSet list may take by default (its pages, or a metadata list and the GETs of the changed sets). */
export const LIST_LOAD_CALLS = 6;

/** Makes the listed items immutable: one list is shared by every request it answers. */
function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const item of Object.values(value)) deepFreeze(item);
}

function cacheSettings(options: KubeSourceOptions) {
  return {
    maxStalenessMs: options.maxStalenessMs,
    maxLoadMs: options.apiTimeoutMs,
    clock: options.clock,
    onStale: options.onStale,
  };
}

/** The revision reads, as errors and logs name them. */
export const getControllerRevisionOperation = (namespace: string, name: string): string => `get ControllerRevision "${namespace}/${name}"`;
export const listControllerRevisionsOperation = (namespace: string, labelSelector: string): string =>
  `list ControllerRevisions in namespace "${namespace}" labelled ${labelSelector}`;

/**
 * What the live sources read from the API server. Implementations fail with
 * a KubeApiError named for the read (anything else is wrapped as one).
 */
export interface ClusterReader {
  /**
   * The SidecarSetList (cluster-scoped, in the version the cluster stores):
   * `kind`, `metadata.resourceVersion` and `items`, each set as the functions
   * keep it (kube-sidecarsets.ts: keptSidecarSet), read page by page with
   * each page's bytes bounded.
   */
  listSidecarSets(signal: AbortSignal): Promise<unknown>;
  /** The Namespace object, or undefined when there is none of that name (404). */
  readNamespace(name: string, signal: AbortSignal): Promise<object | undefined>;
  /**
   * The SidecarSets as a PartialObjectMetadataList (names and resourceVersions, the rest of each item's metadata dropped as read; paged as the full list),
   * so that only changed sets need reading (sidecarset-delta.ts). Optional:
   * without it and {@link readSidecarSet}, every read is a full list.
   */
  readonly listSidecarSetMetadata?: (signal: AbortSignal) => Promise<unknown>;
  /**
   * The SidecarSets as a Table without their objects (kube-sidecarset-table.ts),
   * whose resourceVersion column, when the CRD has it, says which sets
   * changed in a few bytes per set. Optional: without it, the metadata list.
   */
  readonly listSidecarSetTable?: (signal: AbortSignal) => Promise<unknown>;
  /** One SidecarSet as stored, or undefined when there is none of that name (404). */
  readonly readSidecarSet?: (name: string, signal: AbortSignal) => Promise<object | undefined>;
}

/**
 * The ControllerRevisions (apps/v1) that record SidecarSet specs, read as
 * raw JSON (a typed client could drop fields of `data`). Implementations
 * fail with a KubeApiError named for the read.
 */
export interface RevisionReader {
  /** The ControllerRevision, or undefined when there is none of that name (404). */
  readControllerRevision(namespace: string, name: string, signal: AbortSignal): Promise<object | undefined>;
  /**
   * One page of the ControllerRevisionList matching `labelSelector` (already a valid selector), as the API server
   * sent it: at most `page.limit` items, from `page.continue` (the token of the page before) when given.
   */
  listControllerRevisions(namespace: string, labelSelector: string, signal: AbortSignal, page?: ListPage): Promise<unknown>;
}

/** Which page of a list to read: `limit` items from the `continue` token the previous page gave. */
export interface ListPage {
  limit: number;
  continue?: string;
}

/** A list query: the selector, and the page when given. */
function listQuery(labelSelector: string, page: ListPage | undefined): Record<string, string> {
  return { labelSelector, ...(page === undefined ? {} : { limit: String(page.limit) }), ...(page?.continue === undefined ? {} : { continue: page.continue }) };
}

/** The API server's URL, for logs; every reader the functions compose has one, and reads revisions and single pods too. */
export interface ServerReader extends ClusterReader, RevisionReader {
  readonly server: string;
  /** The Pod, or undefined when there is none of that name (404): one GET, never a list. */
  readPod(namespace: string, name: string, signal: AbortSignal): Promise<object | undefined>;
}

const NEVER_ABORTED = new AbortController().signal;

/** One pod by name through a reader: the pod an Eviction names (lib/webhooks/pod-eviction.ts). */
export function kubePodSource(reader: Pick<ServerReader, 'readPod'>): PodSource {
  return {
    get: async (namespace, name, signal) => (await reader.readPod(namespace, name, signal ?? NEVER_ABORTED)) as Pod | undefined,
  };
}

/** One object, or undefined when the API server answers 404. */
async function readObject(client: KubeClient, path: string, operation: string, signal: AbortSignal): Promise<object | undefined> {
  return getObject(client, path, operation, signal);
}

/** A GET of a JSON answer (a list), any status but 2xx an error with the API server's reason. */
async function getJson(client: KubeClient, path: string, query: Record<string, string> | undefined, operation: string, signal: AbortSignal, accept?: string): Promise<unknown> {
  const answer = await client.request({ method: 'GET', path, operation, signal, ...(query === undefined ? {} : { query }), ...(accept === undefined ? {} : { accept }) });
  if (answer.status < 200 || answer.status > 299) throw apiServerAnswered(operation, answer.status, answer.body);
  if (typeof answer.body === 'string') throw new KubeApiError(operation, 'the answer is not JSON', answer.status);
  return answer.body;
}

/**
 * The port over the one request function: what the webhooks (and the
 * reconciler's SidecarSet list) read with. SidecarSets are read in the
 * version `versions` gives (the stored one, when the functions compose it
 * with discovery: kube-sidecarsets-version.ts); a list that answers 404
 * makes it ask again next time.
 */
export function kubeClusterReader(client: KubeClient, versions: SidecarSetVersions = fixedSidecarSetVersion(VERSION)): ServerReader {
  const revisions = (namespace: string) => `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/controllerrevisions`;
  // Read in pages and assembled as one list (its kind says which form the server sent), each set kept as the functions keep it.
  const listSets = async (signal: AbortSignal, keep: (item: Record<string, unknown>) => unknown, accept?: string): Promise<unknown> => {
    const { items, resourceVersion, kind } = await listSidecarSets(client, versions, signal, keep, accept);
    return { kind, metadata: { resourceVersion }, items };
  };
  return {
    server: client.server,
    listSidecarSets: (signal) => listSets(signal, keptSidecarSet),
    listSidecarSetMetadata: (signal) => listSets(signal, keptMetadata, METADATA_LIST_ACCEPT),
    listSidecarSetTable: (signal) => listSidecarSetTable(client, versions, LIST_SIDECARSETS, signal),
    readSidecarSet: async (name, signal) => readObject(client, sidecarSetPath(await versions.current(signal), name), getSidecarSetOperation(name), signal),
    readNamespace: (name, signal) => readObject(client, `/api/v1/namespaces/${encodeURIComponent(name)}`, getNamespaceOperation(name), signal),
    readPod: (namespace, name, signal) => readObject(client, podPath(namespace, name), getPodOperation(namespace, name), signal),
    readControllerRevision: (namespace, name, signal) =>
      readObject(client, `${revisions(namespace)}/${encodeURIComponent(name)}`, getControllerRevisionOperation(namespace, name), signal),
    listControllerRevisions: (namespace, labelSelector, signal, page) =>
      getJson(client, revisions(namespace), listQuery(labelSelector, page), listControllerRevisionsOperation(namespace, labelSelector), signal),
  };
}

/**
 * An item of the metadata list reduced to what says whether a set changed:
 * its name and resourceVersion (its annotations, labels and managedFields,
 * as large as a set's, are dropped as read). A full SidecarSet, sent by a
 * server that ignored the `as=` parameter, is kept as a set is.
 */
function keptMetadata(item: Record<string, unknown>): unknown {
  if (item.kind !== 'PartialObjectMetadata') return keptSidecarSet(item);
  const metadata = isObject(item.metadata) ? item.metadata : {};
  return { kind: item.kind, metadata: { name: metadata.name, resourceVersion: metadata.resourceVersion } };
}

/** The items of a SidecarSetList as the API server sent them, in the internal model (lib/conversion/internal-model.ts). */
function sidecarSetsOf(body: unknown): readonly SidecarSet[] {
  if (!isObject(body) || !Array.isArray(body.items)) {
    throw new KubeApiError(LIST_SIDECARSETS, 'the answer is not a list (no items array)');
  }
  const items: unknown[] = body.items;
  if (!items.every(isObject)) throw new KubeApiError(LIST_SIDECARSETS, 'the list holds an item that is not an object');
  const sets = internalSidecarSets(items);
  deepFreeze(sets);
  return sets;
}

/**
 * The sets of a whole SidecarSetList sent in answer to a Table or metadata
 * list (a server that ignored the `as=` parameter); undefined for anything
 * else, or a page of one (it names a continue token).
 */
function wholeList(body: unknown): { sets: readonly SidecarSet[] } | undefined {
  if (!isObject(body) || body.kind !== 'SidecarSetList') return undefined;
  const token = isObject(body.metadata) ? body.metadata.continue : undefined;
  return typeof token === 'string' && token !== '' ? undefined : { sets: sidecarSetsOf(body) };
}

/** Runs one read, naming it in the KubeApiError it fails with. */
async function named<T>(operation: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw asKubeApiError(operation, error);
  }
}

type SidecarSetReader = Pick<ClusterReader, 'listSidecarSets' | 'listSidecarSetMetadata' | 'listSidecarSetTable' | 'readSidecarSet'>;

/** The sets' names and resourceVersions now; the sets themselves when the server sent a full list; undefined when nothing said. */
async function listedNow(reader: SidecarSetReader, signal: AbortSignal): Promise<ListedVersion[] | { sets: readonly SidecarSet[] } | undefined> {
  const { listSidecarSetTable: table, listSidecarSetMetadata: metadata } = reader;
  if (table !== undefined) {
    const body = await named(LIST_SIDECARSETS, () => table(signal));
    const versions = tableVersions(body) ?? wholeList(body);
    if (versions !== undefined) return versions;
  }
  if (metadata === undefined) return undefined;
  const body = await named(LIST_SIDECARSETS, () => metadata(signal));
  return listedVersions(body) ?? wholeList(body);
}

/** The named sets as stored now, each kept and frozen; undefined for one that is gone. */
async function fetchedSets(names: readonly string[], signal: AbortSignal, readSidecarSet: NonNullable<ClusterReader['readSidecarSet']>): Promise<Map<string, SidecarSet | undefined>> {
  const out = new Map<string, SidecarSet | undefined>();
  await Promise.all(
    names.map(async (name) => {
      const operation = getSidecarSetOperation(name);
      const set: unknown = await named(operation, () => readSidecarSet(name, signal));
      if (set === undefined) out.set(name, undefined);
      else if (isObject(set)) {
        const internal = keptSidecarSet(set);
        deepFreeze(internal);
        out.set(name, internal);
      } else throw new KubeApiError(operation, 'the answer is not an object');
    }),
  );
  return out;
}

/** The SidecarSets, read as a delta from the last snapshot when the reader can say what changed, else listed whole. */
class SidecarSetReads {
  readonly #reader: SidecarSetReader;
  // The last snapshot read; any earlier one would be as correct (see sidecarset-delta.ts).
  #held: SnapshotIndex | undefined;

  constructor(reader: SidecarSetReader) {
    this.#reader = reader;
  }

  async read(signal: AbortSignal): Promise<readonly SidecarSet[]> {
    const { readSidecarSet } = this.#reader;
    const base = this.#held;
    if (base === undefined || readSidecarSet === undefined) return this.#fullList(signal);
    const listed = await listedNow(this.#reader, signal);
    if (listed === undefined) return this.#fullList(signal);
    if (!Array.isArray(listed)) return this.#remember(listed.sets);
    const plan = planDelta(listed, base);
    if (plan.kind === 'full') return this.#fullList(signal);
    return this.#remember(applyDelta(listed, base, await fetchedSets(plan.names, signal, readSidecarSet)));
  }

  #remember(sets: readonly SidecarSet[]): readonly SidecarSet[] {
    this.#held = indexSnapshot(sets);
    return sets;
  }

  async #fullList(signal: AbortSignal): Promise<readonly SidecarSet[]> {
    return this.#remember(sidecarSetsOf(await named(LIST_SIDECARSETS, () => this.#reader.listSidecarSets(signal))));
  }
}

/**
 * Every SidecarSet in the cluster, as raw JSON so that fields this project
 * does not know survive. Every review gets a list that started after it
 * arrived (an admission must see the set created just before its pod), in
 * byte-bounded pages (a LIST without resourceVersion is a consistent read).
 * After the first, a read asks only which sets changed and GETs those
 * (sidecarset-delta.ts), through the CRD's resourceVersion column or a
 * metadata-only list. The items are frozen: they are shared between requests.
 */
export function kubeSidecarSetSource(reader: SidecarSetReader, options: KubeSourceOptions = {}): SidecarSetSource {
  const reads = new SidecarSetReads(reader);
  // A full list of many megabytes is several calls: bounded per call (by the client) rather than as one, so a load
  // that outlasts a review's deadline still fills the cache and the next reviews read only what changed since.
  const listLoadMs = options.listLoadMs ?? LIST_LOAD_CALLS * (options.apiTimeoutMs ?? DEFAULT_MAX_LOAD_MS);
  const cache = cachedList<readonly SidecarSet[]>({ what: LIST_SIDECARSETS, load: (signal) => reads.read(signal), ...cacheSettings(options), maxLoadMs: listLoadMs });
  return { list: (signal) => cache.get(signal) };
}

type Labels = Readonly<Record<string, string>>;

/**
 * Namespace labels, one GET per namespace, each read fresh with the same
 * rules as the SidecarSet list (a label just added applies to the next pod);
 * a missing namespace (404) is remembered as absent for outages. A GET per
 * name, not a list: a review needs one namespace's labels, and a list in a
 * cluster of thousands of namespaces would move megabytes to read one.
 * Entries that could no longer be served are dropped on the next call.
 */
export function kubeNamespaceSource(reader: Pick<ClusterReader, 'readNamespace'>, options: KubeSourceOptions = {}): NamespaceSource {
  const caches = new Map<string, CachedList<Labels | undefined>>();

  const cacheFor = (name: string): CachedList<Labels | undefined> => {
    let cache = caches.get(name);
    if (cache === undefined) {
      const operation = getNamespaceOperation(name);
      cache = cachedList<Labels | undefined>({
        what: operation,
        async load(signal) {
          let namespace: object | undefined;
          try {
            namespace = await reader.readNamespace(name, signal);
          } catch (error) {
            throw asKubeApiError(operation, error);
          }
          if (namespace === undefined) return undefined;
          const metadata = (namespace as { metadata?: unknown }).metadata;
          return Object.freeze(stringMapOf(isObject(metadata) ? metadata.labels : undefined));
        },
        ...cacheSettings(options),
      });
      caches.set(name, cache);
    }
    return cache;
  };

  return {
    async labels(names, signal) {
      for (const [name, cache] of caches) if (cache.idle()) caches.delete(name);
      // An empty name would read /api/v1/namespaces/, the list of all of them.
      const wanted = [...new Set(names)].filter((name) => name !== '');
      const found = await Promise.all(wanted.map(async (name) => [name, await cacheFor(name).get(signal)] as const));
      const out = new Map<string, Labels>();
      for (const [name, labels] of found) if (labels !== undefined) out.set(name, labels);
      return out satisfies NamespaceLabels;
    },
  };
}
