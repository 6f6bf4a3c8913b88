/** How figures are written in the table and the document: a median with its spread. */
import type { Summary } from '../../testkit/bench/stats.ts';

/** A number with `digits` decimals below 100 and none above, grouped by thousands. */
export function num(value: number, digits = 1): string {
  if (!Number.isFinite(value)) return String(value);
  const places = Math.abs(value) >= 100 ? 0 : digits;
  return value.toLocaleString('en-US', { minimumFractionDigits: places, maximumFractionDigits: places });
}

/** `median (min–max)`, with a unit after the median. */
export function withSpread(summary: Summary, unit = '', digits = 1): string {
  const u = unit === '' ? '' : ` ${unit}`;
  if (summary.n === 1) return `${num(summary.median, digits)}${u}`;
  return `${num(summary.median, digits)}${u} (${num(summary.min, digits)}–${num(summary.max, digits)})`;
}

export function ratioText(value: number): string {
  return `${value.toFixed(2)}×`;
}

export function bytesText(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}
