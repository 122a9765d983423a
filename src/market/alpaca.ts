// Alpaca Market Data v2 client (stocks under /v2/stocks, crypto under /v1beta3/crypto/{loc}).
// It owns the HTTP calls (bounded by runtime/bounded-fetch.ts), their parsing, and the translation
// of Alpaca's failures into MarketError values. Reads only; keys go in the APCA-API-KEY-ID /
// APCA-API-SECRET-KEY headers.
//
// Price at an instant: the latest-trade endpoint first; when that trade is later than the instant
// (a price is looked up after the decision was recorded), the historical trades endpoint with
// end = instant, sort = desc, limit = 1 over a lookback window. Daily bars: timeframe 1Day,
// adjustment `raw` (the prices traded that day: an adjusted history is re-based by every later split
// or dividend, so a stored adjusted close would not verify next quarter), all pages. Corporate
// actions: /v1/corporate-actions, every type, all pages, read losslessly (corporate-actions.ts).
// Plan limits: Basic allows 200 calls a minute and no SIP data from the last 15 minutes, so on
// that plan a SIP request's end is moved back to 15 minutes ago; Algo Trader Plus allows 10,000.

import { normaliseNumbers } from '../core/canon.ts';
import { normaliseDecimal } from '../core/decimal.ts';
import { readJson } from '../core/json.ts';
import { parseRfc3339 } from '../core/time.ts';
import { bodyText, boundedExchange, type ExchangeFailure } from '../runtime/bounded-fetch.ts';
import { DAY_MS, dateOfDay, dayNumber, newYorkDay } from '../method/perf/calendar.ts';
import { ACTIONS_WINDOW_DAYS, inRange, parseActionsPage } from './corporate-actions.ts';
import {
  checkActionsRequest,
  checkBarsRequest,
  ageOf,
  assetKindOf,
  invalidSymbol,
  type AssetKind,
  type CorporateAction,
  type DailyBar,
  type DailyBars,
  type MarketData,
  type MarketError,
  type MarketResult,
  type TradePrice,
} from './port.ts';

export const ALPACA_DATA_URL = 'https://data.alpaca.markets';
export const PLANS = { basic: { callsPerMinute: 200 }, algo_trader_plus: { callsPerMinute: 10_000 } } as const;
export type AlpacaPlan = keyof typeof PLANS;
export const STOCK_FEEDS = ['iex', 'sip', 'delayed_sip', 'otc', 'boats', 'overnight'] as const;
export type StockFeed = (typeof STOCK_FEEDS)[number];

const SIP_DELAY_MS = 15 * 60 * 1000;

export type AlpacaDataOptions = {
  keyId: string;
  secret: string;
  baseUrl?: string;
  /** Feed for trades; `iex` is real time on every plan. */
  feed?: StockFeed;
  /** Feed for daily bars; `sip` (all exchanges) is free when older than 15 minutes. */
  barsFeed?: StockFeed;
  plan?: AlpacaPlan;
  /** Crypto venue: `us` (Alpaca), `us-1` (Kraken US), `eu-1` (Kraken EU). */
  cryptoLocation?: string;
  timeoutMs?: number;
  maxResponseBytes?: number;
  maxPages?: number;
  /** How far before the instant a trade is searched for. */
  lookbackDays?: number;
  /** Extra attempts after a 5xx or a network failure (429 is returned, never retried here). */
  retries?: number;
  retryDelayMs?: number;
  fetch?: typeof fetch;
  now?: () => Date;
};

type Json = Record<string, unknown>;

/** Symbols per corporate-actions request (one URL; `limit` counts the actions of all of them). */
const ACTION_SYMBOLS_PER_CALL = 50;
type Trade = { t: string; epochMs: number; price: string };

export class AlpacaMarketData implements MarketData {
  readonly source = 'alpaca' as const;
  readonly synthetic = false;
  readonly description: string;
  private readonly o: Required<Omit<AlpacaDataOptions, 'fetch' | 'now'>>;
  private readonly fetchFn: typeof fetch;
  private readonly now: () => Date;
  private readonly calls: number[] = [];

