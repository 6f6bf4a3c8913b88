import { describe, expect, it } from '@jest/globals';
import { compareGoStrings } from '../../lib/sidecarset/go-json.ts';

/** Go's order: the strings' UTF-8 bytes (lone surrogates encode as U+FFFD, as Buffer.from does). */
function byteOrder(a: string, b: string): number {
  return Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
}

describe('compareGoStrings', () => {
  // The fast path compares UTF-16 units; these cases are where that order is not byte order.
  const pieces = ['', 'a', 'b', 'é', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uE000', '\uFFFF', '\uD83D\uDE00', '\uFFFD'];
  const strings = pieces.flatMap((x) => pieces.map((y) => x + y));

  it('orders every pair of short strings as their UTF-8 bytes do', () => {
    for (const a of strings) {
      for (const b of strings) {
        expect([a, b, Math.sign(compareGoStrings(a, b))]).toEqual([a, b, byteOrder(a, b)]);
      }
    }
  });

  it('sorts an astral character after U+E000-U+FFFF, unlike UTF-16 order', () => {
    expect(['\uD83D\uDE00', '\uFFFF', 'a'].sort(compareGoStrings)).toEqual(['a', '\uFFFF', '\uD83D\uDE00']);
  });
});
