/**
 * The deferred writes' queue: every write sent once, in order, never more
 * than its limit at once, nothing started while a reconcile holds it, a pod busy
 * until its last write is done, failures reported and the queue going on.
 */
import { describe, expect, it } from '@jest/globals';
import type { ReconcileError } from '../../lib/status-sync/errors.ts';
import { deferredWriteQueue, type DeferredWrite } from '../../lib/status-sync/deferred-writes.ts';

/** A write that runs until its `finish` is called. */
function gated(pod: string | undefined, started: string[], id: string): { write: DeferredWrite; finish: (error?: Error) => void } {
  let finish: (error?: Error) => void = () => undefined;
  const done = new Promise<void>((resolve, reject) => {
    finish = (error) => {
      if (error === undefined) resolve();
      else reject(error);
    };
  });
  return {
    write: {
      ...(pod === undefined ? {} : { pod }),
      sidecarSet: 'set',
      operation: `write ${id}`,
      run: () => {
        started.push(id);
        return done;
      },
    },
    finish: (error) => { finish(error); },
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('deferredWriteQueue', () => {
  it.each([1, 3, 8])('sends every write once, in order, at most %i at a time, and drains', async (limit) => {
    const errors: ReconcileError[] = [];
    const queue = deferredWriteQueue((e) => errors.push(e), limit);
    let active = 0;
    let most = 0;
    const started: number[] = [];
    for (let i = 0; i < 20; i++) {
      queue.add({
        pod: `ns/p-${i}`,
        sidecarSet: 'set',
        operation: `write ${i}`,
        run: async () => {
          started.push(i);
          most = Math.max(most, ++active);
          await new Promise((resolve) => setTimeout(resolve, (i * 7) % 5));
          active--;
        },
      });
    }
    expect(queue.pending()).toBe(20);
    await queue.drained();
    expect(started).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(most).toBe(limit);
    expect(queue.pending()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('starts nothing while held, and resumes when every hold is released (holds nest)', async () => {
    const queue = deferredWriteQueue(() => undefined, 8);
    const started: string[] = [];
    const releaseA = queue.hold();
    const releaseB = queue.hold();
    const a = gated('ns/a', started, 'a');
    queue.add(a.write);
    await tick();
    expect(started).toEqual([]);
    releaseA();
    // Released twice is released once: B still holds.
    releaseA();
    await tick();
    expect(started).toEqual([]);
    releaseB();
    expect(started).toEqual(['a']);
    a.finish();
    await queue.drained();
  });

  it('lets a write already running finish while a reconcile holds the queue', async () => {
    const queue = deferredWriteQueue(() => undefined, 8);
    const started: string[] = [];
    const a = gated('ns/a', started, 'a');
    const b = gated('ns/b', started, 'b');
    queue.add(a.write);
    const release = queue.hold();
    queue.add(b.write);
    a.finish();
    await tick();
    await tick();
    expect({ started, pending: queue.pending(), aBusy: queue.busy('ns/a') }).toEqual({ started: ['a'], pending: 1, aBusy: false });
    release();
    b.finish();
    await queue.drained();
  });

  it('keeps a pod busy until its last write is done; a write without a pod makes none busy', async () => {
    const queue = deferredWriteQueue(() => undefined, 1);
    const started: string[] = [];
    const first = gated('ns/a', started, 'a1');
    const second = gated('ns/a', started, 'a2');
    const event = gated(undefined, started, 'event');
    queue.add(first.write);
    queue.add(second.write);
    queue.add(event.write);
    expect([queue.busy('ns/a'), queue.busy('ns/b')]).toEqual([true, false]);
    first.finish();
    await tick();
    await tick();
    expect(queue.busy('ns/a')).toBe(true);
    second.finish();
    await tick();
    await tick();
    expect({ started, busy: queue.busy('ns/a'), pending: queue.pending() }).toEqual({ started: ['a1', 'a2', 'event'], busy: false, pending: 1 });
    event.finish();
    await queue.drained();
  });

  it('reports a failed write with its set and operation, frees its pod, and goes on', async () => {
    const errors: ReconcileError[] = [];
    const queue = deferredWriteQueue((e) => errors.push(e), 1);
    const started: string[] = [];
    const bad = gated('ns/a', started, 'a');
    const good = gated('ns/b', started, 'b');
    queue.add(bad.write);
    queue.add(good.write);
    bad.finish(new Error('the API server answered 422: no'));
    await tick();
    await tick();
    expect(queue.busy('ns/a')).toBe(false);
    good.finish();
    await queue.drained();
    expect(started).toEqual(['a', 'b']);
    expect(errors).toEqual([{ sidecarSet: 'set', operation: 'write a', message: 'the API server answered 422: no' }]);
  });

  it('goes on when the error reporter itself throws', async () => {
    const queue = deferredWriteQueue(() => {
      throw new Error('reporter broke');
    }, 1);
    const ran: string[] = [];
    queue.add({ sidecarSet: 'set', operation: 'bad', run: () => Promise.reject(new Error('no')) });
    queue.add({ sidecarSet: 'set', operation: 'good', run: () => {
      ran.push('good');
      return Promise.resolve();
    } });
    await queue.drained();
    expect(ran).toEqual(['good']);
  });

  it('resolves drained at once when nothing is queued, and for every waiter when the last write ends', async () => {
    const queue = deferredWriteQueue(() => undefined, 2);
    await queue.drained();
    const started: string[] = [];
    const a = gated('ns/a', started, 'a');
    queue.add(a.write);
    let woken = 0;
    const waits = [queue.drained().then(() => woken++), queue.drained().then(() => woken++)];
    await tick();
    expect(woken).toBe(0);
    a.finish();
    await Promise.all(waits);
    expect(woken).toBe(2);
  });
});
