// SnapTrade client (the broker aggregator), read-only towards every brokerage.
// It owns SnapTrade's request signing (brokers.md §3.2), the reads the ledger makes (connections,
// accounts, activities, orders, positions, balances) and their paging, and the two account-
// management calls the connection flow needs: registering the agent's SnapTrade user and creating
// a connection-portal link. Those two are POSTs to SnapTrade but place, change or cancel nothing
// at any brokerage (the link always asks for a `read` connection). `#send` refuses any other POST,
// and this file has no function for trades, orders, cancels or transfers.
//
// Why not the official snaptrade-typescript-sdk: it is 2.7 MB plus axios, and every client it
// builds carries the trading API (placeOrder, placeForceOrder, replaceOrder, cancelOrder), so
// "read-only by construction" would rest on discipline, not on code. Its errors also carry the
// request URL, whose query holds the user secret. The signing it does is twenty lines, specified
// in brokers.md §3.2 with test vectors, and tested here against them.

import { createHmac } from 'node:crypto';
import { requestJson, httpPolicy, numbersAsText, type HttpPolicy, type Result, type BrokerError } from './http.ts';
import type { JsonValue } from '../core/json.ts';

export const SNAPTRADE_DEFAULT_URL = 'https://api.snaptrade.com';

export type SnapTradePartner = { clientId: string; consumerKey: string };
export type SnapTradeUser = { userId: string; userSecret: string };

export type SnapTradeClientOptions = {
  partner: SnapTradePartner;
  /** LEDGER_SNAPTRADE_URL; a path prefix such as `/api/v1` is kept and signed as sent. */
  baseUrl?: string;
  http?: Partial<HttpPolicy>;
  /** Unix seconds, for the `timestamp` query parameter. */
  nowSeconds?: () => number;
};

/** Numbers arrive as JSON numbers; they are kept here as their exact text. */
export type SnapTradeActivity = {
  id: string;
  type: string;
  trade_date: string | null;
  symbol: { symbol?: string; raw_symbol?: string } & Record<string, unknown> | null;
  option_symbol: unknown;
  price: string | null;
  units: string | null;
  amount: string | null;
  fee: string | null;
  external_reference_id: string | null;
} & Record<string, unknown>;

export type SnapTradeAccount = { id: string; brokerage_authorization: string; institution_name?: string; number?: string } & Record<string, unknown>;
export type SnapTradeAuthorization = { id: string; disabled: boolean; type?: string; brokerage?: Record<string, unknown> } & Record<string, unknown>;
export type SnapTradeOrder = { brokerage_order_id: string; status: string; action: string } & Record<string, unknown>;
export type SnapTradePositions = { results: Record<string, unknown>[]; data_freshness?: { as_of?: string } };
export type SnapTradeBalance = { currency: Record<string, unknown> | null; cash: string | null; buying_power: string | null } & Record<string, unknown>;

export const ACTIVITIES_PAGE_LIMIT = 1000;

/** Paths this client may POST to: SnapTrade account management only, never a brokerage write. */
const ACCOUNT_MANAGEMENT_POSTS = new Set(['/snapTrade/registerUser', '/snapTrade/login']);

/** Canonical JSON of §3.2: keys sorted at every level, no whitespace. */
function sortedJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`).join(',')}}`;
}

/**
 * The `Signature` header: base64 HMAC-SHA256, keyed by the consumer key, over the canonical JSON
 * of `{content, path, query}` where `path` and `query` are exactly what is sent and `content` is
 * the body, or null when there is none or it is `{}`.
 */
