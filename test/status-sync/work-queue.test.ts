/**
 * The controller's queue keeps client-go's workqueue rules: adds coalesce,
 * one key to one worker at a time, a key added while processed comes back
 * once after `done`, delayed adds keep the earliest time, failures back off.
 */
import { describe, expect, it } from '@jest/globals';
import { BackoffLimiter, WorkQueue } from '../../lib/status-sync/work-queue.ts';

describe('WorkQueue', () => {
  it('coalesces a key added while it waits, and keeps the order of first arrival', async () => {
    const queue = new WorkQueue<string>();
    for (const key of ['a', 'b', 'a', 'c', 'b']) queue.add(key);
    expect(queue.len()).toBe(3);
    expect([await queue.get(), await queue.get(), await queue.get()]).toEqual(['a', 'b', 'c']);
  });

  it('never hands a key being processed to a second worker; added meanwhile, it comes back once after done', async () => {
    const queue = new WorkQueue<string>();
    queue.add('a');
    const first = await queue.get();
    queue.add('a');
    queue.add('a');
    expect(queue.len()).toBe(0);
    let second: string | undefined;
    void queue.get().then((key) => (second = key));
    await Promise.resolve();
    expect(second).toBeUndefined();
    queue.done(first as string);
    await Promise.resolve();
    expect(second).toBe('a');
    queue.done('a');
    expect(queue.idle()).toBe(true);
  });

  it('queues a delayed key at the earliest time asked', async () => {
    const queue = new WorkQueue<string>();
    const began = performance.now();
    queue.addAfter('a', 400);
    queue.addAfter('a', 30);
    queue.addAfter('a', 200);
    expect(await queue.get()).toBe('a');
    expect(performance.now() - began).toBeLessThan(190);
    queue.done('a');
    expect(queue.len()).toBe(0);
  });

  it('hands nothing out after shutdown, to waiting workers either', async () => {
    const queue = new WorkQueue<string>();
    const waiting = queue.get();
    queue.addAfter('late', 50);
    queue.shutDown();
    queue.add('a');
    await expect(waiting).resolves.toBeUndefined();
    await expect(queue.get()).resolves.toBeUndefined();
    expect(queue.idle()).toBe(true);
  });
});

describe('BackoffLimiter', () => {
  it('doubles a key\'s delay with each failure up to the maximum, and starts over after forget', () => {
    const limiter = new BackoffLimiter<string>(100, 1_000);
    expect([1, 2, 3, 4, 5, 6].map(() => limiter.when('a'))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(limiter.when('b')).toBe(100);
    limiter.forget('a');
    expect(limiter.requeues('a')).toBe(0);
    expect(limiter.when('a')).toBe(100);
  });
});
