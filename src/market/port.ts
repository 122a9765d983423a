// The market-data port: what the rest of the service may ask of a price source.
// Owns: the shapes of a priced instant and a daily bar, the error values every provider returns,
// the symbol forms (stocks `AAPL`, crypto `BTC/USD`), the staleness rule and the shape of a
// corporate action (corporate-actions.ts reads Alpaca's). No I/O here.
import type { CorporateActionFacts } from '../store/market-port.ts';

export type Source = 'alpaca' | 'synthetic' | 'none';
export type AssetKind = 'stock' | 'crypto';

/** The last trade at or before the instant asked for. */
export type TradePrice = {
  symbol: string;
  /** Normalised decimal text (canon_v1 §2), exactly as the provider's number reads. */
  price: string;
  /** The provider's own timestamp of that trade (RFC 3339, as the provider wrote it). */
  provider_time: string;
  /** The instant asked for, `YYYY-MM-DDTHH:MM:SS.sssZ`. */
  asked_at: string;
  source: Source;
  feed: string | null;
  synthetic: boolean;
  /** asked_at − provider_time in milliseconds (never negative: no later trade is ever returned). */
  age_ms: number;
  /** True when age_ms exceeds STALE_AFTER_MS (market closed, halted, or a thin feed). */
  stale: boolean;
};

/** One daily bar, dated by its trading day (New York date for stocks, UTC date for crypto). */
export type DailyBar = {
  date: string;
  open: string;
  high: string;
  low: string;
  close: string;
  provider_time: string;
};

export type DailyBars = {
  symbol: string;
  bars: DailyBar[];
  source: Source;
  feed: string | null;
  /** How prices were adjusted: always `raw` (unadjusted: the price traded that day, before any later split or dividend). */
  adjustment: 'raw';
  synthetic: boolean;
};

/**
 * A corporate action as its provider stated it, a fact of its own:
 * - `provider_id`: Alpaca's UUID `id` (`content:<sha256 prefix>` for an object without one); for the
 *   synthetic model a UUID-shaped hash of its seed, symbol, type and ex-date.
 * - `source`: `alpaca` or `synthetic`.
 * - `type`: Alpaca's singular type name (`forward_split`, `reverse_split`, `cash_dividend`,
 *   `stock_dividend`, `spin_off`, `cash_merger`, ...; a type unknown here is kept as named).
 * - `symbol`: the affected symbol: `symbol`, else the old, source or acquiree symbol.
 * - `ex_date`: `YYYY-MM-DD` (a merger's or unit split's `effective_date`); the other dates as the
 *   provider gave them, or null. A cash dividend's `process_date` is its payable date.
 * - `old_rate`, `new_rate`, `rate`: the provider's members of those names, as normalised decimal
 *   text exactly as its JSON number reads (never through a float); null when absent. A split is
 *   `new_rate` new shares for `old_rate` old; a cash dividend's `rate` is cash per share; a stock
 *   dividend's `rate` the provider's (extra shares per share, UNCONFIRMED).
 * - `special`: the provider's flag for a non-recurring dividend, null when absent.
 * - `raw`: the provider's object as canonical JSON (canon_v1: numbers as decimal strings).
 */
export type CorporateAction = CorporateActionFacts;

export type MarketError =
  | { code: 'provider_error'; message: string; status?: number }
  | { code: 'unknown_symbol'; symbol: string; message: string }
  | { code: 'no_price'; symbol: string; message: string }
  | { code: 'rate_limited'; retry_after_ms: number; message: string }
  | { code: 'not_configured'; message: string }
  | { code: 'invalid_request'; message: string };

export type MarketResult<T> = { ok: true; value: T } | { ok: false; error: MarketError };

export interface MarketData {
  readonly source: Source;
  readonly synthetic: boolean;
  /** Why nothing is priced (provider `none`), or a one-line description of the provider. */
  readonly description: string;
  /** The last trade of `symbol` at or before `at`. */
  latestTrade(symbol: string, at: Date): Promise<MarketResult<TradePrice>>;
  /** Raw (unadjusted) daily bars with dates from `from` to `to` inclusive (`YYYY-MM-DD`), oldest first. */
  dailyBars(symbol: string, from: string, to: string): Promise<MarketResult<DailyBars>>;
  /**
   * The corporate actions of `symbols` whose ex_date (else process_date) is in from..to inclusive,
   * every type, by ex_date then provider_id. Crypto symbols have none.
   */
  corporateActions(symbols: readonly string[], from: string, to: string): Promise<MarketResult<CorporateAction[]>>;
}

/**
 * Staleness bound: a trade more than 15 minutes older than the instant asked for is stale. Fifteen
 * minutes is the delay of Alpaca's free SIP data; an open market trades a listed symbol far more
 * often, so an older price means the market was closed, the symbol halted, or the feed thin.
 */
export const STALE_AFTER_MS = 15 * 60 * 1000;

export function ageOf(providerEpochMs: number, at: Date): { age_ms: number; stale: boolean } {
  const age = Math.max(0, at.getTime() - providerEpochMs);
  return { age_ms: age, stale: age > STALE_AFTER_MS };
}

const CRYPTO_SYMBOL = /^[A-Z0-9]+\/[A-Z0-9]+$/;
const STOCK_SYMBOL = /^[A-Z0-9][A-Z0-9.\-]{0,19}$/;

/** `BTC/USD` is crypto; `AAPL`, `BRK.B` are stocks; anything else is not a symbol we can price. */
export function assetKindOf(symbol: string): AssetKind | null {
  if (CRYPTO_SYMBOL.test(symbol)) return 'crypto';
  if (STOCK_SYMBOL.test(symbol)) return 'stock';
  return null;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function isIsoDate(s: string): boolean {
  if (!DATE.test(s)) return false;
  const d = new Date(`${s}T00:00:00.000Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

export function invalidSymbol(symbol: string): MarketResult<never> {
  return { ok: false, error: { code: 'unknown_symbol', symbol, message: `not a stock or crypto symbol: ${JSON.stringify(symbol)}` } };
}

export function invalidRange(from: string, to: string): MarketResult<never> {
  return { ok: false, error: { code: 'invalid_request', message: `bad date range ${JSON.stringify(from)}..${JSON.stringify(to)}` } };
}

/** A corporate-actions request's stock symbols (crypto ones dropped), or the error for a symbol or the date range. */
export function checkActionsRequest(symbols: readonly string[], from: string, to: string): MarketResult<string[]> {
  const bad = symbols.find((s) => assetKindOf(s) === null);
  if (bad !== undefined) return invalidSymbol(bad);
  if (!isIsoDate(from) || !isIsoDate(to) || from > to) return invalidRange(from, to);
  return { ok: true, value: [...new Set(symbols.filter((s) => assetKindOf(s) === 'stock'))] };
}

/** A daily-bars request's asset kind, or the error for its symbol or date range. */
export function checkBarsRequest(symbol: string, from: string, to: string): MarketResult<AssetKind> {
  const kind = assetKindOf(symbol);
  if (kind === null) return invalidSymbol(symbol);
  if (!isIsoDate(from) || !isIsoDate(to) || from > to) return invalidRange(from, to);
  return { ok: true, value: kind };
}
