// Alpaca Trading API v2 simulator (test fixture and demo aid; never imported by src/).
// It is a local HTTP server (127.0.0.1) answering the read endpoints the ledger uses with the
// documented shapes, auth, paging and rate limits (brokers.md §1, §5), recording every request,
// and playing scripted scenarios: a day of fills with partials, replacements, bracket legs and
// equal timestamps at page edges; a 429 storm; a 5xx outage; a connection that loses authorisation.
// Anything but GET is recorded as state-changing and refused, so tests can assert none was sent.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type SimOrder = {
  id: string;
  client_order_id: string;
  symbol: string;
  side: 'buy' | 'sell';
  qty: string;
  submitted_at: string;
  status: string;
  replaces: string | null;
  replaced_by: string | null;
  /** id of the parent for a bracket leg */
  parent: string | null;
  order_class: string;
};

export type SimFill = {
  id: string;
  order_id: string;
  transaction_time: string;
  qty: string;
  price: string;
  cum_qty: string;
  leaves_qty: string;
  type: 'fill' | 'partial_fill';
};

/**
 * A non-trade activity row as Alpaca writes it (reference corporate-actions.md §3): decimals as
 * strings, `date` the trading date, the id prefix the booking time in New York.
 */
export type SimNonTrade = {
  id: string;
  activity_type: string;
  activity_sub_type?: string;
  date: string;
  created_at: string;
  net_amount: string;
  symbol?: string;
  cusip?: string;
  qty?: string;
  price?: string;
  per_share_amount?: string;
  description?: string;
  status: 'executed' | 'correct' | 'canceled';
};

export type SecretEcho = 'lower' | 'upper' | 'url' | 'base64' | 'base64url' | 'hex' | 'basic';

/** The secret as a careless provider might echo it. */
export function echoSecret(keyId: string, secret: string, as: SecretEcho): string {
  switch (as) {
    case 'lower': return secret.toLowerCase();
    case 'upper': return secret.toUpperCase();
    case 'url': return encodeURIComponent(secret);
    case 'base64': return Buffer.from(secret).toString('base64');
    case 'base64url': return Buffer.from(secret).toString('base64url');
    case 'hex': return Buffer.from(secret).toString('hex');
    case 'basic': return `Basic ${Buffer.from(`${keyId}:${secret}`).toString('base64')}`;
  }
}

export type AlpacaScenario = {
  name: string;
  keys: { keyId: string; secretKey: string }[];
  account: Record<string, unknown> & { id: string };
  orders: SimOrder[];
  fills: SimFill[];
  /** Non-trade activities (dividends, splits, deposits, withdrawals, fees...); none when absent. */
  activities?: SimNonTrade[];
  /** requests per minute before 429 (Alpaca: 200) */
  rateLimitPerMinute: number;
  faults: {
    /** request numbers (1-based) [from, from+count) answer 429 */
    rateLimitStorm?: { from: number; count: number; retryAfterS?: number };
    /** request numbers [from, from+count) answer `status` */
    outage?: { from: number; count: number; status: number };
    /** from this request number on, the keys are refused (authorisation revoked) */
    revokeFrom?: number;
  };
  quirks: {
    /** page_token compares only the 17-digit millisecond prefix (Alpaca-API #176) */
    prefixPaging?: boolean;
    /** error messages echo the key id (not Alpaca's behaviour: tests our redaction) */
    echoKeyInErrors?: boolean;
    /** 401 and outage messages echo the secret key in each of these forms (tests our redaction of encoded copies) */
    echoSecretAs?: SecretEcho[];
  };
};

export type LoggedRequest = { n: number; method: string; path: string; query: string; stateChanging: boolean; status: number };

export type AlpacaSim = {
  url: string;
  port: number;
  scenario: AlpacaScenario;
  requests: LoggedRequest[];
  revoke(): void;
  /** Holds every answer from now on until released (a broker that is slow mid-sync); `arrived` resolves once a request is waiting. */
  hold(): { arrived: Promise<void>; release(): void };
  close(): Promise<void>;
};

// ---------------------------------------------------------------------------------------------
// Scenario data

/** A deterministic UUID v4-shaped id from a number. */
export function simUuid(n: number, salt = 0): string {
  const h = (n * 2654435761 + salt * 40503) >>> 0;
  const hex = (h.toString(16).padStart(8, '0') + n.toString(16).padStart(12, '0') + salt.toString(16).padStart(12, '0')).slice(0, 32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const NY = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/New_York', hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
});

/** `YYYYMMDDHHMMSSmmm` in New York time: the prefix Alpaca's activity ids carry. */
export function nyPrefix(iso: string): string {
  const d = new Date(iso);
  const p = Object.fromEntries(NY.formatToParts(d).map((x) => [x.type, x.value]));
  return `${p.year}${p.month}${p.day}${p.hour}${p.minute}${p.second}${String(d.getUTCMilliseconds()).padStart(3, '0')}`;
}

