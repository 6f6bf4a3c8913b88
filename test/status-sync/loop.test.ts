import { describe, expect, it } from '@jest/globals';
import type { ResyncResult } from '../../lib/status-sync/resync.ts';
import { startStatusLoop } from '../../functions/status-sync/loop.ts';
import { invocationDeadlineMs } from '../../functions/status-sync/lambda.ts';
import { capturingLogger } from '../../testkit/reviews.ts';

const result = (errors: ResyncResult['errors'] = []): ResyncResult => ({ setsSeen: 1, podsSeen: 2, statusesWritten: 1, statusesUnchanged: 0, podListAttempts: 1, errors, durationMs: 3, notInjected: {} });

const until = async (condition: () => boolean) => {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('the status loop of npm start', () => {
  it('runs a resync at once, then one per interval, logging each as one line', async () => {
    const { logger, entries } = capturingLogger();
    let resyncs = 0;
    const loop = startStatusLoop({ resync: () => Promise.resolve(result(resyncs++ === 1 ? [{ operation: 'list pods', message: 'x' }] : [])), intervalMs: 10, heartbeatMs: 0, logger });
    await until(() => resyncs >= 3);
    await loop.stop();
    const stoppedAt = resyncs;
    await new Promise((r) => setTimeout(r, 50));
    expect(resyncs).toBe(stoppedAt);
    expect(entries().slice(0, 2)).toEqual([
      expect.objectContaining({ level: 'info', message: 'resync', setsSeen: 1, podsSeen: 2, statusesWritten: 1, errors: [] }),
      expect.objectContaining({ level: 'error', message: 'resync', errors: [{ operation: 'list pods', message: 'x' }] }),
    ]);
  });

  it('logs only the resyncs that change something, and says how many it left out', async () => {
    const { logger, entries } = capturingLogger();
    let resyncs = 0;
    const quiet = { ...result(), statusesWritten: 0, statusesUnchanged: 1 };
    // Resyncs 0-5 change nothing, resync 6 writes a status; an hour's heartbeat never comes due.
    const loop = startStatusLoop({ resync: () => Promise.resolve(resyncs++ === 6 ? result() : quiet), intervalMs: 1, heartbeatMs: 3_600_000, logger });
    await until(() => resyncs >= 8);
    await loop.stop();
    expect(entries()).toEqual([
      expect.objectContaining({ level: 'info', message: 'resync', logged: 'first', quietResyncs: 0, statusesWritten: 0 }),
      expect.objectContaining({ level: 'info', message: 'resync', logged: 'changed', quietResyncs: 5, statusesWritten: 1 }),
    ]);
  });

  it('never overlaps resyncs', async () => {
    let running = 0;
    let most = 0;
    let resyncs = 0;
    const loop = startStatusLoop({
      resync: async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 30));
        running--;
        resyncs++;
        return result();
      },
      intervalMs: 1,
      logger: capturingLogger().logger,
    });
    await until(() => resyncs >= 3);
    await loop.stop();
    expect(most).toBe(1);
  });

  it('cuts a running resync short when stopped', async () => {
    let aborted = false;
    const loop = startStatusLoop({
      resync: (signal) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve(result());
          });
        }),
      intervalMs: 1000,
      logger: capturingLogger().logger,
    });
    await loop.stop();
    expect(aborted).toBe(true);
  });

  it('follows an admitted change between resyncs an interval apart (a budget in whole milliseconds)', async () => {
    const { logger, entries } = capturingLogger();
    const budgets: unknown[] = [];
    let resyncs = 0;
    const loop = startStatusLoop({
      resync: () => Promise.resolve({ ...result(), rollout: { setsRolled: 1, podsUpdated: 1, podsFlipped: 0, conflicts: 0, revisionWrites: 0, states: {}, inFlight: ['agent'] } }).finally(() => resyncs++),
      intervalMs: 30_000,
      logger,
      runController: (names, signal, queue) => {
        budgets.push(names);
        queue.take();
        return Promise.resolve({ reconciles: 1, podsUpdated: 0, podsFlipped: 0, conflicts: 0, stalled: [], unfinished: [], states: {}, errors: signal.aborted ? [{ operation: 'x', message: 'aborted' }] : [] });
      },
    });
    await until(() => budgets.length >= 1);
    loop.admitted({ sidecarSet: 'agent', uid: 'u', operation: 'UPDATE', resourceVersion: '1' });
    await until(() => budgets.length >= 2);
    await loop.stop();
    expect(resyncs).toBe(1);
    expect(budgets).toEqual([['agent'], []]);
    expect(entries().filter((e) => e.message === 'resync failed')).toEqual([]);
  });

  it('goes on after a resync whose reporting throws', async () => {
    let resyncs = 0;
    const loop = startStatusLoop({ resync: () => Promise.resolve(result()), intervalMs: 1, logger: capturingLogger().logger, onResync: () => { resyncs++; throw new Error('boom'); } });
    await until(() => resyncs >= 2);
    await loop.stop();
  });
});

describe('the Lambda invocation’s deadline', () => {
  it.each([
    [900_000, 810_000],
    [20_000, 17_000],
    [2_000, 1_000],
  ])('with %i ms left, stops the invocation’s work after %i ms', (remaining, deadline) => {
    expect(invocationDeadlineMs(remaining)).toBe(deadline);
  });
});
