/**
 * The HTTP handler's deadline, for any work: a signal that aborts at the deadline the
 * request's `?timeout=` gives, a backstop answer a grace later for work that
 * ignores it, a crash turned into an answer, and no timer left behind.
 */
import { describe, expect, it } from '@jest/globals';
import { HANDLER_GRACE_MS, withinDeadline } from '../../lib/webhooks/request-deadline.ts';
import { MIN_DEADLINE_MS } from '../../lib/webhooks/timeout.ts';

const fallbacks = {
  overran: (deadlineMs: number) => `overran ${deadlineMs}`,
  crashed: (error: unknown) => `crashed ${(error as Error).message}`,
};

describe('withinDeadline', () => {
  it('gives the work\'s own result when it ends in time, with a live signal', async () => {
    let aborted: boolean | undefined;
    const result = await withinDeadline('10s', (signal) => {
      aborted = signal.aborted;
      return Promise.resolve('done');
    }, fallbacks);
    expect(result).toBe('done');
    expect(aborted).toBe(false);
  });

  it('aborts the signal at the deadline with a TimeoutError, and takes the answer of work that honours it', async () => {
    const started = performance.now();
    const result = await withinDeadline('1s', (signal) => new Promise<string>((resolve) => {
      signal.addEventListener('abort', () => {
        resolve(`aborted: ${(signal.reason as DOMException).name} ${(signal.reason as DOMException).message}`);
      });
    }), fallbacks);
    const elapsed = performance.now() - started;
    expect(result).toBe(`aborted: TimeoutError the ${MIN_DEADLINE_MS} ms deadline passed`);
    expect(elapsed).toBeGreaterThanOrEqual(MIN_DEADLINE_MS - 5);
    expect(elapsed).toBeLessThan(MIN_DEADLINE_MS + HANDLER_GRACE_MS);
  });

  it('answers with the overrun fallback a grace after the deadline when the work ignores its signal', async () => {
    const started = performance.now();
    const result = await withinDeadline('1s', () => new Promise<string>(() => undefined), fallbacks);
    const elapsed = performance.now() - started;
    expect(result).toBe(`overran ${MIN_DEADLINE_MS}`);
    expect(elapsed).toBeGreaterThanOrEqual(MIN_DEADLINE_MS + HANDLER_GRACE_MS - 5);
    expect(elapsed).toBeLessThan(MIN_DEADLINE_MS + HANDLER_GRACE_MS + 500);
  });

  it.each([
    ['rejects', () => Promise.reject(new Error('broken'))],
    ['throws before its promise', () => {
      throw new Error('broken');
    }],
  ])('answers with the crash fallback when the work %s', async (_how, work) => {
    await expect(withinDeadline('10s', work as () => Promise<string>, fallbacks)).resolves.toBe('crashed broken');
  });

  it('keeps one timer for any number of reviews in flight, whatever their deadlines, and none once they are answered', async () => {
    const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timeouts();
    const releases: (() => void)[] = [];
    const reviews = Array.from({ length: 50 }, (_, i) =>
      withinDeadline(`${10 + (i % 20)}s`, () => new Promise<string>((resolve) => releases.push(() => { resolve(`done ${i}`); })), fallbacks),
    );
    expect(timeouts()).toBe(before + 1);
    for (const release of releases) release();
    expect(await Promise.all(reviews)).toEqual(Array.from({ length: 50 }, (_, i) => `done ${i}`));
    expect(timeouts()).toBe(before);
  });

  it('aborts a short deadline on time while reviews with longer ones are in flight, and answers for it a grace later', async () => {
    let release = (): void => undefined;
    const long = withinDeadline('30s', () => new Promise<string>((resolve) => (release = () => { resolve('long done'); })), fallbacks);
    const started = performance.now();
    const honours = withinDeadline('1s', (signal) => new Promise<string>((resolve) => { signal.addEventListener('abort', () => { resolve(`aborted after ${Math.round(performance.now() - started)}`); }); }), fallbacks);
    const ignores = withinDeadline('1s', () => new Promise<string>(() => undefined), fallbacks);
    const aborted = await honours;
    const abortedAfter = performance.now() - started;
    expect(aborted).toMatch(/^aborted after/);
    expect(abortedAfter).toBeGreaterThanOrEqual(MIN_DEADLINE_MS - 5);
    expect(abortedAfter).toBeLessThan(MIN_DEADLINE_MS + HANDLER_GRACE_MS);
    expect(await ignores).toBe(`overran ${MIN_DEADLINE_MS}`);
    expect(performance.now() - started).toBeGreaterThanOrEqual(MIN_DEADLINE_MS + HANDLER_GRACE_MS - 5);
    release();
    expect(await long).toBe('long done');
  });

  it('leaves no timer behind once answered', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    await withinDeadline('30s', () => Promise.resolve('quick'), fallbacks);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
  });
});
