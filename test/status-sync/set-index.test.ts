/**
 * The set index narrows without ever dropping a match: for random sets
 * (well-formed and malformed selectors, namespaces, namespaceSelectors) and
 * random pods it offers every set that sidecarSetSelectsPod accepts, each
 * once, and a whole reconcile agrees with computing every set over every pod.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { memoryNamespaceSource } from '../../lib/adapters/memory.ts';
import { memoryPodPages } from '../../lib/adapters/memory-status-sync.ts';
import type { Pod } from '../../lib/kube/types.ts';
import { sidecarSetSelectsPod } from '../../lib/sidecarset/match.ts';
import { computeStatus, summarizePod } from '../../lib/sidecarset/status.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';
import { runResync } from '../../lib/status-sync/resync.ts';
import { buildSetIndex } from '../../lib/status-sync/set-index.ts';
import { listedPod, memoryDeps, namespace } from '../../testkit/status-sync-objects.ts';

const KEYS = ['app', 'tier', 'team'];
const VALUES = ['a', 'b', 'c'];
const NAMESPACES = ['shop', 'lab', 'ops'];
const NAMESPACE_LABELS = new Map<string, Record<string, string>>([
  ['shop', { env: 'prod' }],
  ['lab', { env: 'dev' }],
  ['ops', {}],
]);

const key = fc.constantFrom(...KEYS);
const value = fc.constantFrom(...VALUES);
const labels = fc.dictionary(key, value, { maxKeys: 3 });

const requirement = fc.oneof(
  fc.record({ key, operator: fc.constantFrom('In', 'NotIn'), values: fc.array(value, { minLength: 1, maxLength: 3 }) }),
  fc.record({ key, operator: fc.constantFrom('Exists', 'DoesNotExist') }),
  // Malformed: validation refuses them, the index must still be safe with them.
  fc.constant({ key: 'app', operator: 'In' }),
  fc.constant({ key: 'app', operator: 'Exists', values: ['a'] }),
  fc.constant({ key: 'app', operator: 'Near', values: ['a'] }),
  fc.constant({ key: 'app', operator: 'In', values: [1, 'a'] }),
  fc.constant('not an object'),
);

const selector = fc.oneof(
  { weight: 8, arbitrary: fc.record({ matchLabels: labels, matchExpressions: fc.array(requirement, { maxLength: 3 }) }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, undefined, 'app=a', { matchLabels: { app: 5 } }, { matchLabels: null, matchExpressions: null }) },
);

const set = fc.record({
  selector,
  namespace: fc.option(fc.constantFrom(...NAMESPACES, ''), { nil: undefined }),
  namespaceSelector: fc.option(fc.constantFrom({ matchLabels: { env: 'prod' } }, { matchExpressions: [{ key: 'env', operator: 'Exists' }] }), { nil: undefined }),
});

const sets = fc.array(set, { maxLength: 12 }).map((specs) =>
  specs.map(
    (spec, i): SidecarSet => ({
      metadata: { name: `s${i}`, annotations: { 'kruise.io/sidecarset-hash': `h${i}` }, resourceVersion: '1', generation: 1 },
      spec: { ...(spec as Record<string, unknown>), containers: [{ name: `s${i}-sidecar`, image: 'x' }] },
    }),
  ),
);

const pods = fc.array(
  fc.record({ namespace: fc.constantFrom(...NAMESPACES), labels, injected: fc.array(fc.nat(11), { maxLength: 3 }), current: fc.boolean(), ready: fc.boolean() }),
  { maxLength: 30 },
);

function podsFrom(specs: { namespace: string; labels: Record<string, string>; injected: number[]; current: boolean; ready: boolean }[]): Pod[] {
  return specs.map((p, i) =>
    listedPod({ name: `p${i}`, namespace: p.namespace, labels: p.labels, ready: p.ready, injected: Object.fromEntries(p.injected.map((s) => [`s${s}`, p.current ? `h${s}` : 'old'])) }),
  );
}

describe('the SidecarSet index', () => {
  it('offers every set that applies to a pod, each exactly once', () => {
    fc.assert(
      fc.property(sets, pods, (setList, podSpecs) => {
        const index = buildSetIndex(setList);
        for (const pod of podsFrom(podSpecs).map(summarizePod)) {
          const offered: number[] = [];
          index.forEachCandidate(pod, (i) => offered.push(i));
          expect(new Set(offered).size).toBe(offered.length);
          const applies = setList.flatMap((s, i) => (sidecarSetSelectsPod(s, pod.labels, pod.namespace, NAMESPACE_LABELS) ? [i] : []));
          for (const i of applies) expect(offered).toContain(i);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('gives a resync the statuses that computing every set over every pod gives', async () => {
    await fc.assert(
      fc.asyncProperty(sets, pods, async (setList, podSpecs) => {
        const podList = podsFrom(podSpecs);
        const namespaceList = [...NAMESPACE_LABELS].map(([name, nsLabels]) => namespace(name, nsLabels));
        const { deps, statuses } = memoryDeps(setList, podList, { namespaceList, pods: memoryPodPages(podList, 7) });
        const result = await runResync(deps);
        expect(result.errors).toEqual([]);
        const summaries = podList.map(summarizePod);
        const written = new Map(statuses.writes.map((w) => [w.name, w.status]));
        for (const s of setList) {
          const expected = computeStatus(s, summaries, NAMESPACE_LABELS);
          expect(written.get(s.metadata?.name ?? '')).toEqual(expected.status);
          expect(result.notInjected[s.metadata?.name ?? ''] ?? 0).toBe(expected.notInjectedPods);
        }
      }),
      { numRuns: 200 },
    );
  });

  it.each<[string, Record<string, unknown>, Record<string, string>, boolean]>([
    ['matchLabels, by key and value', { matchLabels: { app: 'a', tier: 'b' } }, { app: 'a' }, true],
    ['matchLabels, another value', { matchLabels: { app: 'a' } }, { app: 'b' }, false],
    ['In, by each value', { matchExpressions: [{ key: 'app', operator: 'In', values: ['a', 'b'] }] }, { app: 'b' }, true],
    ['In, a value it does not list', { matchExpressions: [{ key: 'app', operator: 'In', values: ['a', 'b'] }] }, { app: 'c' }, false],
    ['Exists, by key', { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, { app: 'z' }, true],
    ['Exists, without the key', { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, { tier: 'a' }, false],
    ['NotIn alone, for every pod', { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['a'] }] }, {}, true],
  ])('files a set with %s', (_name, sel, podLabels, offered) => {
    const index = buildSetIndex([{ metadata: { name: 's' }, spec: { selector: sel } }]);
    const seen: number[] = [];
    index.forEachCandidate({ namespace: 'x', labels: podLabels }, (i) => seen.push(i));
    expect(seen).toEqual(offered ? [0] : []);
  });

  it('offers a namespaced set only for pods of its namespace', () => {
    const index = buildSetIndex([{ metadata: { name: 's' }, spec: { namespace: 'shop', selector: { matchLabels: { app: 'a' } } } }]);
    const seen: string[] = [];
    for (const ns of ['shop', 'lab']) index.forEachCandidate({ namespace: ns, labels: { app: 'a' } }, () => seen.push(ns));
    expect(seen).toEqual(['shop']);
  });
});

describe('computeStatus and the resync agree on a namespaceSelector set', () => {
  it('when the namespace labels come from the Namespace source', async () => {
    const s: SidecarSet = { metadata: { name: 's', annotations: { 'kruise.io/sidecarset-hash': 'h' }, generation: 1 }, spec: { namespaceSelector: { matchLabels: { env: 'prod' } }, selector: { matchLabels: { app: 'web' } }, containers: [{ name: 's-sidecar', image: 'x' }] } };
    const podList = [listedPod({ namespace: 'shop', injected: { s: 'h' } }), listedPod({ namespace: 'lab', injected: { s: 'h' } })];
    const { deps, statuses } = memoryDeps([s], podList, { namespaces: memoryNamespaceSource([namespace('shop', { env: 'prod' }), namespace('lab')]) });
    await runResync(deps);
    expect(statuses.writes[0]?.status.matchedPods).toBe(1);
  });
});
