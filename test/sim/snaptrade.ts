// SnapTrade API simulator (test fixture and demo aid; never imported by src/).
// It is a local HTTP server (127.0.0.1) that authenticates as SnapTrade does (clientId and
// timestamp in the query, HMAC `Signature` header over the raw path, raw query and body; userId /
// userSecret for user-scoped calls), serves users, the connection portal, connections, accounts,
// activities (offset paging, newest first, numbers as JSON numbers), orders, positions and
// balances in the documented shapes (brokers.md §3, §5) under `/` and `/api/v1/`, records every
// request, and plays scenarios: a day of fills with a date-only broker and identical fills,
// SnapTrade's daily lag, re-ingested ids, a 429 storm, a 5xx outage, a connection that loses
// authorisation. Brokerage writes (trades, cancels) are recorded as state-changing and refused.

import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simUuid } from './alpaca.ts';

export type SimActivity = {
  id: string;
  type: string;
  symbol: string | null;
  units: number;
  price: number;
  amount: number;
  fee: number;
  trade_date: string;
  external_reference_id: string | null;
  /** as the broker describes the row; the default is built from type, units, symbol and price */
  description?: string;
  /** hidden until `advanceDay()` is called that many times (SnapTrade's daily refresh) */
  lagDays?: number;
};

export type SnapTradeScenario = {
  name: string;
  partner: { clientId: string; consumerKey: string };
  /** accounts a portal login creates (per connection) */
  accounts: { number: string; institution: string; activities: SimActivity[]; ordersSupported: boolean }[];
  rateLimitPerMinute: number;
  /** accepted clock skew of `timestamp`, seconds */
  maxSkewS: number;
  faults: {
    rateLimitStorm?: { from: number; count: number; availableInS: number };
    outage?: { from: number; count: number; status: number };
    /** from this request number on, user credentials are refused and connections are disabled */
    revokeFrom?: number;
    /** error messages echo the credentials received (not SnapTrade's behaviour: tests our redaction) */
    echoSecretsInErrors?: boolean;
  };
};

export type SnapLoggedRequest = {
  n: number;
  method: string;
  path: string;
  query: string;
  body: unknown;
  stateChanging: boolean;
  /** the owner's browser at the fake portal, not an API client */
  portal: boolean;
  status: number;
};

type Account = { id: string; number: string; institution: string; activities: SimActivity[]; ordersSupported: boolean; connectionId: string };
type Connection = { id: string; type: string; disabled: boolean; accounts: Account[]; created: string };
type User = { userId: string; userSecret: string; connections: Connection[] };
type Session = { userId: string; connectionType: string; redirect: string | null; used: boolean };

export type SnapTradeSim = {
  url: string;
  port: number;
  scenario: SnapTradeScenario;
  requests: SnapLoggedRequest[];
  users: Map<string, User>;
  /** SnapTrade's daily refresh: lagged activities become visible */
  advanceDay(): void;
  /** SnapTrade re-ingested the data: every activity gets a new id */
  reingest(): void;
  revoke(): void;
  close(): Promise<void>;
};

const activity = (n: number, a: Omit<SimActivity, 'id' | 'fee' | 'amount'> & { fee?: number; amount?: number }): SimActivity => ({
  id: simUuid(n, 11),
  fee: 0,
  amount: Math.round((a.type === 'BUY' ? -1 : 1) * a.units * a.price * 100) / 100,
  ...a,
});

/**
 * One account at a broker with timestamps (fills, a partial pair, two identical fills, cash rows, a
 * fill that arrives a day late) and one at a broker that reports dates only and has no orders API.
 */