  constructor(options: AlpacaDataOptions) {
    this.o = {
      baseUrl: (options.baseUrl ?? ALPACA_DATA_URL).replace(/\/+$/, ''),
      feed: 'iex',
      barsFeed: 'sip',
      plan: 'basic',
      cryptoLocation: 'us',
      timeoutMs: 10_000,
      maxResponseBytes: 4 * 1024 * 1024,
      maxPages: 100,
      lookbackDays: 7,
      retries: 1,
      retryDelayMs: 500,
      ...stripUndefined(options),
    } as Required<Omit<AlpacaDataOptions, 'fetch' | 'now'>>;
    this.fetchFn = options.fetch ?? ((input, init) => fetch(input, init));
    this.now = options.now ?? (() => new Date());
    this.description = `Alpaca Market Data v2 (${this.o.plan} plan, trades feed ${this.o.feed}, bars feed ${this.o.barsFeed})`;
  }

  async latestTrade(symbol: string, at: Date): Promise<MarketResult<TradePrice>> {
    const kind = assetKindOf(symbol);
    if (kind === null) return invalidSymbol(symbol);
    const latest = await this.fetchLatest(kind, symbol);
    if (!latest.ok) return latest;
    let trade = latest.value;
    if (trade.epochMs > at.getTime()) {
      const earlier = await this.fetchTradeAtOrBefore(kind, symbol, at);
      if (!earlier.ok) return earlier;
      trade = earlier.value;
    }
    return {
      ok: true,
      value: {
        symbol,
        price: trade.price,
        provider_time: trade.t,
        asked_at: at.toISOString(),
        source: 'alpaca',
        feed: kind === 'stock' ? this.o.feed : null,
        synthetic: false,
        ...ageOf(trade.epochMs, at),
      },
    };
  }

  async dailyBars(symbol: string, from: string, to: string): Promise<MarketResult<DailyBars>> {
    const checked = checkBarsRequest(symbol, from, to);
    if (!checked.ok) return checked;
    const kind = checked.value;
    const path = kind === 'stock' ? '/v2/stocks/bars' : `/v1beta3/crypto/${this.o.cryptoLocation}/bars`;
    const params: Record<string, string> = { symbols: symbol, timeframe: '1Day', start: from, end: this.barsEnd(kind, to), limit: '10000', sort: 'asc' };
    if (kind === 'stock') Object.assign(params, { adjustment: 'raw', feed: this.o.barsFeed });
    const bars: DailyBar[] = [];
    let pageToken: string | null = null;
    for (let page = 0; ; page++) {
      if (page >= this.o.maxPages) return providerError(`more than ${this.o.maxPages} pages of bars`);
      const body = await this.get(path, pageToken === null ? params : { ...params, page_token: pageToken });
      if (!body.ok) return body;
      const parsed = parseBarsPage(body.value, symbol, kind);
      if (!parsed.ok) return parsed;
      bars.push(...parsed.value.bars);
      pageToken = parsed.value.next;
      if (pageToken === null) break;
    }
    return {
      ok: true,
      value: {
        symbol,
        bars: bars.filter((b) => b.date >= from && b.date <= to),
        source: 'alpaca',
        feed: kind === 'stock' ? this.o.barsFeed : null,
        adjustment: 'raw',
        synthetic: false,
      },
    };
  }

