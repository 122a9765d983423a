// The sync of one broker connection: read what is new at the broker, record each fill once as an
// `execution` record (through the append protocol), link it, record each non-trade activity
// (dividends, splits, deposits, withdrawals, fees...) once as an `activity` record
// (activity-import.ts), snapshot positions and balances and reconcile them with the imported fills.
// It owns the per-connection lock (one sync at a time across nodes), the resume points, the
// exactly-once rule and what the connection shows while and after it syncs.
//
// Exactly once: every execution is appended with the Idempotency-Key `broker-fill:<fill key>`
// (fill keys are per broker and account, normalise.ts), so a sync run twice, two nodes syncing
// together, or a sync killed after its append and run again records each fill once. The fill
// index (broker_fills) is written after the append; when a rerun finds the key already used it
// repairs the index from the record.
//
// Nothing half-way: fills are recorded in chunks of whole pages, each chunk one transaction, and
// the resume point moves only after its chunk committed. A broker error (429 once retries ran out,
// 5xx, timeout, refused credentials) stops the sync there: the connection shows the error and the
// next sync resumes from the last committed chunk.
import { canonicalJson } from '../core/canon.ts';
import { compareDecimal } from '../core/decimal.ts';
import { sha256Hex } from '../core/sha256.ts';
import type { Agent } from '../domain/types.ts';
import { appendRecords, type AppendRequest } from '../ledger/append.ts';
import type { Clock } from '../domain/clock.ts';
import type {
  BrokerConnection, BrokerStore, ImportedFill, SyncCounts, SyncCursor, SyncProgress, SyncSummary,
} from './port.ts';
import type { LedgerStore } from '../store/port.ts';
import { AlpacaClient, type AlpacaFillActivity, type AlpacaNonTradeActivity } from './alpaca.ts';
import { alpacaActivities, snapTradeActivities, type ActivityProblem, type BrokerActivity } from './activity.ts';
import { recordActivities } from './activity-import.ts';
import { executionContent } from './execution.ts';
import type { BrokerError, HttpPolicy } from './http.ts';
import { fillTime, INFERRED_WINDOW_WEEKDAYS, linkFills, linkTokenOf, orderKey, type Link, type LinkableDecision } from './linking.ts';
import {
  alpacaFills, checkCumulative, dedupeFills, fillKeys, indexOrders, missingOrderIds, snapTradeFills, type BrokerFill, type OrderIndex,
} from './normalise.ts';
import { alpacaReportedPositions, impliedPositions, reconcilePositions, snapTradeReportedPositions, type ReportedPosition } from './reconcile.ts';
import { refusal, symbolCaveat } from './reported.ts';
import { activityWindow, SnapTradeClient, type SnapTradeActivity, type SnapTradePartner, type SnapTradeUser } from './snaptrade.ts';
import { sealedAad, unseal, type Keyring } from '../vault/vault.ts';

/** Where the brokers are and how to reach them (config: LEDGER_ALPACA_TRADING_URL, LEDGER_SNAPTRADE_*). */
export type BrokerEndpoints = {
  alpacaUrl: string | null;
  snaptrade: { url: string; partner: SnapTradePartner } | null;
  http?: Partial<HttpPolicy>;
};

export type BrokerLog = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export type SyncDeps = {
  store: LedgerStore;
  brokers: BrokerStore;
  clock: Clock;
  keyring: () => Promise<Keyring>;
  endpoints: BrokerEndpoints;
  log?: BrokerLog;
  /** Fills recorded per transaction (whole pages are gathered up to about this many). */
  chunkFills?: number;
};

export type SyncOutcome =
  | { kind: 'synced'; summary: SyncSummary }
  | { kind: 'failed'; summary: SyncSummary }
  | { kind: 'busy' }
  | { kind: 'not_syncable'; reason: string };

export type ProgressListener = (progress: SyncProgress) => void;

/** The associated data a SnapTrade user secret is sealed under (connections use their own id). */
export const snapTradeUserAad = (agentId: string) => sealedAad('broker_user', agentId);

const DEFAULT_CHUNK = 1000;
const DAY_MS = 86_400_000;
/** How far back inferred candidates are read: the window in weekdays, plus weekends. */
const CANDIDATE_LOOKBACK_MS = (INFERRED_WINDOW_WEEKDAYS + 4) * DAY_MS;

