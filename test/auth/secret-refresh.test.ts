import { describe, expect, it } from '@jest/globals';
import type { CallerSecrets } from '../../lib/auth/caller-auth.ts';
import { refreshingSecrets } from '../../lib/auth/secret-refresh.ts';
import { capturingLogger, fixedSecret } from '../../testkit/reviews.ts';

const A: CallerSecrets = { current: fixedSecret('refresh A') };
const B: CallerSecrets = { current: fixedSecret('refresh B'), previous: fixedSecret('refresh A') };

/** A store whose answers the test sets, counting reads, on a clock the test moves. */
function setup(options: { timeoutMs?: number } = {}) {
  let time = 0;
  let reads = 0;
  let answer: () => Promise<CallerSecrets> = () => Promise.resolve(B);
  const { logger, entries } = capturingLogger();
  const secrets = refreshingSecrets({
    initial: A,
    read: () => {
      reads++;
      return answer();
    },
    intervalMs: 60_000,
    retryMs: 5_000,
    logger,
    now: () => time,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
  return {
    secrets,
    entries,
    reads: () => reads,
    advance: (ms: number) => {
      time += ms;
    },
    answer: (next: () => Promise<CallerSecrets>) => {
      answer = next;
    },
  };
}

describe('refreshingSecrets', () => {
  it('keeps the secrets it has until the interval has passed, then re-reads them once', async () => {
    const s = setup();
    await s.secrets.refresh();
    s.advance(59_999);
    await s.secrets.refresh();
    expect(s.reads()).toBe(0);
    expect(s.secrets.current()).toEqual(A);
    s.advance(1);
    await s.secrets.refresh();
    expect(s.reads()).toBe(1);
    expect(s.secrets.current()).toEqual(B);
    await s.secrets.refresh();
    expect(s.reads()).toBe(1);
    expect(s.entries()).toEqual([expect.objectContaining({ level: 'info', message: 'caller secrets changed', previous: true })]);
  });

  it('makes concurrent requests wait for one read', async () => {
    const s = setup();
    s.advance(60_000);
    await Promise.all([s.secrets.refresh(), s.secrets.refresh(), s.secrets.refresh()]);
    expect(s.reads()).toBe(1);
  });

  it('keeps the last good secrets when a read fails, logs it without secrets, and tries again after the retry delay', async () => {
    const s = setup();
    s.answer(() => Promise.reject(new Error('throttled')));
    s.advance(60_000);
    await expect(s.secrets.refresh()).resolves.toBeUndefined();
    expect(s.secrets.current()).toEqual(A);
    expect(s.entries()).toEqual([expect.objectContaining({ level: 'error', message: 'caller secrets not re-read; serving with the last ones read', error: 'throttled' })]);
    s.answer(() => Promise.resolve(B));
    s.advance(4_999);
    await s.secrets.refresh();
    expect(s.reads()).toBe(1);
    s.advance(1);
    await s.secrets.refresh();
    expect(s.reads()).toBe(2);
    expect(s.secrets.current()).toEqual(B);
    expect(JSON.stringify(s.entries())).not.toContain(A.current);
  });

  it('stops waiting for a read that hangs, keeping the last good secrets', async () => {
    const s = setup({ timeoutMs: 50 });
    s.answer(() => new Promise(() => undefined));
    s.advance(60_000);
    const started = performance.now();
    await s.secrets.refresh();
    // 50 ms asked; 5 s is 100x that.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(s.secrets.current()).toEqual(A);
    expect(s.entries()).toEqual([expect.objectContaining({ level: 'error', error: 'no answer within 50 ms' })]);
  });
});
