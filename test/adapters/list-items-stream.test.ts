/**
 * A list answer cut into its items as its bytes arrive
 * (lib/adapters/list-items-stream.ts): whatever the chunking, the items are
 * exactly the list's items and the envelope is the list with `items`
 * emptied; strings holding braces, brackets, quotes and backslashes do not
 * confuse it; what it holds at once is one item, not the page.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { listItemSplitter } from '../../lib/adapters/list-items-stream.ts';

/** Feeds `text` cut at `cuts` (byte offsets) and returns the parsed items and envelope. */
function split(text: string, cuts: readonly number[]): { items: unknown[]; envelope: unknown; largest: number } {
  const bytes = Buffer.from(text);
  const bounds = [...new Set([0, ...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length])].sort((a, b) => a - b);
  const splitter = listItemSplitter();
  const items: unknown[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    splitter.write(bytes.subarray(bounds[i], bounds[i + 1]), (item) => items.push(JSON.parse(item.toString('utf8'))));
  }
  return { items, envelope: JSON.parse(splitter.envelope().toString('utf8')), largest: splitter.largestItem() };
}

const tricky = [
  { metadata: { name: 'a', annotations: { x: '}]{["\\"\\\\', y: '\\', z: '\\\\"' } } },
  { metadata: { name: 'b', labels: { items: '[{' } }, spec: { containers: [{ name: 'c', args: ['"', '}', '\\"}'] }] } },
  {},
  { a: [[], [{}], { b: 'é€😀' }] },
];
const list = { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '42', continue: 'tok"en}' }, items: tricky };

describe('listItemSplitter', () => {
  it.each([
    ['a string', '"b"'],
    ['a number', '7'],
    ['null', 'null'],
    ['an array', '[{"a":1}]'],
  ])('tells a list whose items array holds %s, which would otherwise be dropped unseen', (_what, value) => {
    const text = `{"kind":"PodList","items":[{"metadata":{"name":"a"}}, ${value} ,{"b":"[\\"x"}]}`;
    for (const cuts of [[], [27, 40]]) {
      const bytes = Buffer.from(text);
      const splitter = listItemSplitter();
      let start = 0;
      for (const end of [...cuts, bytes.length]) {
        splitter.write(bytes.subarray(start, end), () => undefined);
        start = end;
      }
      expect(splitter.strayItem()).toBe(true);
    }
  });

  it('tells no stray item for a list of objects, whitespace and commas, strings holding anything', () => {
    const splitter = listItemSplitter();
    splitter.write(Buffer.from(JSON.stringify(list, null, 2)), () => undefined);
    expect(splitter.strayItem()).toBe(false);
  });

  it('gives the items and the envelope of a list in one chunk', () => {
    const text = JSON.stringify(list);
    expect(split(text, [])).toEqual({ items: tricky, envelope: { ...list, items: [] }, largest: Math.max(...tricky.map((t) => Buffer.byteLength(JSON.stringify(t)))) });
  });

  it('gives the same at every cut into two chunks and in chunks of one byte', () => {
    const text = JSON.stringify(list, null, 1);
    const length = Buffer.byteLength(text);
    for (let cut = 0; cut <= length; cut++) expect(split(text, [cut])).toEqual({ items: tricky, envelope: { ...list, items: [] }, largest: expect.any(Number) as unknown as number });
    expect(split(text, Array.from({ length }, (_, i) => i)).items).toEqual(tricky);
  });

  it('leaves an `items` that is not the top-level array alone', () => {
    const text = JSON.stringify({ kind: 'items', metadata: { items: [1, 2] }, other: { items: [{ a: 1 }] }, items: [{ b: 2 }] });
    expect(split(text, [7, 30])).toEqual({ items: [{ b: 2 }], envelope: { kind: 'items', metadata: { items: [1, 2] }, other: { items: [{ a: 1 }] }, items: [] }, largest: 7 });
  });

  it('matches JSON.parse on any list of JSON values, cut anywhere', () => {
    fc.assert(
      fc.property(fc.array(fc.dictionary(fc.string(), fc.jsonValue())), fc.dictionary(fc.string(), fc.jsonValue()), fc.array(fc.nat()), (items, metadata, cuts) => {
        const text = JSON.stringify({ kind: 'List', metadata, items });
        const got = split(text, cuts);
        expect(got.items).toEqual(JSON.parse(JSON.stringify(items)));
        expect(got.envelope).toEqual(JSON.parse(JSON.stringify({ kind: 'List', metadata, items: [] })));
      }),
      { numRuns: 300 },
    );
  });

  it('tells what came before the items once, as soon as they begin: the envelope so far, which `]}` closes', () => {
    const text = JSON.stringify(list, null, 1);
    const bytes = Buffer.from(text);
    const opening = bytes.indexOf('"items"');
    for (const cut of [0, 1, opening, opening + 9, opening + 12, bytes.length - 1]) {
      const heads: unknown[] = [];
      const itemsBeforeHead: number[] = [];
      let items = 0;
      const splitter = listItemSplitter({
        onItemsOpen: (head) => {
          itemsBeforeHead.push(items);
          heads.push(JSON.parse(`${head.toString('utf8')}]}`));
        },
      });
      for (const part of [bytes.subarray(0, cut), bytes.subarray(cut)]) splitter.write(part, () => items++);
      expect(heads).toEqual([{ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '42', continue: 'tok"en}' }, items: [] }]);
      expect(itemsBeforeHead).toEqual([0]);
    }
  });

  it('tells the head once even when the answer has a second top-level `items`', () => {
    const heads: string[] = [];
    const splitter = listItemSplitter({ onItemsOpen: (head) => heads.push(head.toString('utf8')) });
    splitter.write(Buffer.from('{"metadata":{"continue":"a"},"items":[{"x":1}],"items":[{"y":2}]}'), () => undefined);
    expect(heads).toEqual(['{"metadata":{"continue":"a"},"items":[']);
  });

  it('holds one item at a time: the largest item, not the page, is what was held', () => {
    const big = (i: number) => ({ metadata: { name: `p${i}`, annotations: { blob: 'x'.repeat(100_000) } } });
    const text = JSON.stringify({ kind: 'PodList', metadata: {}, items: Array.from({ length: 20 }, (_, i) => big(i)) });
    const cuts = Array.from({ length: Math.ceil(text.length / 16_384) }, (_, i) => i * 16_384);
    const got = split(text, cuts);
    expect(got.items).toHaveLength(20);
    expect(got.largest).toBeLessThan(100_100);
    expect(text.length).toBeGreaterThan(2_000_000);
  });
});