  async corporateActions(symbols: readonly string[], from: string, to: string): Promise<MarketResult<CorporateAction[]>> {
    const checked = checkActionsRequest(symbols, from, to);
    if (!checked.ok) return checked;
    const stocks = checked.value.sort();
    const today = this.now().toISOString().slice(0, 10);
    const widened = dateOfDay(dayNumber(to) + ACTIONS_WINDOW_DAYS);
    const end = widened < today ? widened : today < from ? from : today;
    const actions: CorporateAction[] = [];
    for (let i = 0; i < stocks.length; i += ACTION_SYMBOLS_PER_CALL) {
      const params = { symbols: stocks.slice(i, i + ACTION_SYMBOLS_PER_CALL).join(','), start: from, end, limit: '1000', sort: 'asc' };
      const got = await this.actionPages(params);
      if (!got.ok) return got;
      actions.push(...got.value);
    }
    return { ok: true, value: inRange(actions, from, to) };
  }

  /** Every page of one corporate-actions query, merged. */
  private async actionPages(params: Record<string, string>): Promise<MarketResult<CorporateAction[]>> {
    const actions: CorporateAction[] = [];
    let pageToken: string | null = null;
    for (let page = 0; ; page++) {
      if (page >= this.o.maxPages) return providerError(`more than ${this.o.maxPages} pages of corporate actions`);
      const body = await this.get('/v1/corporate-actions', pageToken === null ? params : { ...params, page_token: pageToken }, true);
      if (!body.ok) return body;
      const parsed = parseActionsPage(body.value as Parameters<typeof parseActionsPage>[0]);
      if (!parsed.ok) return parsed;
      actions.push(...parsed.value.actions);
      pageToken = parsed.value.next;
      if (pageToken === null) return { ok: true, value: actions };
    }
  }

  /** `to` as Alpaca's inclusive end, moved back out of the last 15 minutes for SIP on the Basic plan. */
  private barsEnd(kind: AssetKind, to: string): string {
    if (kind === 'crypto' || this.o.plan !== 'basic' || this.o.barsFeed !== 'sip') return to;
    const limit = this.now().getTime() - SIP_DELAY_MS;
    const endOfDay = Date.parse(`${to}T00:00:00Z`) + DAY_MS + 5 * 3_600_000; // New York midnight at the latest
    return endOfDay <= limit ? to : rfc3339Seconds(limit);
  }

  private async fetchLatest(kind: AssetKind, symbol: string): Promise<MarketResult<Trade>> {
    const body =
      kind === 'stock'
        ? await this.get('/v2/stocks/trades/latest', { symbols: symbol, feed: this.o.feed })
        : await this.get(`/v1beta3/crypto/${this.o.cryptoLocation}/latest/trades`, { symbols: symbol });
    if (!body.ok) return body;
    const trades = body.value.trades;
    if (!isObject(trades)) return providerError('latest trades: no `trades` object');
    if (!(symbol in trades)) return { ok: false, error: { code: 'unknown_symbol', symbol, message: `no trade known for ${symbol}` } };
    return parseTrade(trades[symbol], symbol);
  }

  private async fetchTradeAtOrBefore(kind: AssetKind, symbol: string, at: Date): Promise<MarketResult<Trade>> {
    let end = at.getTime();
    if (kind === 'stock' && this.o.plan === 'basic' && this.o.feed === 'sip') end = Math.min(end, this.now().getTime() - SIP_DELAY_MS);
    const params: Record<string, string> = {
      symbols: symbol,
      start: rfc3339Seconds(end - this.o.lookbackDays * DAY_MS),
      end: new Date(end).toISOString(),
      limit: '1',
      sort: 'desc',
    };
    if (kind === 'stock') params.feed = this.o.feed;
    const path = kind === 'stock' ? '/v2/stocks/trades' : `/v1beta3/crypto/${this.o.cryptoLocation}/trades`;
    const body = await this.get(path, params);
    if (!body.ok) return body;
    const trades = body.value.trades;
    if (!isObject(trades)) return providerError('trades: no `trades` object');
    const list = trades[symbol];
    if (list === undefined || (Array.isArray(list) && list.length === 0)) {
      return { ok: false, error: { code: 'no_price', symbol, message: `no ${symbol} trade in the ${this.o.lookbackDays} days before ${at.toISOString()}` } };
    }
    if (!Array.isArray(list)) return providerError(`trades.${symbol} is not an array`);
    const trade = parseTrade(list[0], symbol);
    if (trade.ok && trade.value.epochMs > at.getTime()) return providerError(`trade at ${trade.value.t} is after end ${at.toISOString()}`);
    return trade;
  }

