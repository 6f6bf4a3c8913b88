import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  cachedList,
  DeadlineExceededError,
  SourceUnavailableError,
  systemCacheClock,
  type CachedListOptions,
  type StaleReport,
} from '../../lib/adapters/cached-list.ts';
import { fakeClock, settle } from './fake-clock.ts';

interface LoadCall<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
  signal: AbortSignal;
}

/** A loader whose every call waits until the test resolves or rejects it. */
function controlledLoader<T>() {
  const calls: LoadCall<T>[] = [];
  const load = (signal: AbortSignal) =>
    new Promise<T>((resolve, reject) => {
      calls.push({ resolve, reject, signal });
    });
  return { load, calls, last: () => calls[calls.length - 1]! };
}

function setup(overrides: Partial<CachedListOptions<string[]>> = {}) {
  const time = fakeClock();
  const loader = controlledLoader<string[]>();
  const stale: StaleReport[] = [];
  const cache = cachedList<string[]>({
    what: 'list things',
    load: loader.load,
    clock: time.clock,
    onStale: (report) => stale.push(report),
    ...overrides,
  });
  /** Fills the cache with `value` through one completed load. */
  const prime = async (value: string[]) => {
    const got = cache.get();
    loader.last().resolve(value);
    await expect(got).resolves.toEqual(value);
  };
  return { time, loader, stale, cache, prime };
}

// Rejections that reach no handler fail the test that caused them.
let unhandled: unknown[] = [];
const recordUnhandled = (reason: unknown) => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', recordUnhandled);
});
afterEach(async () => {
  await settle();
  process.off('unhandledRejection', recordUnhandled);
  expect(unhandled).toEqual([]);
});

describe('fresh (the default): a caller is answered only by a load that started after it called', () => {
  it('loads for every call, even right after a load', async () => {
    const { loader, cache, prime } = setup();
    await prime(['a']);
    const got = cache.get();
    expect(loader.calls).toHaveLength(2);
    loader.last().resolve(['b']);
    await expect(got).resolves.toEqual(['b']);
  });

  it('never gives a caller the result of a load that was already running when it called', async () => {
    const { loader, cache } = setup();
    const early = cache.get();
    const late = cache.get();
    // The write the late caller must see may have returned after the first load read the cluster.
    loader.calls[0]?.resolve(['before']);
    await expect(early).resolves.toEqual(['before']);
    await settle();
    expect(loader.calls).toHaveLength(2);
    loader.calls[1]?.resolve(['after']);
    await expect(late).resolves.toEqual(['after']);
  });

  it('runs one load at a time: callers who arrive while one runs share the single next load, started when it ends', async () => {
    const { loader, cache } = setup();
    const first = cache.get();
    const waiting = Promise.all([cache.get(), cache.get(), cache.get()]);
    await settle();
    expect(loader.calls).toHaveLength(1);
    loader.calls[0]?.resolve(['1']);
    await expect(first).resolves.toEqual(['1']);
    await settle();
    expect(loader.calls).toHaveLength(2);
    loader.calls[1]?.resolve(['2']);
    await expect(waiting).resolves.toEqual([['2'], ['2'], ['2']]);
    expect(loader.calls).toHaveLength(2);
  });

  it('does not let a caller join the next load once it has started: it waits for the one after', async () => {
    const { loader, cache } = setup();
    const first = cache.get();
    const second = cache.get();
    loader.calls[0]?.resolve(['1']);
    await expect(first).resolves.toEqual(['1']);
    await settle();
    expect(loader.calls).toHaveLength(2);
    const third = cache.get();
    loader.calls[1]?.resolve(['2']);
    await expect(second).resolves.toEqual(['2']);
    await settle();
    expect(loader.calls).toHaveLength(3);
    loader.calls[2]?.resolve(['3']);
    await expect(third).resolves.toEqual(['3']);
  });

  it('lets callers who arrive in the gap before a queued load starts share it', async () => {
    const { loader, cache } = setup();
    const first = cache.get();
    const second = cache.get();
    loader.calls[0]?.resolve(['1']);
    // The running load has ended but the queued one has not started yet.
    const third = cache.get();
    await expect(first).resolves.toEqual(['1']);
    await settle();
    expect(loader.calls).toHaveLength(2);
    loader.calls[1]?.resolve(['2']);
    await expect(Promise.all([second, third])).resolves.toEqual([['2'], ['2']]);
  });

  it('answers callers queued behind a failed load with the next load, not with that failure', async () => {
    const { loader, stale, cache } = setup();
    const first = cache.get();
    const queued = cache.get();
    loader.calls[0]?.reject(new Error('connection reset'));
    await expect(first).rejects.toThrow(SourceUnavailableError);
    await settle();
    loader.calls[1]?.resolve(['a']);
    await expect(queued).resolves.toEqual(['a']);
    expect(stale).toEqual([]);
  });

  it('serves the last value as stale to a queued caller whose deadline passes while the running load hangs', async () => {
    const { loader, stale, cache, prime } = setup();
    await prime(['old']);
    const running = cache.get();
    const caller = new AbortController();
    const queued = cache.get(caller.signal);
    caller.abort(new Error('the webhook must answer'));
    await expect(queued).resolves.toEqual(['old']);
    expect(stale.map((report) => report.message)).toEqual([
      'served stale "list things", age 0 ms, because: the caller\'s deadline passed before "list things" answered (the webhook must answer)',
    ]);
    loader.calls[1]?.resolve(['new']);
    await expect(running).resolves.toEqual(['new']);
  });

  it('keeps a value for outages from a load that outlived every caller', async () => {
    const { loader, stale, cache } = setup();
    const caller = new AbortController();
    const got = cache.get(caller.signal);
    caller.abort();
    await expect(got).rejects.toThrow(SourceUnavailableError);
    loader.last().resolve(['late']);
    await settle();
    const next = cache.get();
    loader.last().reject(new Error('down'));
    await expect(next).resolves.toEqual(['late']);
    expect(loader.calls).toHaveLength(2);
    expect(stale).toHaveLength(1);
  });

  it('serves a caller whose deadline has already passed the last value, as stale, without loading', async () => {
    const { loader, stale, cache, prime } = setup();
    await prime(['a']);
    await expect(cache.get(AbortSignal.abort())).resolves.toEqual(['a']);
    expect(loader.calls).toHaveLength(1);
    expect(stale).toHaveLength(1);
  });
});

