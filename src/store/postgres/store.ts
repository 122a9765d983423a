// The production store: PostgreSQL through node-postgres. One batch is one transaction: the
// agents' chain heads are row-locked in id order (revocations take these too), the facts are read
// in a few set-based queries, then the batch takes one transaction-scoped advisory lock per
// schema, shared by every process, reads the newest record id, and holds the lock to commit. So
// batches draw ids and commit one after another and record ids follow commit order everywhere: a
// reader paging by id never skips a record that commits later with a smaller id. The ledger plans
// the batch (ledger/append.ts), and its rows are written in set-based statements too.
import pg from 'pg';
import type {
  Agent, AgentHead, AgentStatus, ApiKey, ChainHead, KeyHolder, RecordCounts, SigningKey, StoredRecord,
} from '../../domain/types.ts';
import {
  type AppendFacts, type AppendPlan, type AppendQuestions, type IdempotentResult, type LedgerQuery, type LedgerStore, type Page, type StoreGauges, type WingStores,
} from '../port.ts';
import type { RecordType } from '../../core/chain.ts';
import { GENESIS_PREV_HASH, sortKeyOf } from '../../core/chain.ts';
import {
  agentFromRow, apiKeyFromRow, idempotentFromRow, prefixedAgentFromRow, recordFromRow, signingKeyFromRow,
  KEY_HOLDER_COLUMNS, RECORD_COLUMNS, type Row,
} from '../rows.ts';
import { COUNT_SUMS, recordCountsFromSums } from '../counts.ts';
import { agentHeadFromRow, boundedChainSql, ledgerSql } from '../public-rows.ts';
import { POSTGRES_MIGRATIONS } from './migrations.ts';
import { PostgresLogStore } from './log.ts';
import { LedgerPool } from './pool.ts';
import { beginAppend, commitAppend } from './append.ts';
import { PostgresAnchorStore } from './anchors.ts';
import { PostgresCosignatureStore } from './cosignatures.ts';
import { PostgresWebhookStore } from './webhooks.ts';
import { PostgresVaultStore } from './vault.ts';
import { PostgresBrokerStore } from './brokers.ts';
import { PostgresDirectoryStore } from './directory.ts';
import { PostgresSiteStore } from './site.ts';
import { PostgresMarketStore } from './market.ts';
import { inPublicRead } from '../../runtime/read-scope.ts';

export type PostgresOptions = {
  connectionString: string;
  schema?: string | undefined;
  poolSize?: number;
  /** Connections the public reads may hold, in a pool of their own (store/read-scope.ts); default 4. */
  readPoolSize?: number;
  timeouts?: Partial<PostgresTimeouts>;
};

/**
 * Bounds on every wait for the database, so a database (or a node) that stops answering costs a
 * clear error in bounded time, never a hung request: connecting, a query's answer (client side,
 * for a silent server), a statement's run and an idle transaction (server side: a stalled node's
 * transaction is ended and its locks freed), and the wait for the append lock.
 */
export type PostgresTimeouts = { connectMs: number; queryMs: number; statementMs: number; idleInTransactionMs: number; appendLockMs: number };
export const DEFAULT_POSTGRES_TIMEOUTS: PostgresTimeouts = { connectMs: 5_000, queryMs: 30_000, statementMs: 25_000, idleInTransactionMs: 10_000, appendLockMs: 5_000 };

/** listChain with a byte budget (public-rows.ts). */
const BOUNDED_CHAIN_SQL = (() => {
  let n = 0;
  return boundedChainSql(() => `$${++n}`);
})();

/**
 * The URL parameters that set a bound (milliseconds; `connect_timeout` in seconds, as in libpq),
 * so an operator can tune them in LEDGER_DATABASE_URL; the defaults are DEFAULT_POSTGRES_TIMEOUTS.
 */
const TIMEOUT_PARAMS: Record<string, { key: keyof PostgresTimeouts; unitMs: number }> = {
  connect_timeout: { key: 'connectMs', unitMs: 1_000 },
  query_timeout: { key: 'queryMs', unitMs: 1 },
  statement_timeout: { key: 'statementMs', unitMs: 1 },
  idle_in_transaction_session_timeout: { key: 'idleInTransactionMs', unitMs: 1 },
  append_lock_timeout: { key: 'appendLockMs', unitMs: 1 },
};

