import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Pod } from '../../lib/kube/types.ts';
import { compareKeys, matchedList, matchedPods } from '../../lib/rollout/candidates.ts';
import { NO_NAMESPACES, rolloutPod, rolloutSet } from './fixtures.ts';

/**
 * The matched pods are ordered by their `namespace/name` key (the API
 * server's list order, which Kruise's ties refer to), compared without
 * making the key: the order must be the keys' order for any namespace and
 * name, those that begin one another (`a`, `a-b`, `a/`) and non-ASCII ones
 * included.
 */
const text = fc.string({ unit: fc.constantFrom('a', 'b', '-', '.', '/', '0', 'é', '\u{1F600}', '\uFFFF'), maxLength: 5 });
/** Namespaces as valid ones are, with no '/': the matched list ranks them once. */
const namespace = fc.string({ unit: fc.constantFrom('a', 'b', '-', '.', '0', '\u{1F600}'), maxLength: 4 });
const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

describe('the matched pods in namespace/name order', () => {
  it('compare as their keys compare', () => {
    fc.assert(
      fc.property(text, text, text, text, (na, a, nb, b) => {
        expect(Math.sign(compareKeys(na, a, nb, b))).toBe(byKey(`${na}/${a}`, `${nb}/${b}`));
      }),
      { numRuns: 20_000, seed: 23 },
    );
  });

  it('are listed in key order, as listed when that is the order, and each placed where the sorted list has it', () => {
    const set = rolloutSet();
    fc.assert(
      fc.property(fc.oneof(fc.array(fc.tuple(text, text), { maxLength: 30 }), fc.array(fc.tuple(namespace, text), { maxLength: 30 })), (keys) => {
        const pods: Pod[] = keys.map(([namespace, name]) => rolloutPod(set, { name, namespace }));
        const key = (p: Pod): string => `${p.metadata!.namespace}/${p.metadata!.name}`;
        const { listed, sorted, position } = matchedList(set, pods, NO_NAMESPACES);
        // A stable sort by key: equal keys keep list order.
        expect(sorted).toEqual([...pods].sort((x, y) => byKey(key(x), key(y))));
        expect(matchedPods(set, pods, NO_NAMESPACES)).toEqual(sorted);
        expect(listed).toEqual(pods);
        if (position === undefined) expect(sorted).toBe(listed);
        else for (const [j, pod] of listed.entries()) expect(sorted[position[j] as number]).toBe(pod);
      }),
      { numRuns: 600, seed: 23 },
    );
  });
});
