/**
 * Where a set's pods are listed: its selector as the API server's label
 * selector query, and its namespace. The memory pod source reads the same
 * query back, so the rollout tables select what the API server would.
 */
import { describe, expect, it } from '@jest/globals';
import { parseSelectorQuery } from '../../lib/adapters/memory-rollout.ts';
import { selectorMatches } from '../../lib/kube/label-selector.ts';
import { podScope } from '../../lib/rollout/pod-scope.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

function withSelector(selector: unknown, namespace?: string): SidecarSet {
  return { metadata: { name: 's' }, spec: { selector, containers: [], ...(namespace === undefined ? {} : { namespace }) } } as SidecarSet;
}

describe('podScope', () => {
  it.each<[string, unknown, string]>([
    ['matchLabels', { matchLabels: { app: 'web', tier: 'front' } }, 'app=web,tier=front'],
    ['In', { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] }, 'app in (web,api)'],
    ['NotIn', { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['dev'] }] }, 'env notin (dev)'],
    ['Exists', { matchExpressions: [{ key: 'sidecar', operator: 'Exists' }] }, 'sidecar'],
    ['DoesNotExist', { matchExpressions: [{ key: 'legacy', operator: 'DoesNotExist' }] }, '!legacy'],
    [
      'matchLabels and expressions together',
      { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['dev', 'test'] }, { key: 'legacy', operator: 'DoesNotExist' }] },
      'app=web,env notin (dev,test),!legacy',
    ],
    ['an empty selector (every pod)', {}, ''],
    ['a prefixed key', { matchLabels: { 'example.com/team': 'a' } }, 'example.com/team=a'],
  ])('writes %s as the label selector query', (_, selector, query) => {
    expect(podScope(withSelector(selector))).toEqual({ labelSelector: query });
  });

  it.each<[string, unknown]>([
    ['no selector', undefined],
    ['a selector that is not an object', 'app=web'],
    ['an unknown operator', { matchExpressions: [{ key: 'app', operator: 'Equals', values: ['web'] }] }],
    ['In without values', { matchExpressions: [{ key: 'app', operator: 'In', values: [] }] }],
    ['Exists with values', { matchExpressions: [{ key: 'app', operator: 'Exists', values: ['web'] }] }],
    ['a label value that cannot be one', { matchLabels: { app: 'web,tier=front' } }],
    ['a key that cannot be one', { matchLabels: { 'bad key': 'x' } }],
  ])('is undefined (no pod is listed) for %s', (_, selector) => {
    expect(podScope(withSelector(selector))).toBeUndefined();
  });

  it("carries the set's namespace, and none (every namespace) when it is empty or unset", () => {
    expect(podScope(withSelector({ matchLabels: { app: 'web' } }, 'team-a'))).toEqual({ namespace: 'team-a', labelSelector: 'app=web' });
    expect(podScope(withSelector({ matchLabels: { app: 'web' } }, ''))).toEqual({ labelSelector: 'app=web' });
    expect(podScope(withSelector({ matchLabels: { app: 'web' } }))).toEqual({ labelSelector: 'app=web' });
  });

  it('selects, read back, exactly the pods the selector matches', () => {
    const selector = { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'stage'] }, { key: 'legacy', operator: 'DoesNotExist' }, { key: 'team', operator: 'Exists' }] };
    const query = parseSelectorQuery(podScope(withSelector(selector))?.labelSelector ?? 'unset');
    const cases: Record<string, string>[] = [
      { app: 'web', env: 'prod', team: 'a' },
      { app: 'web', env: 'dev', team: 'a' },
      { app: 'web', env: 'stage', team: 'a', legacy: 'yes' },
      { app: 'web', env: 'stage' },
      { app: 'api', env: 'prod', team: 'a' },
    ];
    expect(cases.map((labels) => selectorMatches(query, labels))).toEqual(cases.map((labels) => selectorMatches(selector, labels)));
    expect(cases.map((labels) => selectorMatches(query, labels))).toEqual([true, false, false, false, false]);
  });

  it('a query the memory source cannot read is refused naming the requirement', () => {
    expect(() => parseSelectorQuery('app=web,env in prod')).toThrow(/cannot read the requirement "env in prod"/);
  });
});
