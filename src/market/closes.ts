// Daily closes through the market sub-port's cache (MarketStore.closes / saveCloses).
// It decides which ranges are asked of the provider. What is stored is read; only what is missing
// (before the first cached close, after the last, or a hole of more than MAX_GAP_DAYS inside) is
// fetched with dailyBars and saved. Only finished days are ever asked for or cached: a bar dated
// the current UTC day or later never is (a stock's regular session ends by 21:00 UTC, a crypto
// bar at 00:00 UTC). A range the provider answered empty is remembered in this process (for an
// hour when it touches the last three days, whose bars may still come), so a weekend, a holiday
// or a symbol that did not trade yet costs one call, not one per read.

import { dateOfDay, dayNumber } from '../method/perf/calendar.ts';
import type { MarketData, MarketResult, MarketStore, PriceSource, StoredClose } from './port.ts';

/** No market closes for longer than this (the longest US closure since 1900 was 4 trading days). */
export const MAX_GAP_DAYS = 7;
const RECENT_DAYS = 3;
const RECENT_MEMO_MS = 60 * 60 * 1000;

type Range = { from: string; to: string };
type Fetched = Range & { at: number };

export class DailyCloses {
  /** Ranges fetched in this process, by source and symbol. */
  private readonly fetched = new Map<string, Fetched[]>();

  constructor(private readonly store: MarketStore, private readonly now: () => Date = () => new Date()) {}

  /** The last finished UTC day. */
  yesterday(): string {
    return dateOfDay(Math.floor(this.now().getTime() / 86_400_000) - 1);
  }

  /**
   * Closes of `symbol` from `market`, dates from..to inclusive (to is cut to yesterday), oldest
   * first. A symbol the provider does not know has no closes (an empty list, not an error).
   */
  async get(market: MarketData, symbol: string, from: string, to: string): Promise<MarketResult<StoredClose[]>> {
    if (market.source === 'none') return { ok: false, error: { code: 'not_configured', message: market.description } };
    const source = market.source as PriceSource;
    const last = to < this.yesterday() ? to : this.yesterday();
    if (from > last) return { ok: true, value: [] };
    let cached = await this.store.closes(source, symbol, from, last);
    const missing = this.missing(`${source}\n${symbol}`, cached, from, last);
    if (missing.length === 0) return { ok: true, value: cached };
    let saved = false;
    for (const range of missing) {
      const bars = await market.dailyBars(symbol, range.from, range.to);
      if (!bars.ok && bars.error.code !== 'unknown_symbol') return bars;
      const closes = bars.ok ? bars.value.bars.filter((b) => b.date >= range.from && b.date <= range.to).map((b) => ({ date: b.date, close: b.close })) : [];
      if (closes.length > 0) {
        await this.store.saveCloses(source, symbol, closes, this.now().toISOString());
        saved = true;
      }
      this.remember(`${source}\n${symbol}`, range);
    }
    if (saved) cached = await this.store.closes(source, symbol, from, last);
    return { ok: true, value: cached };
  }

  /** The ranges of from..to that neither the cache nor this process's earlier fetches cover. */
  private missing(key: string, cached: StoredClose[], from: string, to: string): Range[] {
    const holes: Range[] = [];
    let cursor = dayNumber(from); // first day not known to be covered
    for (const c of cached) {
      const day = dayNumber(c.date);
      if (day - cursor > MAX_GAP_DAYS) holes.push({ from: dateOfDay(cursor), to: dateOfDay(day - 1) });
      cursor = day + 1;
    }
    if (cursor <= dayNumber(to)) holes.push({ from: dateOfDay(cursor), to });
    return holes.filter((h) => !this.covered(key, h));
  }

  private covered(key: string, range: Range): boolean {
    const now = this.now().getTime();
    const recent = dayNumber(range.to) >= dayNumber(this.yesterday()) - RECENT_DAYS;
    return (this.fetched.get(key) ?? []).some((f) => f.from <= range.from && f.to >= range.to && (!recent || now - f.at < RECENT_MEMO_MS));
  }

  private remember(key: string, range: Range): void {
    const list = (this.fetched.get(key) ?? []).filter((f) => !(f.from >= range.from && f.to <= range.to));
    list.push({ ...range, at: this.now().getTime() });
    this.fetched.set(key, list);
  }
}