  private takeCallSlot(): MarketError | null {
    const now = this.now().getTime();
    while (this.calls.length > 0 && (this.calls[0] as number) <= now - 60_000) this.calls.shift();
    if (this.calls.length >= PLANS[this.o.plan].callsPerMinute) {
      const wait = (this.calls[0] as number) + 60_000 - now;
      return { code: 'rate_limited', retry_after_ms: wait, message: `${this.o.plan} plan allows ${PLANS[this.o.plan].callsPerMinute} calls a minute` };
    }
    this.calls.push(now);
    return null;
  }

  /** `lossless`: numbers kept as the decimal text they are written with (core/json.ts), not read as doubles. */
  private async get(path: string, params: Record<string, string>, lossless = false): Promise<MarketResult<Json>> {
    const url = `${this.o.baseUrl}${path}?${new URLSearchParams(params).toString()}`;
    for (let attempt = 0; ; attempt++) {
      const slot = this.takeCallSlot();
      if (slot) return { ok: false, error: slot };
      const result = await this.getOnce(url, lossless);
      const retryable = !result.ok && result.error.code === 'provider_error' && (result.error.status === undefined || result.error.status >= 500);
      if (!retryable || attempt >= this.o.retries) return result;
      await new Promise((resolve) => setTimeout(resolve, this.o.retryDelayMs * 2 ** attempt));
    }
  }

  private async getOnce(url: string, lossless: boolean): Promise<MarketResult<Json>> {
    const exchange = await boundedExchange(url, {
      headers: { 'APCA-API-KEY-ID': this.o.keyId, 'APCA-API-SECRET-KEY': this.o.secret, accept: 'application/json' },
    }, { timeoutMs: this.o.timeoutMs, maxBytes: this.o.maxResponseBytes, fetch: this.fetchFn });
    if (!exchange.ok) return failedExchange(exchange.error, this.o);
    const response = exchange.value;
    const text = bodyText(response);
    if (response.status === 429) return { ok: false, error: { code: 'rate_limited', retry_after_ms: retryAfterMs(response.headers, this.now()), message: 'Alpaca answered 429' } };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return providerError(`status ${response.status}: body is not JSON`, response.status);
    }
    if (response.status < 200 || response.status > 299) return statusError(response.status, body);
    if (!isObject(body)) return providerError('body is not a JSON object', response.status);
    return lossless ? readLossless(text, response.status) : { ok: true, value: body };
  }
}

/** The body again with every number as its normalised decimal text (canon_v1 §2). */
function readLossless(text: string, status: number): MarketResult<Json> {
  const read = readJson(text);
  if (!read.ok) return providerError(`body is not strict JSON: ${read.error.message}`, status);
  const normalised = normaliseNumbers(read.value);
  if (!normalised.ok) return providerError(`number at ${normalised.path} is too long`, status);
  return isObject(normalised.value) ? { ok: true, value: normalised.value } : providerError('body is not a JSON object', status);
}

function statusError(status: number, body: unknown): MarketResult<never> {
  const message = isObject(body) && typeof body.message === 'string' ? body.message : `status ${status}`;
  const symbolMatch = /invalid symbol|symbol.*not (found|exist)|unknown symbol/i.test(message);
  if ((status === 400 || status === 404 || status === 422) && symbolMatch) {
    const symbol = /invalid symbol: ([^ ]+)/i.exec(message)?.[1] ?? '';
    return { ok: false, error: { code: 'unknown_symbol', symbol, message } };
  }
  return providerError(`Alpaca answered ${status}: ${message}`, status);
}

