// Synthetic prices for demos and tests: a deterministic geometric random walk per symbol.
// It owns the seeded model. Every answer is marked `synthetic: true`, so whatever is computed from
// it can be shown in amber. Same seed, symbol and instant give the same price on every machine: the
// walk uses only +, *, sqrt and toFixed on doubles (all exactly specified by IEEE 754 and
// ECMAScript) and decimal arithmetic for prices.
//
// Model: the close of day d is close(d−1) × (1 + r_d), rounded half-even to cents (floor 0.01),
// r_d = μ + σ·z_d, z_d = (u1+u2+u3+u4 − 2)·√3 with u_i the four first big-endian uint32 of
// SHA-256("<seed>\n<symbol>\n<YYYY-MM-DD>") divided by 2^32 (Irwin–Hall, mean 0, variance 1),
// r_d written with toFixed(6). Stocks: μ = 0.0003, σ = 0.015, weekdays only; crypto: μ = 0.0012,
// σ = 0.03, every day. The walk starts on ORIGIN_DATE at 20 + (u1 mod 48000)/100 USD for a stock,
// 1000 + (u1 mod 49000) USD for crypto (u1 of SHA-256("<seed>\n<symbol>\nstart")). Within a session the price moves in a straight line from
// the day's open to its close, minute by minute.
//
// Prices are raw (unadjusted): a stock has deterministic corporate actions (synthetic-actions.ts:
// splits both ways, quarterly and special cash dividends, stock dividends), and on an ex-date the
// day's open is the previous close as the action leaves it (a 10-for-1 split divides it by 10, a
// cash dividend takes its amount off), rounded half-even to cents; the close is open × (1 + r_d).
// On every other day the open is the previous close, as before actions were modelled.

import { Decimal } from 'decimal.js';
import { sha256Hex } from '../core/sha256.ts';
import { DAY_MS, dateOfDay, dayNumber, isWeekday, newYorkDay, newYorkOffsetHours, stockSession } from '../method/perf/calendar.ts';
import { applyAction, scheduleOf, type ScheduledAction } from './synthetic-actions.ts';
import {
  checkActionsRequest,
  checkBarsRequest,
  ageOf,
  assetKindOf,
  invalidRange,
  invalidSymbol,
  type AssetKind,
  type CorporateAction,
  type DailyBar,
  type DailyBars,
  type MarketData,
  type MarketResult,
  type TradePrice,
} from './port.ts';

export const ORIGIN_DATE = '2015-01-01';
const MAX_BAR_DAYS = 366 * 30;
const MINUTE = 60_000;

const PARAMS: Record<AssetKind, { mu: number; sigma: number }> = {
  stock: { mu: 0.0003, sigma: 0.015 },
  crypto: { mu: 0.0012, sigma: 0.03 },
};

const Cents = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_EVEN });

function words(text: string): number[] {
  const hex = sha256Hex(text);
  return [0, 1, 2, 3].map((i) => parseInt(hex.slice(i * 8, i * 8 + 8), 16));
}

/** r_d as fixed 6-decimal text. */
export function dailyReturn(seed: string, symbol: string, date: string, kind: AssetKind): string {
  const [u1, u2, u3, u4] = words(`${seed}\n${symbol}\n${date}`) as [number, number, number, number];
  const z = ((u1 + u2 + u3 + u4) / 4294967296 - 2) * Math.sqrt(3);
  const { mu, sigma } = PARAMS[kind];
  return (mu + sigma * z).toFixed(6);
}

export function startPrice(seed: string, symbol: string, kind: AssetKind): string {
  const [u1] = words(`${seed}\n${symbol}\nstart`) as [number];
  if (kind === 'crypto') return new Cents(1000 + (u1 % 49000)).toFixed(2);
  return new Cents(20).plus(new Cents(u1 % 48000).div(100)).toFixed(2);
}

/** A symbol's walk so far: each trading day's index, open and close, and the actions it went through. */
type Walk = { next: number; index: Map<number, number>; opens: string[]; closes: string[]; actions: CorporateAction[]; scheduled: Set<number>; schedule: Map<number, ScheduledAction> };

export class SyntheticMarketData implements MarketData {
  readonly source = 'synthetic' as const;
  readonly synthetic = true;
  readonly description: string;
  private readonly walks = new Map<string, Walk>();
  private readonly origin = dayNumber(ORIGIN_DATE);

  constructor(readonly seed: string) {
    this.description = `synthetic prices (seeded random walk, seed ${JSON.stringify(seed)}); not market data`;
  }

  async latestTrade(symbol: string, at: Date): Promise<MarketResult<TradePrice>> {
    const kind = assetKindOf(symbol);
    if (kind === null) return invalidSymbol(symbol);
    const t = at.getTime();
    const found = kind === 'crypto' ? this.cryptoTradeAt(symbol, t) : this.stockTradeAt(symbol, t);
    if (found === null) {
      return { ok: false, error: { code: 'no_price', symbol, message: `no synthetic trade before ${ORIGIN_DATE}` } };
    }
    return {
      ok: true,
      value: {
        symbol,
        price: found.price,
        provider_time: new Date(found.time).toISOString(),
        asked_at: at.toISOString(),
        source: 'synthetic',
        feed: null,
        synthetic: true,
        ...ageOf(found.time, at),
      },
    };
  }

