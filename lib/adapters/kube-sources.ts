/**
 * The live sources: SidecarSets and Namespace labels read from the API server
 * with client-node, each behind a short-lived cache (cached-list.ts) so that a
 * burst of admissions costs one call, concurrent requests share it, and a
 * brief API outage is bridged with a recent answer.
 */
import {
  ApiException,
  Observable,
  type ConfigurationOptions,
  type ObservableMiddleware,
} from '@kubernetes/client-node';
import { errorMessage } from '../errors.ts';
import { isObject, stringMapOf } from '../kube/json.ts';
import type { NamespaceSource, SidecarSetSource } from '../ports.ts';
import type { NamespaceLabels } from '../sidecarset/match.ts';
import { GROUP, VERSION, type SidecarSet } from '../sidecarset/types.ts';
import {
  cachedList,
  DEFAULT_MAX_LOAD_MS,
  DEFAULT_MAX_STALENESS_MS,
  DEFAULT_TTL_MS,
  type CacheClock,
  type CachedList,
  type StaleReport,
} from './cached-list.ts';
import type { KubeClients } from './kubeconfig.ts';

/** The resource name of SidecarSets in apps.kruise.io. */
export const SIDECARSET_PLURAL = 'sidecarsets';

/** How the live sources cache and bound their calls. */
export interface KubeSourceOptions {
  /** How long a read is served from the cache without asking again. Default 2000 ms. */
  ttlMs?: number;
  /** The oldest cached answer served when the API cannot be read. Default 60000 ms. */
  maxStalenessMs?: number;
  /** The longest one API call may take, whatever the caller's own deadline. Default 5000 ms. */
  apiTimeoutMs?: number;
  /** Told whenever a stale answer is served (log it as a warning). */
  onStale?: (report: StaleReport) => void;
  clock?: CacheClock;
}

/** The settings {@link sourceOptionsFromEnv} reads. */
export interface KubeSourceSettings {
  ttlMs: number;
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
 * The sources' settings from the environment: SIDECARSET_CACHE_TTL_MS
 * (default 2000), SIDECARSET_CACHE_MAX_STALENESS_MS (default 60000; 0 never
 * serves a stale answer) and KUBE_API_TIMEOUT_MS (default 5000, the cap on one
 * API call). Unset or empty means the default.
 * @throws SourceOptionsError naming the variable and the value it could not use.
 */
export function sourceOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): KubeSourceSettings {
  return {
    ttlMs: millisecondsFromEnv(env, 'SIDECARSET_CACHE_TTL_MS', DEFAULT_TTL_MS, 0),
    maxStalenessMs: millisecondsFromEnv(env, 'SIDECARSET_CACHE_MAX_STALENESS_MS', DEFAULT_MAX_STALENESS_MS, 0),
    apiTimeoutMs: millisecondsFromEnv(env, 'KUBE_API_TIMEOUT_MS', DEFAULT_MAX_LOAD_MS, 1),
  };
}

/**
 * The API server refused a read or answered something unusable. The message
 * is the problem alone: the cache's SourceUnavailableError names the operation.
 */
export class KubeApiError extends Error {
  /** The read, e.g. `list SidecarSets`. */
  readonly operation: string;
  /** The HTTP status, when the server answered with an error status. */
  readonly code: number | undefined;
  constructor(operation: string, problem: string, code?: number, options?: { cause?: unknown }) {
    super(problem, options);
    this.name = 'KubeApiError';
    this.operation = operation;
    this.code = code;
  }
}

/**
 * client-node's ApiException message carries every response header; keep the
 * status and the API server's own explanation from its Status body.
 */
function fromApiException(operation: string, error: ApiException<unknown>): KubeApiError {
  let body: unknown = error.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      // Not a Status object: the status code alone has to do.
    }
  }
  const explanation = isObject(body) && typeof body.message === 'string' ? `: ${body.message.slice(0, 300)}` : '';
  return new KubeApiError(operation, `the API server answered ${error.code}${explanation}`, error.code, { cause: error });
}

/**
 * The error a read fails with, its message complete on its own: an API
 * server answer as status and explanation, anything else (undici's "fetch
 * failed", which hides the reason in its causes) with its chain of causes.
 */