class SyncStop extends Error {
  constructor(readonly kind: string, message: string) {
    super(message);
  }
}

const stopFor = (e: BrokerError) => new SyncStop(e.kind, e.message);

function emptyCounts(): SyncCounts {
  return {
    fills_read: 0, executions_recorded: 0, already_recorded: 0, orders_read: 0, linked_link_token: 0, linked_inferred: 0, not_fills: {},
    activities_read: 0, activities_recorded: 0,
  };
}

/** Non-trade activities are re-read over this many days before the last sync: late and corrected rows. */
export const ACTIVITY_TRAILING_DAYS = 7;

/** One run's state: what it counted, what it noticed, where it stands. */
class Run {
  readonly counts = emptyCounts();
  readonly caveats: { code: string; message: string }[] = [];
  positions = 0;
  constructor(
    readonly deps: SyncDeps,
    readonly connection: BrokerConnection,
    readonly agent: Agent,
    readonly cursor: SyncCursor,
    readonly startedAt: string,
    readonly onProgress: ProgressListener | undefined,
  ) {}

  caveat(code: string, message: string): void {
    if (this.caveats.length < 50) this.caveats.push({ code, message });
  }

  async progress(phase: string): Promise<void> {
    const p: SyncProgress = { started_at: this.startedAt, phase, fills_read: this.counts.fills_read, executions_recorded: this.counts.executions_recorded };
    this.onProgress?.(p);
    await this.deps.brokers.updateConnection(this.connection.id, { progress: p, cursor: this.cursor }, this.now());
  }

  now(): string {
    return this.deps.clock.now().toISOString();
  }
}

export class BrokerSync {
  constructor(private readonly deps: SyncDeps) {}

  /** Syncs one connection now, unless another sync of it runs (here or on another node). */
  async sync(connectionId: string, onProgress?: ProgressListener): Promise<SyncOutcome> {
    const lock = await this.deps.brokers.tryLockSync(connectionId);
    if (!lock) return { kind: 'busy' };
    try {
      return await this.syncLocked(connectionId, onProgress);
    } finally {
      await lock.release();
    }
  }

  private async syncLocked(connectionId: string, onProgress?: ProgressListener): Promise<SyncOutcome> {
    const { brokers, store } = this.deps;
    const connection = await brokers.findConnection(connectionId);
    if (!connection) return { kind: 'not_syncable', reason: 'no such connection' };
    if (connection.status === 'disconnected') return { kind: 'not_syncable', reason: 'the connection is disconnected' };
    if (connection.status === 'pending') return { kind: 'not_syncable', reason: 'the connection is not complete yet' };
    const agent = await store.findAgentById(connection.agentId);
    if (!agent) return { kind: 'not_syncable', reason: 'the agent no longer exists' };
    const run = new Run(this.deps, connection, agent, { ...connection.cursor }, this.deps.clock.now().toISOString(), onProgress);
    await run.progress('starting');
    let error: { kind: string; message: string } | null = null;
    try {
      if (agent.status !== 'active') throw new SyncStop('agent_not_active', `agent ${agent.handle} is ${agent.status}: nothing is recorded`);
      if (connection.kind === 'alpaca') await syncAlpaca(run);
      else await syncSnapTrade(run);
    } catch (e) {
      if (!(e instanceof SyncStop)) throw e;
      error = { kind: e.kind, message: e.message };
    }
    const summary: SyncSummary = {
      started_at: run.startedAt, finished_at: run.now(), ok: error === null, counts: run.counts, positions: run.positions,
      caveats: run.caveats, error,
    };
    await brokers.updateConnection(connection.id, {
      status: error === null ? 'active' : 'error', lastSync: summary, progress: null, cursor: run.cursor,
      lastError: error === null ? null : error.message,
    }, summary.finished_at);
    this.deps.log?.(error === null ? 'info' : 'warn', error === null ? 'broker sync done' : 'broker sync failed', {
      connection: connection.id, broker: connection.kind, recorded: run.counts.executions_recorded, error: error?.message,
    });
    return error === null ? { kind: 'synced', summary } : { kind: 'failed', summary };
  }
}

// ---------------------------------------------------------------------------------------------
// Alpaca

type AlpacaSecret = { api_key_id: string; api_secret: string };

