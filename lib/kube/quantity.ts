/**
 * Kubernetes resource.Quantity (k8s.io/apimachinery/pkg/api/resource), parsed
 * and printed exactly as Go does, because printed quantities feed the
 * SidecarSet hash. Exact arithmetic only: a value is `unscaled × 10^exponent`.
 *
 * Go does some arithmetic on exponents in int32 and wraps silently; `int32()`
 * marks those places so absurd exponents ("1000e4294967296") print as Go
 * prints them.
 */

/** How Go remembers to print a quantity: 12e6, 12Mi (12 × 2^20) or 12M (12 × 10^6). */
export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

/** A parsed quantity. Compare with `compareQuantities`, print with `canonicalQuantity`. */
export interface Quantity {
  /** Signed digits; the value is `unscaled × 10^exponent`. */
  readonly unscaled: bigint;
  readonly exponent: number;
  readonly format: QuantityFormat;
  /** Go keeps the input text when it already looks canonical and prints it back verbatim. */
  readonly text?: string;
}

const MAX_INT64 = (1n << 63n) - 1n;
/** Go stores up to this many decimal digits in an int64 before switching to big decimals. */
const MAX_INT64_FACTORS = 18;
const NANO = -9;

const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([s, e]) => [e, s]));
const BINARY_BY_EXPONENT = new Map(Object.entries(BINARY_SUFFIXES).map(([s, e]) => [e, s]));

const SUFFIX_LETTERS = 'eEinumkKMGTP';
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

function int32(n: number): number {
  return n | 0;
}

interface Scanned {
  positive: boolean;
  /** The numeric text including sign, as Go hands it to inf.Dec. */
  value: string;
  /** Integer digits without leading zeros ("0" when there are none). */
  num: string;
  denom: string;
  suffix: string;
}

/** Go's parseQuantityString: split sign, number and suffix; undefined for a malformed suffix. */
function scan(str: string): Scanned | undefined {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === '-' || str[0] === '+') {
    positive = str[0] === '+';
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };
  const numStart = pos;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos >= end) return { positive, value: str, num: str.slice(numStart), denom: '', suffix: '' };
  const num = pos > numStart ? str.slice(numStart, pos) : '0';
  let denom = '';
  if (str[pos] === '.') {
    const denomStart = ++pos;
    while (pos < end && isDigit(str[pos])) pos++;
    denom = str.slice(denomStart, pos);
    if (pos >= end) return { positive, value: str, num, denom, suffix: '' };
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < end && SUFFIX_LETTERS.includes(str.charAt(pos))) pos++;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) return undefined;
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

/** Go's strconv.ParseInt(s, 10, 64). */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return BigInt.asIntN(64, n) === n ? n : undefined;
}

function interpretSuffix(suffix: string): { base: 2 | 10; exponent: number; format: QuantityFormat } | undefined {
  const decimal = DECIMAL_SUFFIXES[suffix];
  if (decimal !== undefined) return { base: 10, exponent: decimal, format: 'DecimalSI' };
  const binary = BINARY_SUFFIXES[suffix];
  if (binary !== undefined) return { base: 2, exponent: binary, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const parsed = parseInt64(suffix.slice(1));
    if (parsed === undefined) return undefined;
    return { base: 10, exponent: Number(BigInt.asIntN(32, parsed)), format: 'DecimalExponent' };
  }
  return undefined;
}

/** inf.Dec SetString: optional sign, digits with at most one point, at least one digit. */
function parseDecimal(value: string): { unscaled: bigint; exponent: number } | undefined {
  const match = /^([+-]?)([0-9]*)(?:\.([0-9]*))?$/.exec(value);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = ''] = match;
  if (whole.length + fraction.length === 0) return undefined;
  return { unscaled: BigInt(`${sign}${whole}${fraction}` || '0'), exponent: -fraction.length };
}

function abs(n: bigint): bigint {
  return n < 0n ? -n : n;
}

function digitCount(n: bigint): number {
  return n === 0n ? 0 : abs(n).toString().length;
}

/** |u| × 10^exponent rounded away from zero to a multiple of 10^target (target > exponent). */
function roundUpTo(u: bigint, exponent: number, target: number): bigint {
  const shift = target - exponent;
  // Skip a huge power of ten when the answer is plainly the smallest step.
  if (digitCount(u) <= shift) return u === 0n ? 0n : u > 0n ? 1n : -1n;
  const divisor = 10n ** BigInt(shift);
  const q = u / divisor;
  if (q * divisor === u) return q;
  return u > 0n ? q + 1n : q - 1n;
}

