import { describe, expect, it } from '@jest/globals';
import { leaseDurationSeconds, microTime, renewedLease } from '../../lib/status-sync/lease.ts';

const at = { namespace: 'kruise-system', holder: 'status-sync@a', durationSeconds: 90, nowMs: Date.parse('2026-12-07T07:00:00.123Z') };

describe('the reconciler\'s heartbeat Lease', () => {
  it('writes MicroTime with six fractional digits', () => {
    expect(microTime(at.nowMs)).toBe('2026-12-07T07:00:00.123000Z');
  });

  it('lasts three intervals, in whole seconds', () => {
    expect([leaseDurationSeconds(30_000), leaseDurationSeconds(300_000), leaseDurationSeconds(1_001)]).toEqual([90, 900, 4]);
  });

  it('created: acquired and renewed now, no transition', () => {
    expect(renewedLease(undefined, at)).toEqual({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'serverless-sidecarset-status-sync', namespace: 'kruise-system' },
      spec: { holderIdentity: 'status-sync@a', leaseDurationSeconds: 90, acquireTime: '2026-12-07T07:00:00.123000Z', renewTime: '2026-12-07T07:00:00.123000Z', leaseTransitions: 0 },
    });
  });

  it('renewed by its holder: the resourceVersion and acquireTime kept; by another holder: a transition', () => {
    const stored = { metadata: { resourceVersion: '42' }, spec: { holderIdentity: 'status-sync@a', acquireTime: '2026-12-01T00:00:00.000000Z', leaseTransitions: 2 } };
    const same = renewedLease(stored, at);
    expect([same.metadata.resourceVersion, same.spec.acquireTime, same.spec.leaseTransitions, same.spec.renewTime]).toEqual(['42', '2026-12-01T00:00:00.000000Z', 2, '2026-12-07T07:00:00.123000Z']);
    const other = renewedLease(stored, { ...at, holder: 'sidecarset-status-sync-fn' });
    expect([other.spec.holderIdentity, other.spec.acquireTime, other.spec.leaseTransitions]).toEqual(['sidecarset-status-sync-fn', '2026-12-07T07:00:00.123000Z', 3]);
  });
});
