// A local simulator of Alpaca Market Data v2 (stocks /v2/stocks/..., crypto /v1beta3/crypto/us/...),
// speaking the documented shapes over HTTP on 127.0.0.1 (port 0). A test fixture: nothing under
// src/ imports it. It checks the APCA key headers, serves latest and historical trades and daily
// bars with next_page_token paging, refuses malformed crypto symbols, applies the Basic plan's
// 15-minute SIP rule, and plays scripted failures (429 with Retry-After, 5xx, slow answers).
// Corporate actions (`/v1/corporate-actions`, shared/reference/corporate-actions.md §1): the
// documented shape keyed by plural type, only the types with results present, filtered on
// process_date (so a dividend is found by its payable date, not its ex-date), sorted by it, paged by
// `limit` (1..1000, default 100) and next_page_token; rates as JSON numbers (a SimNumber is written
// with its exact text). The actions are the test's to change (a correction under the same id).
// Bars are stored raw; `adjustment=split` (or `all`) divides the prices before each split's ex-date
// by its ratio, as Alpaca re-bases its adjusted history.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type SimTrade = { t: string; p: number };
/** A JSON number written with exactly this text (a rate Alpaca sends with more digits than a double keeps). */
export class SimNumber {
  constructor(readonly text: string) {}
}
export type SimAction = Record<string, string | number | boolean | null | SimNumber>;
export type SimBar = { t: string; o: number; h: number; l: number; c: number; v?: number };
export type ScriptedReply = { status: number; body?: unknown; headers?: Record<string, string>; delayMs?: number; rawBody?: string };

export type AlpacaDataSimOptions = {
  keyId: string;
  secret: string;
  /** Trades per symbol, oldest first. Crypto symbols in BASE/QUOTE form. */
  trades?: Record<string, SimTrade[]>;
  bars?: Record<string, SimBar[]>;
  /** Bars per page (Alpaca's `limit` still applies when smaller). */
  pageSize?: number;
  /** Simulate the Basic plan's refusal of SIP data from the last 15 minutes. */
  freePlan?: boolean;
  now?: () => Date;
  /** Every reply that is not scripted waits this long (a slow provider). */
  delayMs?: number;
  /** Corporate actions by plural type (`forward_splits`, `cash_dividends`, ...); the test may change them. */
  actions?: Record<string, SimAction[]>;
  /** Corporate actions per page at most (Alpaca's `limit` still applies when smaller). */
  actionsPageSize?: number;
};

export type SeenRequest = { method: string; path: string; query: URLSearchParams; headers: IncomingMessage['headers'] };

export type AlpacaDataSim = {
  url: string;
  requests: SeenRequest[];
  /** Replies used, in order, before normal service resumes. */
  script: ScriptedReply[];
  close(): Promise<void>;
};

const CRYPTO = /^[A-Z]+\/[A-Z]+$/;

