import { describe, expect, it } from '@jest/globals';
import { errorsFor, startingWith } from './validate-fixture.ts';

const entry = (annotations: unknown, patchPolicy: unknown = 'Retain'): unknown => ({ annotations, patchPolicy });

describe('rule 11: patchPodMetadata', () => {
  it.each<[string, unknown[], string[]]>([
    ['accepts different keys in different entries', [entry({ 'example.com/a': '1' }), entry({ 'example.com/b': '{}' }, 'MergePatchJson')], []],
    ['accepts upper-case annotation keys', [entry({ 'Example.com/Owner': 'team-a' }, 'Overwrite')], []],
    ['requires annotations', [entry(undefined)], ['spec.patchPodMetadata[0].annotations: Required value: no annotations defined for SidecarSet']],
    ['rejects empty annotations', [entry({})], ['spec.patchPodMetadata[0].annotations: Required value: no annotations defined for SidecarSet']],
    ['rejects a key that is not a qualified name', [entry({ 'bad key': 'x' })], ['spec.patchPodMetadata[0].annotations: Invalid value: "bad key": name part must consist of']],
    ['rejects a value that is not a string', [entry({ a: 5 })], ['spec.patchPodMetadata[0].annotations[a]: Invalid value: 5: must be a string']],
    [
      'rejects one key in two entries',
      [entry({ a: '1', b: '2' }), entry({ b: '3' }, 'Overwrite')],
      ['spec.patchPodMetadata[1].annotations[b]: Duplicate value: "b": patch annotation[b] already exist in spec.patchPodMetadata[0]'],
    ],
    ['requires a patchPolicy', [entry({ a: '1' }, '')], ['spec.patchPodMetadata[0].patchPolicy: Required value: no patchPolicy defined for patchPodMetadata']],
    [
      'rejects an unknown patchPolicy',
      [entry({ a: '1' }, 'Replace')],
      ['spec.patchPodMetadata[0].patchPolicy: Unsupported value: "Replace": supported values: "Retain", "Overwrite", "MergePatchJson"'],
    ],
  ])('%s', (_name, patches, expected) => {
    expect(errorsFor({ 'spec.patchPodMetadata': patches })).toEqual(startingWith(expected));
  });
});