/** Splits our parameters (`?schema=` and the bounds) off a postgres:// URL; node-postgres gets the rest. */
export function parsePostgresUrl(url: string): PostgresOptions {
  const u = new URL(url);
  const schema = u.searchParams.get('schema') ?? undefined;
  u.searchParams.delete('schema');
  const timeouts: Partial<PostgresTimeouts> = {};
  for (const [name, { key, unitMs }] of Object.entries(TIMEOUT_PARAMS)) {
    const raw = u.searchParams.get(name);
    if (raw === null) continue;
    if (!/^[1-9][0-9]{0,8}$/.test(raw)) throw new Error(`the database URL's ${name} must be a positive integer, got ${JSON.stringify(raw)}`);
    timeouts[key] = Number(raw) * unitMs;
    u.searchParams.delete(name);
  }
  return { connectionString: u.toString(), schema, timeouts };
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The advisory lock every append to `schema` holds until it commits (hashed with hashtext). */
export const appendLockKey = (schema: string) => `ledger-append:${schema}`;

/** Connections the public reads may hold at once, unless configured (LEDGER_READ_POOL_SIZE). */
export const DEFAULT_READ_POOL_SIZE = 4;

/** A pool that is, at each call, the store's pool for the caller (the sub-stores keep this one). */
function routedPool(store: { readonly pool: LedgerPool }): LedgerPool {
  return new Proxy({} as LedgerPool, {
    get(_target, name) {
      const pool = store.pool;
      const value: unknown = Reflect.get(pool, name, pool);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(pool) : value;
    },
  });
}

/** The wings' stores: declared once (WingStores, store/port.ts), assigned in the constructor. */
export interface PostgresStore extends WingStores {}

export class PostgresStore implements LedgerStore {
  /** One batch at a time: batches serialise on the append lock anyway (appendLockKey). */
  readonly maxBatchesInFlight = 1;
  /** The record path's (and every other non-public-read's) connections. */
  private readonly writePool: LedgerPool;
  /** The public reads' connections: a flood of reads waits here, never for a connection a write needs. */
  private readonly readPool: LedgerPool;
  readonly schema: string;
  private readonly timeouts: PostgresTimeouts;

  constructor(options: PostgresOptions) {
    this.schema = options.schema ?? 'public';
    if (!SCHEMA_NAME.test(this.schema)) throw new Error(`invalid PostgreSQL schema name: ${this.schema}`);
    this.timeouts = { ...DEFAULT_POSTGRES_TIMEOUTS, ...options.timeouts };
    const settings = {
      connectionString: options.connectionString,
      connectionTimeoutMillis: this.timeouts.connectMs,
      query_timeout: this.timeouts.queryMs,
      statement_timeout: this.timeouts.statementMs,
      idle_in_transaction_session_timeout: this.timeouts.idleInTransactionMs,
      options: `-c search_path=${this.schema}`,
    };
    this.writePool = new LedgerPool({ ...settings, max: options.poolSize ?? 10, application_name: 'decision-ledger' });
    this.readPool = new LedgerPool({ ...settings, max: options.readPoolSize ?? DEFAULT_READ_POOL_SIZE, application_name: 'decision-ledger reads' });
    for (const pool of [this.writePool, this.readPool]) {
      // A client that loses its connection emits 'error': idle ones through the pool, checked-out
      // ones on themselves. Unheard, either crashes the process; the query in flight fails anyway
      // (its request answers 503, pool.ts) and a transaction drops the broken client from the pool.
      pool.on('error', () => undefined);
      pool.on('connect', (client) => client.on('error', () => undefined));
    }
    const routed = routedPool(this);
    // The market adapter keeps the performance wing's reports too.
    const marketStore = new PostgresMarketStore(this);
    const wings: WingStores = {
      log: new PostgresLogStore(routed, { connectionString: options.connectionString, schema: this.schema }),
      anchors: new PostgresAnchorStore(routed, { connectionString: options.connectionString, schema: this.schema }),
      cosignatures: new PostgresCosignatureStore(routed, { connectionString: options.connectionString, schema: this.schema }),
      webhooks: new PostgresWebhookStore(this),
      vault: new PostgresVaultStore(this),
      brokers: new PostgresBrokerStore(this),
      directory: new PostgresDirectoryStore(this),
      site: new PostgresSiteStore(this),
      market: marketStore,
      performance: marketStore,
    };
    Object.assign(this, wings);
  }

  /** The pool this call runs on: the read pool inside a public read, else the write pool. */
  get pool(): LedgerPool {
    return inPublicRead() ? this.readPool : this.writePool;
  }

  private async q(sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.pool.query(sql, params)).rows as Row[];
  }

  async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      // One migrator at a time, whichever process starts first.
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [`ledger-migrate:${this.schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.schema}`);
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
      const applied = new Set((await client.query('SELECT version FROM schema_migrations')).rows.map((r) => Number(r.version)));
      for (const [i, sql] of POSTGRES_MIGRATIONS.entries()) {
        if (applied.has(i + 1)) continue;
        await client.query('BEGIN');
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [i + 1, new Date().toISOString()]);
        await client.query('COMMIT');
      }
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`ledger-migrate:${this.schema}`]).catch(() => undefined);
      client.release();
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.writePool.end(), this.readPool.end()]);
  }

  async ping(): Promise<void> {
    await this.q('SELECT 1');
  }

  gauges(): StoreGauges {
    const counts = (p: pg.Pool) => ({ total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount });
    return { pool: counts(this.writePool), readPool: counts(this.readPool) };
  }

  async createAgent(agent: Agent, firstKey: ApiKey & { secretHash: string }): Promise<void> {
    await this.pool.transaction(async (c) => {
      await c.query('INSERT INTO agents (id, handle, display_name, status, demo, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
        [agent.id, agent.handle, agent.displayName, agent.status, agent.demo, agent.createdAt]);
      await c.query('INSERT INTO chain_heads (agent_id, seq, hash, recorded_at) VALUES ($1, 0, $2, NULL)', [agent.id, GENESIS_PREV_HASH]);
      await insertApiKey(c, firstKey);
    });
  }

  async findAgentByHandle(handle: string): Promise<Agent | null> {
    const [row] = await this.q('SELECT * FROM agents WHERE handle = $1', [handle]);
    return row ? agentFromRow(row) : null;
  }

  async listAgents(): Promise<Agent[]> {
    return (await this.q('SELECT * FROM agents ORDER BY handle')).map(agentFromRow);
  }

  async setAgentStatus(agentId: string, status: AgentStatus): Promise<void> {
    await this.q('UPDATE agents SET status = $1 WHERE id = $2', [status, agentId]);
  }

  async createApiKey(key: ApiKey & { secretHash: string }): Promise<void> {
    await insertApiKey(this.pool, key);
  }

  async findKeyHolder(secretHash: string): Promise<KeyHolder | null> {
    const [row] = await this.q(
      `SELECT ${KEY_HOLDER_COLUMNS} FROM api_keys k JOIN agents a ON a.id = k.agent_id WHERE k.secret_hash = $1`, [secretHash]);
    return row ? { key: apiKeyFromRow(row), secretHash: String(row.secret_hash), agent: prefixedAgentFromRow(row) } : null;
  }

  async findApiKey(id: string): Promise<ApiKey | null> {
    const [row] = await this.q('SELECT * FROM api_keys WHERE id = $1', [id]);
    return row ? apiKeyFromRow(row) : null;
  }

  async listApiKeys(agentId?: string): Promise<ApiKey[]> {
    const rows = agentId
      ? await this.q('SELECT * FROM api_keys WHERE agent_id = $1 ORDER BY id', [agentId])
      : await this.q('SELECT * FROM api_keys ORDER BY id');
    return rows.map(apiKeyFromRow);
  }

  async revokeApiKey(id: string, at: string): Promise<void> {
    await this.q('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id]);
  }

  async createSigningKey(key: SigningKey): Promise<SigningKey> {
    await this.q(`INSERT INTO signing_keys (id, agent_id, public_key, label, created_at, revoked_at)
      VALUES ($1, $2, $3, $4, $5, NULL) ON CONFLICT (agent_id, public_key) DO NOTHING`,
      [key.id, key.agentId, key.publicKey, key.label, key.createdAt]);
    const [row] = await this.q('SELECT * FROM signing_keys WHERE agent_id = $1 AND public_key = $2', [key.agentId, key.publicKey]);
    return signingKeyFromRow(row!);
  }

  async findSigningKey(agentId: string, id: string): Promise<SigningKey | null> {
    const [row] = await this.q('SELECT * FROM signing_keys WHERE agent_id = $1 AND id = $2', [agentId, id]);
    return row ? signingKeyFromRow(row) : null;
  }

  async listSigningKeys(agentId: string): Promise<SigningKey[]> {
    return (await this.q('SELECT * FROM signing_keys WHERE agent_id = $1 ORDER BY id', [agentId])).map(signingKeyFromRow);
  }

  async revokeSigningKey(agentId: string, id: string, at: string): Promise<void> {
    // The chain head lock orders this against every append of the agent's records: a batch
    // holding it commits first (its records predate revoked_at), a later one sees the revoke.
    await this.pool.transaction(async (c) => {
      const [head] = (await c.query('SELECT recorded_at FROM chain_heads WHERE agent_id = $1 FOR UPDATE', [agentId])).rows as Row[];
      const latest = (head?.recorded_at as string | null | undefined) ?? null;
      await c.query('UPDATE signing_keys SET revoked_at = $1 WHERE agent_id = $2 AND id = $3 AND revoked_at IS NULL',
        [latest !== null && latest > at ? latest : at, agentId, id]);
    });
  }

  async findIdempotent(agentId: string, key: string): Promise<IdempotentResult | null> {
    const [row] = await this.q(`SELECT k.fingerprint, k.status, k.body, ${RECORD_COLUMNS} FROM idempotency_keys k
      LEFT JOIN records r ON r.id = k.record_id LEFT JOIN agents a ON a.id = r.agent_id
      WHERE k.agent_id = $1 AND k.key = $2 AND k.record_id <> ''`, [agentId, key]);
    return row ? idempotentFromRow(row) : null;
  }

  async appendBatch<T>(questions: AppendQuestions, plan: (facts: AppendFacts) => AppendPlan<T>): Promise<T> {
    const lock = { timeoutMs: this.timeouts.appendLockMs, key: appendLockKey(this.schema) };
    return this.pool.scriptedTransaction(async (c) => {
      const { rows, result } = plan(await beginAppend(c, questions, lock));
      await commitAppend(c, rows);
      return result;
    });
  }

  async chainHead(agentId: string): Promise<ChainHead> {
    const [row] = await this.q('SELECT seq, hash, recorded_at FROM chain_heads WHERE agent_id = $1', [agentId]);
    if (!row) return { seq: 0, hash: GENESIS_PREV_HASH, recordedAt: null };
    return { seq: Number(row.seq), hash: String(row.hash), recordedAt: (row.recorded_at as string | null) ?? null };
  }

  async findRecord(id: string): Promise<StoredRecord | null> {
    const [row] = await this.q(`SELECT ${RECORD_COLUMNS} FROM records r JOIN agents a ON a.id = r.agent_id WHERE r.id = $1`, [id]);
    return row ? recordFromRow(row) : null;
  }

  async listAgentRecords(agentId: string, type: RecordType, page: Page): Promise<StoredRecord[]> {
    const rows = page.before
      ? await this.q(`SELECT ${RECORD_COLUMNS} FROM records r JOIN agents a ON a.id = r.agent_id
          WHERE r.agent_id = $1 AND r.type = $2 AND r.sort_key < $3 ORDER BY r.sort_key DESC LIMIT $4`,
          [agentId, type, sortKeyOf(page.before), page.limit])
      : await this.q(`SELECT ${RECORD_COLUMNS} FROM records r JOIN agents a ON a.id = r.agent_id
          WHERE r.agent_id = $1 AND r.type = $2 ORDER BY r.sort_key DESC LIMIT $3`, [agentId, type, page.limit]);
    return rows.map(recordFromRow);
  }

  async isNonceUsed(agentId: string, nonce: string): Promise<boolean> {
    return (await this.q('SELECT 1 FROM nonces WHERE agent_id = $1 AND nonce = $2', [agentId, nonce])).length > 0;
  }

  // Public reads.
  async findAgentById(id: string): Promise<Agent | null> {
    const [row] = await this.q('SELECT * FROM agents WHERE id = $1', [id]);
    return row ? agentFromRow(row) : null;
  }

  async listChain(agentId: string, afterSeq: number, limit: number, maxBytes?: number): Promise<StoredRecord[]> {
    const rows = maxBytes === undefined
      ? await this.q(`SELECT ${RECORD_COLUMNS} FROM records r JOIN agents a ON a.id = r.agent_id
        WHERE r.agent_id = $1 AND r.chain_seq > $2 ORDER BY r.chain_seq LIMIT $3`, [agentId, afterSeq, limit])
      : await this.q(BOUNDED_CHAIN_SQL, [agentId, afterSeq, limit, maxBytes]);
    return rows.map(recordFromRow);
  }

  async listLedger(query: LedgerQuery): Promise<StoredRecord[]> {
    let n = 0;
    const { sql, params } = ledgerSql(query, () => `$${++n}`, 'NOT a.demo');
    return (await this.q(sql, params)).map(recordFromRow);
  }

  async countRecords(agentId?: string): Promise<RecordCounts> {
    const [row] = agentId ? await this.q(`${COUNT_SUMS} WHERE agent_id = $1`, [agentId]) : await this.q(COUNT_SUMS);
    return recordCountsFromSums(row);
  }

  async newestSortKey(): Promise<string | null> {
    const [row] = await this.q('SELECT sort_key FROM records ORDER BY sort_key DESC LIMIT 1');
    return row ? String(row.sort_key) : null;
  }

  async listHeads(): Promise<AgentHead[]> {
    const rows = await this.q(`SELECT a.*, h.seq AS head_seq, h.hash AS head_hash, h.recorded_at AS head_recorded_at
      FROM agents a JOIN chain_heads h ON h.agent_id = a.id ORDER BY a.handle`);
    return rows.map(agentHeadFromRow);
  }
}

async function insertApiKey(c: pg.Pool | pg.PoolClient, key: ApiKey & { secretHash: string }): Promise<void> {
  await c.query('INSERT INTO api_keys (id, agent_id, prefix, secret_hash, scopes, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, NULL)',
    [key.id, key.agentId, key.prefix, key.secretHash, key.scopes.join(' '), key.createdAt]);
}

