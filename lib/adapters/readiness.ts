/**
 * The local server's readiness check, made cheap to ask: `/readyz` answers
 * anyone, so without a bound a flood of probes would be a flood of
 * SidecarSet lists on the API server.
 *
 * - The result, ready or not, is reused for `ttlMs`; concurrent probes share
 *   one check (the rules of cached-list.ts, with failures cached too).
 * - A check that hangs is given up after `maxCheckMs` and counts as not ready.
 * - Why it is not ready (the API server's address, its error) goes to the
 *   log, once per change between ready and not ready, never to the prober.
 */
import { errorMessage } from '../errors.ts';
import type { Logger, SidecarSetSource } from '../ports.ts';
import { cachedList, type CacheClock } from './cached-list.ts';

/** How long one result answers every probe. */
export const READINESS_TTL_MS = 1_000;
/** The longest one check may take before it counts as not ready. */
export const READINESS_MAX_CHECK_MS = 5_000;

export interface Readiness {
  ready: boolean;
  /** For the log: what was checked, or why it failed. */
  message: string;
}

export interface ReadinessOptions {
  /** Resolves with what was found ready; rejects with why not. */
  check: (signal: AbortSignal) => Promise<string>;
  logger: Logger;
  /** Default {@link READINESS_TTL_MS}. */
  ttlMs?: number;
  /** Default {@link READINESS_MAX_CHECK_MS}. */
  maxCheckMs?: number;
  clock?: CacheClock;
}

/** A readiness probe that checks at most once per `ttlMs` and logs each change of state. */
export function cachedReadiness(options: ReadinessOptions): () => Promise<Readiness> {
  const { check, logger } = options;
  const cache = cachedList<Readiness>({
    what: 'check readiness',
    // Never rejects, so that not ready is cached like ready.
    load: async (signal) => {
      try {
        return { ready: true, message: await check(signal) };
      } catch (error) {
        return { ready: false, message: errorMessage(error) };
      }
    },
    ttlMs: options.ttlMs ?? READINESS_TTL_MS,
    maxStalenessMs: 0,
    maxLoadMs: options.maxCheckMs ?? READINESS_MAX_CHECK_MS,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  let last: boolean | undefined;
  return async () => {
    let result: Readiness;
    try {
      result = await cache.get();
    } catch (error) {
      // The check did not answer in time.
      result = { ready: false, message: errorMessage(error) };
    }
    if (result.ready !== last) {
      last = result.ready;
      if (result.ready) logger.info('ready', { reason: result.message });
      else logger.warn('not ready', { reason: result.message });
    }
    return result;
  };
}

/** Ready when the SidecarSets can be listed from `server`: the check `npm start` serves on /readyz. */
export function sidecarSetReadiness(
  source: SidecarSetSource,
  server: string,
  logger: Logger,
  options: Pick<ReadinessOptions, 'ttlMs' | 'maxCheckMs' | 'clock'> = {},
): () => Promise<Readiness> {
  return cachedReadiness({
    ...options,
    logger,
    check: async (signal) => {
      try {
        await source.list(signal);
      } catch (error) {
        throw new Error(`cannot list SidecarSets from ${server}: ${errorMessage(error)}`, { cause: error });
      }
      return `SidecarSets readable from ${server}`;
    },
  });
}