describe('with a lifetime (ttlMs > 0, as readiness probes use it)', () => {
  it.each([
    { ageMs: 0, loads: 1 },
    { ageMs: 1_999, loads: 1 },
    { ageMs: 2_000, loads: 2 },
    { ageMs: 10_000, loads: 2 },
  ])('after $ageMs ms with a 2000 ms lifetime, $loads load(s) in all', async ({ ageMs, loads }) => {
    const { time, loader, cache, prime } = setup({ ttlMs: 2_000 });
    await prime(['a']);
    await time.advance(ageMs);
    const got = cache.get();
    if (loads === 2) loader.last().resolve(['b']);
    await expect(got).resolves.toEqual(loads === 2 ? ['b'] : ['a']);
    expect(loader.calls).toHaveLength(loads);
  });

  it('honours a configured lifetime', async () => {
    const { time, loader, cache, prime } = setup({ ttlMs: 500 });
    await prime(['a']);
    await time.advance(499);
    await expect(cache.get()).resolves.toEqual(['a']);
    await time.advance(1);
    void cache.get();
    expect(loader.calls).toHaveLength(2);
    loader.last().resolve(['b']);
  });

  it('counts the age from when the load started, not when it answered', async () => {
    const { time, loader, cache } = setup({ ttlMs: 2_000 });
    const got = cache.get();
    await time.advance(1_500);
    loader.last().resolve(['a']);
    await expect(got).resolves.toEqual(['a']);
    await time.advance(500);
    void cache.get();
    expect(loader.calls).toHaveLength(2);
    loader.last().resolve(['b']);
  });

  it('gives concurrent callers the result of a single load', async () => {
    const { loader, cache } = setup({ ttlMs: 2_000 });
    const all = Promise.all([cache.get(), cache.get(), cache.get()]);
    expect(loader.calls).toHaveLength(1);
    loader.last().resolve(['a']);
    await expect(all).resolves.toEqual([['a'], ['a'], ['a']]);
  });

  it('gives concurrent callers the same failure of a single load', async () => {
    const { loader, cache } = setup({ ttlMs: 2_000 });
    const all = Promise.allSettled([cache.get(), cache.get()]);
    loader.last().reject(new Error('connection refused'));
    const results = await all;
    expect(loader.calls).toHaveLength(1);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
  });

  it('serves a fresh value even to a caller whose deadline has passed', async () => {
    const { loader, stale, cache, prime } = setup({ ttlMs: 2_000 });
    await prime(['a']);
    await expect(cache.get(AbortSignal.abort())).resolves.toEqual(['a']);
    expect(loader.calls).toHaveLength(1);
    expect(stale).toEqual([]);
  });
});

