/**
 * Caller secrets that are re-read on a bounded interval, so that a rotation
 * reaches every warm function within a known time (the rotator waits that
 * long before pointing the webhooks at the new secret).
 *
 * The re-read happens lazily, on the first request after the interval: on
 * Lambda nothing runs between invocations, so a background timer would not
 * help. That request waits for it (at most `timeoutMs`); requests arriving
 * meanwhile wait for the same read. A failed or slow read keeps the last good
 * secrets, is logged, and is tried again after `retryMs`: a function never
 * stops serving because its secret store hiccupped.
 */
import type { CallerSecrets } from './caller-auth.ts';
import type { Logger } from '../ports.ts';

export const DEFAULT_SECRET_REFRESH_MS = 60_000;
/** How long a request waits for a re-read before going on with the secrets it has. */
export const DEFAULT_SECRET_READ_TIMEOUT_MS = 2_000;
/** After a failed re-read, the next one is tried this much later (or after the interval, when shorter). */
export const DEFAULT_SECRET_RETRY_MS = 5_000;

export interface RefreshingSecrets {
  /** The secrets as last read. */
  current(): CallerSecrets;
  /** Re-reads them when the interval has passed; resolves at once otherwise. Never rejects. */
  refresh(): Promise<void>;
}

export interface RefreshOptions {
  initial: CallerSecrets;
  /** Reads and checks the secrets (the store's parser throws on a bad value). */
  read: () => Promise<CallerSecrets>;
  intervalMs: number;
  logger: Logger;
  /**
   * Milliseconds since some origin; tests move it. Wall-clock time by
   * default: a frozen Lambda environment's monotonic clock may not count the
   * time it was frozen.
   */
  now?: () => number;
  timeoutMs?: number;
  retryMs?: number;
}

/** `read()`'s answer, or a rejection after `timeoutMs`. */
async function readWithin<T>(read: () => Promise<T>, timeoutMs: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new Error(`no answer within ${timeoutMs} ms`));
      }, timeoutMs);
    });
    const reading = read();
    // A read that loses the race must not surface later as an unhandled rejection.
    reading.catch(() => undefined);
    return await Promise.race([reading, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function refreshingSecrets(options: RefreshOptions): RefreshingSecrets {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? DEFAULT_SECRET_READ_TIMEOUT_MS;
  const retryMs = Math.min(options.retryMs ?? DEFAULT_SECRET_RETRY_MS, options.intervalMs);
  let secrets = options.initial;
  let dueAt = now() + options.intervalMs;
  let reading: Promise<void> | undefined;

  const reread = async (): Promise<void> => {
    try {
      const next = await readWithin(() => options.read(), timeoutMs);
      if (next.current !== secrets.current || next.previous !== secrets.previous) options.logger.info('caller secrets changed', { previous: next.previous !== undefined });
      secrets = next;
      dueAt = now() + options.intervalMs;
    } catch (error) {
      options.logger.error('caller secrets not re-read; serving with the last ones read', { error: error instanceof Error ? error.message : String(error) });
      dueAt = now() + retryMs;
    }
  };

  return {
    current: () => secrets,
    refresh() {
      if (reading !== undefined) return reading;
      if (now() < dueAt) return Promise.resolve();
      reading = reread().finally(() => {
        reading = undefined;
      });
      return reading;
    },
  };
}