export function snapTradeSignature(consumerKey: string, req: { content: unknown; path: string; query: string }): string {
  const empty = req.content === undefined || req.content === null ||
    (typeof req.content === 'object' && !Array.isArray(req.content) && Object.keys(req.content as object).length === 0);
  const canonical = sortedJson({ content: empty ? null : req.content, path: req.path, query: req.query });
  return createHmac('sha256', encodeURI(consumerKey)).update(canonical, 'utf8').digest('base64');
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';

function badShape(what: string, field: string): BrokerError {
  return { kind: 'provider', message: `SnapTrade ${what}: unexpected shape (${field})` };
}

function snapTradeErrorCode(body: JsonValue | null): string | undefined {
  const b = body === null ? null : numbersAsText(body);
  if (!isObj(b)) return undefined;
  const code = b.code ?? b.default_code;
  return isStr(code) ? code : undefined;
}

function asActivity(v: unknown): SnapTradeActivity | string {
  if (!isObj(v)) return 'not an object';
  if (!isStr(v.id)) return 'id';
  if (!isStr(v.type)) return 'type';
  if (v.symbol !== null && v.symbol !== undefined && !isObj(v.symbol)) return 'symbol';
  const str = (x: unknown): string | null => (isStr(x) ? x : null);
  return {
    ...v,
    id: v.id,
    type: v.type,
    trade_date: str(v.trade_date),
    symbol: (v.symbol as SnapTradeActivity['symbol']) ?? null,
    option_symbol: v.option_symbol ?? null,
    price: str(v.price),
    units: str(v.units),
    amount: str(v.amount),
    fee: str(v.fee),
    external_reference_id: str(v.external_reference_id),
  };
}

function asListOf<T>(what: string, body: unknown, required: string[]): Result<T[]> {
  if (!Array.isArray(body)) return { ok: false, error: badShape(what, 'not an array') };
  for (let i = 0; i < body.length; i++) {
    const row = body[i];
    if (!isObj(row)) return { ok: false, error: badShape(what, `[${i}]`) };
    for (const f of required) if (row[f] === undefined || row[f] === null) return { ok: false, error: badShape(what, `[${i}].${f}`) };
  }
  return { ok: true, value: body as T[] };
}

export type ActivitiesPage = { activities: SnapTradeActivity[]; offset: number; total: number };

export class SnapTradeClient {
  readonly baseUrl: string;
  readonly #partner: SnapTradePartner;
  readonly #policy: HttpPolicy;
  readonly #nowSeconds: () => number;

  constructor(options: SnapTradeClientOptions) {
    this.baseUrl = (options.baseUrl ?? SNAPTRADE_DEFAULT_URL).replace(/\/+$/, '');
    if (!URL.canParse(this.baseUrl)) throw new TypeError('SnapTradeClient: baseUrl is not a URL');
    this.#partner = { ...options.partner };
    this.#policy = httpPolicy(options.http);
    this.#nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  }

  /** Every request of this client. GET reads; POST only to the account-management paths. */
  async #send(
    method: 'GET' | 'POST',
    path: string,
    options: { user?: SnapTradeUser; query?: Record<string, string | undefined>; body?: Obj } = {},
  ): Promise<Result<unknown>> {
    if (method === 'POST' && !ACCOUNT_MANAGEMENT_POSTS.has(path)) {
      return { ok: false, error: { kind: 'request', message: `SnapTrade POST ${path} is not allowed: this client only reads` } };
    }
    const { clientId, consumerKey } = this.#partner;
    const secrets = [consumerKey, ...(options.user ? [options.user.userSecret] : [])];
    const sentPath = new URL(this.baseUrl).pathname.replace(/\/+$/, '') + path;
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const prepare = (): { url: string; headers: Record<string, string> } => {
      const params = new URLSearchParams();
      params.set('clientId', clientId);
      params.set('timestamp', String(this.#nowSeconds()));
      if (options.user) {
        params.set('userId', options.user.userId);
        params.set('userSecret', options.user.userSecret);
      }
      for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) params.set(k, v);
      const query = params.toString();
      const signature = snapTradeSignature(consumerKey, { content: options.body ?? null, path: sentPath, query });
      const headers: Record<string, string> = { Signature: signature, accept: 'application/json' };
      if (body !== undefined) headers['content-type'] = 'application/json';
      return { url: `${new URL(this.baseUrl).origin}${sentPath}?${query}`, headers };
    };
    const r = await requestJson(
      {
        method, url: '', headers: {}, prepare, label: `SnapTrade ${method} ${path}`, secrets,
        errorCode: snapTradeErrorCode, ...(body !== undefined ? { body } : {}),
      },
      this.#policy,
    );
    return r.ok ? { ok: true, value: numbersAsText(r.value.body) } : r;
  }

  /** Registers the agent's SnapTrade user (once per agent). The secret is returned only here. */
  async registerUser(userId: string): Promise<Result<SnapTradeUser>> {
    const r = await this.#send('POST', '/snapTrade/registerUser', { body: { userId } });
    if (!r.ok) return r;
    const v = r.value;
    if (!isObj(v) || !isStr(v.userId) || !isStr(v.userSecret)) return { ok: false, error: badShape('registerUser', 'userId/userSecret') };
    return { ok: true, value: { userId: v.userId, userSecret: v.userSecret } };
  }

  /**
   * A connection-portal link (valid about five minutes). Always asks for a read-only connection;
   * the owner logs in at SnapTrade, no brokerage password reaches us.
   */
  async loginLink(
    user: SnapTradeUser,
    options: { broker?: string; customRedirect?: string; reconnect?: string } = {},
  ): Promise<Result<{ redirectURI: string; sessionId: string | null }>> {
    const body: Obj = { connectionType: 'read', immediateRedirect: true };
    if (options.broker !== undefined) body.broker = options.broker;
    if (options.customRedirect !== undefined) body.customRedirect = options.customRedirect;
    if (options.reconnect !== undefined) body.reconnect = options.reconnect;
    const r = await this.#send('POST', '/snapTrade/login', { user, body });
    if (!r.ok) return r;
    const v = r.value;
    if (!isObj(v) || !isStr(v.redirectURI)) return { ok: false, error: badShape('login', 'redirectURI') };
    return { ok: true, value: { redirectURI: v.redirectURI, sessionId: isStr(v.sessionId) ? v.sessionId : null } };
  }

  /** The user's connections; `disabled: true` means the data is stale until the owner reconnects. */
  async authorizations(user: SnapTradeUser): Promise<Result<SnapTradeAuthorization[]>> {
    const r = await this.#send('GET', '/authorizations', { user });
    if (!r.ok) return r;
    const list = asListOf<SnapTradeAuthorization>('authorizations', r.value, ['id']);
    if (!list.ok) return list;
    return { ok: true, value: list.value.map((a) => ({ ...a, disabled: a.disabled === true })) };
  }

  async accounts(user: SnapTradeUser): Promise<Result<SnapTradeAccount[]>> {
    const r = await this.#send('GET', '/accounts', { user });
    return r.ok ? asListOf<SnapTradeAccount>('accounts', r.value, ['id', 'brokerage_authorization']) : r;
  }

  async balances(user: SnapTradeUser, accountId: string): Promise<Result<SnapTradeBalance[]>> {
    const r = await this.#send('GET', `/accounts/${encodeURIComponent(accountId)}/balances`, { user });
    return r.ok ? asListOf<SnapTradeBalance>('balances', r.value, []) : r;
  }

  async positions(user: SnapTradeUser, accountId: string): Promise<Result<SnapTradePositions>> {
    const r = await this.#send('GET', `/accounts/${encodeURIComponent(accountId)}/positions/all`, { user });
    if (!r.ok) return r;
    if (!isObj(r.value) || !Array.isArray(r.value.results)) return { ok: false, error: badShape('positions', 'results') };
    return { ok: true, value: r.value as SnapTradePositions };
  }

  /**
   * Orders of the last `days` (at most 90). A brokerage without order support answers 501: that is
   * `{supported: false}`, not an error (fills then come from activities alone).
   */
  async orders(user: SnapTradeUser, accountId: string, days = 90): Promise<Result<{ supported: boolean; orders: SnapTradeOrder[] }>> {
    const r = await this.#send('GET', `/accounts/${encodeURIComponent(accountId)}/orders`, {
      user, query: { state: 'all', days: String(Math.min(90, Math.max(1, days))) },
    });
    if (!r.ok) return r.error.status === 501 ? { ok: true, value: { supported: false, orders: [] } } : r;
    const list = asListOf<SnapTradeOrder>('orders', r.value, ['brokerage_order_id']);
    return list.ok ? { ok: true, value: { supported: true, orders: list.value } } : list;
  }

  /**
   * Activities of one account between two dates (inclusive, on trade_date), newest first, each id
   * once. Pages by `offset` until `pagination.total` is reached; a row that new rows push onto the
   * next page is dropped there by id.
   */
  async *activities(
    user: SnapTradeUser,
    accountId: string,
    options: { startDate?: string; endDate?: string; type?: string; limit?: number } = {},
  ): AsyncGenerator<Result<ActivitiesPage>> {
    const limit = options.limit ?? ACTIVITIES_PAGE_LIMIT;
    const seen = new Set<string>();
    for (let offset = 0; ; ) {
      const r = await this.#send('GET', `/accounts/${encodeURIComponent(accountId)}/activities`, {
        user,
        query: { startDate: options.startDate, endDate: options.endDate, type: options.type, offset: String(offset), limit: String(limit) },
      });
      if (!r.ok) return yield r;
      const v = r.value;
      if (!isObj(v) || !Array.isArray(v.data) || !isObj(v.pagination)) return yield { ok: false, error: badShape('activities', 'data/pagination') };
      const total = Number(v.pagination.total);
      if (!Number.isSafeInteger(total) || total < 0) return yield { ok: false, error: badShape('activities', 'pagination.total') };
      const rows: SnapTradeActivity[] = [];
      for (let i = 0; i < v.data.length; i++) {
        const a = asActivity(v.data[i]);
        if (typeof a === 'string') return yield { ok: false, error: badShape('activities', `data[${i}].${a}`) };
        if (!seen.has(a.id)) {
          seen.add(a.id);
          rows.push(a);
        }
      }
      yield { ok: true, value: { activities: rows, offset, total } };
      offset += v.data.length;
      if (v.data.length === 0 || offset >= total) return;
    }
  }
}

/** Days re-read before the last synced date: SnapTrade's activities are daily and can arrive late. */
export const TRAILING_WINDOW_DAYS = 7;

/**
 * The dates a sync reads activities for: from TRAILING_WINDOW_DAYS before the last synced date (all
 * history on the first sync) to today, whole dates, so fingerprints count identical fills of a day
 * over the whole day (see normalise.ts `fillKeys`).
 */
export function activityWindow(input: { lastSyncedDate: string | null; today: string }): { startDate?: string; endDate: string } {
  if (input.lastSyncedDate === null) return { endDate: input.today };
  const start = new Date(`${input.lastSyncedDate}T00:00:00Z`);
  if (!Number.isFinite(start.getTime())) return { endDate: input.today };
  start.setUTCDate(start.getUTCDate() - TRAILING_WINDOW_DAYS);
  return { startDate: start.toISOString().slice(0, 10), endDate: input.today };
}
