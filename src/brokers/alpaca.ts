// Alpaca Trading API v2 client, read-only by construction.
// It owns the requests the ledger makes to Alpaca (account, orders with `nested`, FILL and
// non-trade activities, positions), their paging and its traps (reference brokers.md §1.5, §1.7,
// §4.1), and the shapes it accepts back. Every request goes through the private `get()`: this file
// can send nothing but GET, and it has no function for orders, cancels, replacements or transfers.

import { requestJson, httpPolicy, numbersAsText, type BrokerError, type HttpPolicy, type Result } from './http.ts';
import type { JsonValue } from '../core/json.ts';
import { isJsonObject } from '../core/json.ts';

export type AlpacaEnvironment = 'paper' | 'live';

export const ALPACA_TRADING_HOSTS: Record<AlpacaEnvironment, string> = {
  paper: 'https://paper-api.alpaca.markets',
  live: 'https://api.alpaca.markets',
};

export type AlpacaCredentials = { keyId: string; secretKey: string };

export type AlpacaClientOptions = {
  credentials: AlpacaCredentials;
  environment: AlpacaEnvironment;
  /** Overrides both hosts (LEDGER_ALPACA_TRADING_URL): simulators and self-hosted proxies. */
  baseUrl?: string;
  http?: Partial<HttpPolicy>;
};

/** The account as Alpaca reports it. `account_number` is here but must never reach a record. */
export type AlpacaAccount = { id: string; status: string; currency: string; account_number?: string } & Record<string, unknown>;

export type AlpacaOrder = {
  id: string;
  client_order_id: string;
  created_at: string;
  submitted_at: string | null;
  symbol: string;
  side: string;
  status: string;
  qty: string | null;
  filled_qty: string;
  filled_avg_price: string | null;
  replaces: string | null;
  replaced_by: string | null;
  legs: AlpacaOrder[] | null;
} & Record<string, unknown>;

export type AlpacaFillActivity = {
  id: string;
  activity_type: 'FILL';
  transaction_time: string;
  type: string;
  price: string;
  qty: string;
  side: string;
  symbol: string;
  leaves_qty: string | null;
  cum_qty: string | null;
  /** absent on old rows (Alpaca-API issue #94) */
  order_id: string | null;
  order_status: string | null;
} & Record<string, unknown>;

/** A non-trade activity row (every activity_type but FILL), fields as Alpaca writes them. */
export type AlpacaNonTradeActivity = {
  id: string;
  activity_type: string;
  activity_sub_type?: string | null;
  date?: string | null;
  created_at?: string | null;
  net_amount?: string | null;
  symbol?: string | null;
  qty?: string | null;
  price?: string | null;
  per_share_amount?: string | null;
  status?: string | null;
} & Record<string, unknown>;

export type AlpacaPosition = { symbol: string; qty: string; side: string; avg_entry_price: string } & Record<string, unknown>;

export const ORDERS_PAGE_LIMIT = 500;
export const ACTIVITIES_PAGE_SIZE = 100;