/**
 * The longest text read as a quantity. Go sets no limit, but BigInt parsing
 * and printing grow faster than the digits: a quantity of a million digits
 * takes seconds, a few megabytes of them longer than any webhook timeout, and
 * the deadline cannot interrupt arithmetic. No resource amount needs more
 * than a few dozen characters.
 */
export const MAX_QUANTITY_LENGTH = 1_000;

/**
 * Parse a quantity string as Go's resource.ParseQuantity does, or undefined
 * where Go returns an error, or where the text is longer than
 * {@link MAX_QUANTITY_LENGTH}. No whitespace is trimmed (see `quantityFromJson`).
 */
export function parseQuantity(str: string): Quantity | undefined {
  if (str.length === 0 || str.length > MAX_QUANTITY_LENGTH) return undefined;
  if (str === '0') return { unscaled: 0n, exponent: 0, format: 'DecimalSI', text: str };
  const scanned = scan(str);
  if (!scanned) return undefined;
  const suffix = interpretSuffix(scanned.suffix);
  if (!suffix) return undefined;
  return int64Quantity(str, scanned, suffix) ?? exactQuantity(scanned, suffix);
}

type Suffix = NonNullable<ReturnType<typeof interpretSuffix>>;

/** Go's int64 fast path, where the value fits; it decides whether the input text is kept verbatim. */
function int64Quantity(str: string, { positive, num, denom }: Scanned, { base, exponent, format }: Suffix): Quantity | undefined {
  let precision = -1;
  let scale = 0;
  let mantissa = 1n;
  if (base === 10) {
    scale = exponent;
    precision = MAX_INT64_FACTORS - (num.length + denom.length);
  } else if (denom.length === 0) {
    mantissa = 1n << BigInt(exponent);
    precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
  }
  if (precision < 0) return undefined;
  scale = int32(scale - denom.length);
  if (scale < NANO) return undefined;
  const shifted = num + denom;
  const digits = BigInt(shifted);
  const product = digits * mantissa;
  if (product > MAX_INT64) return undefined;
  const unscaled = positive ? product : -product;
  const canonical = base === 2 ? (digits & 7n) !== 0n : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
  return canonical ? { unscaled, exponent: scale, format, text: str } : { unscaled, exponent: scale, format };
}

/** Go's big-decimal path: exact value, rounded up to nano units, binary capped at int64. */
function exactQuantity({ positive, value }: Scanned, { base, exponent, format: suffixFormat }: Suffix): Quantity | undefined {
  let format = suffixFormat;
  const parsed = parseDecimal(value);
  if (!parsed) return undefined;
  let unscaled = abs(parsed.unscaled);
  let exp = parsed.exponent;
  if (base === 10) exp = int32(exp + exponent);
  else unscaled <<= BigInt(exponent);
  if (unscaled !== 0n && exp < NANO) {
    unscaled = roundUpTo(unscaled, exp, NANO);
    exp = NANO;
  }
  if (format === 'BinarySI' && compareParts(unscaled, exp, MAX_INT64, 0) > 0) {
    unscaled = MAX_INT64;
    exp = 0;
  }
  if (format === 'BinarySI' && unscaled !== 0n && compareParts(unscaled, exp, 1n, 0) < 0) format = 'DecimalSI';
  return { unscaled: positive ? unscaled : -unscaled, exponent: exp, format };
}

/** n = result × 1024^times with result not divisible by 1024 (Go's removeInt64Factors). */
function removeFactorsOf1024(n: bigint): [bigint, number] {
  let times = 0;
  while (n !== 0n && n % 1024n === 0n) {
    n /= 1024n;
    times++;
  }
  return [n, times];
}

/** n = result × 10^times with no trailing zero left; on the digits, since a loop of divisions is quadratic. */
function removeFactorsOf10(n: bigint): [bigint, number] {
  if (n === 0n) return [0n, 0];
  const digits = n.toString();
  const trimmed = digits.replace(/0+$/, '');
  return [BigInt(trimmed), digits.length - trimmed.length];
}

/**
 * The text Go's Quantity.String() and MarshalJSON print: the input itself when
 * Go judged it canonical, else the largest suffix that needs no fraction.
 * Go quirks kept: a DecimalSI exponent beyond E prints with no suffix at all
 * ("1000E" → "1"), and "+1" or "1.500" print back unchanged.
 */