/** Alpaca-style timestamp with 6 to 9 fractional digits. */
function stamp(ms: number, extra: number): string {
  const iso = new Date(ms).toISOString();
  const frac = String(extra).padStart(3 + (extra % 4), '0').slice(0, 3 + (extra % 4));
  return `${iso.slice(0, 23)}${frac}Z`;
}

const DAY_START = Date.parse('2026-03-13T13:30:00Z');

type Builder = { orders: SimOrder[]; fills: SimFill[]; n: number };

function addOrder(b: Builder, o: Partial<SimOrder> & Pick<SimOrder, 'symbol' | 'side' | 'qty'>, atMs: number): SimOrder {
  b.n++;
  const order: SimOrder = {
    id: simUuid(b.n, 1), client_order_id: o.client_order_id ?? simUuid(b.n, 2), submitted_at: stamp(atMs, b.n),
    status: 'filled', replaces: null, replaced_by: null, parent: null, order_class: '', ...o,
  };
  b.orders.push(order);
  return order;
}

function addFills(b: Builder, order: SimOrder, parts: { qty: string; price: string; atMs: number }[]): void {
  let cum = 0;
  const total = Number(order.qty);
  for (const p of parts) {
    b.n++;
    cum += Number(p.qty);
    const time = stamp(p.atMs, b.n);
    b.fills.push({
      id: `${nyPrefix(time)}::${simUuid(b.n, 3)}`, order_id: order.id, transaction_time: time, qty: p.qty, price: p.price,
      cum_qty: String(cum), leaves_qty: String(total - cum), type: cum === total ? 'fill' : 'partial_fill',
    });
  }
  if (cum !== total) order.status = cum === 0 ? order.status : 'partially_filled';
}

/** Link tokens as src/ledger/ids.ts issues them: `lt_` + 24 lower-case Crockford base32. */
export function simLinkToken(n: number): string {
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
  let s = '';
  for (let i = 0, x = n * 7919 + 12345; i < 24; i++, x = Math.floor(x / 3) + i * 31) s += alphabet[x % 32];
  return `lt_${s}`;
}

/**
 * A trading day: a partially filled order with a link token (two partials in one millisecond,
 * listed out of cumulative order), a replaced order (the replacement has Alpaca's own client id),
 * a bracket order whose take-profit leg fills, 120 single fills of which five share one
 * millisecond around index 99 (the edge of a 100-row page), and one order filled in 12 partials
 * within a single millisecond (a whole page of one millisecond when pages are 10 rows).
 */
export function dayOfFills(overrides: Partial<AlpacaScenario> = {}): AlpacaScenario {
  const b: Builder = { orders: [], fills: [], n: 0 };
  const t = (s: number): number => DAY_START + s * 1000;

  const linked = addOrder(b, { symbol: 'AAPL', side: 'buy', qty: '10', client_order_id: simLinkToken(1) }, t(1));
  addFills(b, linked, [{ qty: '3', price: '211.36', atMs: t(2) }, { qty: '1', price: '211.40', atMs: t(3) }, { qty: '6', price: '211.38', atMs: t(3) }]);

  const original = addOrder(b, { symbol: 'MSFT', side: 'buy', qty: '5', client_order_id: `${simLinkToken(2)}-a1`, status: 'replaced' }, t(10));
  const replacement = addOrder(b, { symbol: 'MSFT', side: 'buy', qty: '5', replaces: original.id }, t(20));
  original.replaced_by = replacement.id;
  addFills(b, replacement, [{ qty: '2', price: '402.10', atMs: t(21) }, { qty: '3', price: '402.05', atMs: t(22) }]);

  const parent = addOrder(b, { symbol: 'TSLA', side: 'buy', qty: '4', client_order_id: simLinkToken(3), order_class: 'bracket' }, t(30));
  addFills(b, parent, [{ qty: '4', price: '180.00', atMs: t(31) }]);
  const takeProfit = addOrder(b, { symbol: 'TSLA', side: 'sell', qty: '4', parent: parent.id, order_class: 'bracket' }, t(31));
  addFills(b, takeProfit, [{ qty: '4', price: '185.00', atMs: t(600) }]);
  const stopLoss = addOrder(b, { symbol: 'TSLA', side: 'sell', qty: '4', parent: parent.id, order_class: 'bracket', status: 'canceled' }, t(31));
  void stopLoss;

  let clusterAt: number | null = null;
  for (let i = 0; i < 120; i++) {
    // Rows 96..100 (0-based, in id order) share one millisecond: they straddle a 100-row page edge.
    const sameMs = b.fills.length >= 96 && b.fills.length <= 100;
    if (sameMs) clusterAt ??= t(700 + i * 3);
    const at = sameMs ? (clusterAt as number) : t(700 + i * 3);
    const o = addOrder(b, { symbol: i % 2 ? 'SPY' : 'QQQ', side: i % 3 ? 'buy' : 'sell', qty: '1' }, at - 500);
    addFills(b, o, [{ qty: '1', price: `${500 + (i % 7)}.25`, atMs: at }]);
  }

  const big = addOrder(b, { symbol: 'NVDA', side: 'buy', qty: '12', client_order_id: simLinkToken(4) }, t(2000));
  addFills(b, big, Array.from({ length: 12 }, () => ({ qty: '1', price: '120.5', atMs: t(2001) })));

  return {
    name: 'day',
    keys: [{ keyId: 'PKSIMULATOR0000000001', secretKey: 'sim-secret-0123456789abcdefghijklmnopqrstu' }],
    account: { id: simUuid(999, 9), account_number: 'PA3SIMULATED1', status: 'ACTIVE', currency: 'USD', cash: '52310.18', equity: '100412.55' },
    orders: b.orders,
    fills: b.fills,
    rateLimitPerMinute: 200,
    faults: {},
    quirks: {},
    ...overrides,
  };
}

