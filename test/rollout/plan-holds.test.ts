/** The plan tells which waiting pods its batch left, and why (PlanOptions.holds), for an explanation of one pod. */
import { describe, expect, it } from '@jest/globals';
import { planRollout } from '../../lib/rollout/plan.ts';
import { NO_NAMESPACES, podsOf, rolloutSet } from './fixtures.ts';

const names = (pods: readonly { metadata?: { name?: string } }[] | undefined) => (pods ?? []).map((p) => p.metadata?.name);

describe('planRollout holds', () => {
  it('leaves the last partition pods to partition and those after the first ready pod that did not fit to maxUnavailable', () => {
    const set = rolloutSet({ strategy: { type: 'RollingUpdate', partition: 1, maxUnavailable: 1 } });
    const plan = planRollout(set, podsOf(set, 4, 0, 0), NO_NAMESPACES, { holds: true });
    expect(names(plan.updates.map((u) => u.pod))).toEqual(['p-00000']);
    expect(names(plan.holds?.maxUnavailable)).toEqual(['p-00001', 'p-00002']);
    expect(names(plan.holds?.partition)).toEqual(['p-00003']);
  });

  it('leaves every waiting pod to partition when partition covers them all', () => {
    const set = rolloutSet({ strategy: { type: 'RollingUpdate', partition: '100%' } });
    const plan = planRollout(set, podsOf(set, 2, 0, 0), NO_NAMESPACES, { holds: true });
    expect(plan.updates).toEqual([]);
    expect(names(plan.holds?.partition)).toEqual(['p-00000', 'p-00001']);
    expect(plan.holds?.maxUnavailable).toEqual([]);
  });

  it('tells nothing unless asked', () => {
    const set = rolloutSet({ strategy: { type: 'RollingUpdate', partition: 1 } });
    expect(planRollout(set, podsOf(set, 2, 0, 0), NO_NAMESPACES).holds).toBeUndefined();
  });
});
