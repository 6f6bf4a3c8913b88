import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Pod } from '../../lib/kube/types.ts';
import { scatterSort, scatterTerms, sortActive, sortByPriority, updateOrder } from '../../lib/rollout/order.ts';
import type { SidecarSetUpdateStrategy } from '../../lib/sidecarset/types.ts';

/**
 * The plan orders waiting pods with one sort (updateOrder); the three steps
 * it replaces (sortActive, the stable sortByPriority, scatterSort) are
 * Kruise's algorithm as written and keep their own tables (order.test.ts).
 * Small value domains make ties, the place where two orders would part, common.
 */
const TIMES = [undefined, '', 'garbage', '1970-01-01T00:00:00Z', '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', '2026-01-03T00:00:00Z'];
const LABEL_VALUES = ['a', 'b', 'x-1', 'x-10', 'y2', '7'];

const pod: fc.Arbitrary<PodSpec> = fc.record({
  node: fc.constantFrom(undefined, '', 'n1', 'n2'),
  phase: fc.constantFrom(undefined, 'Pending', 'Unknown', 'Running', '', 'Weird'),
  ready: fc.constantFrom<string | undefined>('True', 'False', 'Unknown', undefined),
  readySince: fc.constantFrom(...TIMES),
  created: fc.constantFrom(...TIMES),
  restarts: fc.array(fc.oneof(fc.constantFrom(0, 1, 2, 5, -0, 1.5, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY), fc.constant('3' as unknown as number)), { maxLength: 3 }),
  labels: fc.dictionary(fc.constantFrom('zone', 'tier', 'rank', 'canary'), fc.constantFrom(...LABEL_VALUES), { maxKeys: 4 }),
});

interface PodSpec {
  node: string | undefined;
  phase: string | undefined;
  ready: string | undefined;
  readySince: string | undefined;
  created: string | undefined;
  restarts: number[];
  labels: Record<string, string>;
}

function podOf(p: PodSpec, i: number): Pod {
  return {
    metadata: { name: `p${String(i).padStart(3, '0')}`, namespace: 'default', labels: p.labels, ...(p.created === undefined ? {} : { creationTimestamp: p.created }) },
    spec: { containers: [], ...(p.node === undefined ? {} : { nodeName: p.node }) },
    status: {
      ...(p.phase === undefined ? {} : { phase: p.phase }),
      conditions: p.ready === undefined ? [] : [{ type: 'Ready', status: p.ready, ...(p.readySince === undefined ? {} : { lastTransitionTime: p.readySince }) }],
      containerStatuses: p.restarts.map((n, c) => ({ name: `c${c}`, restartCount: n })),
    },
  };
}

const selector = fc.oneof(
  fc.record({ matchLabels: fc.dictionary(fc.constantFrom('zone', 'tier', 'canary'), fc.constantFrom(...LABEL_VALUES), { maxKeys: 2 }) }),
  fc.constant({ matchExpressions: [{ key: 'rank', operator: 'Exists' }] }),
  fc.constant('not a selector'),
);
const priority = fc.oneof(
  fc.constant(undefined),
  fc.record({ weightPriority: fc.array(fc.record({ weight: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.constantFrom(0, -5, 2.5, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY)), matchSelector: selector }), { maxLength: 3 }) }),
  fc.record({ orderPriority: fc.array(fc.record({ orderedKey: fc.constantFrom('rank', 'tier', 'zone', 'none') }), { maxLength: 3 }) }),
  fc.constant({}),
);
const scatter = fc.oneof(
  fc.constant(undefined),
  fc.array(fc.record({ key: fc.constantFrom('zone', 'tier', 'canary'), value: fc.constantFrom('*', 'a', 'b', '') }), { maxLength: 3 }),
);

/** What the plan did before the one sort: the three steps in turn. */
function threeSteps(pods: readonly Pod[], indexes: readonly number[], strategy: SidecarSetUpdateStrategy): number[] {
  let order = sortActive(pods, indexes);
  if (strategy.priorityStrategy) order = sortByPriority(pods, order, strategy.priorityStrategy);
  if (strategy.scatterStrategy) order = scatterSort(pods, order, scatterTerms(strategy.scatterStrategy, pods));
  return order;
}