/**
 * An active account's year: `count` fills (default 50,000) over about 250 trading days, each order
 * filled in one to four partials, every tenth order carrying a link token (simLinkToken(order n)).
 */
export function yearOfFills(count = 50_000, overrides: Partial<AlpacaScenario> = {}): AlpacaScenario {
  const b: Builder = { orders: [], fills: [], n: 0 };
  const symbols = ['AAPL', 'MSFT', 'SPY', 'QQQ', 'NVDA', 'TSLA', 'AMZN', 'META'];
  const start = Date.parse('2025-03-03T14:30:00Z');
  const perDay = Math.max(1, Math.ceil(count / 250));
  for (let orderNo = 0; b.fills.length < count; orderNo++) {
    const dayNo = Math.floor(b.fills.length / perDay);
    const at = start + Math.floor((dayNo * 7) / 5) * 86_400_000 + (b.fills.length % perDay) * Math.floor(23_400_000 / perDay);
    const parts = Math.min(1 + (orderNo % 4), count - b.fills.length);
    const o = addOrder(b, {
      symbol: symbols[orderNo % symbols.length] as string, side: orderNo % 3 ? 'buy' : 'sell', qty: String(parts),
      ...(orderNo % 10 === 0 ? { client_order_id: simLinkToken(orderNo) } : {}),
    }, at - 1000);
    addFills(b, o, Array.from({ length: parts }, (_, i) => ({ qty: '1', price: `${100 + (orderNo % 50)}.${i}5`, atMs: at + i * 7 })));
  }
  return { ...dayOfFills(), name: 'year', orders: b.orders, fills: b.fills, rateLimitPerMinute: 1_000_000, ...overrides };
}

/** Named scenarios, for `ledger sim alpaca --scenario NAME` and demos. */
/** A non-trade row booked at `bookedAt` (its id prefix), dated `date`. */
function nonTrade(n: number, bookedAt: string, row: Omit<SimNonTrade, 'id' | 'created_at' | 'status'> & { status?: SimNonTrade['status'] }): SimNonTrade {
  return { id: `${nyPrefix(bookedAt)}::${simUuid(n, 5)}`, created_at: bookedAt, status: 'executed', ...row };
}

/**
 * An account from its opening: a 12,000 USD deposit, 10 XYZ bought at 1,000, a 10:1 forward
 * split of XYZ (two rows, REMOVE and ADD, booked the evening before the ex-date), a 0.25 cash
 * dividend with its withholding as a separate negative DIVNRA row, a sale with its REG fee, a
 * withdrawal, and `interestRows` daily interest credits (default 130: more than a page, five of
 * them sharing one millisecond at the 100-row page edge).
 */