export function snapTradeDay(overrides: Partial<SnapTradeScenario> = {}): SnapTradeScenario {
  const ref = (n: number): string => simUuid(n, 12);
  const timed: SimActivity[] = [
    activity(1, { type: 'BUY', symbol: 'SPY', units: 2, price: 561.2, trade_date: '2026-03-13T14:31:01Z', external_reference_id: ref(1) }),
    activity(2, { type: 'BUY', symbol: 'AAPL', units: 3, price: 211.36, trade_date: '2026-03-13T14:40:00Z', external_reference_id: ref(2) }),
    activity(3, { type: 'BUY', symbol: 'AAPL', units: 1, price: 211.4, trade_date: '2026-03-13T14:40:02Z', external_reference_id: ref(2) }),
    activity(4, { type: 'SELL', symbol: 'SPY', units: -1, price: 563.05, trade_date: '2026-03-13T19:55:00Z', external_reference_id: ref(3) }),
    activity(5, { type: 'BUY', symbol: 'KO', units: 5, price: 61.5, trade_date: '2026-03-12T15:00:00Z', external_reference_id: ref(4) }),
    activity(6, { type: 'BUY', symbol: 'KO', units: 5, price: 61.5, trade_date: '2026-03-12T15:00:00Z', external_reference_id: ref(5) }),
    activity(7, { type: 'DIVIDEND', symbol: 'KO', units: 0, price: 0, trade_date: '2026-03-12T00:00:00Z', external_reference_id: null }),
    activity(8, { type: 'FEE', symbol: null, units: 0, price: 0, trade_date: '2026-03-11T00:00:00Z', external_reference_id: null }),
    activity(9, { type: 'CONTRIBUTION', symbol: null, units: 0, price: 0, trade_date: '2026-03-10T00:00:00Z', external_reference_id: null }),
    activity(10, { type: 'SELL', symbol: 'AAPL', units: -2, price: 214.1, trade_date: '2026-03-13T20:59:00Z', external_reference_id: ref(6), lagDays: 1 }),
  ];
  const dated: SimActivity[] = [
    activity(20, { type: 'BUY', symbol: 'VTI', units: 4, price: 280.12, trade_date: '2026-03-13T00:00:00Z', external_reference_id: null }),
    activity(21, { type: 'SELL', symbol: 'VTI', units: -1, price: 281, trade_date: '2026-03-16T00:00:00Z', external_reference_id: null }),
  ];
  return {
    name: 'day',
    partner: { clientId: 'SIMCLIENT', consumerKey: 'sim-consumer-key-0123456789abcdefghij' },
    accounts: [
      { number: '5XX-12345678', institution: 'Robinhood', activities: timed, ordersSupported: true },
      { number: 'Z98765432', institution: 'Vanguard', activities: dated, ordersSupported: false },
    ],
    rateLimitPerMinute: 250,
    maxSkewS: 300,
    faults: {},
    ...overrides,
  };
}

/** Many timed BUY/SELL rows, for paging tests. */
export function snapTradeBulk(count: number, overrides: Partial<SnapTradeScenario> = {}): SnapTradeScenario {
  const rows: SimActivity[] = [];
  const start = Date.parse('2026-01-05T14:30:00Z');
  for (let i = 0; i < count; i++) {
    rows.push(activity(1000 + i, {
      type: i % 3 ? 'BUY' : 'SELL', symbol: i % 2 ? 'SPY' : 'QQQ', units: i % 3 ? 1 + (i % 4) : -1, price: 500 + (i % 9) / 4,
      trade_date: new Date(start + i * 61_000).toISOString().replace('.000Z', 'Z'), external_reference_id: simUuid(5000 + i, 12),
    }));
  }
  return snapTradeDay({ accounts: [{ number: '5XX-00000001', institution: 'Robinhood', activities: rows, ordersSupported: true }], ...overrides });
}

/**
 * One account from its opening, with the non-trade rows and their traps (reference
 * corporate-actions.md §4, brokers.md §4.2): a contribution, a buy, a SPLIT row whose `units` is
 * the change in units (its meaning is not documented), a dividend with `symbol: null` (the ticker
 * only in the description), its withholding as TAX, a sale and its FEE, a withdrawal, and rows
 * reported with dates only (midnight UTC).
 */
export function snapTradeAccountHistory(overrides: Partial<SnapTradeScenario> = {}): SnapTradeScenario {
  const cash = (n: number, type: string, amount: number, trade_date: string, symbol: string | null = null, description?: string): SimActivity =>
    activity(n, { type, symbol, units: 0, price: 0, amount, trade_date, external_reference_id: null, ...(description ? { description } : {}) });
  const rows: SimActivity[] = [
    cash(30, 'CONTRIBUTION', 12000, '2026-01-05T00:00:00Z'),
    activity(31, { type: 'BUY', symbol: 'XYZ', units: 10, price: 1000, trade_date: '2026-01-06T15:00:01Z', external_reference_id: simUuid(31, 12) }),
    activity(32, { type: 'SPLIT', symbol: 'XYZ', units: 90, price: 0, amount: 0, trade_date: '2026-01-08T00:00:00Z', external_reference_id: null, description: 'XYZ 10 FOR 1 FORWARD SPLIT' }),
    cash(33, 'DIVIDEND', 25, '2026-01-09T00:00:00Z', null, 'XYZ CASH DIVIDEND 0.25/SH'),
    cash(34, 'TAX', -3.75, '2026-01-09T00:00:00Z', null, 'XYZ NRA WITHHOLDING'),
    activity(35, { type: 'SELL', symbol: 'XYZ', units: -50, price: 103, trade_date: '2026-01-12T15:00:01Z', external_reference_id: simUuid(35, 12) }),
    cash(36, 'FEE', -0.02, '2026-01-12T00:00:00Z', 'XYZ', 'REGULATORY FEE'),
    cash(37, 'WITHDRAWAL', -500, '2026-01-13T00:00:00Z'),
  ];
  return snapTradeDay({ name: 'history', accounts: [{ number: '5XX-77777777', institution: 'Robinhood', activities: rows, ordersSupported: true }], ...overrides });
}

