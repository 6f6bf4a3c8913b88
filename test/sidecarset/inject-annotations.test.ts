/**
 * The hash annotations injection writes from texts kept per stored version
 * of a set (lib/sidecarset/inject-annotations.ts) are formatHashAnnotation's,
 * byte for byte, and their JSON string is JSON.stringify's, whichever entries
 * the pod already held; formatHashAnnotation orders the sets as Go's
 * encoding/json does; the timestamp kept for a second is that second's.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { hashAnnotationText, setHashEntries, type FreshEntry } from '../../lib/sidecarset/inject-annotations.ts';
import { formatHashAnnotation, formatTimestamp, parseHashAnnotation, type SidecarSetUpgradeSpec, type UpgradeSpecMap } from '../../lib/sidecarset/pod-annotations.ts';

/** Text a JSON writer or an HTML-safe escaper must take care with, beyond ASCII, and names that are array indices or Object.prototype's. */
const awkward = fc.constantFrom('a', 'platform-01', '10', '9', '0', '__proto__', 'toString', '<b>&"x"', '\u2028\u2029', 'naïve 日本 𝄞', 'tab\there', 'back\\slash', '');
const name = fc.oneof(awkward, fc.string({ maxLength: 6 }), fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,8}$/));
const timestamp = fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map(formatTimestamp);

const storedEntry: fc.Arbitrary<SidecarSetUpgradeSpec> = fc.record(
  {
    updateTimestamp: fc.option(fc.oneof(timestamp, awkward), { nil: null }),
    hash: fc.oneof(awkward, fc.stringMatching(/^[0-9a-z]{0,8}$/)),
    sidecarSetName: name,
    sidecarList: fc.option(fc.array(name, { maxLength: 3 }), { nil: null }),
    controllerRevision: fc.oneof(awkward, fc.constant('set-5d8fd5bb97')),
  },
  { requiredKeys: ['updateTimestamp', 'hash', 'sidecarSetName', 'sidecarList'] },
);

/** A set injection records: its name, hashes and sidecars, and the revision it records. */
const injected = fc.record({ name, hash: fc.oneof(awkward, fc.stringMatching(/^[0-9a-z]{0,8}$/)), hashWithoutImage: awkward, sidecarList: fc.array(name, { maxLength: 3 }), revision: fc.oneof(fc.constant(''), awkward) });

describe('the hash annotations written from kept pieces', () => {
  it('are formatHashAnnotation\'s text and JSON.stringify\'s string, for pods holding entries already and sets injected over them', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(name, storedEntry), { maxLength: 4 }), fc.array(injected, { maxLength: 4 }), timestamp, fc.boolean(), (held, sets, now, replaceOne) => {
        for (const which of ['hash', 'withoutImage'] as const) {
          const map: UpgradeSpecMap = new Map(held);
          const fresh = new Map<string, FreshEntry>();
          for (const set of sets) {
            const pieces = setHashEntries(set, set.revision)[which];
            const entry: SidecarSetUpgradeSpec = {
              updateTimestamp: now,
              hash: which === 'hash' ? set.hash : set.hashWithoutImage,
              sidecarSetName: set.name,
              sidecarList: [...set.sidecarList],
              ...(which === 'hash' && set.revision !== '' ? { controllerRevision: set.revision } : {}),
            };
            map.set(set.name, entry);
            fresh.set(set.name, { entry, pieces });
          }
          // An entry replaced after it was recorded is written as it now is, not from the pieces.
          const first = sets[0];
          if (replaceOne && first !== undefined) map.set(first.name, { updateTimestamp: now, hash: 'other', sidecarSetName: first.name, sidecarList: null });
          // A recorded entry whose time is not one formatTimestamp writes is written in full.
          const last = sets.at(-1);
          const lastEntry = last === undefined ? undefined : fresh.get(last.name)?.entry;
          if (!replaceOne && lastEntry !== undefined && map.get(last?.name ?? '') === lastEntry) lastEntry.updateTimestamp = '"<soon>"';
          const written = hashAnnotationText(map, fresh);
          expect(written.text).toBe(formatHashAnnotation(map));
          expect(written.json).toBe(JSON.stringify(written.text));
        }
      }),
      { numRuns: 2000, seed: 20261202 },
    );
  });

  it('is read back as the entries it was written from', () => {
    const set = { name: 'platform-01', hash: 'h<1>', hashWithoutImage: 'w&1', sidecarList: ['b', 'a'] };
    const entries = setHashEntries(set, 'platform-01-7bb9978f97');
    const now = '2026-12-02T05:16:20Z';
    const entry: SidecarSetUpgradeSpec = { updateTimestamp: now, hash: 'h<1>', sidecarSetName: 'platform-01', sidecarList: ['b', 'a'], controllerRevision: 'platform-01-7bb9978f97' };
    const { text } = hashAnnotationText(new Map([['platform-01', entry]]), new Map([['platform-01', { entry, pieces: entries.hash }]]));
    expect(text).toBe('{"platform-01":{"updateTimestamp":"2026-12-02T05:16:20Z","hash":"h\\u003c1\\u003e","sidecarSetName":"platform-01","sidecarList":["b","a"],"controllerRevision":"platform-01-7bb9978f97"}}');
    expect(parseHashAnnotation('kruise.io/sidecarset-hash', text).get('platform-01')).toEqual(entry);
  });
});

