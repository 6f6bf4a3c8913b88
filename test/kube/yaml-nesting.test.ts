import { describe, expect, it } from '@jest/globals';
import { MAX_NESTING_DEPTH, parseObjects, parseSingleObject } from '../../lib/kube/yaml-objects.ts';
import { yamlNestingDepth } from '../../lib/kube/yaml-nesting.ts';

/** `{"a":[[...]]}`: the object plus `arrays` levels of arrays. */
const nestedJson = (arrays: number): string => `{"a":${'['.repeat(arrays)}${']'.repeat(arrays)}}`;

describe('yamlNestingDepth', () => {
  it.each<[string, string, number]>([
    ['a scalar', 'x', 0],
    ['a flat mapping', 'a: 1\nb: 2\n', 1],
    ['block mappings and a sequence', 'a:\n  b:\n    - c: 1\n', 4],
    ['flow collections in a block mapping', 'a: {b: [1, {c: 2}]}\n', 4],
    ['the deepest of several documents', 'a: 1\n---\na: {b: {c: 1}}\n', 3],
    ['compact sequences on one line', '- - - x\n', 3],
    ['JSON', nestedJson(5), 6],
  ])('counts %s', (_name, text, depth) => {
    expect(yamlNestingDepth(text)).toBe(depth);
  });

  it('measures 200,000 levels without recursing', () => {
    expect(yamlNestingDepth(nestedJson(200_000))).toBe(200_001);
  });

  it('stops once past the limit', () => {
    expect(yamlNestingDepth(nestedJson(10_000), 50)).toBe(51);
  });
});

describe('manifests nest at most MAX_NESTING_DEPTH levels', () => {
  it('reads an object nested exactly that deep', () => {
    expect(parseSingleObject(nestedJson(MAX_NESTING_DEPTH - 1), 'f.json')).toEqual({ a: expect.any(Array) });
  });

  it('refuses one level more, before the recursive parse', () => {
    expect(() => parseObjects(nestedJson(MAX_NESTING_DEPTH), 'f.json')).toThrow(`f.json: not valid JSON or YAML: it nests more than ${MAX_NESTING_DEPTH} levels deep`);
  });
});
