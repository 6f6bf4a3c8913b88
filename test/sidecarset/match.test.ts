import { describe, expect, it } from '@jest/globals';
import { hasNamespaceSelector, sidecarSetSelectsPod, UnknownNamespaceError } from '../../lib/sidecarset/match.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

const labels = new Map([
  ['shop', { 'kubernetes.io/metadata.name': 'shop', env: 'dev' }],
  ['prod', { 'kubernetes.io/metadata.name': 'prod', env: 'prod' }],
]);

function set(spec: Record<string, unknown>): SidecarSet {
  return { metadata: { name: 's' }, spec: { selector: { matchLabels: { app: 'web' } }, ...spec } };
}

describe('which namespaces a set applies to', () => {
  it('a namespaceSelector alone is read from the Namespace labels', () => {
    const s = set({ namespaceSelector: { matchLabels: { env: 'prod' } } });
    expect(hasNamespaceSelector(s)).toBe(true);
    expect(sidecarSetSelectsPod(s, { app: 'web' }, 'prod', labels)).toBe(true);
    expect(sidecarSetSelectsPod(s, { app: 'web' }, 'shop', labels)).toBe(false);
    expect(() => sidecarSetSelectsPod(s, { app: 'web' }, 'gone', labels)).toThrow(UnknownNamespaceError);
  });

  it('a namespace beside a namespaceSelector wins, as in Kruise 1.9: the selector is not read, no Namespace labels are needed', () => {
    const s = set({ namespace: 'shop', namespaceSelector: { matchLabels: { env: 'prod' } } });
    expect(hasNamespaceSelector(s)).toBe(false);
    expect(sidecarSetSelectsPod(s, { app: 'web' }, 'shop', new Map())).toBe(true);
    expect(sidecarSetSelectsPod(s, { app: 'web' }, 'prod', labels)).toBe(false);
  });
});