/** `after`/`until` for orders must be `YYYY-MM-DDTHH:MM:SSZ` (other ISO forms are refused with 422). */
export function alpacaTimestamp(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

type Obj = Record<string, unknown>;
const isStr = (v: unknown): v is string => typeof v === 'string';
const isStrOrNull = (v: unknown): boolean => v === null || v === undefined || typeof v === 'string';

function badShape(what: string, field: string): BrokerError {
  return { kind: 'provider', message: `Alpaca ${what}: unexpected shape (${field})` };
}

function asOrder(v: unknown): AlpacaOrder | string {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not an object';
  const o = v as Obj;
  for (const f of ['id', 'client_order_id', 'created_at', 'side', 'status', 'filled_qty'] as const) if (!isStr(o[f])) return f;
  if (!isStr(o.symbol) && o.symbol !== '') return 'symbol';
  for (const f of ['submitted_at', 'qty', 'filled_avg_price', 'replaces', 'replaced_by'] as const) if (!isStrOrNull(o[f])) return f;
  const legs: AlpacaOrder[] = [];
  if (Array.isArray(o.legs)) {
    for (const leg of o.legs) {
      const l = asOrder(leg);
      if (typeof l === 'string') return `legs.${l}`;
      legs.push(l);
    }
  } else if (o.legs !== null && o.legs !== undefined) return 'legs';
  return {
    ...o,
    submitted_at: (o.submitted_at as string | null | undefined) ?? null,
    qty: (o.qty as string | null | undefined) ?? null,
    filled_avg_price: (o.filled_avg_price as string | null | undefined) ?? null,
    replaces: (o.replaces as string | null | undefined) ?? null,
    replaced_by: (o.replaced_by as string | null | undefined) ?? null,
    legs: Array.isArray(o.legs) ? legs : null,
  } as AlpacaOrder;
}

function asFill(v: unknown): AlpacaFillActivity | string {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not an object';
  const a = v as Obj;
  if (a.activity_type !== 'FILL') return 'activity_type';
  for (const f of ['id', 'transaction_time', 'type', 'price', 'qty', 'side', 'symbol'] as const) if (!isStr(a[f])) return f;
  for (const f of ['leaves_qty', 'cum_qty', 'order_id', 'order_status'] as const) if (!isStrOrNull(a[f])) return f;
  return {
    ...a,
    leaves_qty: (a.leaves_qty as string | null | undefined) ?? null,
    cum_qty: (a.cum_qty as string | null | undefined) ?? null,
    order_id: (a.order_id as string | null | undefined) ?? null,
    order_status: (a.order_status as string | null | undefined) ?? null,
  } as AlpacaFillActivity;
}

/** A non-trade activity: an id and a type other than FILL; the rest is kept as reported (activity.ts reads it). */
function asNonTrade(v: unknown): AlpacaNonTradeActivity | string {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not an object';
  const a = v as Obj;
  if (!isStr(a.id) || a.id === '') return 'id';
  if (!isStr(a.activity_type) || a.activity_type === '' || a.activity_type === 'FILL') return 'activity_type';
  for (const f of ['activity_sub_type', 'date', 'created_at', 'net_amount', 'symbol', 'qty', 'price', 'per_share_amount', 'status'] as const) {
    if (!isStrOrNull(a[f])) return f;
  }
  return a as AlpacaNonTradeActivity;
}

function asPosition(v: unknown): AlpacaPosition | string {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not an object';
  const p = v as Obj;
  for (const f of ['symbol', 'qty', 'side', 'avg_entry_price'] as const) if (!isStr(p[f])) return f;
  return p as AlpacaPosition;
}

function asArrayOf<T>(what: string, body: unknown, check: (v: unknown) => T | string): Result<T[]> {
  if (!Array.isArray(body)) return { ok: false, error: badShape(what, 'not an array') };
  const out: T[] = [];
  for (let i = 0; i < body.length; i++) {
    const r = check(body[i]);
    if (typeof r === 'string') return { ok: false, error: badShape(what, `[${i}].${r}`) };
    out.push(r);
  }
  return { ok: true, value: out };
}

/** The 17-digit prefix of an activity id: its execution time in New York, to the millisecond. */
export function activityPrefix(id: string): string {
  const i = id.indexOf('::');
  return i < 0 ? id : id.slice(0, i);
}

/** `YYYY-MM-DD` (New York trading date) of an activity id prefix. */
function activityDate(prefix: string): string {
  return `${prefix.slice(0, 4)}-${prefix.slice(4, 6)}-${prefix.slice(6, 8)}`;
}

export type OrdersPage = { orders: AlpacaOrder[]; /** pass as `after` to resume */ resumeAfter: string | null };
export type FillsPage = { fills: AlpacaFillActivity[]; /** pass as `pageToken` to resume */ resumeToken: string | null };
export type NonTradePage = { activities: AlpacaNonTradeActivity[] };

export class AlpacaClient {
  readonly baseUrl: string;
  readonly #credentials: AlpacaCredentials;
  readonly #policy: HttpPolicy;

  constructor(options: AlpacaClientOptions) {
    this.baseUrl = (options.baseUrl ?? ALPACA_TRADING_HOSTS[options.environment]).replace(/\/+$/, '');
    this.#credentials = { ...options.credentials };
    this.#policy = httpPolicy(options.http);
  }

  /** The only request this client can make. */
  async #get(path: string, query: Record<string, string | undefined> = {}): Promise<Result<unknown>> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
    const qs = params.toString();
    const { keyId, secretKey } = this.#credentials;
    const r = await requestJson(
      {
        method: 'GET',
        url: `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`,
        headers: { 'APCA-API-KEY-ID': keyId, 'APCA-API-SECRET-KEY': secretKey, accept: 'application/json' },
        label: `Alpaca GET ${path}`,
        secrets: [keyId, secretKey],
        errorCode: alpacaErrorCode,
      },
      this.#policy,
    );
    return r.ok ? { ok: true, value: numbersAsText(r.value.body) } : r;
  }

  /** `GET /v2/account`: also the credential check (a refusal is kind `auth`, anything else `provider`). */
  async account(): Promise<Result<AlpacaAccount>> {
    const r = await this.#get('/v2/account');
    if (!r.ok) return r;
    const a = r.value as Obj;
    if (typeof a !== 'object' || a === null || !isStr(a.id) || !isStr(a.status)) {
      return { ok: false, error: badShape('account', 'id/status') };
    }
    return { ok: true, value: { ...a, currency: isStr(a.currency) ? a.currency : 'USD' } as AlpacaAccount };
  }

  async order(orderId: string): Promise<Result<AlpacaOrder>> {
    const r = await this.#get(`/v2/orders/${encodeURIComponent(orderId)}`, { nested: 'true' });
    if (!r.ok) return r;
    const o = asOrder(r.value);
    return typeof o === 'string' ? { ok: false, error: badShape('order', o) } : { ok: true, value: o };
  }

  async positions(): Promise<Result<AlpacaPosition[]>> {
    const r = await this.#get('/v2/positions');
    return r.ok ? asArrayOf('positions', r.value, asPosition) : r;
  }

  /**
   * Every order (any status) submitted after `after`, oldest first, each once. Alpaca has no
   * cursor token: pages walk forward on `after` = the last row's submission second minus one, so
   * orders sharing the last row's timestamp are read again and dropped by id (brokers.md §1.5).
   * Should one second hold a whole page, the walk steps past it with `after_order_id`.
   */
  async *orders(options: { after?: string; limit?: number } = {}): AsyncGenerator<Result<OrdersPage>> {
    const limit = options.limit ?? ORDERS_PAGE_LIMIT;
    const seen = new Map<string, number>();
    let after: string | undefined = options.after;
    let afterOrderId: string | undefined;
    for (;;) {
      const r = await this.#get('/v2/orders', {
        status: 'all', direction: 'asc', nested: 'true', limit: String(limit),
        ...(afterOrderId !== undefined ? { after_order_id: afterOrderId } : { after }),
      });
      if (!r.ok) return yield r;
      const page = asArrayOf('orders', r.value, asOrder);
      if (!page.ok) return yield page;
      const fresh = page.value.filter((o) => !seen.has(o.id));
      for (const o of fresh) seen.set(o.id, submittedMs(o));
      const last = page.value[page.value.length - 1];
      const resumeAfter = last ? alpacaTimestamp(submittedMs(last) - 1000) : (after ?? null);
      if (page.value.length < limit || !last) return yield { ok: true, value: { orders: fresh, resumeAfter } };
      yield { ok: true, value: { orders: fresh, resumeAfter } };
      if (fresh.length === 0) {
        afterOrderId = last.id;
      } else {
        afterOrderId = undefined;
        after = resumeAfter ?? undefined;
      }
      const floor = submittedMs(last) - 2000;
      for (const [id, ms] of seen) if (ms < floor) seen.delete(id);
    }
  }

  /**
   * Every FILL activity after `pageToken` (or created after `after`), oldest first, each once.
   * Paging without `date` can skip rows sharing the last row's millisecond (Alpaca-API #176), so
   * each next page starts after the last row of an *earlier* millisecond and repeated rows are
   * dropped by id. A page that is one millisecond throughout is re-read whole with `date`.
   */
  async *fills(options: { after?: string; pageToken?: string; pageSize?: number } = {}): AsyncGenerator<Result<FillsPage>> {
    for await (const page of this.#activities('/v2/account/activities/FILL', {}, asFill, options)) {
      yield page.ok ? { ok: true, value: { fills: page.value.rows, resumeToken: page.value.resumeToken } } : page;
    }
  }

  /**
   * Every non-trade activity (dividends, splits, deposits, withdrawals, fees, ...) created after
   * `after` (a date or RFC 3339), oldest first, each once, paged as `fills` pages.
   */
  async *nonTradeActivities(options: { after?: string; pageSize?: number } = {}): AsyncGenerator<Result<NonTradePage>> {
    for await (const page of this.#activities('/v2/account/activities', { category: 'non_trade_activity' }, asNonTrade, options)) {
      yield page.ok ? { ok: true, value: { activities: page.value.rows } } : page;
    }
  }

  async *#activities<T extends { id: string }>(
    path: string, base: Record<string, string>, check: (v: unknown) => T | string,
    options: { after?: string; pageToken?: string; pageSize?: number },
  ): AsyncGenerator<Result<{ rows: T[]; resumeToken: string | null }>> {
    const pageSize = options.pageSize ?? ACTIVITIES_PAGE_SIZE;
    const seen = new Set<string>();
    let token = options.pageToken;
    const keep = (rows: T[]): T[] => {
      const fresh = rows.filter((a) => !seen.has(a.id));
      for (const a of fresh) seen.add(a.id);
      return fresh;
    };
    for (;;) {
      const r = await this.#get(path, { ...base, direction: 'asc', page_size: String(pageSize), after: options.after, page_token: token });
      if (!r.ok) return yield r;
      const page = asArrayOf('activities', r.value, check);
      if (!page.ok) return yield page;
      const rows = page.value;
      const last = rows[rows.length - 1];
      if (rows.length < pageSize || !last) {
        const safe = safeToken(rows) ?? token ?? null;
        return yield { ok: true, value: { rows: keep(rows), resumeToken: safe } };
      }
      let fresh = keep(rows);
      let next = safeToken(rows);
      if (next === undefined) {
        const day = await this.#get(path, { ...base, date: activityDate(activityPrefix(last.id)), direction: 'asc' });
        if (!day.ok) return yield day;
        const dayRows = asArrayOf('activities', day.value, check);
        if (!dayRows.ok) return yield dayRows;
        fresh = fresh.concat(keep(dayRows.value.filter((a) => token === undefined || a.id > token)));
        next = dayRows.value.reduce((m, a) => (a.id > m ? a.id : m), last.id);
      }
      yield { ok: true, value: { rows: fresh, resumeToken: next } };
      token = next;
      const floor = activityPrefix(token);
      for (const id of seen) if (activityPrefix(id) < floor) seen.delete(id);
    }
  }
}