  async dailyBars(symbol: string, from: string, to: string): Promise<MarketResult<DailyBars>> {
    const checked = checkBarsRequest(symbol, from, to);
    if (!checked.ok) return checked;
    const kind = checked.value;
    const first = Math.max(dayNumber(from), this.origin);
    const last = dayNumber(to);
    if (last - first > MAX_BAR_DAYS) return invalidRange(from, to);
    const bars: DailyBar[] = [];
    const walk = this.walkTo(symbol, kind, last);
    for (let day = first; day <= last; day++) {
      const i = walk.index.get(day);
      if (i === undefined) continue;
      const [open, close] = [walk.opens[i] as string, walk.closes[i] as string];
      const labelMs = kind === 'stock' ? day * DAY_MS - newYorkOffsetHours(day) * 3_600_000 : day * DAY_MS;
      const [low, high] = Cents.min(open, close).eq(open) ? [open, close] : [close, open];
      bars.push({ date: dateOfDay(day), open, high, low, close, provider_time: new Date(labelMs).toISOString() });
    }
    return { ok: true, value: { symbol, bars, source: 'synthetic', feed: null, adjustment: 'raw', synthetic: true } };
  }

  async corporateActions(symbols: readonly string[], from: string, to: string): Promise<MarketResult<CorporateAction[]>> {
    const checked = checkActionsRequest(symbols, from, to);
    if (!checked.ok) return checked;
    const last = Math.min(dayNumber(to), this.origin + MAX_BAR_DAYS);
    const actions = checked.value.flatMap((symbol) => this.walkTo(symbol, 'stock', last).actions)
      .filter((a) => a.ex_date !== null && a.ex_date >= from && a.ex_date <= to);
    actions.sort((a, b) => (a.ex_date! < b.ex_date! ? -1 : a.ex_date! > b.ex_date! ? 1 : a.provider_id < b.provider_id ? -1 : 1));
    return { ok: true, value: actions };
  }

  private stockTradeAt(symbol: string, t: number): { price: string; time: number } | null {
    const day = newYorkDay(t);
    if (isWeekday(day)) {
      const session = stockSession(day);
      if (t >= session.close) return this.closingTrade(symbol, 'stock', day);
      if (t >= session.open) return this.intraday(symbol, 'stock', day, session.open, session.close, t);
    }
    for (let d = day - 1; d >= this.origin; d--) {
      if (isWeekday(d)) return this.closingTrade(symbol, 'stock', d);
    }
    return null;
  }

  private cryptoTradeAt(symbol: string, t: number): { price: string; time: number } | null {
    const day = Math.floor(t / DAY_MS);
    return this.intraday(symbol, 'crypto', day, day * DAY_MS, (day + 1) * DAY_MS, t);
  }

  private closingTrade(symbol: string, kind: AssetKind, day: number): { price: string; time: number } | null {
    const close = this.closeOn(symbol, kind, day);
    return close === null ? null : { price: close, time: stockSession(day).close };
  }

  private intraday(symbol: string, kind: AssetKind, day: number, open: number, close: number, t: number) {
    const dayClose = this.closeOn(symbol, kind, day);
    const dayOpen = this.openOn(symbol, kind, day);
    if (dayClose === null || dayOpen === null) return null;
    const minutes = Math.floor((t - open) / MINUTE);
    const length = (close - open) / MINUTE;
    const price = new Cents(dayOpen)
      .plus(new Cents(dayClose).minus(dayOpen).times(minutes).div(length))
      .toDecimalPlaces(2)
      .toFixed(2);
    return { price, time: open + minutes * MINUTE };
  }

  /** The close of `day`, or null when the symbol does not trade that day or it precedes the origin. */
  private closeOn(symbol: string, kind: AssetKind, day: number): string | null {
    if (day < this.origin) return null;
    if (kind === 'stock' && !isWeekday(day)) return null;
    const walk = this.walkTo(symbol, kind, day);
    const i = walk.index.get(day);
    return i === undefined ? null : (walk.closes[i] as string);
  }

  /** The open of `day` (the previous close, as an action on that day leaves it), or null when it does not trade. */
  private openOn(symbol: string, kind: AssetKind, day: number): string | null {
    if (this.closeOn(symbol, kind, day) === null) return null;
    const walk = this.walkTo(symbol, kind, day);
    return walk.opens[walk.index.get(day) as number] as string;
  }

  private walkTo(symbol: string, kind: AssetKind, day: number): Walk {
    let walk = this.walks.get(symbol);
    if (!walk) {
      walk = { next: this.origin, index: new Map(), opens: [], closes: [], actions: [], scheduled: new Set(), schedule: new Map() };
      this.walks.set(symbol, walk);
    }
    let previous = walk.closes.length === 0 ? startPrice(this.seed, symbol, kind) : (walk.closes[walk.closes.length - 1] as string);
    for (; walk.next <= day; walk.next++) {
      if (kind === 'stock' && !isWeekday(walk.next)) continue;
      const date = dateOfDay(walk.next);
      const open = kind === 'stock' ? this.openAfterActions(walk, symbol, walk.next, Number(date.slice(0, 4)), previous) : previous;
      const r = dailyReturn(this.seed, symbol, date, kind);
      const close = Cents.max(new Cents(open).times(new Cents(1).plus(r)).toDecimalPlaces(2), '0.01').toFixed(2);
      walk.index.set(walk.next, walk.closes.length);
      walk.opens.push(open);
      walk.closes.push(close);
      previous = close;
    }
    return walk;
  }

  /** The day's open: the previous close, or what the day's corporate action leaves of it (noted in the walk). */
  private openAfterActions(walk: Walk, symbol: string, day: number, year: number, previous: string): string {
    if (!walk.scheduled.has(year)) {
      walk.scheduled.add(year);
      for (const a of scheduleOf(this.seed, symbol, year)) walk.schedule.set(a.day, a);
    }
    const scheduled = walk.schedule.get(day);
    if (scheduled === undefined) return previous;
    const { open, action } = applyAction(this.seed, symbol, scheduled, previous);
    walk.actions.push(action);
    return Cents.max(open.toDecimalPlaces(2), '0.01').toFixed(2);
  }
}
