import { describe, expect, it } from '@jest/globals';
import { resyncLog } from '../../lib/status-sync/resync-log.ts';
import type { ResyncResult } from '../../lib/status-sync/resync.ts';

const quietResync = (extra: Partial<ResyncResult> = {}): ResyncResult => ({ setsSeen: 2, podsSeen: 5, statusesWritten: 0, statusesUnchanged: 2, podListAttempts: 1, errors: [], durationMs: 4, notInjected: {}, ...extra });

/** Feeds resyncs one minute apart; returns each decision's reason (or '-' for a quiet resync). */
function reasons(resyncs: ResyncResult[], heartbeatMs = 5 * 60_000): string[] {
  let now = 0;
  const log = resyncLog(heartbeatMs, () => now);
  return resyncs.map((result) => {
    const decision = log.decide(result);
    now += 60_000;
    return decision?.reason ?? '-';
  });
}

describe('which resyncs of the npm start loop are logged', () => {
  it('logs the first resync, then nothing while nothing changes, then a heartbeat every 5 minutes', () => {
    expect(reasons(Array.from({ length: 12 }, () => quietResync()))).toEqual(['first', '-', '-', '-', '-', 'heartbeat', '-', '-', '-', '-', 'heartbeat', '-']);
  });

  // The fourth resync is quiet again: a change in a state (uninjected pods, the rotation) that went back, not for one that was an act.
  it.each<[string, Partial<ResyncResult>, string]>([
    ['a status was written', { statusesWritten: 1 }, '-'],
    ['a resync had an error', { errors: [{ operation: 'list pods', message: 'refused' }] }, '-'],
    ['uninjected pods appeared', { notInjected: { 'log-agent': 1 } }, 'changed'],
    ['a rotation started', { secretRotation: { step: 'started' } }, 'changed'],
    ['a rotation updated the webhooks', { secretRotation: { step: 'webhooks-updated' } }, 'changed'],
    ['a rotation finished', { secretRotation: { step: 'finished' } }, 'changed'],
    ['a rotation step failed', { secretRotation: { step: 'failed', detail: 'x' } }, 'changed'],
  ])('logs a resync at once when %s', (_name, change, after) => {
    expect(reasons([quietResync(), quietResync(), quietResync(change), quietResync()])).toEqual(['first', '-', 'changed', after]);
  });

  it('logs every resync that writes statuses, however many in a row', () => {
    expect(reasons([quietResync(), quietResync({ statusesWritten: 1 }), quietResync({ statusesWritten: 1 })])).toEqual(['first', 'changed', 'changed']);
  });

  it('logs when uninjected pods are gone again, which is when PodsInjected is recorded', () => {
    expect(reasons([quietResync({ notInjected: { a: 1 } }), quietResync({ notInjected: { a: 1 } }), quietResync()])).toEqual(['first', '-', 'changed']);
  });

  it('logs a waiting or skipped rotation only when its state changes, not when its clock moves', () => {
    const waiting = (detail: string, nextStepAt: string) => quietResync({ secretRotation: { step: 'waiting', detail, nextStepAt } });
    const skipped = quietResync({ secretRotation: { step: 'skipped', detail: 'the webhook configurations are not installed' } });
    expect(
      reasons([waiting('not due', '2026-12-02T00:00:00Z'), waiting('not due', '2026-12-02T00:01:00Z'), waiting('for the API servers to use the new URLs', 'x'), skipped, skipped]),
    ).toEqual(['first', '-', 'changed', 'changed', '-']);
  });

  it('counts the resyncs it left out', () => {
    let now = 0;
    const log = resyncLog(5 * 60_000, () => now);
    expect(log.decide(quietResync())).toEqual({ reason: 'first', quietResyncs: 0 });
    for (let i = 0; i < 9; i++) {
      now += 30_000;
      expect(log.decide(quietResync())).toBeUndefined();
    }
    now += 30_000;
    expect(log.decide(quietResync())).toEqual({ reason: 'heartbeat', quietResyncs: 9 });
  });

  it('logs every resync with a heartbeat of 0', () => {
    expect(reasons([quietResync(), quietResync(), quietResync()], 0)).toEqual(['first', 'changed', 'changed']);
  });
});
