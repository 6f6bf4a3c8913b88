import { describe, expect, it } from '@jest/globals';
import { parseRecordedEntries, recordedEntry, recordedHash } from '../../lib/sidecarset/pod-annotations.ts';

const T = '2025-01-01T00:00:00Z';

describe('a hash annotation parsed once answers every read as the per-read parse did', () => {
  it.each<[string, string | undefined, { hash: string | undefined; controllerRevision: string | undefined } | undefined, number]>([
    ['absent', undefined, undefined, 0],
    ['empty', '', undefined, 0],
    ['not JSON', '{"s":', undefined, 0],
    ['not an object', '["s"]', undefined, 0],
    ['no entry for the set', JSON.stringify({ other: { hash: 'h', updateTimestamp: T } }), undefined, 0],
    ['the current form', JSON.stringify({ s: { updateTimestamp: T, hash: 'h1', sidecarSetName: 's', sidecarList: ['a'], controllerRevision: 'r1' } }), { hash: 'h1', controllerRevision: 'r1' }, Date.parse(T)],
    ['the current form, no revision', JSON.stringify({ s: { updateTimestamp: T, hash: 'h1' } }), { hash: 'h1', controllerRevision: '' }, Date.parse(T)],
    ['the current form, a hash of another type', JSON.stringify({ s: { hash: 7 } }), { hash: '', controllerRevision: '' }, 0],
    ['the old string form', JSON.stringify({ s: 'h0', t: 'h9' }), { hash: 'h0', controllerRevision: undefined }, 0],
    // Kruise decodes the map whole: a mix reads as no entry, though the stall clock still reads the object's time.
    ['a mix of forms', JSON.stringify({ s: { hash: 'h1', updateTimestamp: T }, t: 'h9' }), undefined, Date.parse(T)],
    ['an unparsable update time', JSON.stringify({ s: { hash: 'h1', updateTimestamp: 'soon' } }), { hash: 'h1', controllerRevision: '' }, 0],
  ])('%s', (_d, text, entry, time) => {
    const parsed = parseRecordedEntries(text);
    expect(parsed.text).toBe(text);
    expect(parsed.entry('s')).toEqual(entry);
    expect(parsed.hash('s')).toBe(entry?.hash);
    expect(parsed.updateTime('s')).toBe(time);
    // Asked again, and through the one-read helpers: the same answers.
    expect(parsed.entry('s')).toEqual(entry);
    expect(recordedEntry(text, 's')).toEqual(entry);
    expect(recordedHash(text, 's')).toBe(entry?.hash);
  });

  it('an inherited name is no entry', () => {
    const parsed = parseRecordedEntries(JSON.stringify({ s: { hash: 'h' } }));
    expect(parsed.entry('toString')).toBeUndefined();
    expect(parsed.entry('__proto__')).toBeUndefined();
    expect(parsed.updateTime('__proto__')).toBe(0);
  });
});