export function asKubeApiError(operation: string, error: unknown): KubeApiError {
  if (error instanceof KubeApiError) return error;
  if (error instanceof ApiException) return fromApiException(operation, error);
  const parts: string[] = [];
  for (let current: unknown = error; current !== undefined && current !== null && parts.length < 5; ) {
    const message = errorMessage(current);
    if (!parts.some((part) => part.includes(message))) parts.push(message);
    current = typeof current === 'object' ? (current as { cause?: unknown }).cause : undefined;
  }
  return new KubeApiError(operation, `the request failed: ${parts.join(': ')}`, undefined, { cause: error });
}

/**
 * Per-call client-node options that abort the request when `signal` does.
 * client-node 2.x has no per-call timeout parameter, but its RequestContext
 * carries an AbortSignal to undici's fetch; a middleware sets it.
 */
export function abortWith(signal: AbortSignal): ConfigurationOptions {
  const middleware: ObservableMiddleware = {
    pre: (context) => {
      context.setSignal(signal);
      return new Observable(Promise.resolve(context));
    },
    post: (response) => new Observable(Promise.resolve(response)),
  };
  // 'append' keeps the User-Agent middleware makeApiClient installs; the
  // default, 'replace', would drop it.
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}

/** Makes the cached items immutable: one list is shared by every request until it expires. */
function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const item of Object.values(value)) deepFreeze(item);
}

function cacheSettings(options: KubeSourceOptions) {
  return {
    ttlMs: options.ttlMs,
    maxStalenessMs: options.maxStalenessMs,
    maxLoadMs: options.apiTimeoutMs,
    clock: options.clock,
    onStale: options.onStale,
  };
}

const LIST_SIDECARSETS = 'list SidecarSets';

/** The items of a SidecarSetList, exactly as the API server sent them. */
function sidecarSetsOf(body: unknown): readonly SidecarSet[] {
  if (!isObject(body) || !Array.isArray(body.items)) {
    throw new KubeApiError(LIST_SIDECARSETS, 'the answer is not a list (no items array)');
  }
  const items: unknown[] = body.items;
  if (!items.every(isObject)) throw new KubeApiError(LIST_SIDECARSETS, 'the list holds an item that is not an object');
  deepFreeze(items);
  return items;
}

/**
 * Every SidecarSet in the cluster (`apps.kruise.io/v1alpha1`, cluster-scoped),
 * through CustomObjectsApi: it returns the parsed JSON untouched, so fields
 * this project does not know about survive (the typed APIs' serializer would
 * drop them). One list, no pagination, so the answer is one consistent
 * snapshot. The items are frozen: they are shared between requests.
 */
export function kubeSidecarSetSource(clients: Pick<KubeClients, 'customObjects'>, options: KubeSourceOptions = {}): SidecarSetSource {
  const cache = cachedList<readonly SidecarSet[]>({
    what: LIST_SIDECARSETS,
    async load(signal) {
      let body: unknown;
      try {
        body = await clients.customObjects.listClusterCustomObject(
          { group: GROUP, version: VERSION, plural: SIDECARSET_PLURAL },
          abortWith(signal),
        );
      } catch (error) {
        throw asKubeApiError(LIST_SIDECARSETS, error);
      }
      return sidecarSetsOf(body);
    },
    ...cacheSettings(options),
  });
  return { list: (signal) => cache.get(signal) };
}

type Labels = Readonly<Record<string, string>>;

/**
 * Namespace labels, one GET per namespace, each cached with the same rules as
 * the SidecarSet list; a namespace that does not exist (404) is cached as
 * absent.
 *
 * Why GET each name rather than list them all: a webhook needs the labels of
 * one namespace per pod (a few for a SidecarSet check), so the cost stays
 * that of one small object however many namespaces the cluster has, where a
 * list every two seconds in a cluster of thousands of namespaces would move
 * megabytes to read one. Entries that could no longer be served are dropped
 * on the next call, so the map holds only recently asked-for names.
 */
export function kubeNamespaceSource(clients: Pick<KubeClients, 'core'>, options: KubeSourceOptions = {}): NamespaceSource {
  const caches = new Map<string, CachedList<Labels | undefined>>();

  const cacheFor = (name: string): CachedList<Labels | undefined> => {
    let cache = caches.get(name);
    if (cache === undefined) {
      const operation = `get namespace "${name}"`;
      cache = cachedList<Labels | undefined>({
        what: operation,
        async load(signal) {
          try {
            const namespace = await clients.core.readNamespace({ name }, abortWith(signal));
            return Object.freeze(stringMapOf(namespace.metadata?.labels));
          } catch (error) {
            if (error instanceof ApiException && error.code === 404) return undefined;
            throw asKubeApiError(operation, error);
          }
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