async function openSecret<T>(run: Run, aad: string, sealed: string): Promise<T> {
  const opened = unseal(await run.deps.keyring(), aad, sealed);
  if (!opened.ok) throw new SyncStop('vault', `the stored credentials cannot be opened (${opened.error.code}): check the master key`);
  return JSON.parse(opened.value) as T;
}

async function syncAlpaca(run: Run): Promise<void> {
  const { connection, deps } = run;
  if (!connection.credentials) throw new SyncStop('no_credentials', 'the connection holds no credentials');
  const secret = await openSecret<AlpacaSecret>(run, connection.id, connection.credentials.sealed);
  const client = new AlpacaClient({
    credentials: { keyId: secret.api_key_id, secretKey: secret.api_secret },
    environment: connection.environment === 'live' ? 'live' : 'paper',
    ...(deps.endpoints.alpacaUrl ? { baseUrl: deps.endpoints.alpacaUrl } : {}),
    ...(deps.endpoints.http ? { http: deps.endpoints.http } : {}),
  });
  const account = await client.account();
  if (!account.ok) throw stopFor(account.error);
  const accountRef = account.value.id;

  await run.progress('orders');
  const orders: OrderIndex = new Map();
  let ordersAfter = run.cursor.alpaca_orders_after ?? undefined;
  for await (const page of client.orders(ordersAfter === undefined ? {} : { after: ordersAfter })) {
    if (!page.ok) throw stopFor(page.error);
    indexOrders(page.value.orders, orders);
    run.counts.orders_read += page.value.orders.length;
    ordersAfter = page.value.resumeAfter ?? ordersAfter;
  }

  await run.progress('fills');
  const chunk = deps.chunkFills ?? DEFAULT_CHUNK;
  let pending: AlpacaFillActivity[] = [];
  let pendingToken: string | null = null;
  const flush = async () => {
    await resolveOrders(client, pending, orders);
    const { fills, problems } = alpacaFills({ accountRef, activities: pending, orders });
    for (const p of problems) run.caveat('fill_skipped', `fill ${p.brokerFillId} was not recorded: ${p.message}`);
    await recordFills(run, fills);
    if (pendingToken !== null) run.cursor.alpaca_fills_token = pendingToken;
    pending = [];
    await run.progress('fills');
  };
  const fillsFrom = run.cursor.alpaca_fills_token;
  for await (const page of client.fills(fillsFrom ? { pageToken: fillsFrom } : {})) {
    if (!page.ok) throw stopFor(page.error);
    pending.push(...page.value.fills);
    run.counts.fills_read += page.value.fills.length;
    pendingToken = page.value.resumeToken;
    if (pending.length >= chunk) await flush();
  }
  if (pending.length > 0 || pendingToken !== null) await flush();
  // Orders move on only once their fills are in: an order submitted before the cursor that fills
  // later is fetched by id (resolveOrders).
  if (ordersAfter !== undefined) run.cursor.alpaca_orders_after = ordersAfter;

  await run.progress('activities');
  const since = run.cursor.alpaca_activities_date;
  const rows: AlpacaNonTradeActivity[] = [];
  for await (const page of client.nonTradeActivities(since ? { after: daysBefore(since, ACTIVITY_TRAILING_DAYS) } : {})) {
    if (!page.ok) throw stopFor(page.error);
    rows.push(...page.value.activities);
  }
  const currency = typeof account.value.currency === 'string' ? account.value.currency : null;
  const imported = alpacaActivities({ accountRef, currency: currency ?? 'USD', rows });
  await recordActivitiesOf(run, rows.length, imported);
  run.cursor.alpaca_activities_date = run.now().slice(0, 10);

  await run.progress('positions');
  const positions = await client.positions();
  if (!positions.ok) throw stopFor(positions.error);
  const a = account.value as Record<string, unknown>;
  await snapshot(run, alpacaReportedPositions(positions.value), positions.value, {
    currency: a.currency ?? null, cash: a.cash ?? null, equity: a.equity ?? null, buying_power: a.buying_power ?? null,
  });
}