/** The last row of `rows` whose millisecond prefix is earlier than the final row's; undefined when none. */
function safeToken(rows: readonly { id: string }[]): string | undefined {
  const last = rows[rows.length - 1];
  if (!last) return undefined;
  const lastPrefix = activityPrefix(last.id);
  for (let i = rows.length - 2; i >= 0; i--) {
    const id = (rows[i] as { id: string }).id;
    if (activityPrefix(id) < lastPrefix) return id;
  }
  return undefined;
}

function submittedMs(o: AlpacaOrder): number {
  const t = Date.parse(o.submitted_at ?? o.created_at);
  return Number.isFinite(t) ? t : 0;
}

function alpacaErrorCode(body: JsonValue | null): string | undefined {
  if (!isJsonObject(body ?? undefined)) return undefined;
  const b = numbersAsText(body as JsonValue) as Obj;
  return isStr(b.code) ? b.code : undefined;
}

export type CredentialCheck =
  | { ok: true; account: { id: string; status: string; currency: string } }
  | { ok: false; reason: 'invalid_credentials'; param: 'api_key_id'; message: string }
  | { ok: false; reason: 'provider_error'; message: string };

/**
 * Checks a key pair by reading the account before anything is stored: a refusal by Alpaca is
 * `invalid_credentials` (the route's 400 naming the field), anything else (unreachable, 5xx,
 * timeout, rate limited, a malformed answer) is `provider_error` (502). The account returned
 * holds no account number.
 */
export async function checkAlpacaCredentials(options: AlpacaClientOptions): Promise<CredentialCheck> {
  const r = await new AlpacaClient(options).account();
  if (r.ok) return { ok: true, account: { id: r.value.id, status: r.value.status, currency: r.value.currency } };
  if (r.error.kind !== 'auth') return { ok: false, reason: 'provider_error', message: r.error.message };
  const prefix = options.credentials.keyId.slice(0, 2);
  const hint =
    options.baseUrl === undefined && ((prefix === 'PK' && options.environment === 'live') || (prefix === 'AK' && options.environment === 'paper'))
      ? ` (key ids starting ${prefix} are usually ${prefix === 'PK' ? 'paper' : 'live'} keys; environment is ${options.environment})`
      : '';
  return { ok: false, reason: 'invalid_credentials', param: 'api_key_id', message: `Alpaca refused this key id and secret for the ${options.environment} environment${hint}` };
}