export function accountWithActivities(options: { interestRows?: number } & Partial<AlpacaScenario> = {}): AlpacaScenario {
  const { interestRows = 130, ...overrides } = options;
  const b: Builder = { orders: [], fills: [], n: 0 };
  const buy = addOrder(b, { symbol: 'XYZ', side: 'buy', qty: '10', client_order_id: simLinkToken(41) }, Date.parse('2026-01-06T15:00:00Z'));
  addFills(b, buy, [{ qty: '10', price: '1000', atMs: Date.parse('2026-01-06T15:00:01Z') }]);
  const sell = addOrder(b, { symbol: 'XYZ', side: 'sell', qty: '50' }, Date.parse('2026-01-12T15:00:00Z'));
  addFills(b, sell, [{ qty: '50', price: '103', atMs: Date.parse('2026-01-12T15:00:01Z') }]);
  const activities: SimNonTrade[] = [
    nonTrade(1, '2026-01-05T15:00:00.000Z', { activity_type: 'CSD', date: '2026-01-05', net_amount: '12000', description: 'Cash deposit' }),
    nonTrade(2, '2026-01-07T23:27:00.123Z', { activity_type: 'SPLIT', activity_sub_type: 'FSPLIT', date: '2026-01-08', net_amount: '0', symbol: 'XYZ', cusip: '000000AA1', qty: '-10', price: '1010', description: 'REMOVE' }),
    nonTrade(3, '2026-01-07T23:27:00.123Z', { activity_type: 'SPLIT', activity_sub_type: 'FSPLIT', date: '2026-01-08', net_amount: '0', symbol: 'XYZ', cusip: '000000AB9', qty: '100', price: '101', description: 'ADD' }),
    nonTrade(4, '2026-01-09T12:00:00.000Z', { activity_type: 'DIV', activity_sub_type: 'CDIV', date: '2026-01-09', net_amount: '25.00', symbol: 'XYZ', qty: '100', per_share_amount: '0.25', description: 'Cash DIV @ 0.25, Pos QTY: 100, Rec Date: 2026-01-09' }),
    nonTrade(5, '2026-01-09T12:00:00.000Z', { activity_type: 'DIVNRA', date: '2026-01-09', net_amount: '-3.75', symbol: 'XYZ', qty: '100', per_share_amount: '0.0375', description: 'NRA withholding' }),
    nonTrade(6, '2026-01-12T21:00:00.000Z', { activity_type: 'FEE', activity_sub_type: 'REG', date: '2026-01-12', net_amount: '-0.02', symbol: 'XYZ', description: 'REG fee' }),
    nonTrade(7, '2026-01-13T15:00:00.000Z', { activity_type: 'CSW', date: '2026-01-13', net_amount: '-500', description: 'Cash withdrawal' }),
  ];
  const start = Date.parse('2026-02-02T13:00:00Z');
  for (let i = 0; i < interestRows; i++) {
    const at = new Date(i >= 97 && i <= 101 ? start + 97 * 60_000 : start + i * 60_000).toISOString();
    activities.push(nonTrade(100 + i, at, { activity_type: 'INT', activity_sub_type: 'CDT', date: at.slice(0, 10), net_amount: '0.01', description: 'Interest credit' }));
  }
  return {
    name: 'activities',
    keys: [{ keyId: 'PKSIMULATOR0000000001', secretKey: 'sim-secret-0123456789abcdefghijklmnopqrstu' }],
    account: { id: simUuid(998, 9), account_number: 'PA3SIMULATED2', status: 'ACTIVE', currency: 'USD', cash: '0', equity: '0', created_at: '2026-01-05T14:00:00Z' },
    orders: b.orders, fills: b.fills, activities, rateLimitPerMinute: 200, faults: {}, quirks: {},
    ...overrides,
  };
}

/**
 * The account of issue 39: 10 SPLT bought at 1,000 (2026-02-03), a 10:1 forward split (REMOVE -10
 * and ADD +100, dated the ex-date 2026-02-10), a 25.00 cash dividend (0.25 on 100 shares, dated its
 * pay date 2026-02-20); with `deposit`, a 12,000 deposit first (its history complete), else none
 * (connected mid-life: trade-derived). `rows: false` leaves the split and dividend rows out.
 */