/** Fetches, by id, orders that fills (or their replacement chains) name but the listing lacked. */
async function resolveOrders(client: AlpacaClient, fills: AlpacaFillActivity[], orders: OrderIndex): Promise<void> {
  for (let round = 0; round < 10; round++) {
    const missing = missingOrderIds(fills, orders);
    if (missing.length === 0) return;
    let found = 0;
    for (const id of missing) {
      const r = await client.order(id);
      if (r.ok) {
        indexOrders([r.value], orders);
        found++;
      } else if (r.error.kind !== 'not_found') throw stopFor(r.error);
    }
    if (found === 0) return;
  }
}

// ---------------------------------------------------------------------------------------------
// SnapTrade

async function syncSnapTrade(run: Run): Promise<void> {
  const { connection, deps } = run;
  const endpoints = deps.endpoints.snaptrade;
  if (!endpoints) throw new SyncStop('not_configured', 'SnapTrade is not configured on this service (LEDGER_SNAPTRADE_CLIENT_ID, LEDGER_SNAPTRADE_CONSUMER_KEY)');
  const stored = await deps.brokers.findUser(connection.agentId, 'snaptrade');
  if (!stored) throw new SyncStop('no_credentials', 'the agent has no SnapTrade user');
  const userSecret = await openSecret<{ user_secret: string }>(run, snapTradeUserAad(connection.agentId), stored.secret.sealed);
  const user: SnapTradeUser = { userId: stored.userId, userSecret: userSecret.user_secret };
  const client = new SnapTradeClient({ partner: endpoints.partner, baseUrl: endpoints.url, ...(deps.endpoints.http ? { http: deps.endpoints.http } : {}) });

  const auths = await client.authorizations(user);
  if (!auths.ok) throw stopFor(auths.error);
  const auth = auths.value.find((x) => x.id === connection.externalId);
  if (!auth) throw new SyncStop('auth', 'the connection no longer exists at SnapTrade: connect again');
  if (auth.disabled) throw new SyncStop('auth', 'SnapTrade reports the connection disabled (its data is stale): reconnect at SnapTrade');
  const accounts = await client.accounts(user);
  if (!accounts.ok) throw stopFor(accounts.error);
  const mine = accounts.value.filter((x) => x.brokerage_authorization === connection.externalId);

  const today = run.now().slice(0, 10);
  const reported: ReportedPosition[] = [];
  const raw: unknown[] = [];
  const balances: unknown[] = [];
  for (const account of mine) {
    await run.progress(`activities ${account.id}`);
    const cursorKey = `snaptrade_activities:${account.id}`;
    const window = activityWindow({ lastSyncedDate: run.cursor[cursorKey] ?? null, today });
    const activities: SnapTradeActivity[] = [];
    for await (const page of client.activities(user, account.id, window)) {
      if (!page.ok) throw stopFor(page.error);
      activities.push(...page.value.activities);
    }
    run.counts.fills_read += activities.length;
    const { fills, skipped, problems } = snapTradeFills({ accountRef: account.id, activities });
    for (const [type, n] of Object.entries(skipped)) run.counts.not_fills[type] = (run.counts.not_fills[type] ?? 0) + n;
    for (const p of problems) run.caveat('fill_skipped', `activity ${p.brokerFillId} was not recorded: ${p.message}`);
    // Oldest first, so inferred links go to the newest decision before each fill in turn.
    fills.sort((x, y) => (fillTime(x)?.ms ?? 0) - (fillTime(y)?.ms ?? 0));
    await recordFills(run, fills);
    const nonTrade = snapTradeActivities({ accountRef: account.id, rows: activities });
    nonTrade.activities.sort((x, y) => (x.occurredAt < y.occurredAt ? -1 : x.occurredAt > y.occurredAt ? 1 : 0));
    await recordActivitiesOf(run, nonTrade.activities.length + nonTrade.problems.length, nonTrade);
    run.cursor[cursorKey] = today;

    const positions = await client.positions(user, account.id);
    if (!positions.ok) throw stopFor(positions.error);
    reported.push(...snapTradeReportedPositions(positions.value));
    raw.push({ account_ref: account.id, results: positions.value.results });
    const b = await client.balances(user, account.id);
    if (!b.ok) throw stopFor(b.error);
    balances.push({ account_ref: account.id, balances: b.value });
  }
  await snapshot(run, reported, raw, balances);
}


// ---------------------------------------------------------------------------------------------
// Non-trade activities

