import { describe, expect, it } from '@jest/globals';
import { planRollout } from '../../lib/rollout/plan.ts';
import type { SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';
import { NO_NAMESPACES, podsOf, rolloutPod, rolloutSet } from './fixtures.ts';

/** rollout.md §1.10: Kruise's TestGetNextUpgradePods, all pods ready. */
describe("Kruise's own vectors (sidecarset_strategy_test.go TestGetNextUpgradePods)", () => {
  it.each<[string, SidecarSetUpdateStrategy, [number, number, number], number]>([
    ['maxUnavailable 10', { maxUnavailable: 10 }, [100, 30, 26], 6],
    ['maxUnavailable 10%', { maxUnavailable: '10%' }, [1000, 300, 260], 60],
    ['maxUnavailable 5% with the budget used up', { maxUnavailable: '5%' }, [1000, 300, 250], 0],
    ['maxUnavailable 100', { maxUnavailable: 100 }, [100, 30, 27], 70],
    ['partition 180, maxUnavailable 100', { partition: 180, maxUnavailable: 100 }, [1000, 800, 760], 20],
    ['partition 100, maxUnavailable 100', { partition: 100, maxUnavailable: 100 }, [1000, 800, 760], 60],
    ['partition 18%', { partition: '18%', maxUnavailable: 100 }, [1000, 800, 760], 20],
    ['partition 10%', { partition: '10%', maxUnavailable: 100 }, [1000, 800, 760], 60],
    ['maxUnavailable 5% of 5 pods rounds up to 1', { maxUnavailable: '5%' }, [5, 0, 0], 1],
    ['partition 99% of 5 pods holds back 4, not 5', { maxUnavailable: 5, partition: '99%' }, [5, 0, 0], 1],
    ['partition 1% of 5 pods rounds up to 1', { maxUnavailable: 5, partition: '1%' }, [5, 0, 0], 4],
  ])('%s', (_name, strategy, [count, updated, consistent], expected) => {
    const set = rolloutSet({ strategy: { type: 'RollingUpdate', ...strategy } });
    const plan = planRollout(set, podsOf(set, count, updated, consistent), NO_NAMESPACES);
    expect(plan.updates).toHaveLength(expected);
    expect(plan.notUpgradable).toHaveLength(0);
  });

  it('an update selector matching 30 of 1000 pods updates those 30 (maxUnavailable 100)', () => {
    const set = rolloutSet({ strategy: { type: 'RollingUpdate', maxUnavailable: 100, selector: { matchLabels: { canary: 'true' } } } });
    const pods = podsOf(set, 1000, 0, 0).map((p, i) => (i % 33 === 0 && i < 990 ? { ...p, metadata: { ...p.metadata, labels: { ...p.metadata!.labels, canary: 'true' } } } : p));
    const plan = planRollout(set, pods, NO_NAMESPACES);
    expect(plan.updates).toHaveLength(30);
    expect(plan.updates.every((u) => u.pod.metadata!.labels!.canary === 'true')).toBe(true);
  });

  it('a changed without-image hash makes all 100 pods not upgradable and updates none', () => {
    const set = rolloutSet({ strategy: { type: 'RollingUpdate', maxUnavailable: 100 } });
    const pods = Array.from({ length: 100 }, (_, i) => rolloutPod(set, { name: `p-${i}`, otherFields: true }));
    const plan = planRollout(set, pods, NO_NAMESPACES);
    expect(plan.updates).toHaveLength(0);
    expect(plan.notUpgradable).toHaveLength(100);
    expect(plan.waiting).toMatchObject({ kind: 'nothing-waiting', notUpgradable: 100, notSelected: 0, inFlight: 0 });
  });
});