describe('the update order in one sort', () => {
  it('is the order of the active-pods sort, the stable priority sort and the scatter sort in turn, over random pods and strategies', () => {
    fc.assert(
      fc.property(fc.array(pod, { maxLength: 60 }), priority, scatter, fc.double({ min: 0, max: 1, noNaN: true }), (specs, priorityStrategy, scatterStrategy, share) => {
        const pods = specs.map(podOf);
        // Some of the matched pods wait, in list order as the plan hands them over.
        const indexes = pods.map((_, i) => i).filter((i) => (i * 7919) % 100 < share * 100);
        const strategy: SidecarSetUpdateStrategy = {
          ...(priorityStrategy === undefined ? {} : { priorityStrategy: priorityStrategy as SidecarSetUpdateStrategy['priorityStrategy'] }),
          ...(scatterStrategy === undefined ? {} : { scatterStrategy }),
        };
        expect(updateOrder(pods, indexes, strategy)).toEqual(threeSteps(pods, indexes, strategy));
      }),
      { numRuns: 2000, seed: 23 },
    );
  });

  it('agrees on a large set with many full ties, where a sort would show an unstable step', () => {
    const pods = Array.from({ length: 3000 }, (_, i) =>
      podOf({ node: 'n1', phase: 'Running', ready: i % 5 === 0 ? 'False' : 'True', readySince: TIMES[i % 3], created: TIMES[(i >> 2) % 3], restarts: [i % 2], labels: { zone: `z${i % 3}`, rank: `r-${i % 4}` } }, i),
    );
    const indexes = pods.map((_, i) => i).filter((i) => i % 4 !== 1);
    for (const strategy of [{}, { priorityStrategy: { orderPriority: [{ orderedKey: 'rank' }] } }, { scatterStrategy: [{ key: 'zone', value: '*' }] }] as SidecarSetUpdateStrategy[]) {
      expect(updateOrder(pods, indexes, strategy)).toEqual(threeSteps(pods, indexes, strategy));
    }
  });

  // Small random pod lists rarely give a scatter term enough matching and unmatched candidates to move any:
  // these lists do, for every kind of term (a value, `*`, "" which pods without the key match too, several keys).
  it.each<[string, SidecarSetUpdateStrategy['scatterStrategy']]>([
    ['one value', [{ key: 'zone', value: 'z1' }]],
    ['every value', [{ key: 'zone', value: '*' }]],
    ['the empty value, which pods without the key match', [{ key: 'zone', value: '' }]],
    ['a value no pod carries', [{ key: 'zone', value: 'nowhere' }]],
    ['several terms over two keys, one repeated', [{ key: 'tier', value: '*' }, { key: 'zone', value: 'z2' }, { key: 'zone', value: '*' }, { key: 'tier', value: '' }]],
    ['a key no pod carries among others', [{ key: 'none', value: '*' }, { key: 'zone', value: '' }, { key: 'none', value: '' }]],
  ])('agrees on large sets scattered by %s', (_d, scatterStrategy) => {
    for (const n of [2, 3, 7, 50, 400, 2000]) {
      const pods = Array.from({ length: n }, (_, i) => {
        const labels: Record<string, string> = {};
        if (i % 7 !== 3) labels.zone = i % 11 === 0 ? '' : `z${(i * 5) % 3}`;
        if (i % 3 !== 0) labels.tier = `t-${i % 4}`;
        return podOf({ node: 'n1', phase: 'Running', ready: i % 5 === 0 ? 'False' : 'True', readySince: TIMES[i % 3], created: TIMES[(i >> 2) % 4], restarts: [i % 2], labels }, i);
      });
      for (const keep of [2, 4, 9]) {
        const indexes = pods.map((_, i) => i).filter((i) => i % keep !== 1);
        for (const priorityStrategy of [undefined, { orderPriority: [{ orderedKey: 'tier' }] }]) {
          const strategy: SidecarSetUpdateStrategy = { scatterStrategy, ...(priorityStrategy === undefined ? {} : { priorityStrategy }) };
          expect(updateOrder(pods, indexes, strategy)).toEqual(threeSteps(pods, indexes, strategy));
        }
      }
    }
  });
});