/**
 * Issue 39's account at a SnapTrade broker, connected mid-life (no contribution): 10 SPLT bought at
 * 1,000 (2026-02-03), a SPLIT row of +90 units on the ex-date 2026-02-10 (its units' meaning is
 * undocumented: the curve takes the split from the market), a 25.00 DIVIDEND of SPLT (2026-02-20).
 */
export function snapTradeSplitAccount(overrides: Partial<SnapTradeScenario> = {}): SnapTradeScenario {
  const rows: SimActivity[] = [
    activity(41, { type: 'BUY', symbol: 'SPLT', units: 10, price: 1000, trade_date: '2026-02-03T15:00:01Z', external_reference_id: simUuid(41, 12) }),
    activity(42, { type: 'SPLIT', symbol: 'SPLT', units: 90, price: 0, amount: 0, trade_date: '2026-02-10T00:00:00Z', external_reference_id: null, description: 'SPLT 10 FOR 1 FORWARD SPLIT' }),
    activity(43, { type: 'DIVIDEND', symbol: 'SPLT', units: 0, price: 0, amount: 25, trade_date: '2026-02-20T00:00:00Z', external_reference_id: null, description: 'SPLT CASH DIVIDEND 0.25/SH' }),
  ];
  return snapTradeDay({ name: 'split-account', accounts: [{ number: '5XX-39393939', institution: 'Robinhood', activities: rows, ordersSupported: true }], ...overrides });
}

/** Named scenarios, for `ledger sim snaptrade --scenario NAME` and demos. */
export const SNAPTRADE_SCENARIOS: Record<string, () => SnapTradeScenario> = {
  day: () => snapTradeDay(),
  'rate-limit-storm': () => snapTradeDay({ name: 'rate-limit-storm', faults: { rateLimitStorm: { from: 3, count: 4, availableInS: 1 } } }),
  outage: () => snapTradeDay({ name: 'outage', faults: { outage: { from: 3, count: 6, status: 503 } } }),
  'loses-authorisation': () => snapTradeDay({ name: 'loses-authorisation', faults: { revokeFrom: 6 } }),
  bulk: () => snapTradeBulk(5000, { name: 'bulk' }),
  history: () => snapTradeAccountHistory(),
};

// ---------------------------------------------------------------------------------------------

type Answer = { status: number; body: unknown; headers?: Record<string, string> };
const fail = (status: number, code: string, detail: string): Answer => ({ status, body: { detail, status_code: status, code } });

function sortedJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`).join(',')}}`;
}

function expectedSignature(consumerKey: string, path: string, query: string, body: unknown): string {
  const empty = body === null || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body as object).length === 0);
  const canonical = sortedJson({ content: empty ? null : body, path, query });
  return createHmac('sha256', encodeURI(consumerKey)).update(canonical, 'utf8').digest('base64');
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function activityView(a: SimActivity): Record<string, unknown> {
  const currency = { id: simUuid(1, 20), code: 'USD', name: 'US Dollar' };
  return {
    id: a.id,
    symbol: a.symbol === null ? null : { id: simUuid(a.symbol.length, 21), symbol: a.symbol, raw_symbol: a.symbol, description: a.symbol, currency, exchange: { code: 'ARCA', mic_code: 'ARCX', name: 'NYSE ARCA' }, type: { code: 'cs', description: 'Common Stock' } },
    currency_universal_symbol: null, option_symbol: null, price: a.price, units: a.units, amount: a.amount, currency, type: a.type, option_type: '',
    description: a.description ?? `${a.type} ${Math.abs(a.units)} ${a.symbol ?? ''} @ ${a.price}`, trade_date: a.trade_date, settlement_date: a.trade_date, fee: a.fee,
    fx_rate: null, institution: 'Robinhood', external_reference_id: a.external_reference_id,
  };
}