describe('formatHashAnnotation', () => {
  const entry = (setName: string): SidecarSetUpgradeSpec => ({ updateTimestamp: null, hash: 'h', sidecarSetName: setName, sidecarList: null });

  it('orders the sets as Go sorts map keys, by bytes, also for names that are numbers', () => {
    // A JavaScript object puts array-index keys first, in numeric order ("9" before "10"); Go compares the strings.
    const text = formatHashAnnotation(new Map(['9', '10', 'a', '1'].map((n) => [n, entry(n)])));
    expect(Object.keys(JSON.parse(text) as object)).toEqual(['1', '9', '10', 'a']);
    expect(text.indexOf('"10":')).toBeLessThan(text.indexOf('"9":'));
    expect(text.startsWith('{"1":')).toBe(true);
  });

  it('writes a set named __proto__ as any other', () => {
    const text = formatHashAnnotation(new Map([['__proto__', entry('__proto__')]]));
    expect(text).toBe('{"__proto__":{"updateTimestamp":null,"hash":"h","sidecarSetName":"__proto__","sidecarList":null}}');
  });
});

describe('formatTimestamp', () => {
  it('writes each second\'s own text across second boundaries, forwards and back', () => {
    const at = (iso: string) => formatTimestamp(new Date(iso));
    expect(at('2026-12-02T05:16:19.000Z')).toBe('2026-12-02T05:16:19Z');
    expect(at('2026-12-02T05:16:19.999Z')).toBe('2026-12-02T05:16:19Z');
    expect(at('2026-12-02T05:16:20.000Z')).toBe('2026-12-02T05:16:20Z');
    // A clock stepped back (or another caller's date) gets its own second, not the kept one.
    expect(at('2026-12-02T05:16:19.500Z')).toBe('2026-12-02T05:16:19Z');
    expect(at('2026-12-31T23:59:59.999Z')).toBe('2026-12-31T23:59:59Z');
    expect(at('2027-01-01T00:00:00.000Z')).toBe('2027-01-01T00:00:00Z');
    expect(at('1969-12-31T23:59:59.500Z')).toBe('1969-12-31T23:59:59Z');
    expect(at('1970-01-01T00:00:00.000Z')).toBe('1970-01-01T00:00:00Z');
  });

  it('is toISOString\'s second for any date, asked in any order', () => {
    fc.assert(
      fc.property(fc.array(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }), { minLength: 1, maxLength: 20 }), (dates) => {
        for (const date of dates) expect(formatTimestamp(date)).toBe(`${date.toISOString().slice(0, 19)}Z`);
      }),
      { seed: 20261202 },
    );
  });

  it('refuses an invalid date as toISOString does, and keeps no text for it', () => {
    expect(formatTimestamp(new Date('2026-12-02T05:16:19.000Z'))).toBe('2026-12-02T05:16:19Z');
    expect(() => formatTimestamp(new Date(Number.NaN))).toThrow(RangeError);
    expect(formatTimestamp(new Date('2026-12-02T05:16:19.000Z'))).toBe('2026-12-02T05:16:19Z');
  });
});
