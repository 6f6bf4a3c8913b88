import { describe, expect, it } from '@jest/globals';
import { root } from '../../lib/kube/field-errors.ts';
import { selectorMatches, selectorMismatch, validateLabelSelector } from '../../lib/kube/label-selector.ts';
import type { LabelSelector } from '../../lib/kube/types.ts';

const labels = { app: 'web', tier: 'front' };

describe('selectorMatches', () => {
  it.each<[string, LabelSelector, boolean]>([
    ['an empty selector matches everything', {}, true],
    ['matchLabels equal', { matchLabels: { app: 'web' } }, true],
    ['matchLabels differ', { matchLabels: { app: 'db' } }, false],
    ['matchLabels missing key', { matchLabels: { zone: 'a' } }, false],
    ['In containing the value', { matchExpressions: [{ key: 'app', operator: 'In', values: ['db', 'web'] }] }, true],
    ['In without the value', { matchExpressions: [{ key: 'app', operator: 'In', values: ['db'] }] }, false],
    ['In on a missing key', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, false],
    ['NotIn without the value', { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['db'] }] }, true],
    ['NotIn with the value', { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] }, false],
    ['NotIn on a missing key', { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, true],
    ['Exists present', { matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, true],
    ['Exists absent', { matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, false],
    ['DoesNotExist absent', { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, true],
    ['DoesNotExist present', { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, false],
    ['labels and expressions are ANDed', { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, false],
    ['an unknown operator matches nothing', { matchExpressions: [{ key: 'app', operator: 'Like', values: ['web'] }] }, false],
    ['In without values matches nothing', { matchExpressions: [{ key: 'app', operator: 'In', values: [] }] }, false],
    ['Exists with values matches nothing', { matchExpressions: [{ key: 'app', operator: 'Exists', values: ['web'] }] }, false],
  ])('%s', (_name, selector, expected) => {
    expect(selectorMatches(selector, labels)).toBe(expected);
  });
});

describe('selectorMismatch', () => {
  it.each<[string, unknown, Record<string, string>, unknown]>([
    ['a matchLabels value the pod lacks', { matchLabels: { app: 'web', tier: 'x' } }, { app: 'web' }, { term: 'matchLabels', key: 'tier', want: 'x', have: undefined }],
    ['a matchLabels value the pod has otherwise', { matchLabels: { app: 'web' } }, { app: 'db' }, { term: 'matchLabels', key: 'app', want: 'web', have: 'db' }],
    ['the first expression that fails, after matchLabels hold', { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }, { key: 'env', operator: 'NotIn', values: ['prod'] }] }, { app: 'web', tier: 'x', env: 'prod' }, { term: 'matchExpressions', index: 1, key: 'env', operator: 'NotIn', values: ['prod'], have: 'prod' }],
    ['a selector that is not well formed', { matchExpressions: [{ key: 'a', operator: 'Near' }] }, { a: '1' }, { term: 'malformed', what: 'matchExpressions[0] has operator "Near"' }],
  ])('names %s', (_what, selector, labels, mismatch) => {
    expect(selectorMismatch(selector, labels)).toEqual(mismatch);
    // The one decision: a mismatch exactly when selectorMatches says no.
    expect(selectorMatches(selector, labels)).toBe(false);
  });

  it('finds none when the labels satisfy the selector', () => {
    expect(selectorMismatch({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['x', 'y'] }] }, { app: 'web', tier: 'y' })).toBeUndefined();
  });
});

describe('validateLabelSelector', () => {
  const path = root.child('spec').child('selector');
  it('accepts a well-formed selector', () => {
    expect(validateLabelSelector({ matchLabels: { 'example.com/app': 'web' }, matchExpressions: [{ key: 'a', operator: 'Exists' }] }, path)).toEqual([]);
  });
  it.each<[string, unknown, string]>([
    ['In needs values', { matchExpressions: [{ key: 'a', operator: 'In' }] }, 'spec.selector.matchExpressions[0].values'],
    ['Exists may not have values', { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, 'spec.selector.matchExpressions[0].values'],
    ['an unknown operator', { matchExpressions: [{ key: 'a', operator: 'Like', values: ['x'] }] }, 'spec.selector.matchExpressions[0].operator'],
    ['a bad label key', { matchLabels: { 'bad key': 'x' } }, 'spec.selector.matchLabels'],
    ['a bad label value', { matchLabels: { a: 'bad value!' } }, 'spec.selector.matchLabels'],
    ['a bad expression key', { matchExpressions: [{ key: '-a', operator: 'Exists' }] }, 'spec.selector.matchExpressions[0].key'],
    ['not an object', 'app=web', 'spec.selector'],
  ])('rejects %s', (_name, selector, errPath) => {
    expect(validateLabelSelector(selector, path).map((e) => e.path)).toContain(errPath);
  });
});
