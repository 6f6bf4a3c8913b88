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

/**
 * Runs `load` once, aborting its signal after `maxLoadMs`; `settled` hears the
 * outcome before anyone awaiting it, and a result after the timer is ignored.
 * Never rejects.
 */
function boundedLoad<T>(what: string, load: (signal: AbortSignal) => Promise<T>, maxLoadMs: number, clock: CacheClock, settled: (result: Outcome<T>) => void): Promise<Outcome<T>> {
  const controller = new AbortController();
  return new Promise<Outcome<T>>((resolve) => {
    let done = false;
    const settle = (result: Outcome<T>) => {
      if (done) return;
      done = true;
      cancelTimer();
      settled(result);
      resolve(result);
    };
    const cancelTimer = clock.setTimer(maxLoadMs, () => {
      const error = new DeadlineExceededError(`"${what}" did not answer within ${maxLoadMs} ms`);
      controller.abort(error);
      settle({ ok: false, error });
    });
    // The executor turns a loader that throws synchronously into a rejection.
    new Promise<T>((loaded) => {
      loaded(load(controller.signal));
    }).then(
      (value) => {
        settle({ ok: true, value });
      },
      (error: unknown) => {
        settle({ ok: false, error });
      },
    );
  });
}

/** A cache for one read; see the module comment for the rules. */
export function cachedList<T>(options: CachedListOptions<T>): CachedList<T> {
  return new CachedRead(options);
}

class CachedRead<T> implements CachedList<T> {
  readonly #options: CachedListOptions<T>;
  readonly #ttlMs: number;
  readonly #maxStalenessMs: number;
  readonly #maxLoadMs: number;
  readonly #clock: CacheClock;
  // `at` is when the load that produced the value started, so ages are never under-estimated.
  #cached: { value: T; at: number } | undefined;
  // Resolves (never rejects): a load nobody waits for cannot become an unhandled rejection.
  #inflight: Promise<Outcome<T>> | undefined;
  // Fresh mode: the load that starts when `#inflight` ends, shared by the callers who arrived during it.
  #queued: Promise<Outcome<T>> | undefined;

  constructor(options: CachedListOptions<T>) {
    this.#options = options;
    this.#ttlMs = requireDuration('ttlMs', options.ttlMs ?? 0, 0);
    this.#maxStalenessMs = requireDuration('maxStalenessMs', options.maxStalenessMs ?? DEFAULT_MAX_STALENESS_MS, 0);
    this.#maxLoadMs = requireDuration('maxLoadMs', options.maxLoadMs ?? DEFAULT_MAX_LOAD_MS, 1);
    this.#clock = options.clock ?? systemCacheClock;
  }

  async get(signal?: AbortSignal): Promise<T> {
    const age = this.#ageMs();
    if (this.#cached !== undefined && age !== undefined && age < this.#ttlMs) return this.#cached.value;
    const { what } = this.#options;
    // A caller that is already out of time starts no work of its own.
    if (signal?.aborted === true) return this.#fallBack(callerDeadline(what, signal));
    const load = this.#ttlMs === 0 ? this.#loadStartingNow() : (this.#inflight ?? this.#startLoad());
    const result = await until(load, what, signal);
    return result.ok ? result.value : this.#fallBack(result.error);
  }

  idle(): boolean {
    const age = this.#ageMs();
    return this.#inflight === undefined && this.#queued === undefined && (age === undefined || age > this.#maxStalenessMs);
  }

  #ageMs(): number | undefined {
    return this.#cached === undefined ? undefined : this.#clock.nowMs() - this.#cached.at;
  }

  /** Starts a load and makes it the one in flight. */
  #startLoad(): Promise<Outcome<T>> {
    const startedAt = this.#clock.nowMs();
    const outcome = boundedLoad(this.#options.what, this.#options.load, this.#maxLoadMs, this.#clock, (result) => {
      if (this.#inflight === outcome) this.#inflight = undefined;
      if (result.ok) this.#cached = { value: result.value, at: startedAt };
    });
    this.#inflight = outcome;
    return outcome;
  }

  /** A load that starts no earlier than now: a new one, or the one queued behind the load in flight. */
  #loadStartingNow(): Promise<Outcome<T>> {
    if (this.#queued !== undefined) return this.#queued;
    if (this.#inflight === undefined) return this.#startLoad();
    const next = this.#inflight.then(() => {
      this.#queued = undefined;
      return this.#startLoad();
    });
    this.#queued = next;
    return next;
  }

  #fallBack(error: unknown): T {
    const { what, onStale } = this.#options;
    const age = this.#ageMs();
    if (this.#cached !== undefined && age !== undefined && age <= this.#maxStalenessMs) {
      const message = `served stale "${what}", age ${Math.round(age)} ms, because: ${errorMessage(error)}`;
      try {
        onStale?.({ what, ageMs: age, error, message });
      } catch {
        // A failing log hook must not turn a served value into a failure.
      }
      return this.#cached.value;
    }
    throw new SourceUnavailableError(what, error, age, this.#maxStalenessMs);
  }
}
