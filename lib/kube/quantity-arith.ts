/**
 * The few resource.Quantity operations OpenKruise 1.9's resource calculator
 * uses (Add, Neg, MilliValue, SetMilli, NewMilliQuantity, NewQuantity), with
 * Go's results: exact sums, the receiver's format kept unless it is zero,
 * MilliValue rounded away from zero, and float-to-int64 conversion as Go
 * does it on amd64. Every result drops the input text, as Go clears its
 * cached string on any change.
 *
 * Go's int64 arithmetic wraps silently where a milli value leaves int64 (a
 * quantity of 10P and more); here that is an error, {@link QuantityRangeError},
 * rather than a wrapped number no one asked for.
 */
import type { Quantity, QuantityFormat } from './quantity.ts';

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
/** The widest exponent gap a sum aligns: beyond it the power of ten alone would be huge. */
const MAX_EXPONENT_GAP = 64;

/** A quantity whose value cannot be held the way Go's arithmetic holds it (an int64 of millis). */
export class QuantityRangeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QuantityRangeError';
  }
}

function digitCount(n: bigint): number {
  return n === 0n ? 0 : (n < 0n ? -n : n).toString().length;
}

/** -1, 0 or 1: the sign of the quantity (Go's Quantity.Sign). */
export function quantitySign(q: Quantity): -1 | 0 | 1 {
  return q.unscaled === 0n ? 0 : q.unscaled > 0n ? 1 : -1;
}

/** Go's `Quantity.Add` on a copy of `a`: the exact sum, in `a`'s format unless `a` is zero (then `b`'s). */
export function addQuantities(a: Quantity, b: Quantity): Quantity {
  const format = a.unscaled === 0n ? b.format : a.format;
  if (b.unscaled === 0n) return { unscaled: a.unscaled, exponent: a.exponent, format };
  if (a.unscaled === 0n) return { unscaled: b.unscaled, exponent: b.exponent, format };
  if (Math.abs(a.exponent - b.exponent) > MAX_EXPONENT_GAP) {
    throw new QuantityRangeError('the quantities are too far apart in magnitude to add');
  }
  const low = Math.min(a.exponent, b.exponent);
  const unscaled = a.unscaled * 10n ** BigInt(a.exponent - low) + b.unscaled * 10n ** BigInt(b.exponent - low);
  return { unscaled, exponent: low, format };
}

/**
 * Go's `Quantity.Neg` on a copy. The smallest int64 of thousandths (what
 * {@link goInt64} gives for an infinite or NaN product) negates to itself,
 * as Go's int64 does.
 */
export function negateQuantity(q: Quantity): Quantity {
  if (q.unscaled === INT64_MIN && q.exponent === -3) return { unscaled: q.unscaled, exponent: q.exponent, format: q.format };
  return { unscaled: -q.unscaled, exponent: q.exponent, format: q.format };
}

/**
 * Go's `Quantity.MilliValue()`: the value in thousandths, a fraction rounded
 * away from zero. Throws {@link QuantityRangeError} where Go's int64 would wrap.
 */
export function milliValue(q: Quantity): bigint {
  if (q.unscaled === 0n) return 0n;
  const shift = q.exponent + 3;
  // Digits of the integer part in thousandths: past 19 it cannot be an int64.
  if (digitCount(q.unscaled) + shift > 19) throw new QuantityRangeError('the quantity is too large to compute with (over 9.2e15 in thousandths)');
  let milli: bigint;
  if (shift >= 0) {
    milli = q.unscaled * 10n ** BigInt(shift);
  } else if (digitCount(q.unscaled) <= -shift) {
    milli = q.unscaled > 0n ? 1n : -1n;
  } else {
    const divisor = 10n ** BigInt(-shift);
    const quotient = q.unscaled / divisor;
    milli = quotient * divisor === q.unscaled ? quotient : q.unscaled > 0n ? quotient + 1n : quotient - 1n;
  }
  if (milli < INT64_MIN || milli > INT64_MAX) throw new QuantityRangeError('the quantity is too large to compute with (over 9.2e15 in thousandths)');
  return milli;
}

/** Go's `Quantity.SetMilli` on a copy of a quantity of this format, or `NewMilliQuantity(milli, format)`. */
export function milliQuantity(milli: bigint, format: QuantityFormat): Quantity {
  return { unscaled: milli, exponent: -3, format };
}

/** Go's `NewQuantity(value, format)`. */
export function wholeQuantity(value: bigint, format: QuantityFormat): Quantity {
  return { unscaled: value, exponent: 0, format };
}

/**
 * Go's `int64(f)` for a float64 as the amd64 build Kruise ships computes it:
 * truncated toward zero, and the "integer indefinite" value (the smallest
 * int64) for NaN and for anything outside int64.
 */
export function goInt64(f: number): bigint {
  if (Number.isNaN(f) || f >= 2 ** 63 || f < -(2 ** 63)) return INT64_MIN;
  return BigInt(Math.trunc(f));
}