/** Retry-After (seconds or HTTP date), else X-RateLimit-Reset (Unix seconds), else one minute. */
export function retryAfterMs(headers: Headers, now: Date): number {
  const retryAfter = headers.get('retry-after');
  if (retryAfter !== null) {
    if (/^\d+$/.test(retryAfter.trim())) return Number(retryAfter.trim()) * 1000;
    const when = Date.parse(retryAfter);
    if (!Number.isNaN(when)) return Math.max(0, when - now.getTime());
  }
  const reset = headers.get('x-ratelimit-reset');
  if (reset !== null && /^\d+$/.test(reset.trim())) return Math.max(0, Number(reset.trim()) * 1000 - now.getTime());
  return 60_000;
}

/** A failed exchange as Alpaca's provider_error. */
function failedExchange(f: ExchangeFailure, limits: { timeoutMs: number; maxResponseBytes: number }): MarketResult<never> {
  switch (f.kind) {
    case 'timeout':
      return providerError(f.phase === 'answer' ? `no answer within ${limits.timeoutMs} ms` : `no complete answer within ${limits.timeoutMs} ms`);
    case 'too_large':
      return providerError(f.declared === null ? `response exceeds the ${limits.maxResponseBytes}-byte limit`
        : `response of ${f.declared} bytes exceeds the ${limits.maxResponseBytes}-byte limit`, f.status);
    case 'broken':
      return providerError(`reading the response failed: ${(f.error as Error).message}`);
    case 'unreachable':
      return providerError(`request failed: ${(f.error as Error).message}`);
    case 'redirect':
      return providerError(`unexpected redirect (HTTP ${f.status})`, f.status);
  }
}

function parseTrade(raw: unknown, symbol: string): MarketResult<Trade> {
  if (!isObject(raw) || typeof raw.t !== 'string' || typeof raw.p !== 'number') return providerError(`malformed trade for ${symbol}`);
  const time = parseRfc3339(raw.t);
  const price = price_(raw.p);
  if (!time.ok || price === null) return providerError(`malformed trade for ${symbol}: t=${String(raw.t)} p=${String(raw.p)}`);
  return { ok: true, value: { t: raw.t, epochMs: time.epochMs, price } };
}

function parseBarsPage(body: Json, symbol: string, kind: AssetKind): MarketResult<{ bars: DailyBar[]; next: string | null }> {
  const next = body.next_page_token;
  if (next !== null && next !== undefined && typeof next !== 'string') return providerError('next_page_token is not a string');
  if (!isObject(body.bars)) return providerError('bars: no `bars` object');
  const raw = body.bars[symbol] ?? [];
  if (!Array.isArray(raw)) return providerError(`bars.${symbol} is not an array`);
  const bars: DailyBar[] = [];
  for (const b of raw) {
    if (!isObject(b) || typeof b.t !== 'string') return providerError(`malformed bar for ${symbol}`);
    const time = parseRfc3339(b.t);
    const [open, high, low, close] = [b.o, b.h, b.l, b.c].map(price_);
    if (!time.ok || !open || !high || !low || !close) return providerError(`malformed bar for ${symbol} at ${b.t}`);
    const date = kind === 'stock' ? dateOfDay(newYorkDay(time.epochMs)) : new Date(time.epochMs).toISOString().slice(0, 10);
    bars.push({ date, open, high, low, close, provider_time: b.t });
  }
  return { ok: true, value: { bars, next: typeof next === 'string' && next !== '' ? next : null } };
}

/** A provider price as normalised decimal text; the number's shortest round-trip form is its JSON text. */
function price_(value: unknown): string | null {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return null;
  const n = normaliseDecimal(String(value));
  return n.ok ? n.value : null;
}

function rfc3339Seconds(epochMs: number): string {
  return new Date(Math.floor(epochMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function providerError(message: string, status?: number): MarketResult<never> {
  return { ok: false, error: status === undefined ? { code: 'provider_error', message } : { code: 'provider_error', message, status } };
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([k, v]) => v !== undefined && k !== 'fetch' && k !== 'now')) as Partial<T>;
}
