import { describe, expect, it } from '@jest/globals';
import { setsByName } from '../../lib/sidecarset/sets-by-name.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

const set = (name: string | undefined): SidecarSet => ({ metadata: name === undefined ? {} : { name }, spec: { containers: [] } });

describe('the sets of a list by name', () => {
  it('finds each named set, and leaves out a set without a name', () => {
    const sets = [set('a'), set(undefined), set('b')];
    const index = setsByName(sets);
    expect([...index.keys()]).toEqual(['a', 'b']);
    expect(index.get('b')).toBe(sets[2]);
  });

  it('indexes one list once: the same list gives the same index, another list its own', () => {
    const sets = [set('a')];
    expect(setsByName(sets)).toBe(setsByName(sets));
    expect(setsByName([...sets])).not.toBe(setsByName(sets));
  });
});
