/** JSON text is read as JSON: in time near JSON.parse's, with the YAML reading's refusals. */
import { describe, expect, it } from '@jest/globals';
import { ManifestError, parseObjects, parseSingleObject } from '../../lib/kube/yaml-objects.ts';

/** A 1 MB AdmissionReview-like JSON text. */
function bigJson(): string {
  const env = Array.from({ length: 6300 }, (_, i) => ({ name: `VAR_${i}`, value: `value-${i}-${'x'.repeat(50)}` }));
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'big' }, spec: { containers: [{ name: 'app', image: 'nginx', env }] } }, null, 2);
}

function msOf(run: () => unknown): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

describe('reading JSON text', () => {
  it('reads 1 MB of JSON within 25 times what JSON.parse takes (the YAML parser took about 200 times)', () => {
    const text = bigJson();
    expect(text.length).toBeGreaterThan(850_000);
    // Best of three each, so a busy machine slows both alike.
    const parse = Math.min(...[0, 1, 2].map(() => msOf(() => JSON.parse(text))));
    const ours = Math.min(...[0, 1, 2].map(() => msOf(() => parseSingleObject(text, 'big.json'))));
    expect(parseSingleObject(text, 'big.json')).toEqual(JSON.parse(text));
    expect(ours).toBeLessThan(25 * parse + 20);
  });

  it.each([
    ['a duplicate key', '{"a": {"b": 1, "b": 2}}', 'big.json: not valid JSON or YAML: Map keys must be unique ("b" twice in one object)'],
    ['a duplicate key spelt with an escape', '{"a": 1, "\\u0061": 2}', 'big.json: not valid JSON or YAML: Map keys must be unique ("a" twice in one object)'],
    ['a number JSON cannot hold', '{"a": 1e400}', 'big.json: not valid JSON or YAML: "a" holds the number Infinity, which JSON cannot'],
  ])('refuses %s, naming the file', (_, text, message) => {
    expect(() => parseObjects(text, 'big.json')).toThrow(new ManifestError(message));
  });

  it('keeps keys inside strings and the same key in sibling objects apart from duplicates', () => {
    expect(parseObjects('[{"a": "{\\"a\\": 1, \\"a\\": 2}"}, {"a": 1}]', 'f.json')).toEqual([{ a: '{"a": 1, "a": 2}' }, { a: 1 }]);
  });

  it('leaves text that only looks like JSON to the YAML parser: flow style, and its errors', () => {
    expect(parseSingleObject('{kind: Pod, metadata: {name: a}}', 'f.yaml')).toEqual({ kind: 'Pod', metadata: { name: 'a' } });
    expect(() => parseSingleObject('{"a": 1,, }', 'f.json')).toThrow(/^f\.json: not valid JSON or YAML: /);
  });
});