describe('when a load fails', () => {
  it.each([
    { ageMs: 2_000, served: true },
    { ageMs: 30_000, served: true },
    { ageMs: 60_000, served: true },
    { ageMs: 60_001, served: false },
  ])('a cached value $ageMs ms old is served: $served (bound 60000 ms)', async ({ ageMs, served }) => {
    const { time, loader, stale, cache, prime } = setup();
    await prime(['old']);
    await time.advance(ageMs);
    const got = cache.get();
    const failure = new Error('the API server answered 500');
    loader.last().reject(failure);
    if (served) {
      await expect(got).resolves.toEqual(['old']);
      expect(stale).toEqual([
        {
          what: 'list things',
          ageMs,
          error: failure,
          message: `served stale "list things", age ${ageMs} ms, because: the API server answered 500`,
        },
      ]);
    } else {
      const error = await got.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceUnavailableError);
      expect(error).toMatchObject({
        name: 'SourceUnavailableError',
        cause: failure,
        cachedAgeMs: ageMs,
        message: `cannot list things: the API server answered 500; the cached result is ${ageMs} ms old, more than the 60000 ms allowed`,
      });
      expect(stale).toEqual([]);
    }
  });

  it('still serves the stale value when the report hook throws', async () => {
    const { time, loader, cache, prime } = setup({
      onStale: () => {
        throw new Error('log sink closed');
      },
    });
    await prime(['old']);
    await time.advance(3_000);
    const got = cache.get();
    loader.last().reject(new Error('down'));
    await expect(got).resolves.toEqual(['old']);
  });

  it('honours a configured staleness bound, and 0 never serves a stale value', async () => {
    const { time, loader, cache, prime } = setup({ maxStalenessMs: 0 });
    await prime(['old']);
    await time.advance(2_000);
    const got = cache.get();
    loader.last().reject(new Error('down'));
    await expect(got).rejects.toThrow(/cannot list things: down; the cached result is 2000 ms old, more than the 0 ms allowed/);
  });

  it('rejects with SourceUnavailableError when nothing was ever cached', async () => {
    const { loader, cache } = setup();
    const got = cache.get();
    const failure = new Error('connection refused');
    loader.last().reject(failure);
    const error = await got.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceUnavailableError);
    expect(error).toMatchObject({
      cause: failure,
      cachedAgeMs: undefined,
      message: 'cannot list things: connection refused; nothing cached to serve instead',
    });
  });

  it('does not cache the failure: the next caller loads again and gets the new value', async () => {
    const { loader, cache } = setup();
    const first = cache.get();
    loader.last().reject(new Error('down'));
    await expect(first).rejects.toThrow(SourceUnavailableError);
    const second = cache.get();
    expect(loader.calls).toHaveLength(2);
    loader.last().resolve(['a']);
    await expect(second).resolves.toEqual(['a']);
  });

  it('keeps the last good value through a failure, for its full lifetime afterwards', async () => {
    const { time, loader, cache, prime } = setup({ ttlMs: 2_000 });
    await prime(['a']);
    await time.advance(2_500);
    const failed = cache.get();
    loader.last().reject(new Error('down'));
    await expect(failed).resolves.toEqual(['a']);
    const next = cache.get();
    expect(loader.calls).toHaveLength(3);
    loader.last().resolve(['b']);
    await expect(next).resolves.toEqual(['b']);
    await expect(cache.get()).resolves.toEqual(['b']);
    expect(loader.calls).toHaveLength(3);
  });

  it('treats a loader that throws synchronously like one that rejects', async () => {
    const time = fakeClock();
    const cache = cachedList<string[]>({
      what: 'list things',
      clock: time.clock,
      load: () => {
        throw new Error('no credentials');
      },
    });
    await expect(cache.get()).rejects.toThrow('cannot list things: no credentials; nothing cached to serve instead');
    expect(time.pendingTimers()).toBe(0);
  });
});

