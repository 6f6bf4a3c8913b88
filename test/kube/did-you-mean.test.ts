import { describe, expect, it } from '@jest/globals';
import { closestWord, didYouMean } from '../../lib/kube/did-you-mean.ts';

const FUNCTIONS = ['sidecarset-default', 'sidecarset-validate', 'pod-inject', 'pod-change', 'sidecarset-convert', 'status-sync', 'rollout', 'explain'];

describe('did you mean', () => {
  it.each<[string, string | undefined]>([
    ['pod-injet', 'pod-inject'],
    ['pod-ijnect', 'pod-inject'],
    ['sidecarset-validat', 'sidecarset-validate'],
    ['Rollout', 'rollout'],
    ['explian', 'explain'],
    ['nonsense', undefined],
    ['pod', undefined],
    ['x'.repeat(100), undefined],
  ])('%s -> %s', (word, meant) => {
    expect(closestWord(word, FUNCTIONS)).toBe(meant);
  });

  it('says it in parentheses, or nothing', () => {
    expect(didYouMean('--evnt', ['--event', '--output'])).toBe(' (did you mean --event?)');
    expect(didYouMean('--zzz', ['--event', '--output'])).toBe('');
  });
});
