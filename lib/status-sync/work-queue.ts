/**
 * The controller's one queue of SidecarSet names, with client-go's
 * workqueue rules (util/workqueue: queue.go, delaying_queue.go,
 * default_rate_limiters.go):
 * - a key added while it waits is one entry (adds coalesce);
 * - a key is handed to one worker at a time: added while it is processed,
 *   it is marked dirty and queued again only when that worker is done;
 * - `addAfter` queues a key later, keeping the earliest time asked;
 * - `addRateLimited` queues it after a per-key delay that doubles with each
 *   failure until `forget`, bounded by the limiter's maximum.
 */

/** Per-key exponential backoff: `baseMs` after the first failure, doubled each time, at most `maxMs`. */
export class BackoffLimiter<K> {
  private readonly failures = new Map<K, number>();
  private readonly baseMs: number;
  private readonly maxMs: number;

  constructor(baseMs: number, maxMs: number) {
    this.baseMs = baseMs;
    this.maxMs = Math.max(baseMs, maxMs);
  }

  /** The delay for the key's next try, counting this failure. */
  when(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    // 2 ** 30 already exceeds any sensible maximum: the exponent stops growing there.
    return Math.min(this.maxMs, this.baseMs * 2 ** Math.min(n, 30));
  }

  /** The key succeeded: its next failure starts from `baseMs` again. */
  forget(key: K): void {
    this.failures.delete(key);
  }

  requeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

export const DEFAULT_BACKOFF = { baseMs: 200, maxMs: 30_000 } as const;

export class WorkQueue<K> {
  private queue: K[] = [];
  private head = 0;
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  /** Keys queued later, each at the earliest time asked (performance.now()). */
  private readonly waiting = new Map<K, number>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private getters: ((key: K | undefined) => void)[] = [];
  private closed = false;
  readonly limiter: BackoffLimiter<K>;
  /** Told whenever the queue may have gone idle (a key done, a delayed key dropped at shutdown). */
  onIdle: (() => void) | undefined;

  constructor(limiter: BackoffLimiter<K> = new BackoffLimiter(DEFAULT_BACKOFF.baseMs, DEFAULT_BACKOFF.maxMs)) {
    this.limiter = limiter;
  }

  add(key: K): void {
    if (this.closed || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Queues `key` after `delayMs` (at once when not positive); an earlier time already asked for it stands. */
  addAfter(key: K, delayMs: number): void {
    if (this.closed) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = performance.now() + delayMs;
    const asked = this.waiting.get(key);
    if (asked !== undefined && asked <= at) return;
    this.waiting.set(key, at);
    this.arm(at);
  }

  addRateLimited(key: K): void {
    this.addAfter(key, this.limiter.when(key));
  }

  forget(key: K): void {
    this.limiter.forget(key);
  }

  /** The next key, marked as processing until {@link done}; undefined once the queue is shut down. */
  get(): Promise<K | undefined> {
    const key = this.take();
    if (key !== undefined || this.closed) return Promise.resolve(key);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(key: K): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) this.push(key);
    else this.onIdle?.();
  }

  /** Keys ready now. */
  len(): number {
    return this.queue.length - this.head;
  }

  /** Whether nothing is ready, processing or waiting for its time. */
  idle(): boolean {
    return this.len() === 0 && this.processing.size === 0 && this.waiting.size === 0;
  }

  /** Whether nothing is ready or processing (keys may still wait for their time). */
  quiet(): boolean {
    return this.len() === 0 && this.processing.size === 0;
  }

  /** Hands out no more keys: waiting getters get undefined, delayed keys are dropped. */
  shutDown(): void {
    this.closed = true;
    this.waiting.clear();
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const getters = this.getters;
    this.getters = [];
    for (const resolve of getters) resolve(undefined);
  }

  get shuttingDown(): boolean {
    return this.closed;
  }

  private push(key: K): void {
    const getter = this.getters.shift();
    if (getter === undefined) {
      this.queue.push(key);
      return;
    }
    this.dirty.delete(key);
    this.processing.add(key);
    getter(key);
  }

  private take(): K | undefined {
    if (this.head >= this.queue.length) return undefined;
    const key = this.queue[this.head++] as K;
    // A plain index into the array, trimmed when it empties: no shift() per key.
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
    this.dirty.delete(key);
    this.processing.add(key);
    return key;
  }

  /** One timer, for the earliest delayed key. */
  private arm(at: number): void {
    if (at >= this.timerAt) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.fire();
    }, Math.max(0, Math.ceil(at - performance.now())));
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const [key, at] of this.waiting) {
      if (at <= now + 1) {
        this.waiting.delete(key);
        this.add(key);
      } else next = Math.min(next, at);
    }
    if (next !== Infinity) this.arm(next);
  }
}
