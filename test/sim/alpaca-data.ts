// A local simulator of Alpaca Market Data v2 (stocks /v2/stocks/..., crypto /v1beta3/crypto/us/...),
// speaking the documented shapes over HTTP on 127.0.0.1 (port 0). A test fixture: nothing under
// src/ imports it. It checks the APCA key headers, serves latest and historical trades and daily
// bars with next_page_token paging, refuses malformed crypto symbols, applies the Basic plan's
// 15-minute SIP rule, and plays scripted failures (429 with Retry-After, 5xx, slow answers).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type SimTrade = { t: string; p: number };
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

  const reply = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
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
    if (route === '/x/bars') return send(res, 200, barsPage(url.searchParams, symbols, bars, options.pageSize ?? 1000));
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