export function splitAccount(options: { deposit: boolean; rows?: boolean }): AlpacaScenario {
  const b: Builder = { orders: [], fills: [], n: 0 };
  const buy = addOrder(b, { symbol: 'SPLT', side: 'buy', qty: '10' }, Date.parse('2026-02-03T15:00:00Z'));
  addFills(b, buy, [{ qty: '10', price: '1000', atMs: Date.parse('2026-02-03T15:00:01Z') }]);
  const activities: SimNonTrade[] = [];
  if (options.deposit) activities.push(nonTrade(1, '2026-02-02T15:00:00.000Z', { activity_type: 'CSD', date: '2026-02-02', net_amount: '12000', description: 'Cash deposit' }));
  if (options.rows !== false) {
    activities.push(
      nonTrade(2, '2026-02-09T23:27:00.123Z', { activity_type: 'SPLIT', activity_sub_type: 'FSPLIT', date: '2026-02-10', net_amount: '0', symbol: 'SPLT', cusip: '000000SP1', qty: '-10', price: '1000', description: 'REMOVE' }),
      nonTrade(3, '2026-02-09T23:27:00.123Z', { activity_type: 'SPLIT', activity_sub_type: 'FSPLIT', date: '2026-02-10', net_amount: '0', symbol: 'SPLT', cusip: '000000SP2', qty: '100', price: '100', description: 'ADD' }),
      nonTrade(4, '2026-02-20T12:00:00.000Z', { activity_type: 'DIV', activity_sub_type: 'CDIV', date: '2026-02-20', net_amount: '25.00', symbol: 'SPLT', qty: '100', per_share_amount: '0.25', description: 'Cash DIV @ 0.25, Pos QTY: 100, Rec Date: 2026-02-13' }),
    );
  }
  return {
    name: options.deposit ? 'split-account-funded' : 'split-account',
    keys: [{ keyId: 'PKSIMULATOR0000000039', secretKey: 'sim-secret-39-0123456789abcdefghijklmnopq' }],
    account: { id: simUuid(939, 9), account_number: 'PA3SIMULATED39', status: 'ACTIVE', currency: 'USD', cash: '0', equity: '0', created_at: '2026-02-02T14:00:00Z' },
    orders: b.orders, fills: b.fills, activities, rateLimitPerMinute: 200, faults: {}, quirks: {},
  };
}

export const ALPACA_SCENARIOS: Record<string, () => AlpacaScenario> = {
  activities: () => accountWithActivities(),
  day: () => dayOfFills(),
  'equal-timestamps': () => dayOfFills({ name: 'equal-timestamps', quirks: { prefixPaging: true } }),
  'rate-limit-storm': () => dayOfFills({ name: 'rate-limit-storm', faults: { rateLimitStorm: { from: 2, count: 5, retryAfterS: 1 } } }),
  outage: () => dayOfFills({ name: 'outage', faults: { outage: { from: 2, count: 6, status: 503 } } }),
  'loses-authorisation': () => dayOfFills({ name: 'loses-authorisation', faults: { revokeFrom: 4 } }),
  year: () => yearOfFills(),
};

// ---------------------------------------------------------------------------------------------
// Server

const TERMINAL = new Set(['filled', 'canceled', 'expired', 'replaced', 'rejected']);
const ORDER_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const ACTIVITY_TIME = /^(\d{4}-\d{2}-\d{2}|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))$/;

type SimIndex = {
  orders: number;
  fills: number;
  orderById: Map<string, SimOrder>;
  fillsByOrder: Map<string, SimFill[]>;
  legsByParent: Map<string, SimOrder[]>;
  fillsById: SimFill[];
};
const indexes = new WeakMap<AlpacaScenario, SimIndex>();

/** Lookups over the scenario, rebuilt when orders or fills are added (tests may append). */
function indexOf(sc: AlpacaScenario): SimIndex {
  const cached = indexes.get(sc);
  if (cached && cached.orders === sc.orders.length && cached.fills === sc.fills.length) return cached;
  const group = <T>(rows: T[], key: (r: T) => string | null): Map<string, T[]> => {
    const m = new Map<string, T[]>();
    for (const r of rows) {
      const k = key(r);
      if (k !== null) m.set(k, [...(m.get(k) ?? []), r]);
    }
    return m;
  };
  const index: SimIndex = {
    orders: sc.orders.length,
    fills: sc.fills.length,
    orderById: new Map(sc.orders.map((o) => [o.id, o])),
    fillsByOrder: group(sc.fills, (f) => f.order_id),
    legsByParent: group(sc.orders, (o) => o.parent),
    fillsById: [...sc.fills].sort((a, b) => (a.id < b.id ? -1 : 1)),
  };
  indexes.set(sc, index);
  return index;
}

function orderView(sc: AlpacaScenario, o: SimOrder, nested: boolean): Record<string, unknown> {
  const fills = indexOf(sc).fillsByOrder.get(o.id) ?? [];
  const filled = fills.reduce((s, f) => s + Number(f.qty), 0);
  const avg = filled === 0 ? null : (fills.reduce((s, f) => s + Number(f.qty) * Number(f.price), 0) / filled).toFixed(4).replace(/\.?0+$/, '');
  const legs = indexOf(sc).legsByParent.get(o.id) ?? [];
  return {
    id: o.id, client_order_id: o.client_order_id, created_at: o.submitted_at, updated_at: o.submitted_at, submitted_at: o.submitted_at,
    filled_at: o.status === 'filled' ? (fills[fills.length - 1]?.transaction_time ?? null) : null,
    expired_at: null, canceled_at: null, failed_at: null, replaced_at: o.replaced_by ? o.submitted_at : null,
    replaced_by: o.replaced_by, replaces: o.replaces, asset_id: simUuid(o.symbol.length, 7), symbol: o.symbol, asset_class: 'us_equity',
    notional: null, qty: o.qty, filled_qty: String(filled), filled_avg_price: avg, order_class: o.order_class, order_type: 'market', type: 'market',
    side: o.side, position_intent: o.side === 'buy' ? 'buy_to_open' : 'sell_to_close', time_in_force: 'day', limit_price: null, stop_price: null,
    status: o.status, extended_hours: false, trail_percent: null, trail_price: null, hwm: null,
    legs: nested && legs.length > 0 ? legs.map((l) => orderView(sc, l, false)) : null,
  };
}

