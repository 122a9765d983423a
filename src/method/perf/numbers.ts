// Number handling of perf_v1. Money, quantities, values and exact ratios are decimals (40
// significant digits, half-even: exact.ts, BigInt arithmetic giving decimal.js's results with that
// configuration to the byte); statistics (volatility, Sharpe, Sortino, beta, annualised return)
// are IEEE doubles. Every published figure goes through one of the formatters below.
import { Exact, ROUND_DOWN, ROUND_HALF_EVEN } from './exact.ts';

export const Dec = Exact;
export type Dec = Exact;

/** Quantities derived by division are cut (rounded towards zero) to 8 decimal places. */
export const QUANTITY_PLACES = 8;

export function cutQuantity(q: Dec): Dec {
  return q.toDecimalPlaces(QUANTITY_PLACES, ROUND_DOWN);
}

/** Money as published: 2 decimal places, half-even. */
export function money(d: Dec): string {
  return d.toFixed(2, ROUND_HALF_EVEN);
}

/** Returns, volatility and drawdowns as published: 6 decimal places, half-even. */
export function ratio(d: Dec): string {
  return d.toFixed(6, ROUND_HALF_EVEN);
}

/** A double published with `places` decimals: its shortest round-trip text, rounded half-even. */
export function fromDouble(x: number, places: number): string {
  return new Dec(String(x)).toFixed(places, ROUND_HALF_EVEN);
}

/** Plain decimal text (no exponent, no trailing zeros) for quantities and cash. */
export function plain(d: Dec): string {
  return d.toFixed();
}

/** Parsed texts: sizes and prices repeat, and a decimal is immutable, so one parse serves them all. */
const parsed = new Map<string, Dec | null>();
const PARSED_MAX = 50_000;

/** A decimal from input text, or null when it is not a finite decimal. */
export function parseDec(text: string | null | undefined): Dec | null {
  if (text === null || text === undefined) return null;
  let d = parsed.get(text);
  if (d !== undefined) return d;
  d = decimalOf(text);
  if (parsed.size >= PARSED_MAX) parsed.clear();
  parsed.set(text, d);
  return d;
}

/** parseDec without the cache, for texts that seldom repeat (a price at receipt). */
export function decimalOf(text: string | null | undefined): Dec | null {
  if (text === null || text === undefined) return null;
  try {
    const x = new Dec(text);
    return x.isFinite() ? x : null;
  } catch {
    return null;
  }
}
