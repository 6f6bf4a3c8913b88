import { describe, expect, it } from '@jest/globals';
import { canonicalQuantity, compareQuantities, parseQuantity, quantityFromJson } from '../../lib/kube/quantity.ts';
import type { Quantity } from '../../lib/kube/quantity.ts';

function must(s: string): Quantity {
  const q = parseQuantity(s);
  if (!q) throw new Error(`expected ${JSON.stringify(s)} to parse`);
  return q;
}

// Every expected string below was printed by Go (k8s.io/apimachinery v0.37, Quantity.String).
describe('canonicalQuantity prints what Go prints', () => {
  it.each([
    ['a fraction becomes milli units', '0.5', '500m'],
    ['a tenth becomes milli units', '0.1', '100m'],
    ['a negative fraction keeps its sign', '-1.5', '-1500m'],
    ['trailing zeros move into a larger suffix', '1000m', '1'],
    ['a plain thousand gains the k suffix', '1000', '1k'],
    ['a redundant decimal point is dropped', '1.0', '1'],
    ['binary values move to the largest exact binary suffix', '1024Mi', '1Gi'],
    ['a binary fraction moves to a smaller binary suffix', '1.5Gi', '1536Mi'],
    ['a canonical decimal suffix is kept', '100M', '100M'],
    ['a decimal exponent is kept as written', '1e3', '1e3'],
    ['a capital exponent marker is kept as written', '1E3', '1E3'],
    ['a decimal exponent with a fraction is reprinted', '1.5e3', '1500'],
    ['zero is printed as 0', '0', '0'],
    ['negative zero is printed as 0', '-0', '0'],
    ['zero with a binary suffix is printed as 0', '0Mi', '0'],
    ['a binary value below 1024 is printed in decimal', '0.5Ki', '512'],
    ['a binary value with a leading point is printed in decimal', '.5Ki', '512'],
    ['a binary fraction that is not whole is printed in decimal', '1.1Ki', '1126400m'],
    ['a binary value with no binary suffix left prints bare', '1.5Ki', '1536'],
    ['a multiple of 8 in binary is reprinted', '8Ki', '8Ki'],
    ['sub-nano values round up to 1n', '0.1n', '1n'],
    ['sub-nano exponents round up to 1e-9', '1e-10', '1e-9'],
    ['tiny binary values round up to 2n', '.000000000001Ki', '2n'],
    ['binary values are capped at the int64 maximum', '16Ei', '9223372036854775807'],
    ['negative binary values are capped at minus the int64 maximum', '-16Ei', '-9223372036854775807'],
    ['more than 18 digits still print exactly', '1234567890.123456789', '1234567890123456789n'],
    ['20 digits print with the E suffix', '10000000000000000000', '10E'],
    ['Go quirk: a DecimalSI exponent beyond E prints with no suffix', '1000E', '1'],
    ['Go quirk: an explicit plus sign is kept', '+1', '+1'],
    ['Go quirk: a leading zero is kept', '01', '01'],
    ['Go quirk: three decimals are kept as written', '1.500', '1.500'],
    ['Go quirk: a bare trailing point before a binary suffix is kept', '1.Mi', '1.Mi'],
    ['Go quirk: a lone point is zero', '.', '0'],
    ['Go quirk: a lone sign is zero', '+', '0'],
    ['Go quirk: a bare exponent is zero', 'e5', '0'],
  ])('%s: %s -> %s', (_name, input, expected) => {
    expect(canonicalQuantity(must(input))).toBe(expected);
  });
});

describe('parseQuantity rejects what Go rejects', () => {
  it.each([
    ['the empty string', ''],
    ['an exponent marker without digits', '1e'],
    ['an upper-case K', '1K'],
    ['a lone i', '1i'],
    ['two decimal points', '1.2.3'],
    ['a trailing space', '1 '],
    ['a leading space', ' 1'],
    ['an unknown binary suffix', '1Kii'],
    ['a fractional exponent', '1e1.5'],
    ['a doubled suffix', '1mm'],
    ['no digits at all with a sub-nano exponent', '.e-10'],
    ['an exponent outside int64', '1e9223372036854775808'],
  ])('%s (%j)', (_name, input) => {
    expect(parseQuantity(input)).toBeUndefined();
  });
});

describe('compareQuantities', () => {
  it.each<[string, string, string, -1 | 0 | 1]>([
    ['equal values in different units', '1Gi', '1024Mi', 0],
    ['milli units against whole units', '500m', '0.5', 0],
    ['a smaller decimal value', '100m', '1', -1],
    ['a larger binary value', '1Ki', '1k', 1],
    ['a negative against a positive', '-1', '1m', -1],
    ['two negatives', '-2', '-1', -1],
    ['zero against zero in another unit', '0', '0Mi', 0],
    ['values far apart in exponent', '1e300', '1e-9', 1],
  ])('%s: %s vs %s', (_name, a, b, expected) => {
    expect(compareQuantities(must(a), must(b))).toBe(expected);
    expect(compareQuantities(must(b), must(a))).toBe(expected === 0 ? 0 : -expected);
  });
});

describe("quantityFromJson reads what Go's UnmarshalJSON reads", () => {
  it.each<[string, unknown, string | undefined]>([
    ['a string', '250m', '250m'],
    ['a string with surrounding spaces', ' 2Gi ', '2Gi'],
    ['an integer number', 2, '2'],
    ['a fractional number', 0.25, '250m'],
    ['a large number, which Go keeps as printed with an exponent', 1e21, '1e+21'],
    ['null as a zero quantity', null, '0'],
    ['a string with Unicode spaces Go trims', '\u00A0 1Gi\u3000', '1Gi'],
    ['a string with a tab, which reached Go escaped', '\t1', undefined],
    ['a string with U+2028, which reached Go escaped', '\u2028 1', undefined],
    ['a string with a byte order mark, which Go does not trim', '\uFEFF1', undefined],
    ['a boolean', true, undefined],
    ['an object', { cpu: 1 }, undefined],
  ])('%s', (_name, input, expected) => {
    const q = quantityFromJson(input);
    expect(q === undefined ? undefined : canonicalQuantity(q)).toBe(expected);
  });
});