function fillView(sc: AlpacaScenario, f: SimFill): Record<string, unknown> {
  const o = indexOf(sc).orderById.get(f.order_id) as SimOrder;
  return {
    id: f.id, activity_type: 'FILL', transaction_time: f.transaction_time, type: f.type, price: f.price, qty: f.qty, side: o.side,
    symbol: o.symbol, leaves_qty: f.leaves_qty, cum_qty: f.cum_qty, order_id: f.order_id, order_status: f.type === 'fill' ? 'filled' : 'partially_filled',
  };
}

function positionsView(sc: AlpacaScenario): Record<string, unknown>[] {
  const net = new Map<string, number>();
  for (const f of sc.fills) {
    const o = indexOf(sc).orderById.get(f.order_id) as SimOrder;
    net.set(o.symbol, (net.get(o.symbol) ?? 0) + (o.side === 'buy' ? 1 : -1) * Number(f.qty));
  }
  for (const a of sc.activities ?? []) {
    if (a.status !== 'canceled' && a.symbol !== undefined && a.qty !== undefined && (a.activity_type === 'SPLIT' || a.activity_sub_type === 'SDIV')) {
      net.set(a.symbol, (net.get(a.symbol) ?? 0) + Number(a.qty));
    }
  }
  return [...net].filter(([, q]) => q !== 0).map(([symbol, q]) => ({
    asset_id: simUuid(symbol.length, 7), symbol, exchange: 'NASDAQ', asset_class: 'us_equity', asset_marginable: true, qty: String(q),
    qty_available: String(q), avg_entry_price: '100', side: q > 0 ? 'long' : 'short', market_value: String(q * 100), cost_basis: String(q * 100),
    unrealized_pl: '0', unrealized_plpc: '0', unrealized_intraday_pl: '0', unrealized_intraday_plpc: '0', current_price: '100', lastday_price: '100', change_today: '0',
  }));
}

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

const err = (status: number, code: number, message: string): Answer => ({ status, body: { code, message } });

function listOrders(sc: AlpacaScenario, q: URLSearchParams): Answer {
  const status = q.get('status') ?? 'open';
  const limit = Number(q.get('limit') ?? '50');
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) return err(422, 40010001, 'limit must be between 1 and 500');
  for (const k of ['after', 'until'] as const) {
    const v = q.get(k);
    if (v !== null && !ORDER_TIME.test(v)) return err(422, 40010001, `invalid format for ${k}; format: '2006-01-02T15:04:05Z'`);
  }
  const nested = q.get('nested') === 'true';
  const asc = q.get('direction') === 'asc';
  const after = q.get('after');
  const until = q.get('until');
  const symbols = q.get('symbols')?.split(',');
  let rows = sc.orders.filter((o) => !(nested && o.parent !== null));
  rows = rows.filter((o) => (status === 'all' ? true : status === 'closed' ? TERMINAL.has(o.status) : !TERMINAL.has(o.status)));
  if (after !== null) rows = rows.filter((o) => Date.parse(o.submitted_at) > Date.parse(after));
  if (until !== null) rows = rows.filter((o) => Date.parse(o.submitted_at) < Date.parse(until));
  if (symbols) rows = rows.filter((o) => symbols.includes(o.symbol));
  if (q.get('side')) rows = rows.filter((o) => o.side === q.get('side'));
  const key = (o: SimOrder): string => `${o.submitted_at}|${o.id}`;
  rows.sort((a, b) => (key(a) < key(b) ? -1 : 1));
  const afterId = q.get('after_order_id');
  const beforeId = q.get('before_order_id');
  const anchorOf = (id: string): SimOrder | undefined => indexOf(sc).orderById.get(id);
  if (afterId !== null) {
    const a = anchorOf(afterId);
    if (!a) return err(422, 40010001, 'after_order_id not found');
    rows = rows.filter((o) => key(o) > key(a));
  }
  if (beforeId !== null) {
    const a = anchorOf(beforeId);
    if (!a) return err(422, 40010001, 'before_order_id not found');
    rows = rows.filter((o) => key(o) < key(a));
  }
  if (!asc) rows.reverse();
  return { status: 200, body: rows.slice(0, limit).map((o) => orderView(sc, o, nested)) };
}

