import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Pod } from '../../lib/kube/types.ts';
import { orderSuffix, scatterSort, scatterTerms, sortActive, sortByPriority } from '../../lib/rollout/order.ts';

const labelled = (labels: Record<string, string>, i = 0): Pod => ({ metadata: { name: `p${i}`, namespace: 'default', labels } });
const range = (n: number) => [...Array(n).keys()];

/** Kruise v1.8.2's TestScatterPodsByRule (pkg/util/updatesort/scatter_sort_test.go at the tag; later versions changed the algorithm), term labelA=AAA. */
describe("scatter sort: Kruise's TestScatterPodsByRule", () => {
  it.each<[string, string[], number[]]>([
    ['no label', [''], [0]],
    ['only one scattered pod', ['labelA=AAA'], [0]],
    ['odd scattered pod + odd ordinary pod', ['labelA=AAA', 'bbb'], [0, 1]],
    ['even scattered pods + even ordinary pods', ['', '', '', '', 'labelA=AAA', 'labelA=AAA'], [4, 0, 1, 2, 3, 5]],
    ['odd scattered pods + odd ordinary pods', ['', '', '', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA'], [3, 0, 1, 4, 2, 5]],
    ['even scattered pods + odd ordinary pods', ['', '', '', 'labelA=AAA', '', '', 'labelA=AAA'], [3, 0, 1, 2, 4, 5, 6]],
    ['odd scattered pods + even ordinary pods', ['', '', '', '', '', '', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA'], [6, 0, 1, 2, 7, 3, 4, 5, 8]],
    ['even scattered more than ordinary', ['', '', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA'], [2, 3, 0, 4, 1, 5]],
    ['odd scattered more than ordinary', ['', '', '', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA'], [3, 0, 1, 4, 2, 5]],
    ['even scattered + odd ordinary, more scattered', ['', '', 'labelA=AAA', '', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA'], [2, 4, 0, 5, 6, 1, 7, 3, 8]],
    ['odd scattered + even ordinary, more scattered', ['', 'labelA=AAA', '', 'labelA=AAA', '', '', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA'], [1, 0, 3, 2, 6, 4, 7, 5, 8]],
    ['invalid label', ['', '', '', '', 'ee', 'a', '', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA,labelB=BBB'], [7, 0, 1, 2, 3, 8, 4, 5, 6, 9]],
  ])('%s', (_desc, podLabels, expected) => {
    const pods = podLabels.map((spec, i) => {
      const labels: Record<string, string> = {};
      for (const part of spec.split(',')) {
        const [k, v] = part.split('=', 2);
        if (v !== undefined) labels[k!] = v;
      }
      return labelled(labels, i);
    });
    expect(scatterSort(pods, range(pods.length), [{ key: 'labelA', value: 'AAA' }])).toEqual(expected);
  });
});

/** Kruise's TestSort (same file): several terms, ordered by their candidate counts. */
describe("scatter sort: Kruise's TestSort", () => {
  const A = { key: 'labelA', value: 'AAA' };
  const B = { key: 'labelB', value: 'BBB' };
  const C = { key: 'labelC', value: 'CCC' };
  it.each<[string, Record<string, string>[], { key: string; value: string }[], number[]]>([
    ['a scattered pod', [{ labelA: 'AAA', labelB: 'BBB' }], [A], [0]],
    ['all ordinary pods', [{}, {}, {}, {}, {}, {}], [], [0, 1, 2, 3, 4, 5]],
    ['one pod one label', [{}, {}, {}, {}, { labelA: 'AAA' }, { labelA: 'AAA' }], [A], [4, 0, 1, 2, 3, 5]],
    ['one pod more labels', [{}, {}, {}, {}, { sdfb: 'eee' }, { dsf: 'same' }, { labelB: 'BBB' }, { labelA: 'AAA' }, { labelA: 'AAA' }, { labelA: 'AAA', labelB: 'BBB' }], [B], [6, 0, 1, 2, 3, 4, 5, 7, 8, 9]],
    ['2 dimensions + one pod one label', [{ labelB: 'BBB' }, { labelB: 'BBB' }, {}, {}, { labelA: 'AAA' }, { labelA: 'AAA' }], [A, B], [0, 4, 2, 3, 5, 1]],
    ['2 dimensions + one pod more labels', [{}, {}, {}, { labelB: 'BBB' }, { labelA: 'AAA', labelB: 'BBB' }, { labelA: 'AAA' }], [A, B], [4, 0, 1, 2, 5, 3]],
    ['2 dimensions + same label + sequence: A + B', [{}, {}, {}, {}, { sdfb: 'eee' }, { dsf: 'same' }, { labelB: 'BBB' }, { labelA: 'AAA' }, { labelA: 'AAA' }, { labelB: 'BBB' }], [B, A], [7, 6, 0, 1, 2, 3, 4, 5, 9, 8]],
    ['2 dimensions + same label + sequence: B + A', [{}, {}, {}, {}, { sdfb: 'eee' }, { dsf: 'same' }, { labelB: 'BBB' }, { labelA: 'AAA' }, { labelA: 'AAA' }, { labelB: 'BBB' }], [A, B], [6, 7, 0, 1, 2, 3, 4, 5, 8, 9]],
    ['3 dimensions + one pod one label', [{}, { labelA: 'AAA' }, { labelA: 'AAA' }, { labelB: 'BBB' }, { labelB: 'BBB' }, { labelC: 'CCC' }, { labelC: 'CCC' }, { labelC: 'CCC' }, { labelC: 'CCC' }, { labelC: 'CCC' }], [A, B, C], [3, 1, 5, 0, 6, 7, 8, 9, 2, 4]],
    ['3 dimensions + one pod more label', [{}, { labelA: 'AAA' }, { labelA: 'AAA', labelC: 'CCC' }, { labelB: 'BBB', labelC: 'CCC' }, { labelB: 'BBB' }, {}, {}, { labelC: 'CCC' }, { labelC: 'CCC' }, { labelC: 'CCC' }], [A, B, C], [3, 2, 0, 7, 8, 5, 6, 9, 1, 4]],
  ])('%s', (_desc, podLabels, terms, expected) => {
    const pods = podLabels.map((l, i) => labelled(l, i));
    expect(scatterSort(pods, range(pods.length), terms)).toEqual(expected);
  });

  it('"*" becomes one term per distinct value among all matched pods, in list order, duplicates dropped', () => {
    const pods = ([{ zone: 'b' }, {}, { zone: 'a' }, { zone: 'b' }] as Record<string, string>[]).map((l, i) => labelled(l, i));
    expect(scatterTerms([{ key: 'zone', value: '*' }, { key: 'zone', value: 'a' }, { key: 'x', value: '1' }], pods)).toEqual([
      { key: 'zone', value: 'b' },
      { key: 'zone', value: 'a' },
      { key: 'x', value: '1' },
    ]);
  });
});

describe('active-pods order (rollout.md §1.3 step 1, k8s ActivePods.Less)', () => {
  const pod = (i: number, o: { node?: string; phase?: string; ready?: boolean; readySince?: string; restarts?: number; created?: string }): Pod => ({
    metadata: { name: `p${i}`, namespace: 'default', ...(o.created ? { creationTimestamp: o.created } : {}) },
    spec: { containers: [], nodeName: o.node ?? 'n' },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', ...(o.readySince ? { lastTransitionTime: o.readySince } : {}) }],
      containerStatuses: [{ name: 'c', restartCount: o.restarts ?? 0 }],
    },
  });
  it.each<[string, Parameters<typeof pod>[1], Parameters<typeof pod>[1]]>([
    ['unassigned before assigned', { node: '' }, {}],
    ['Pending before Unknown', { phase: 'Pending' }, { phase: 'Unknown' }],
    ['Unknown before Running', { phase: 'Unknown' }, {}],
    ['an empty phase sorts as Pending', { phase: '' }, { phase: 'Unknown' }],
    ['not ready before ready', { ready: false }, {}],
    ['both ready: the later Ready transition first', { readySince: '2026-01-02T00:00:00Z' }, { readySince: '2026-01-01T00:00:00Z' }],
    ['both ready: a zero Ready transition first', {}, { readySince: '2026-01-01T00:00:00Z' }],
    ['more restarts first', { restarts: 3 }, { restarts: 1 }],
    ['newer first', { created: '2026-01-02T00:00:00Z' }, { created: '2026-01-01T00:00:00Z' }],
    ['a zero creation time first', {}, { created: '2026-01-01T00:00:00Z' }],
  ])('%s', (_d, first, second) => {
    // The expected-first pod is listed second so list order cannot explain the result.
    expect(sortActive([pod(0, second), pod(1, first)], [0, 1])).toEqual([1, 0]);
  });

  it('full ties keep list order (namespace/name ascending), also beyond 12 candidates where Go would scramble them', () => {
    const pods = range(40).map((i) => pod(i, {}));
    expect(sortActive(pods, range(40).reverse())).toEqual(range(40));
  });
});

describe('priority order (rollout.md §1.3 step 2, priority_sort.go)', () => {
  it('weight: the sum over matching terms, higher first; equal weight keeps the incoming order (Kruise 1.9, #2107)', () => {
    const pods = ([{ a: '1' }, { a: '1', b: '1' }, {}, { b: '1' }, {}] as Record<string, string>[]).map((l, i) => labelled(l, i));
    const strategy = {
      weightPriority: [
        { weight: 50, matchSelector: { matchLabels: { a: '1' } as Record<string, string> } },
        { weight: 30, matchSelector: { matchLabels: { b: '1' } as Record<string, string> } },
      ],
    };
    expect(sortByPriority(pods, [0, 1, 2, 3, 4], strategy)).toEqual([1, 0, 3, 2, 4]);
  });

  it('order: pods without any key come first (level -1), then lower level, then the higher numeric suffix; ties keep the incoming order (Kruise 1.9, #2107)', () => {
    const pods = ([{ rank: 'x-2' }, { rank: 'x-10' }, {}, { tier: '9' }, { rank: 'none' }, {}, { rank: 'y10' }] as Record<string, string>[]).map((l, i) => labelled(l, i));
    const strategy = { orderPriority: [{ orderedKey: 'rank' }, { orderedKey: 'tier' }] };
    expect(sortByPriority(pods, [0, 1, 2, 3, 4, 5, 6], strategy)).toEqual([2, 5, 1, 6, 0, 4, 3]);
  });

  it('equal priority keeps the active-pods order it is given (Kruise 1.9, #2107; 1.8 put the higher list index first)', () => {
    const pods = ([{ a: '1' }, { a: '1' }, { b: '1' }] as Record<string, string>[]).map((l, i) => labelled(l, i));
    const weights = { weightPriority: [{ weight: 1, matchSelector: { matchLabels: { a: '1' } } }] };
    expect(sortByPriority(pods, [0, 1], weights)).toEqual([0, 1]);
    expect(sortByPriority(pods, [1, 0], weights)).toEqual([1, 0]);
    // No rule matches any pod: the order is left exactly as given.
    expect(sortByPriority(pods, [2, 1, 0], { weightPriority: [{ weight: 5, matchSelector: { matchLabels: { c: '1' } } }] })).toEqual([2, 1, 0]);
    expect(sortByPriority(pods, [2, 0, 1], { orderPriority: [{ orderedKey: 'none' }] })).toEqual([2, 0, 1]);
  });

  it.each<[string, number]>([
    ['x-10', 10],
    ['abc', 0],
    ['12', 12],
    ['a1b2', 2],
    ['', 0],
    ['r-007', 7],
    ['x999999999999999', 999999999999999],
    ['x9007199254740991', 9007199254740991],
    ['x9007199254740992', 0],
    [`x${'9'.repeat(400)}`, 0],
    ['x٣', 0],
    ['x１２', 0],
    ['12\n', 0],
  ])('the order suffix of %p is %p', (value, n) => {
    expect(orderSuffix(value)).toBe(n);
  });

  it("is getIntFromStringSuffix's regexp reading for any text", () => {
    const byRegExp = (value: string): number => {
      const m = /(\d+)$/.exec(value);
      const n = m === null ? 0 : Number.parseInt(m[1] as string, 10);
      return Number.isSafeInteger(n) ? n : 0;
    };
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('0', '1', '9', '5', 'a', '-', '٣', ' '), maxLength: 24 }), (value) => {
        expect(orderSuffix(value)).toBe(byRegExp(value));
      }),
      { numRuns: 5000, seed: 23 },
    );
  });
});