function accountView(a: Account): Record<string, unknown> {
  return {
    id: a.id, brokerage_authorization: a.connectionId, name: `${a.institution} account`, number: a.number, institution_account_id: null,
    institution_name: a.institution, created_date: '2026-03-01T00:00:00Z', opening_date: null, funding_date: null,
    sync_status: { transactions: { initial_sync_completed: true, last_successful_sync: '2026-03-13', first_transaction_date: '2026-01-02' }, holdings: { initial_sync_completed: true, last_successful_sync: '2026-03-13T20:00:00Z', holdings_unavailable: false } },
    balance: { total: { amount: 10234.5, currency: 'USD' } }, status: 'open', raw_type: 'Margin', account_category: 'INVESTMENT', is_paper: false,
  };
}

export async function startSnapTradeSim(options: { scenario?: SnapTradeScenario; port?: number } = {}): Promise<SnapTradeSim> {
  const scenario = options.scenario ?? snapTradeDay();
  const requests: SnapLoggedRequest[] = [];
  const users = new Map<string, User>();
  const sessions = new Map<string, Session>();
  let day = 0;
  let revoked = false;
  let windowStart = Date.now();
  let windowCount = 0;
  let url = '';

  const visible = (a: Account): SimActivity[] => a.activities.filter((x) => (x.lagDays ?? 0) <= day);
  const accountsOf = (u: User): Account[] => u.connections.flatMap((c) => c.accounts);

  const userRoutes = (u: User, method: string, path: string, q: URLSearchParams, body: unknown): Answer => {
    if (method === 'POST' && path === '/snapTrade/login') {
      const b = (body ?? {}) as Record<string, unknown>;
      const sessionId = randomUUID();
      sessions.set(sessionId, { userId: u.userId, connectionType: typeof b.connectionType === 'string' ? b.connectionType : 'read', redirect: typeof b.customRedirect === 'string' ? b.customRedirect : null, used: false });
      return { status: 200, body: { redirectURI: `${url}/portal?session=${sessionId}`, sessionId } };
    }
    if (method !== 'GET') return fail(403, '1020', 'simulator: brokerage writes are recorded and refused');
    if (path === '/authorizations') {
      return { status: 200, body: u.connections.map((c) => ({ id: c.id, created_date: c.created, brokerage: { id: simUuid(3, 30), slug: 'ROBINHOOD', name: 'Robinhood', display_name: 'Robinhood' }, name: 'Connection', type: c.type, disabled: c.disabled, disabled_date: null, data_freshness_mode: 'delayed', updated_date: c.created })) };
    }
    if (path === '/accounts') return { status: 200, body: accountsOf(u).map(accountView) };
    let m = /^\/authorizations\/([^/]+)\/accounts$/.exec(path);
    if (m) {
      const c = u.connections.find((x) => x.id === m![1]);
      return c ? { status: 200, body: c.accounts.map(accountView) } : fail(404, '1115', 'Connection not found');
    }
    m = /^\/accounts\/([^/]+)(\/activities|\/orders|\/positions\/all|\/balances)?$/.exec(path);
    if (!m) return fail(404, '1000', 'Not found');
    const account = accountsOf(u).find((a) => a.id === m![1]);
    if (!account) return fail(404, '1063', 'Account not found');
    switch (m[2]) {
      case undefined:
        return { status: 200, body: accountView(account) };
      case '/activities': {
        const offset = Number(q.get('offset') ?? '0');
        const limit = Number(q.get('limit') ?? '1000');
        if (!Number.isInteger(offset) || offset < 0 || !Number.isInteger(limit) || limit < 1 || limit > 1000) return fail(400, '1001', 'Invalid offset or limit');
        const types = q.get('type')?.split(',');
        const start = q.get('startDate');
        const end = q.get('endDate');
        let rows = visible(account).filter((a) => (!types || types.includes(a.type)) && (!start || a.trade_date.slice(0, 10) >= start) && (!end || a.trade_date.slice(0, 10) <= end));
        rows = [...rows].sort((a, b) => (a.trade_date < b.trade_date ? 1 : a.trade_date > b.trade_date ? -1 : a.id < b.id ? 1 : -1));
        return { status: 200, body: { data: rows.slice(offset, offset + limit).map(activityView), pagination: { offset, limit, total: rows.length } } };
      }
      case '/orders': {
        if (!account.ordersSupported) return { status: 501, body: { error: `The orders endpoint is not yet implemented for brokerage ${account.institution}` } };
        const byRef = new Map<string, SimActivity[]>();
        for (const a of visible(account)) if (a.external_reference_id && (a.type === 'BUY' || a.type === 'SELL')) byRef.set(a.external_reference_id, [...(byRef.get(a.external_reference_id) ?? []), a]);
        return {
          status: 200,
          body: [...byRef].map(([id, fills]) => {
            const qty = fills.reduce((s, f) => s + Math.abs(f.units), 0);
            return { brokerage_order_id: id, brokerage_group_order_id: null, order_role: null, status: 'EXECUTED', universal_symbol: { symbol: fills[0]!.symbol }, option_symbol: null, action: fills[0]!.type, total_quantity: String(qty), open_quantity: '0', canceled_quantity: '0', filled_quantity: String(qty), execution_price: String(fills[0]!.price), limit_price: null, stop_price: null, trailing_stop: null, order_type: 'Market', time_in_force: 'Day', time_placed: fills[0]!.trade_date, time_updated: fills[fills.length - 1]!.trade_date, time_executed: fills[fills.length - 1]!.trade_date, expiry_date: null, child_brokerage_order_ids: null };
          }),
        };
      }
      case '/positions/all': {
        const net = new Map<string, number>();
        for (const a of visible(account)) if (a.symbol && (a.type === 'BUY' || a.type === 'SELL')) net.set(a.symbol, (net.get(a.symbol) ?? 0) + (a.type === 'BUY' ? 1 : -1) * Math.abs(a.units));
        return { status: 200, body: { results: [...net].filter(([, n]) => n !== 0).map(([symbol, units]) => ({ instrument: { kind: 'stock', id: simUuid(symbol.length, 21), symbol, raw_symbol: symbol, description: symbol, currency: 'USD', exchange: 'ARCX' }, units: String(units), price: '100', cost_basis: '100', currency: 'USD' })), data_freshness: { as_of: '2026-03-13T20:00:00Z' } } };
      }
      default:
        return { status: 200, body: [{ currency: { id: simUuid(1, 20), code: 'USD', name: 'US Dollar' }, cash: 1234.56, buying_power: 2469.12 }] };
    }
  };

  const answer = (req: IncomingMessage, n: number, rawPath: string, rawQuery: string, body: unknown): Answer => {
    const q = new URLSearchParams(rawQuery);
    const legacy = rawPath.startsWith('/api/v1/') || rawPath === '/api/v1';
    const path = legacy ? rawPath.slice('/api/v1'.length) || '/' : rawPath;
    const method = req.method ?? 'GET';
    if (path === '/' && method === 'GET') return { status: 200, body: { version: 153, timestamp: new Date().toISOString(), online: true } };
    if (q.get('clientId') !== scenario.partner.clientId) return fail(401, '1076', 'Unable to verify signature sent');
    const ts = q.get('timestamp') ?? '';
    if (!/^\d{1,10}$/.test(ts) || Math.abs(Number(ts) - Date.now() / 1000) > scenario.maxSkewS) return fail(401, '1076', 'Invalid timestamp');
    const sig = req.headers.signature;
    if (typeof sig !== 'string' || !sameText(sig, expectedSignature(scenario.partner.consumerKey, rawPath, rawQuery, body))) return fail(401, '1076', 'Unable to verify signature sent');
    const now = Date.now();
    if (now - windowStart >= 60_000) {
      windowStart = now;
      windowCount = 0;
    }
    windowCount++;
    const resetIn = Math.max(1, Math.ceil((windowStart + 60_000 - now) / 1000));
    const rate = { 'X-RateLimit-Limit': String(scenario.rateLimitPerMinute), 'X-RateLimit-Remaining': String(Math.max(0, scenario.rateLimitPerMinute - windowCount)), 'X-RateLimit-Reset': String(resetIn), 'x-request-id': randomUUID() };
    const f = scenario.faults;
    const throttled = (s: number): Answer => ({ ...fail(429, '0000', `Request was throttled. Expected available in ${s} seconds.`), headers: { ...rate, 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(s) } });
    if (f.rateLimitStorm && n >= f.rateLimitStorm.from && n < f.rateLimitStorm.from + f.rateLimitStorm.count) return throttled(f.rateLimitStorm.availableInS);
    if (windowCount > scenario.rateLimitPerMinute) return throttled(resetIn);
    if (f.outage && n >= f.outage.from && n < f.outage.from + f.outage.count) return { ...fail(f.outage.status, '1000', 'Encountered an unexpected exception.'), headers: rate };
    const withRate = (a: Answer): Answer => ({ ...a, headers: { ...rate, ...a.headers } });
    if (method === 'POST' && path === '/snapTrade/registerUser') {
      const userId = (body as { userId?: unknown } | null)?.userId;
      if (typeof userId !== 'string' || userId === '') return withRate(fail(400, '1001', 'userId is required'));
      if (users.has(userId)) return withRate(fail(400, '1010', 'User already exist'));
      const user: User = { userId, userSecret: randomUUID(), connections: [] };
      users.set(userId, user);
      return withRate({ status: 200, body: { userId, userSecret: user.userSecret } });
    }
    const u = users.get(q.get('userId') ?? '');
    if (f.revokeFrom !== undefined && n >= f.revokeFrom) revoked = true;
    if (revoked) for (const user of users.values()) for (const c of user.connections) c.disabled = true;
    if (!u || !sameText(u.userSecret, q.get('userSecret') ?? '') || revoked) {
      const echo = f.echoSecretsInErrors ? ` (got ${q.get('userSecret')}, consumer key ${scenario.partner.consumerKey})` : '';
      return withRate(fail(401, '1083', `Invalid userID or userSecret provided${echo}`));
    }
    return withRate(userRoutes(u, method, path, q, body));
  };

  const portal = (q: URLSearchParams): Answer => {
    const s = sessions.get(q.get('session') ?? '');
    if (!s || s.used) return { status: 410, body: { detail: 'This link has expired or was used' } };
    s.used = true;
    const user = users.get(s.userId) as User;
    const connection: Connection = { id: randomUUID(), type: s.connectionType, disabled: false, accounts: [], created: new Date().toISOString() };
    connection.accounts = scenario.accounts.map((a) => ({ ...a, id: randomUUID(), connectionId: connection.id, activities: a.activities.map((x) => ({ ...x })) }));
    user.connections.push(connection);
    if (s.redirect === null) return { status: 200, body: { status: 'SUCCESS', connection_id: connection.id } };
    const target = new URL(s.redirect);
    target.searchParams.set('status', 'SUCCESS');
    target.searchParams.set('connection_id', connection.id);
    return { status: 302, body: null, headers: { location: target.toString() } };
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = req.url ?? '/';
      const qi = raw.indexOf('?');
      const rawPath = qi < 0 ? raw : raw.slice(0, qi);
      const rawQuery = qi < 0 ? '' : raw.slice(qi + 1);
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      let a: Answer;
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        body = undefined;
      }
      const n = requests.length + 1;
      const isPortal = rawPath === '/portal';
      if (body === undefined) a = fail(400, '1001', 'Invalid JSON body');
      else if (isPortal) a = portal(new URLSearchParams(rawQuery));
      else a = answer(req, n, rawPath, rawQuery, body);
      if (rawPath.startsWith('/api/v1')) a = { ...a, headers: { ...a.headers, Deprecation: '@1781222400' } };
      const stripped = rawPath.replace(/^\/api\/v1/, '');
      const accountManagement = stripped === '/snapTrade/registerUser' || stripped === '/snapTrade/login';
      requests.push({ n, method: req.method ?? '', path: rawPath, query: rawQuery, body: body ?? null, stateChanging: req.method !== 'GET' && !accountManagement && !isPortal, portal: isPortal, status: a.status });
      const out = a.body === null ? '' : JSON.stringify(a.body);
      res.writeHead(a.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out), ...a.headers });
      res.end(out);
    });
  };

  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}`;
  return {
    url, port, scenario, requests, users,
    advanceDay: () => {
      day++;
    },
    reingest: () => {
      for (const u of users.values()) for (const c of u.connections) for (const a of c.accounts) for (const x of a.activities) x.id = randomUUID();
    },
    revoke: () => {
      revoked = true;
    },
    close: () => new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((e) => (e ? reject(e) : resolve()));
    }),
  };
}