/** The non-trade rows of `types` (all when null), in id order, as Alpaca lists them. */
function listNonTrade(sc: AlpacaScenario, q: URLSearchParams, types: string[] | null): Answer {
  const rows = [...(sc.activities ?? [])].filter((a) => types === null || types.includes(a.activity_type)).sort((a, b) => (a.id < b.id ? -1 : 1));
  return listRows(q, rows, (a) => a.created_at, (a) => ({ ...a }), sc.quirks.prefixPaging === true);
}

function listFills(sc: AlpacaScenario, q: URLSearchParams): Answer {
  return listRows(q, indexOf(sc).fillsById, (f) => f.transaction_time, (f) => fillView(sc, f), sc.quirks.prefixPaging === true);
}

/** Activity paging (brokers.md §1.7): `date` (by the id's New York date), after/until, page_token, direction, page_size. */
function listRows<T extends { id: string }>(q: URLSearchParams, all: T[], timeOf: (r: T) => string, view: (r: T) => unknown, prefixPaging: boolean): Answer {
  const date = q.get('date');
  for (const k of ['date', 'after', 'until'] as const) {
    const v = q.get(k);
    if (v !== null && !ACTIVITY_TIME.test(v)) return err(422, 40010001, `invalid format for ${k}`);
  }
  if (date !== null && (q.has('after') || q.has('until'))) return err(422, 40010001, 'date cannot be combined with after or until');
  const pageSizeText = q.get('page_size');
  const pageSize = pageSizeText === null ? (date !== null ? Infinity : 100) : Number(pageSizeText);
  if (!(pageSize >= 1) || (date === null && pageSize > 100)) return err(422, 40010001, 'page_size must be between 1 and 100');
  const asc = q.get('direction') === 'asc';
  let rows = all;
  if (date !== null) rows = rows.filter((f) => f.id.startsWith(date.slice(0, 10).replace(/-/g, '')));
  const after = q.get('after');
  const until = q.get('until');
  if (after !== null) rows = rows.filter((f) => Date.parse(timeOf(f)) > Date.parse(after));
  if (until !== null) rows = rows.filter((f) => Date.parse(timeOf(f)) < Date.parse(until));
  const token = q.get('page_token');
  if (token !== null) {
    const cut = (id: string): string => (prefixPaging ? id.slice(0, 17) : id);
    rows = rows.filter((f) => (asc ? cut(f.id) > cut(token) : cut(f.id) < cut(token)));
  }
  if (!asc) rows = [...rows].reverse();
  return { status: 200, body: rows.slice(0, pageSize).map(view) };
}

/** Alpaca's non-trade activity types (reference brokers.md §1.7); FILL is the trade type. */
const NON_TRADE_TYPES = new Set(['ACATC', 'ACATS', 'CFEE', 'CSD', 'CSW', 'DIV', 'DIVCGL', 'DIVCGS', 'DIVFEE', 'DIVFT', 'DIVNRA', 'DIVROC', 'DIVTW',
  'DIVTXEX', 'FEE', 'INT', 'INTNRA', 'INTTW', 'JNL', 'JNLC', 'JNLS', 'MA', 'NC', 'OPASN', 'OPCA', 'OPCSH', 'OPEXC', 'OPEXP', 'OPTRD', 'PTC', 'PTR',
  'REORG', 'SPIN', 'SPLIT', 'CGD', 'REO', 'VOF']);

function route(sc: AlpacaScenario, path: string, q: URLSearchParams): Answer {
  if (path === '/v2/account') return { status: 200, body: { ...sc.account } };
  if (path === '/v2/orders') return listOrders(sc, q);
  if (path === '/v2/positions') return { status: 200, body: positionsView(sc) };
  if (path === '/v2/account/activities/FILL') return listFills(sc, q);
  if (path === '/v2/account/activities') {
    const category = q.get('category');
    const types = q.get('activity_types');
    if (category !== null && types !== null) return err(422, 40010001, 'category cannot be combined with activity_types');
    if (category === 'non_trade_activity') return listNonTrade(sc, q, null);
    if (category === 'trade_activity' || types === 'FILL') return listFills(sc, q);
    if (category !== null) return err(422, 40010001, `invalid category: ${category}`);
    if (types === null) return err(422, 40010001, 'simulator: name activity_types or category (mixed listings are not simulated)');
    const list = types.split(',');
    const bad = list.find((t) => !NON_TRADE_TYPES.has(t));
    return bad ? err(422, 40010001, `invalid activity type: ${bad}`) : listNonTrade(sc, q, list);
  }
  if (path.startsWith('/v2/account/activities/')) {
    const type = path.split('/').pop() as string;
    return NON_TRADE_TYPES.has(type) ? listNonTrade(sc, q, [type]) : err(422, 40010001, `invalid activity type: ${type}`);
  }
  if (path === '/v2/orders:by_client_order_id') {
    const o = sc.orders.find((x) => x.client_order_id === q.get('client_order_id'));
    return o ? { status: 200, body: orderView(sc, o, q.get('nested') === 'true') } : err(404, 40410000, 'order not found');
  }
  const m = /^\/v2\/orders\/([^/]+)$/.exec(path);
  if (m) {
    const o = indexOf(sc).orderById.get(decodeURIComponent(m[1] as string));
    return o ? { status: 200, body: orderView(sc, o, q.get('nested') === 'true') } : err(404, 40410000, 'order not found');
  }
  return err(404, 40410000, 'endpoint not found');
}