describe('deadlines', () => {
  it("rejects a caller at its deadline while the load runs on for the others", async () => {
    const { loader, cache } = setup({ ttlMs: 2_000 });
    const caller = new AbortController();
    const impatient = cache.get(caller.signal);
    const patient = cache.get();
    caller.abort(new DOMException('the webhook must answer', 'TimeoutError'));
    const error = await impatient.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceUnavailableError);
    expect((error as Error).cause).toBeInstanceOf(DeadlineExceededError);
    expect((error as Error).message).toBe(
      `cannot list things: the caller's deadline passed before "list things" answered (the webhook must answer); nothing cached to serve instead`,
    );
    // The shared load was not cancelled for the others.
    expect(loader.last().signal.aborted).toBe(false);
    loader.last().resolve(['a']);
    await expect(patient).resolves.toEqual(['a']);
    await expect(cache.get()).resolves.toEqual(['a']);
    expect(loader.calls).toHaveLength(1);
  });

  it('serves a recent stale value to a caller whose deadline comes before the load answers', async () => {
    const { time, loader, stale, cache, prime } = setup();
    await prime(['old']);
    await time.advance(5_000);
    const caller = new AbortController();
    const got = cache.get(caller.signal);
    caller.abort(new Error('out of time'));
    await expect(got).resolves.toEqual(['old']);
    expect(stale).toHaveLength(1);
    expect(stale[0]?.message).toMatch(/^served stale "list things", age 5000 ms, because: the caller's deadline passed/);
    loader.last().resolve(['new']);
  });

  it('starts no load for a caller whose deadline has already passed', async () => {
    const { loader, cache } = setup();
    await expect(cache.get(AbortSignal.abort())).rejects.toThrow(SourceUnavailableError);
    expect(loader.calls).toHaveLength(0);
  });

  it('abandons a load after the configured maximum, aborting its signal', async () => {
    const { time, loader, cache } = setup({ maxLoadMs: 3_000 });
    const got = cache.get();
    const outcome = got.catch((e: unknown) => e);
    await time.advance(2_999);
    expect(loader.last().signal.aborted).toBe(false);
    await time.advance(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(SourceUnavailableError);
    expect((error as Error).message).toBe(
      'cannot list things: "list things" did not answer within 3000 ms; nothing cached to serve instead',
    );
    expect(loader.last().signal.aborted).toBe(true);
    expect(loader.last().signal.reason).toBeInstanceOf(DeadlineExceededError);
  });

  it('ignores the answer of an abandoned load and starts a new one', async () => {
    const { time, loader, cache } = setup({ maxLoadMs: 1_000 });
    const first = expect(cache.get()).rejects.toThrow(/did not answer within 1000 ms/);
    await time.advance(1_000);
    await first;
    const abandoned = loader.last();
    const second = cache.get();
    expect(loader.calls).toHaveLength(2);
    abandoned.resolve(['too late']);
    loader.last().resolve(['b']);
    await expect(second).resolves.toEqual(['b']);
  });
});

describe('timers', () => {
  it.each([
    {
      outcome: 'resolves',
      finish: (call: LoadCall<string[]>) => {
        call.resolve(['a']);
      },
    },
    {
      outcome: 'rejects',
      finish: (call: LoadCall<string[]>) => {
        call.reject(new Error('down'));
      },
    },
  ])('leaves no timer once a load $outcome', async ({ finish }) => {
    const { time, loader, cache } = setup();
    const got = cache.get().catch(() => undefined);
    expect(time.pendingTimers()).toBe(1);
    finish(loader.last());
    await got;
    expect(time.pendingTimers()).toBe(0);
  });

  it('leaves no real timer running after a call on the system clock resolves', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    const cache = cachedList({ what: 'list things', clock: systemCacheClock, load: () => Promise.resolve(['a']) });
    await expect(cache.get()).resolves.toEqual(['a']);
    expect(timers()).toBe(before);
  });

  it('leaves no rejection unhandled when every caller gave up before the load failed', async () => {
    const { loader, cache } = setup();
    const caller = new AbortController();
    const got = cache.get(caller.signal);
    caller.abort();
    await expect(got).rejects.toThrow(SourceUnavailableError);
    loader.last().reject(new Error('down'));
    // afterEach fails the test if the rejection reached no handler.
    await settle();
  });
});

describe('idle', () => {
  it.each([
    { state: 'new', prepare: () => Promise.resolve(), idle: true },
    { state: 'loading', prepare: (s: ReturnType<typeof setup>) => void s.cache.get(), idle: false },
    { state: 'holding a fresh value', prepare: (s: ReturnType<typeof setup>) => s.prime(['a']), idle: false },
    {
      state: 'holding a value within the staleness bound',
      prepare: async (s: ReturnType<typeof setup>) => {
        await s.prime(['a']);
        await s.time.advance(60_000);
      },
      idle: false,
    },
    {
      state: 'holding a value beyond the staleness bound',
      prepare: async (s: ReturnType<typeof setup>) => {
        await s.prime(['a']);
        await s.time.advance(60_001);
      },
      idle: true,
    },
  ])('is $idle when $state', async ({ prepare, idle }) => {
    const s = setup();
    await prepare(s);
    expect(s.cache.idle()).toBe(idle);
    for (const call of s.loader.calls) call.resolve(['done']);
  });
});

it.each([
  { option: 'ttlMs', value: -1 },
  { option: 'maxStalenessMs', value: Number.NaN },
  { option: 'maxLoadMs', value: 0 },
])('refuses $option = $value', ({ option, value }) => {
  expect(() => cachedList({ what: 'x', load: () => Promise.resolve(1), [option]: value })).toThrow(
    new RangeError(`${option} must be a number >= ${option === 'maxLoadMs' ? 1 : 0}, got ${value}`),
  );
});
