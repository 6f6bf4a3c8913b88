import { describe, expect, it } from '@jest/globals';
import {
  applyDelta,
  indexSnapshot,
  listedVersions,
  MAX_FETCHED_BY_NAME,
  planDelta,
  tableVersions,
} from '../../lib/adapters/sidecarset-delta.ts';
import { RESOURCE_VERSION_COLUMN } from '../../lib/crd/sidecarset-crd.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

const set = (name: string, resourceVersion: string): SidecarSet => ({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name, resourceVersion } });
const metadataList = (...items: [string, string][]) => ({
  kind: 'PartialObjectMetadataList',
  apiVersion: 'meta.k8s.io/v1',
  items: items.map(([name, resourceVersion]) => ({ kind: 'PartialObjectMetadata', metadata: { name, resourceVersion } })),
});

describe('listedVersions', () => {
  it('reads the names and resourceVersions of a metadata list, in order', () => {
    expect(listedVersions(metadataList(['a', '10'], ['b', '7']))).toEqual([
      { name: 'a', resourceVersion: '10' },
      { name: 'b', resourceVersion: '7' },
    ]);
    expect(listedVersions(metadataList())).toEqual([]);
  });

  it.each([
    ['a full SidecarSetList (the as= parameter ignored)', { kind: 'SidecarSetList', items: [set('a', '1')] }],
    ['no items array', { kind: 'PartialObjectMetadataList' }],
    ['an item without a resourceVersion', { kind: 'PartialObjectMetadataList', items: [{ metadata: { name: 'a' } }] }],
    ['an item with an empty name', metadataList(['', '1'])],
    ['an item that is not an object', { kind: 'PartialObjectMetadataList', items: ['a'] }],
    ['not an object', 'PartialObjectMetadataList'],
  ])('gives up (so that the full list is read) on %s', (_what, body) => {
    expect(listedVersions(body)).toBeUndefined();
  });
});

/** A Table of SidecarSets as the API server sends it with includeObject=None: the name column, the CRD's columns, no objects. */
const table = (columns: Record<string, unknown>[], ...rows: unknown[][]) => ({
  kind: 'Table',
  apiVersion: 'meta.k8s.io/v1',
  metadata: { resourceVersion: '99' },
  columnDefinitions: [{ name: 'Name', type: 'string', format: 'name', description: 'Name must be unique', priority: 0 }, ...columns],
  rows: rows.map((cells) => ({ cells, object: null })),
});
const matched = { name: 'MATCHED', type: 'integer', format: '', description: 'The number of Pods matched.', priority: 0 };
const resourceVersion = { ...RESOURCE_VERSION_COLUMN, format: '' };

describe('tableVersions', () => {
  it('reads the names and resourceVersions of a Table with the resourceVersion column, wherever that column is', () => {
    expect(tableVersions(table([matched, resourceVersion], ['a', 3, '10'], ['b', null, '7']))).toEqual([
      { name: 'a', resourceVersion: '10' },
      { name: 'b', resourceVersion: '7' },
    ]);
    expect(tableVersions(table([resourceVersion, matched], ['a', '10', 3]))).toEqual([{ name: 'a', resourceVersion: '10' }]);
    expect(tableVersions(table([resourceVersion]))).toEqual([]);
  });

  it.each([
    ["OpenKruise's CRD (no resourceVersion column)", table([matched], ['a', 3])],
    ['a column of that name that says something else', table([{ ...resourceVersion, description: 'mine' }], ['a', '10'])],
    ['a row without its resourceVersion (null cell)', table([resourceVersion], ['a', null])],
    ['a row with an empty name', table([resourceVersion], ['', '10'])],
    ['a row without cells', { ...table([resourceVersion]), rows: [{ object: null }] }],
    ['a full SidecarSetList (the as= parameter ignored)', { kind: 'SidecarSetList', items: [set('a', '1')] }],
    ['a metadata list', metadataList(['a', '1'])],
    ['not an object', 'Table'],
  ])('gives up (so that the metadata list is read) on %s', (_what, body) => {
    expect(tableVersions(body)).toBeUndefined();
  });
});

describe('planDelta', () => {
  const held = indexSnapshot([set('a', '1'), set('b', '2'), set('c', '3')]);

  it('fetches nothing when every resourceVersion is the one held', () => {
    expect(planDelta([{ name: 'a', resourceVersion: '1' }, { name: 'b', resourceVersion: '2' }], held)).toEqual({ kind: 'fetch', names: [] });
  });

  it('fetches the sets whose resourceVersion changed and the new ones, never a held one of another version', () => {
    const listed = [
      { name: 'a', resourceVersion: '1' },
      { name: 'b', resourceVersion: '20' },
      { name: 'd', resourceVersion: '4' },
    ];
    expect(planDelta(listed, held)).toEqual({ kind: 'fetch', names: ['b', 'd'] });
  });

  it(`reads the full list when more than ${MAX_FETCHED_BY_NAME} sets changed`, () => {
    const many = Array.from({ length: MAX_FETCHED_BY_NAME + 1 }, (_, i) => ({ name: `n${i}`, resourceVersion: '1' }));
    expect(planDelta(many, held)).toEqual({ kind: 'full' });
    expect(planDelta(many.slice(1), held)).toEqual({ kind: 'fetch', names: many.slice(1).map((e) => e.name) });
  });
});

describe('applyDelta', () => {
  it('gives the listed sets in order: held where unchanged, fetched where changed; a deleted one is left out', () => {
    const a = set('a', '1');
    const b2 = set('b', '20');
    const held = indexSnapshot([a, set('b', '2'), set('c', '3')]);
    const listed = [
      { name: 'a', resourceVersion: '1' },
      { name: 'b', resourceVersion: '20' },
      { name: 'e', resourceVersion: '5' },
    ];
    // c is no longer listed; e was deleted between the list and its GET.
    const result = applyDelta(listed, held, new Map([['b', b2], ['e', undefined]]));
    expect(result).toEqual([a, b2]);
    expect(result[0]).toBe(a);
  });
});