async function recordActivitiesOf(run: Run, read: number, imported: { activities: BrokerActivity[]; problems: ActivityProblem[] }): Promise<void> {
  run.counts.activities_read += read;
  for (const p of imported.problems) run.caveat('activity_skipped', `activity ${p.brokerActivityId} was not recorded: ${p.message}`);
  const done = await recordActivities(run.deps, { agent: run.agent, connectionId: run.connection.id }, imported.activities);
  run.counts.activities_recorded += done.recorded;
  run.counts.already_recorded += done.alreadyRecorded;
  for (const s of done.skipped) run.caveat('activity_skipped', `activity ${s.brokerActivityId} was not recorded: ${s.message}`);
  for (const f of done.flagged) run.caveat('reported_symbol', `activity ${f.brokerActivityId}: ${f.message}`);
  if (done.stopped !== null) throw new SyncStop(done.stopped, `agent ${run.agent.handle} cannot record (${done.stopped}): nothing more is imported`);
}

/** `YYYY-MM-DD` `days` before the date `date`. */
function daysBefore(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  if (!Number.isFinite(d.getTime())) return date;
  d.setUTCDate(d.getUTCDate() - days);
  return d.toISOString().slice(0, 10);
}

// ---------------------------------------------------------------------------------------------
// Positions

async function snapshot(run: Run, reported: ReportedPosition[], positions: unknown, balances: unknown): Promise<void> {
  const implied = impliedPositions(await run.deps.brokers.importedFillsOf(run.connection.id));
  const checks = reconcilePositions(implied, reported);
  for (const c of checks) {
    if (!c.matches) {
      run.caveat('position_mismatch', `${c.symbol}: the broker reports ${c.reported}, the imported fills add up to ${c.implied} (history before the import, a transfer or a split); shown as reported, never smoothed`);
    }
  }
  run.positions = reported.length;
  await run.deps.brokers.saveSnapshot({
    connectionId: run.connection.id, agentId: run.connection.agentId, takenAt: run.now(), positions, balances, reconciliation: checks,
  });
}

// ---------------------------------------------------------------------------------------------
// Recording fills

/** Normalised fills (oldest first) -> execution records, each once, linked. */
async function recordFills(run: Run, fills: BrokerFill[]): Promise<void> {
  if (fills.length === 0) return;
  const { brokers, store, clock } = run.deps;
  const agentId = run.agent.id;
  const keysOf = new Map<BrokerFill, string[]>();
  fillKeys(fills).forEach((keys, i) => keysOf.set(fills[i] as BrokerFill, keys));
  const known = await brokers.importedKeys(agentId, [...keysOf.values()].flat());
  const fresh = dedupeFills(fills, (k) => known.has(k));
  run.counts.already_recorded += fills.length - fresh.length;
  if (fresh.length === 0) return;

  await checkPartials(run, fresh);
  const links = await linksFor(run, fresh);

  const requests: AppendRequest[] = [];
  const recorded: { fill: BrokerFill; keys: string[]; link: Link | null }[] = [];
  fresh.forEach((fill, i) => {
    const link = links[i] ?? null;
    const refused = refusal({ symbol: fill.symbol, at: fill.filledAt }, run.deps.clock.now());
    const content = executionContent({ agent: run.agent.handle, fill, link });
    if (refused !== null || !content.ok) {
      run.caveat('fill_skipped', `fill ${fill.brokerFillId} was not recorded: ${refused ?? (content.ok ? '' : content.error.message)}`);
      return;
    }
    const caveat = symbolCaveat(fill.symbol);
    if (caveat !== null) run.caveat('reported_symbol', `fill ${fill.brokerFillId}: ${caveat}`);
    const payload = canonicalJson(content.document);
    const keys = keysOf.get(fill) as string[];
    requests.push({
      agentId, agentHandle: run.agent.handle, type: 'execution', symbol: fill.symbol, content: payload, contentHash: sha256Hex(payload),
      signature: null, linkToken: null, idempotency: { key: idempotencyKeyOf(keys), fingerprint: sha256Hex(`broker-fill\n${keys[0]}`) },
    });
    recorded.push({ fill, keys, link });
  });

  const outcomes = await appendRecords(store, requests, clock);
  const index: ImportedFill[] = [];
  for (let i = 0; i < outcomes.length; i++) {
    const outcome = outcomes[i]!;
    const { fill, keys, link } = recorded[i]!;
    let recordId: string;
    let madeLink = link;
    if (outcome.kind === 'recorded') {
      recordId = outcome.record.id;
      run.counts.executions_recorded++;
      if (link?.method === 'link_token') run.counts.linked_link_token++;
      if (link?.method === 'inferred') run.counts.linked_inferred++;
    } else if (outcome.kind === 'idempotency_conflict') {
      // Recorded by an earlier run (killed before it indexed) or by another node just now.
      const earlier = await store.findIdempotent(agentId, idempotencyKeyOf(keys));
      if (!earlier?.record) throw new SyncStop('internal', 'an imported fill\'s Idempotency-Key points to no record');
      recordId = earlier.record.id;
      madeLink = (JSON.parse(earlier.record.content) as { link: Link | null }).link;
      run.counts.already_recorded++;
    } else {
      await brokers.saveImportedFills(index);
      throw new SyncStop(outcome.kind, `agent ${run.agent.handle} cannot record (${outcome.kind}): nothing more is imported`);
    }
    for (const key of keys) {
      index.push({
        agentId, key, connectionId: run.connection.id, recordId, orderKey: orderKey(fill), brokerOrderId: fill.brokerOrderId, symbol: fill.symbol,
        side: fill.side, quantity: fill.quantity, cumulativeQuantity: fill.cumulativeQuantity, decisionId: madeLink?.decision_id ?? null,
        linkMethod: madeLink?.method ?? null,
      });
    }
  }
  await brokers.saveImportedFills(index);
}