export async function startAlpacaDataSim(options: AlpacaDataSimOptions): Promise<AlpacaDataSim> {
  const trades = options.trades ?? {};
  const bars = options.bars ?? {};
  const now = options.now ?? (() => new Date());
  const requests: SeenRequest[] = [];
  const script: ScriptedReply[] = [];

  const actions = options.actions ?? {};
  const reply = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : jsonText(body));
  };
  const send: typeof reply = (...args) => {
    if (options.delayMs) setTimeout(() => reply(...args), options.delayMs);
    else reply(...args);
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://sim');
    requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers });
    if (req.headers['apca-api-key-id'] !== options.keyId || req.headers['apca-api-secret-key'] !== options.secret) {
      return send(res, 401, { message: 'forbidden' });
    }
    const scripted = script.shift();
    if (scripted) {
      const answer = () => reply(res, scripted.status, scripted.rawBody ?? scripted.body ?? { message: `scripted ${scripted.status}` }, scripted.headers);
      if (scripted.delayMs) setTimeout(answer, scripted.delayMs);
      else answer();
      return;
    }
    const symbols = (url.searchParams.get('symbols') ?? '').split(',').filter((s) => s !== '');
    if (url.pathname === '/v1/corporate-actions') {
      const page = actionsPage(url.searchParams, symbols, actions, options.actionsPageSize ?? 1000, now());
      return 'error' in page ? send(res, 400, { message: page.error }) : send(res, 200, page);
    }
    if (symbols.length === 0) return send(res, 400, { message: 'symbols is required' });
    const crypto = url.pathname.startsWith('/v1beta3/crypto/us/');
    if (crypto) {
      const bad = symbols.find((s) => !CRYPTO.test(s));
      if (bad) return send(res, 400, { message: `invalid symbol: ${bad} does not match ^[A-Z]+/[A-Z]+$` });
    } else if (!url.pathname.startsWith('/v2/stocks/')) {
      return send(res, 404, { message: 'Not Found' });
    }
    const feed = url.searchParams.get('feed');
    const end = url.searchParams.get('end');
    if (!crypto && options.freePlan && feed === 'sip' && end !== null) {
      const endMs = /^\d{4}-\d{2}-\d{2}$/.test(end) ? Date.parse(`${end}T23:59:59Z`) : Date.parse(end);
      if (endMs > now().getTime() - 15 * 60_000) return send(res, 403, { message: 'subscription does not permit querying recent SIP data' });
    }
    const route = url.pathname.replace('/v1beta3/crypto/us', '/x').replace('/v2/stocks', '/x');
    if (route === '/x/trades/latest' || route === '/x/latest/trades') {
      const out: Record<string, SimTrade> = {};
      for (const s of symbols) {
        const list = trades[s];
        const last = list?.filter((t) => Date.parse(t.t) <= now().getTime()).at(-1);
        if (last) out[s] = { ...last, ...(crypto ? { s: 0.01, i: 1, tks: 'B' } : { x: 'V', s: 100, c: ['@'], i: 1, z: 'C' }) };
      }
      return send(res, 200, { trades: out });
    }
    if (route === '/x/trades') return send(res, 200, historicalTrades(url.searchParams, symbols, trades));
    if (route === '/x/bars') {
      const adjusted = /split|all/.test(url.searchParams.get('adjustment') ?? 'raw') ? splitAdjusted(bars, actions) : bars;
      return send(res, 200, barsPage(url.searchParams, symbols, adjusted, options.pageSize ?? 1000));
    }
    return send(res, 404, { message: 'Not Found' });
  };

  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function bound(value: string | null, endOfDay: boolean): number | null {
  if (value === null) return null;
  return /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T${endOfDay ? '23:59:59.999' : '00:00:00'}Z`) : Date.parse(value);
}

function historicalTrades(q: URLSearchParams, symbols: string[], trades: Record<string, SimTrade[]>) {
  const start = bound(q.get('start'), false) ?? 0;
  const end = bound(q.get('end'), true) ?? Number.MAX_SAFE_INTEGER;
  const limit = Number(q.get('limit') ?? '1000');
  const out: Record<string, SimTrade[]> = {};
  for (const s of symbols) {
    let list = (trades[s] ?? []).filter((t) => Date.parse(t.t) >= start && Date.parse(t.t) <= end);
    if (q.get('sort') === 'desc') list = [...list].reverse();
    list = list.slice(0, limit);
    if (list.length > 0) out[s] = list;
  }
  return { trades: out, next_page_token: null };
}

function barsPage(q: URLSearchParams, symbols: string[], bars: Record<string, SimBar[]>, pageSize: number) {
  const start = bound(q.get('start'), false) ?? 0;
  const end = bound(q.get('end'), true) ?? Number.MAX_SAFE_INTEGER;
  const all: Array<[string, SimBar]> = [];
  for (const s of [...symbols].sort()) {
    for (const b of bars[s] ?? []) if (Date.parse(b.t) >= start && Date.parse(b.t) <= end) all.push([s, b]);
  }
  const offset = q.get('page_token') ? Number(Buffer.from(q.get('page_token') as string, 'base64url').toString()) : 0;
  const size = Math.min(pageSize, Number(q.get('limit') ?? '1000'));
  const page = all.slice(offset, offset + size);
  const out: Record<string, SimBar[]> = {};
  for (const [s, b] of page) (out[s] ??= []).push({ ...b, v: b.v ?? 1000, n: 10, vw: b.c } as SimBar);
  const next = offset + size < all.length ? Buffer.from(String(offset + size)).toString('base64url') : null;
  return { bars: out, next_page_token: next };
}

/** JSON text, each SimNumber as its exact text. */
function jsonText(body: unknown): string {
  return JSON.stringify(body, (_k, v: unknown) => (v instanceof SimNumber ? `\u0000${v.text}\u0000` : v)).replace(/"\\u0000(.*?)\\u0000"/g, '$1');
}

const numberOf = (v: unknown) => (v instanceof SimNumber ? Number(v.text) : Number(v));
const SYMBOL_MEMBERS = ['symbol', 'old_symbol', 'new_symbol', 'source_symbol', 'acquiree_symbol', 'acquirer_symbol'];
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** One page of /v1/corporate-actions, or the 400 message. */
function actionsPage(q: URLSearchParams, symbols: string[], actions: Record<string, SimAction[]>, pageSize: number, now: Date) {
  const today = now.toISOString().slice(0, 10);
  const start = q.get('start') ?? today;
  const end = q.get('end') ?? today;
  if (!DATE.test(start) || !DATE.test(end)) return { error: 'start and end must be YYYY-MM-DD' };
  const limit = Number(q.get('limit') ?? '100');
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) return { error: 'limit must be between 1 and 1000' };
  const types = q.get('types')?.split(',').map((t) => `${t}s`);
  const all: Array<[string, SimAction]> = [];
  for (const [key, list] of Object.entries(actions)) {
    if (types && !types.includes(key)) continue;
    for (const a of list) {
      const named = SYMBOL_MEMBERS.some((m) => symbols.includes(String(a[m])));
      const processed = String(a.process_date);
      if ((symbols.length === 0 || named) && processed >= start && processed <= end) all.push([key, a]);
    }
  }
  all.sort(([, a], [, b]) => (String(a.process_date) < String(b.process_date) ? -1 : String(a.process_date) > String(b.process_date) ? 1 : String(a.id) < String(b.id) ? -1 : 1));
  if (q.get('sort') === 'desc') all.reverse();
  const offset = q.get('page_token') ? Number(Buffer.from(q.get('page_token') as string, 'base64url').toString()) : 0;
  const size = Math.min(pageSize, limit);
  const out: Record<string, SimAction[]> = {};
  for (const [key, a] of all.slice(offset, offset + size)) (out[key] ??= []).push(a);
  const next = offset + size < all.length ? Buffer.from(String(offset + size)).toString('base64url') : null;
  return { corporate_actions: out, next_page_token: next };
}

/** The bars with every price before a split's ex-date divided by new_rate/old_rate (volume not kept). */
function splitAdjusted(bars: Record<string, SimBar[]>, actions: Record<string, SimAction[]>): Record<string, SimBar[]> {
  const splits = [...(actions.forward_splits ?? []), ...(actions.reverse_splits ?? [])];
  const out: Record<string, SimBar[]> = {};
  for (const [symbol, list] of Object.entries(bars)) {
    out[symbol] = list.map((b) => {
      let factor = 1;
      for (const s of splits) if (s.symbol === symbol && b.t.slice(0, 10) < String(s.ex_date)) factor *= numberOf(s.old_rate) / numberOf(s.new_rate);
      const adjust = (p: number) => Math.round(p * factor * 10_000) / 10_000;
      return { ...b, o: adjust(b.o), h: adjust(b.h), l: adjust(b.l), c: adjust(b.c) };
    });
  }
  return out;
}
