/**
 * The memo of what is derived from one stored version of a SidecarSet
 * (uid + resourceVersion): computed once per version, again for a new one,
 * never for a set that does not say which version it is, and bounded in
 * entries and in idle time.
 */
import { describe, expect, it } from '@jest/globals';
import { StoredVersionMemo } from '../../lib/sidecarset/stored-version-memo.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

function stored(uid: string | undefined, resourceVersion: string | undefined, image = 'agent:1'): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: `set-${uid ?? 'none'}`, ...(uid === undefined ? {} : { uid }), ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'agent', image }] },
  };
}

/** A memo of the set's image, counting its computations. */
function imageMemo(options: ConstructorParameters<typeof StoredVersionMemo>[1] = {}) {
  const computed: string[] = [];
  const memo = new StoredVersionMemo((set) => {
    computed.push(`${set.metadata?.uid ?? ''}@${set.metadata?.resourceVersion ?? ''}`);
    return set.spec?.containers?.[0]?.image;
  }, options);
  return { memo, computed };
}

describe('StoredVersionMemo', () => {
  it('computes once for the same uid and resourceVersion, even from another copy of the object', () => {
    const { memo, computed } = imageMemo();
    expect(memo.of(stored('a', '10'))).toBe('agent:1');
    expect(memo.of(stored('a', '10'))).toBe('agent:1');
    expect(memo.of(structuredClone(stored('a', '10')))).toBe('agent:1');
    expect(computed).toEqual(['a@10']);
  });

  it('computes again for a new resourceVersion of the set, and keeps one entry per set', () => {
    const { memo, computed } = imageMemo();
    memo.of(stored('a', '10', 'agent:1'));
    expect(memo.of(stored('a', '11', 'agent:2'))).toBe('agent:2');
    expect(memo.of(stored('a', '11', 'agent:2'))).toBe('agent:2');
    expect(computed).toEqual(['a@10', 'a@11']);
    expect(memo.size).toBe(1);
  });

  it('goes back to computing when the set returns to an older resourceVersion (only the last is kept)', () => {
    const { memo, computed } = imageMemo();
    memo.of(stored('a', '10'));
    memo.of(stored('a', '11'));
    memo.of(stored('a', '10'));
    expect(computed).toEqual(['a@10', 'a@11', 'a@10']);
  });

  it.each([
    ['no uid', stored(undefined, '10')],
    ['no resourceVersion', stored('a', undefined)],
    ['an empty uid', stored('', '10')],
    ['an empty resourceVersion', stored('a', '')],
    ['a uid that is not text', { ...stored('a', '10'), metadata: { uid: 7, resourceVersion: '10' } } as unknown as SidecarSet],
  ])('computes on every call for a set with %s (an offline file, a test)', (_name, set) => {
    const { memo, computed } = imageMemo();
    memo.of(set);
    memo.of(set);
    expect(computed).toHaveLength(2);
    expect(memo.size).toBe(0);
  });

  it('keeps at most maxEntries sets, evicting the least recently used first', () => {
    const { memo, computed } = imageMemo({ maxEntries: 3 });
    for (const uid of ['a', 'b', 'c']) memo.of(stored(uid, '1'));
    memo.of(stored('a', '1')); // a is now the most recently used
    memo.of(stored('d', '1')); // evicts b
    expect(memo.size).toBe(3);
    computed.length = 0;
    memo.of(stored('a', '1'));
    memo.of(stored('c', '1'));
    memo.of(stored('d', '1'));
    expect(computed).toEqual([]);
    memo.of(stored('b', '1'));
    expect(computed).toEqual(['b@1']);
    expect(memo.size).toBe(3);
  });

  it('stays bounded however many sets pass through it', () => {
    const { memo } = imageMemo({ maxEntries: 100 });
    for (let i = 0; i < 10_000; i++) memo.of(stored(`uid-${i}`, String(i)));
    expect(memo.size).toBe(100);
  });

  it('drops a set unused for longer than maxIdleMs (a deleted set ages out)', () => {
    let now = 0;
    const { memo, computed } = imageMemo({ maxIdleMs: 1000, now: () => now });
    memo.of(stored('deleted', '1'));
    memo.of(stored('kept', '1'));
    now = 900;
    memo.of(stored('kept', '1'));
    now = 1500;
    memo.of(stored('kept', '1'));
    expect(memo.size).toBe(1);
    memo.of(stored('deleted', '1'));
    expect(computed).toEqual(['deleted@1', 'kept@1', 'deleted@1']);
  });

  it('memoises nothing with maxEntries 0', () => {
    const { memo, computed } = imageMemo({ maxEntries: 0 });
    memo.of(stored('a', '1'));
    memo.of(stored('a', '1'));
    expect(computed).toHaveLength(2);
    expect(memo.size).toBe(0);
  });

  it.each([
    [{ maxEntries: -1 }, /maxEntries must be a whole number/],
    [{ maxEntries: 1.5 }, /maxEntries must be a whole number/],
    [{ maxIdleMs: Number.NaN }, /maxIdleMs must be ≥ 0/],
  ])('refuses the bounds %p', (options, message) => {
    expect(() => imageMemo(options)).toThrow(message);
  });

  it('keeps nothing when the computation throws, and throws it', () => {
    const memo = new StoredVersionMemo(() => {
      throw new Error('cannot');
    });
    expect(() => memo.of(stored('a', '1'))).toThrow('cannot');
    expect(memo.size).toBe(0);
  });
});