export function canonicalQuantity(q: Quantity): string {
  if (q.text !== undefined) return q.text;
  if (q.unscaled === 0n) return '0';
  let format = q.format;
  let integer = 0n;
  if (format === 'BinarySI') {
    const small = compareParts(q.unscaled, q.exponent, -1024n, 0) > 0 && compareParts(q.unscaled, q.exponent, 1024n, 0) < 0;
    // Base 1024 cannot show a fraction, and small values would round badly: Go prints DecimalSI then.
    if (small) format = 'DecimalSI';
    else if (q.exponent >= 0) integer = q.unscaled * 10n ** BigInt(q.exponent);
    else {
      const rounded = roundUpTo(q.unscaled, q.exponent, 0);
      if (rounded * 10n ** BigInt(-q.exponent) === q.unscaled) integer = rounded;
      else format = 'DecimalSI';
    }
  }
  if (format === 'BinarySI') {
    const [amount, times] = removeFactorsOf1024(integer);
    return `${amount}${BINARY_BY_EXPONENT.get(times * 10) ?? ''}`;
  }
  const [removed, times] = removeFactorsOf10(q.unscaled);
  let amount = removed;
  let exponent = int32(q.exponent + times);
  while (exponent % 3 !== 0) {
    amount *= 10n;
    exponent--;
  }
  if (format === 'DecimalExponent') return exponent === 0 ? `${amount}` : `${amount}e${exponent}`;
  return `${amount}${DECIMAL_BY_EXPONENT.get(exponent) ?? ''}`;
}

/** Compare a × 10^ae with b × 10^be without building huge powers of ten. */
function compareParts(a: bigint, ae: number, b: bigint, be: number): -1 | 0 | 1 {
  const sa = a === 0n ? 0 : a > 0n ? 1 : -1;
  const sb = b === 0n ? 0 : b > 0n ? 1 : -1;
  if (sa !== sb || sa === 0) return sa < sb ? -1 : sa > sb ? 1 : 0;
  // Same sign, both non-zero: compare magnitudes, then flip for negatives.
  const ma = digitCount(a) + ae;
  const mb = digitCount(b) + be;
  let order: -1 | 0 | 1;
  if (ma !== mb) {
    order = ma < mb ? -1 : 1;
  } else {
    const low = Math.min(ae, be);
    const x = abs(a) * 10n ** BigInt(ae - low);
    const y = abs(b) * 10n ** BigInt(be - low);
    order = x < y ? -1 : x > y ? 1 : 0;
  }
  return sa > 0 ? order : order === 0 ? 0 : order < 0 ? 1 : -1;
}

/** -1, 0 or 1 as a is less than, equal to or greater than b (Go's Quantity.Cmp). */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  return compareParts(a.unscaled, a.exponent, b.unscaled, b.exponent);
}

/** The space characters Go's strings.TrimSpace removes and a JSON string can carry unescaped. */
function isGoTrimmable(code: number): boolean {
  return code === 0x20 || code === 0x85 || code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x202f || code === 0x205f || code === 0x3000;
}

/**
 * Go's strings.TrimSpace for those characters. A loop, not a regular
 * expression: `\s+$` tried at every position of a long run of spaces
 * inside the text is quadratic (100,000 spaces took 24 s).
 */
function trimGoSpace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isGoTrimmable(text.charCodeAt(start))) start++;
  while (end > start && isGoTrimmable(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

/**
 * A quantity as Go's Quantity.UnmarshalJSON reads it from a JSON value:
 * a string (surrounding spaces trimmed), a number, or null (a zero quantity).
 *
 * Go trims and parses the raw bytes between the quotes without unescaping
 * them. Kubernetes' encoder always escapes control characters and U+2028/
 * U+2029, so a decoded string holding one reached Go as a backslash escape,
 * which Go rejects; so do we.
 */
export function quantityFromJson(value: unknown): Quantity | undefined {
  if (value === null) return { unscaled: 0n, exponent: 0, format: 'DecimalSI' };
  if (typeof value === 'number') return Number.isFinite(value) ? parseQuantity(String(value)) : undefined;
  if (typeof value !== 'string') return undefined;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is being rejected
  if (/[\u0000-\u001f"\\\u2028\u2029]/.test(value)) return undefined;
  return parseQuantity(trimGoSpace(value));
}