export async function startAlpacaSim(options: { scenario?: AlpacaScenario; port?: number } = {}): Promise<AlpacaSim> {
  const scenario = options.scenario ?? dayOfFills();
  const requests: LoggedRequest[] = [];
  let revoked = false;
  let held: { answers: Promise<void>; arrive(): void } | null = null;
  let windowStart = Date.now();
  let windowCount = 0;

  const echoed = (keyId: unknown, secret: unknown): string => {
    const forms = scenario.quirks.echoSecretAs ?? [];
    return forms.length === 0 ? '' : ` (got ${forms.map((as) => echoSecret(String(keyId), String(secret), as)).join(' ')})`;
  };

  const answer = (req: IncomingMessage, n: number, path: string, q: URLSearchParams): Answer => {
    const keyId = req.headers['apca-api-key-id'];
    const secret = req.headers['apca-api-secret-key'];
    const f = scenario.faults;
    const known = scenario.keys.some((k) => k.keyId === keyId && k.secretKey === secret);
    if (!known || revoked || (f.revokeFrom !== undefined && n >= f.revokeFrom)) {
      const suffix = scenario.quirks.echoKeyInErrors && typeof keyId === 'string' ? ` for key ${keyId} / ${String(secret)}` : '';
      return err(401, 40110000, `request is not authorized${suffix}${echoed(keyId, secret)}`);
    }
    const now = Date.now();
    if (now - windowStart >= 60_000) {
      windowStart = now;
      windowCount = 0;
    }
    windowCount++;
    const reset = String(Math.ceil((windowStart + 60_000) / 1000));
    const rate = { 'X-Ratelimit-Limit': String(scenario.rateLimitPerMinute), 'X-Ratelimit-Remaining': String(Math.max(0, scenario.rateLimitPerMinute - windowCount)), 'X-Ratelimit-Reset': reset };
    const storm = f.rateLimitStorm;
    if (storm && n >= storm.from && n < storm.from + storm.count) {
      const headers: Record<string, string> = { ...rate, 'X-Ratelimit-Remaining': '0', 'X-Ratelimit-Reset': String(Math.ceil(now / 1000)) };
      if (storm.retryAfterS !== undefined) headers['Retry-After'] = String(storm.retryAfterS);
      return { ...err(429, 42910000, 'rate limit exceeded'), headers };
    }
    if (windowCount > scenario.rateLimitPerMinute) return { ...err(429, 42910000, 'rate limit exceeded'), headers: rate };
    const out = f.outage;
    if (out && n >= out.from && n < out.from + out.count) return { status: out.status, body: { code: 50010000, message: `internal server error${echoed(keyId, secret)}` }, headers: rate };
    if (req.method !== 'GET') return { ...err(403, 40310000, 'simulator: requests that change state are recorded and refused'), headers: rate };
    return { ...route(scenario, path, q), headers: rate };
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    req.resume();
    req.on('end', async () => {
      if (held) {
        held.arrive();
        await held.answers;
      }
      const url = new URL(req.url ?? '/', 'http://sim');
      const n = requests.length + 1;
      const a = answer(req, n, url.pathname, url.searchParams);
      requests.push({ n, method: req.method ?? '', path: url.pathname, query: url.search.slice(1), stateChanging: req.method !== 'GET', status: a.status });
      const body = JSON.stringify(a.body);
      res.writeHead(a.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...a.headers });
      res.end(body);
    });
  };

  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    scenario,
    requests,
    revoke: () => {
      revoked = true;
    },
    hold: () => {
      let release = (): void => {};
      let arrive = (): void => {};
      const arrived = new Promise<void>((resolve) => {
        arrive = resolve;
      });
      const answers = new Promise<void>((resolve) => {
        release = () => {
          held = null;
          resolve();
        };
      });
      held = { answers, arrive };
      return { arrived, release };
    },
    close: () => new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((e) => (e ? reject(e) : resolve()));
    }),
  };
}
