/**
 * The kept JSON texts of lib/kube/json-text.ts: whatever is frozen, built
 * from a template and changed afterwards, the text is JSON.stringify's, byte
 * for byte, and a text is never one kept for another value.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { cloneJson } from '../../lib/kube/json.ts';
import { builtFrom, freezeJson, isFrozenJson, itemsText, jsonText, membersText, objectBuiltFrom, templateOf } from '../../lib/kube/json-text.ts';

/** JSON data as JSON.parse gives it, `__proto__` keys, escapes and lone surrogates included. */
const jsonData = fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown);
const objectData = fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('__proto__', 'env', 'a"b', '\u2028', '\ud800')), jsonData, { maxKeys: 6 });

describe('jsonText', () => {
  it('is JSON.stringify for any JSON data, frozen or not, asked once or twice', () => {
    fc.assert(
      fc.property(jsonData, fc.boolean(), (value, freeze) => {
        const want = JSON.stringify(value);
        const data = freeze ? freezeJson(cloneJson(value)) : value;
        expect(jsonText(data)).toBe(want);
        expect(jsonText(data)).toBe(want);
        if (Array.isArray(data)) expect(itemsText(data)).toBe(want);
      }),
      { numRuns: 2000 },
    );
  });

  it('writes an object built from a template as JSON.stringify does, whichever members were replaced, removed, added or reordered', () => {
    fc.assert(
      fc.property(objectData, objectData, fc.array(fc.nat(), { maxLength: 6 }), (templateData, replacements, dropped) => {
        const template = freezeJson(cloneJson(templateData));
        // The template's texts are kept (whole, and member by member) before the object is built: a stale text would show below.
        expect(jsonText(template)).toBe(JSON.stringify(template));
        expect(jsonText(builtFrom({ ...template }, template))).toBe(JSON.stringify(template));
        const built = builtFrom({ ...template, ...replacements }, template);
        const keys = Object.keys(built);
        for (const at of dropped) if (keys.length > 0) Reflect.deleteProperty(built, keys[at % keys.length] ?? '');
        expect(jsonText(built)).toBe(JSON.stringify(built));
        expect(membersText(built)).toBe(JSON.stringify(built));
        // Written twice: the second time from the template's kept members.
        expect(jsonText(built)).toBe(JSON.stringify(built));
      }),
      { numRuns: 2000 },
    );
  });

  it('never writes a template member the built object no longer holds, even after the template\'s texts were kept', () => {
    const template = freezeJson({ name: 'agent', image: 'agent:1', env: [{ name: 'A', value: '1' }], resources: { limits: { cpu: '1' } } });
    const first = builtFrom({ ...template }, template);
    expect(jsonText(first)).toBe(JSON.stringify(template));
    const second = builtFrom({ ...template, image: 'agent:2', env: [...template.env, { name: 'B', value: '2' }] }, template);
    expect(jsonText(second)).toBe('{"name":"agent","image":"agent:2","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"resources":{"limits":{"cpu":"1"}}}');
    second.image = 'agent:3';
    expect(jsonText(second)).toContain('"image":"agent:3"');
  });

  it('keeps no template for an object that is not frozen as JSON, and hides the one it keeps from copies and comparisons', () => {
    const plain = { name: 'agent' };
    expect(templateOf(builtFrom({ ...plain }, plain))).toBeUndefined();
    // Frozen by Object.freeze alone, its members could still change below it.
    const shallow = Object.freeze({ env: [{ name: 'A' }] });
    expect(isFrozenJson(shallow)).toBe(false);
    expect(templateOf(builtFrom({ ...shallow }, shallow))).toBeUndefined();
    const template = freezeJson({ name: 'agent' });
    const built = builtFrom({ ...template }, template);
    expect(templateOf(built)).toBe(template);
    expect(Object.keys(built)).toEqual(['name']);
    expect(templateOf({ ...built })).toBeUndefined();
    expect(built).toEqual({ name: 'agent' });
  });

  it('makes an object built from a frozen template, written as JSON.stringify, whose template nothing else sees', () => {
    fc.assert(
      fc.property(objectData, objectData, fc.boolean(), (template, extra, freeze) => {
        const source = freeze ? freezeJson(cloneJson(template)) : template;
        const built = objectBuiltFrom(source);
        // The template's members, some replaced or added, as a sidecar's container is made.
        for (const key of Object.keys(source)) Object.defineProperty(built, key, { value: source[key], enumerable: true, writable: true, configurable: true });
        for (const [key, value] of Object.entries(extra)) Object.defineProperty(built, key, { value, enumerable: true, writable: true, configurable: true });
        expect(templateOf(built)).toBe(freeze ? source : undefined);
        expect(jsonText(built)).toBe(JSON.stringify(built));
        expect(jsonText(built)).toBe(jsonText(built));
        expect(Object.keys(built)).toEqual(Object.keys({ ...built }));
        expect(templateOf({ ...built })).toBeUndefined();
        expect(built).toEqual({ ...built });
        expect(cloneJson(built)).toEqual(built);
      }),
      { numRuns: 1000 },
    );
  });

  it('freezes everything below a value it freezes', () => {
    const value = freezeJson({ a: [{ b: { c: 1 } }] });
    expect(Object.isFrozen(value.a[0]?.b)).toBe(true);
    expect(isFrozenJson(value.a[0])).toBe(true);
    expect(() => {
      (value.a[0]?.b as { c: number }).c = 2;
    }).toThrow(TypeError);
  });

  it('writes the texts handed over for strings, as a value and as a plain object\'s members, and JSON.stringify\'s for everything else', () => {
    fc.assert(
      fc.property(objectData, fc.array(fc.string(), { maxLength: 3 }), (object, known) => {
        // Handed over as texts a caller computed (JSON.stringify's), some of them for the object's string members.
        const strings = known.map((value) => ({ value, json: JSON.stringify(value) }));
        for (const [key, value] of Object.entries(object)) if (typeof value === 'string' && known.length > 0) object[key] = known[0];
        expect(jsonText(object, strings)).toBe(JSON.stringify(object));
        expect(membersText(object, strings)).toBe(JSON.stringify(object));
        for (const value of [...known, ...Object.values(object)]) expect(jsonText(value, strings)).toBe(JSON.stringify(value));
        expect(jsonText(Object.values(object), strings)).toBe(JSON.stringify(Object.values(object)));
      }),
      { numRuns: 1000 },
    );
  });

  it('takes a handed-over text for its very string, as a value or a member, and for no other string', () => {
    const value = 'a "quoted" <text>';
    // A text no JSON.stringify would write: seen only where it is taken.
    const strings = [{ value, json: '"TAKEN"' }];
    expect(jsonText(value, strings)).toBe('"TAKEN"');
    expect(jsonText({ a: value, b: 'other' }, strings)).toBe('{"a":"TAKEN","b":"other"}');
    expect(membersText({ a: value }, strings)).toBe('{"a":"TAKEN"}');
    expect(jsonText('other', strings)).toBe('"other"');
    // Only a value or a plain object's member: deeper, the object is JSON.stringify's.
    expect(jsonText({ a: { b: value } }, strings)).toBe(JSON.stringify({ a: { b: value } }));
    expect(jsonText([value], strings)).toBe(JSON.stringify([value]));
  });
});
