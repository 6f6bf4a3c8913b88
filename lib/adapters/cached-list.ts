/**
 * One expensive read ("list every SidecarSet", "get namespace x") made safe
 * to call from every request: fresh answers shared only where that is
 * correct, and the last good answer kept for outages. Pure logic: time and
 * timers come from an injected clock, so every rule below is table-testable
 * without waiting.
 *
 * - Fresh (`ttlMs` 0, the default): every caller is answered by a load that
 *   started after it called, so that it sees every write that returned
 *   before it (an admission must see the SidecarSet created just before its
 *   pod). Concurrent callers share a load only on that condition: while a
 *   load runs, callers wait together for the next one, which starts as soon
 *   as the running one ends. At most one load is waited on at a time (one
 *   abandoned at `maxLoadMs` may still be finishing), so a burst of N
 *   requests costs about two loads' time and a handful of loads, not N.
 * - With `ttlMs` > 0 (readiness probes), the value is served without a call
 *   within `ttlMs` of the start of the load that produced it, and any load
 *   in flight is shared.
 * - A load is abandoned (and its signal aborted) after `maxLoadMs`; a caller
 *   also stops waiting when its own signal aborts, while the load carries on
 *   for the others and still fills the cache.
 * - When a caller cannot get a fresh value (the load failed, or its deadline
 *   came first), it is served the cached value if that is at most
 *   `maxStalenessMs` old, which is reported through `onStale`; otherwise it
 *   is rejected with {@link SourceUnavailableError}, which the webhooks turn
 *   into a failed call so that failurePolicy decides.
 * - A failure is never cached: the next caller starts a new load.
 */

import { errorMessage } from '../errors.ts';

/** Default age beyond which a cached value is no longer served when a load fails. */
export const DEFAULT_MAX_STALENESS_MS = 60_000;
/** Default cap on one load. */
export const DEFAULT_MAX_LOAD_MS = 5_000;

/** Monotonic time and one-shot timers, injected so that tests control both. */
export interface CacheClock {
  /** Milliseconds on a monotonic scale (only differences matter). */
  nowMs(): number;
  /** Calls `fire` once after `ms`; the returned function cancels it. */
  setTimer(ms: number, fire: () => void): () => void;
}

/** The process's monotonic clock and real timers. */
export const systemCacheClock: CacheClock = {
  nowMs: () => performance.now(),
  setTimer(ms, fire) {
    const timer = setTimeout(fire, ms);
    // The load it bounds keeps the process alive if it is real I/O; the timer
    // alone must not hold a finished CLI or test run open.
    timer.unref();
    return () => {
      clearTimeout(timer);
    };
  },
};

/** What a caller was served instead of a fresh value, and why. */
export interface StaleReport {
  /** The cached operation, e.g. `list SidecarSets`. */
  what: string;
  /** Age of the value served, from the start of the load that produced it. */
  ageMs: number;
  /** Why no fresh value was available. */
  error: unknown;
  /** A one-line summary for a log: `served stale ..., age X ms, because: ...`. */
  message: string;
}

export interface CachedListOptions<T> {
  /** The operation, as in `cannot <what>`: `list SidecarSets`, `get namespace "a"`. */
  what: string;
  /** Performs the read; should stop when `signal` aborts (the cache stops waiting regardless). */
  load: (signal: AbortSignal) => Promise<T>;
  /**
   * Default 0: every caller gets a load that started after it called (see the
   * module comment). Above 0, a value is reused that long and loads in flight
   * are shared whenever they started.
   */
  ttlMs?: number;
  /** Default {@link DEFAULT_MAX_STALENESS_MS}; 0 never serves a stale value. */
  maxStalenessMs?: number;
  /** Default {@link DEFAULT_MAX_LOAD_MS}. */
  maxLoadMs?: number;
  /** Default {@link systemCacheClock}. */
  clock?: CacheClock;
  /** Told every time a stale value is served. */
  onStale?: (report: StaleReport) => void;
}

export interface CachedList<T> {
  /**
   * The value, fresh or within the staleness bound.
   * @param signal aborted when the caller must answer; the caller is then
   *   served a stale value or rejected, and any load in flight continues.
   * @throws SourceUnavailableError when no value recent enough can be served.
   */
  get(signal?: AbortSignal): Promise<T>;
  /** True when no load is in flight and nothing cached could still be served: the cache can be dropped. */
  idle(): boolean;
}


/** A value could not be read and nothing cached was recent enough to serve instead. */
export class SourceUnavailableError extends Error {
  /** Age of the cached value that was too old to serve; undefined when nothing was cached. */
  readonly cachedAgeMs: number | undefined;
  constructor(what: string, cause: unknown, cachedAgeMs: number | undefined, maxStalenessMs: number) {
    const cached =
      cachedAgeMs === undefined
        ? 'nothing cached to serve instead'
        : `the cached result is ${Math.round(cachedAgeMs)} ms old, more than the ${maxStalenessMs} ms allowed`;
    super(`cannot ${what}: ${errorMessage(cause)}; ${cached}`, { cause });
    this.name = 'SourceUnavailableError';
    this.cachedAgeMs = cachedAgeMs;
  }
}

/** A load took longer than allowed, or a caller's deadline came before its result. */
export class DeadlineExceededError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DeadlineExceededError';
  }
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