/** The Idempotency-Key of a fill: its first key (the broker's id of the fill, per account). */
export const idempotencyKeyOf = (keys: readonly string[]) => `broker-fill:${keys[0]}`;

/** Partial fills must add up (each fill's cumulative quantity), continuing from what was recorded. */
async function checkPartials(run: Run, fills: BrokerFill[]): Promise<void> {
  const orderIds = fills.flatMap((f) => (f.brokerOrderId !== null && f.cumulativeQuantity !== null ? [f.brokerOrderId] : []));
  if (orderIds.length === 0) return;
  const recorded = await run.deps.brokers.cumulativeByOrder(run.agent.id, orderIds);
  const prior = new Map<string, string>();
  for (const [orderId, values] of recorded) {
    prior.set(orderId, values.reduce((max, v) => (compareDecimal(v, max) > 0 ? v : max), '0'));
  }
  for (const p of checkCumulative(fills, { prior })) {
    run.caveat('cumulative_mismatch', `order ${p.orderId}: ${p.message}`);
  }
}

/** Links for `fills` (oldest first): by link token, else inferred from the agent's earlier decisions. */
async function linksFor(run: Run, fills: BrokerFill[]): Promise<(Link | null)[]> {
  const { brokers } = run.deps;
  const byToken = new Map<string, LinkableDecision | null>();
  for (const fill of fills) {
    const token = linkTokenOf(fill);
    if (token === null || byToken.has(token)) continue;
    const d = await brokers.decisionByLinkToken(token);
    byToken.set(token, d ? linkable(d) : null);
  }
  const times = fills.map((f) => fillTime(f)?.ms).filter((t): t is number => t !== undefined);
  let candidates: LinkableDecision[] = [];
  if (times.length > 0) {
    const rows = await brokers.decisionsBetween(run.agent.id, Math.min(...times) - CANDIDATE_LOOKBACK_MS, Math.max(...times) + 1000);
    const linked = await brokers.linkedOrderKeys(rows.map((r) => r.id));
    candidates = rows.map((r) => ({ ...linkable(r), linkedOrderKeys: linked.get(r.id) ?? [] }));
  }
  return linkFills({ agent: run.agent.id, fills, decisionByToken: (t) => byToken.get(t) ?? null, candidates });
}

function linkable(d: { id: string; agentId: string; symbol: string | null; recordedAt: string; content: string }): LinkableDecision {
  const content = JSON.parse(d.content) as { action?: unknown; symbol?: unknown };
  return {
    id: d.id, agent: d.agentId, symbol: d.symbol ?? (typeof content.symbol === 'string' ? content.symbol : ''),
    action: typeof content.action === 'string' ? content.action : '', recordedAt: d.recordedAt,
  };
}