function requireDuration(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min) throw new RangeError(`${name} must be a number >= ${min}, got ${value}`);
  return value;
}

/** Why a caller stopped waiting: its signal's reason, named as a deadline. */
function callerDeadline(what: string, signal: AbortSignal): DeadlineExceededError {
  const reason: unknown = signal.reason;
  const detail = reason === undefined ? '' : ` (${errorMessage(reason)})`;
  return new DeadlineExceededError(`the caller's deadline passed before "${what}" answered${detail}`, { cause: reason });
}

/**
 * Waits for `outcome` or for `signal` to abort, whichever is first. Never
 * rejects, and leaves no listener on a long-lived signal.
 */
function until<T>(outcome: Promise<Outcome<T>>, what: string, signal: AbortSignal | undefined): Promise<Outcome<T>> {
  if (signal === undefined) return outcome;
  return new Promise((resolve) => {
    const onAbort = () => {
      resolve({ ok: false, error: callerDeadline(what, signal) });
    };
    signal.addEventListener('abort', onAbort, { once: true });
    void outcome.then((result) => {
      signal.removeEventListener('abort', onAbort);
      resolve(result);
    });
  });
}

/** A cache for one read; see the module comment for the rules. */
export function cachedList<T>(options: CachedListOptions<T>): CachedList<T> {
  const { what, load, onStale } = options;
  const ttlMs = requireDuration('ttlMs', options.ttlMs ?? 0, 0);
  const maxStalenessMs = requireDuration('maxStalenessMs', options.maxStalenessMs ?? DEFAULT_MAX_STALENESS_MS, 0);
  const maxLoadMs = requireDuration('maxLoadMs', options.maxLoadMs ?? DEFAULT_MAX_LOAD_MS, 1);
  const clock = options.clock ?? systemCacheClock;

  // `at` is when the load that produced the value started: the value shows
  // the cluster no earlier than that, so ages are never under-estimated.
  let cached: { value: T; at: number } | undefined;
  // Resolves (never rejects) so that a load nobody waits for any more cannot
  // become an unhandled rejection.
  let inflight: Promise<Outcome<T>> | undefined;
  // Fresh mode: the load that starts when `inflight` ends, shared by every
  // caller who arrived while `inflight` ran (it started too early for them).
  let queued: Promise<Outcome<T>> | undefined;

  const ageMs = (): number | undefined => (cached === undefined ? undefined : clock.nowMs() - cached.at);

  /** Starts a load and makes it the one in flight. */
  function startLoad(): Promise<Outcome<T>> {
    const startedAt = clock.nowMs();
    const controller = new AbortController();
    let settled = false;
    let resolveOutcome: (outcome: Outcome<T>) => void = () => undefined;
    const outcome = new Promise<Outcome<T>>((resolve) => {
      resolveOutcome = resolve;
    });
    const settle = (result: Outcome<T>) => {
      if (settled) return;
      settled = true;
      cancelTimer();
      if (inflight === outcome) inflight = undefined;
      if (result.ok) cached = { value: result.value, at: startedAt };
      resolveOutcome(result);
    };
    const cancelTimer = clock.setTimer(maxLoadMs, () => {
      const error = new DeadlineExceededError(`"${what}" did not answer within ${maxLoadMs} ms`);
      controller.abort(error);
      settle({ ok: false, error });
    });
    // The executor turns a loader that throws synchronously into a rejection.
    const loading = new Promise<T>((resolve) => {
      resolve(load(controller.signal));
    });
    // A result arriving after the timer is ignored: settle() runs once.
    loading.then(
      (value) => {
        settle({ ok: true, value });
      },
      (error: unknown) => {
        settle({ ok: false, error });
      },
    );
    inflight = outcome;
    return outcome;
  }

  /** A load that starts no earlier than now: a new one, or the one queued behind the load in flight. */
  function loadStartingNow(): Promise<Outcome<T>> {
    if (queued !== undefined) return queued;
    if (inflight === undefined) return startLoad();
    const next = inflight.then(() => {
      queued = undefined;
      return startLoad();
    });
    queued = next;
    return next;
  }

  function fallBack(error: unknown): T {
    const age = ageMs();
    if (cached !== undefined && age !== undefined && age <= maxStalenessMs) {
      const message = `served stale "${what}", age ${Math.round(age)} ms, because: ${errorMessage(error)}`;
      try {
        onStale?.({ what, ageMs: age, error, message });
      } catch {
        // A failing log hook must not turn a served value into a failure.
      }
      return cached.value;
    }
    throw new SourceUnavailableError(what, error, age, maxStalenessMs);
  }

  return {
    async get(signal) {
      const age = ageMs();
      if (cached !== undefined && age !== undefined && age < ttlMs) return cached.value;
      // A caller that is already out of time starts no work of its own.
      if (signal?.aborted === true) return fallBack(callerDeadline(what, signal));
      const load = ttlMs === 0 ? loadStartingNow() : (inflight ?? startLoad());
      const result = await until(load, what, signal);
      return result.ok ? result.value : fallBack(result.error);
    },
    idle() {
      const age = ageMs();
      return inflight === undefined && queued === undefined && (age === undefined || age > maxStalenessMs);
    },
  };
}
