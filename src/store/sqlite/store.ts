// The embedded store: SQLite through better-sqlite3 in WAL mode. Every write is durable before
// it returns: synchronous=FULL, except appends, whose WAL fsync runs off the event loop
// (wal-sync.ts), as do WAL checkpoints (checkpointer.ts). The ledger batches appends (group
// commit); one batch is one IMMEDIATE transaction, which also orders writers from several processes.
import Database, { type SqliteDatabase, type SqliteStatement } from './driver.ts';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type {
  Agent, AgentHead, AgentStatus, ApiKey, ChainHead, KeyHolder, RecordCounts, SigningKey, StoredRecord,
} from '../../domain/types.ts';
import {
  agentValueKey, type AgentValue, type AppendFacts, type AppendPlan, type AppendQuestions, type AppendRows,
  type HeadFact, type IdempotentResult, type LedgerQuery, type LedgerStore, type Page, type StoreGauges, StoreUnavailable, type WingStores,
} from '../port.ts';
import type { RecordType } from '../../core/chain.ts';
import { GENESIS_PREV_HASH, sortKeyOf } from '../../core/chain.ts';
import {
  agentFromRow, apiKeyFromRow, idempotentFromRow, prefixedAgentFromRow, recordFromRow, signingKeyFromRow,
  INSERT_RECORD_SQLITE, KEY_HOLDER_COLUMNS, RECORD_COLUMNS, recordParams, type Row,
} from '../rows.ts';
import { COUNT_SUMS, recordCountsFromSums } from '../counts.ts';
import { agentHeadFromRow, boundedChainSql, ledgerSql } from '../public-rows.ts';
import { SQLITE_MIGRATIONS } from './migrations.ts';
import { SqliteLogStore } from './log.ts';
import { SqliteAnchorStore } from './anchors.ts';
import { SqliteCosignatureStore } from './cosignatures.ts';
import { SqliteWebhookStore } from './webhooks.ts';
import { SqliteVaultStore } from './vault.ts';
import { SqliteBrokerStore } from './brokers.ts';
import { SqliteDirectoryStore } from './directory.ts';
import { SqliteSiteStore } from './site.ts';
import { SqliteMarketStore } from './market.ts';
import { WalSync } from './wal-sync.ts';
import { Checkpointer, DEFAULT_CHECKPOINT_POLICY, type CheckpointPolicy } from './checkpointer.ts';

/** listChain with a byte budget (public-rows.ts). */
const BOUNDED_CHAIN_SQL = boundedChainSql(() => '?');

/**
 * SQLite errors that mean "the database cannot take a write now", not "this request is wrong": a
 * full disk, a write lock another process held past busy_timeout, an I/O error.
 */
const UNAVAILABLE_CODES = /^SQLITE_(FULL|BUSY|IOERR)/;

/** Runs a write; those errors come out as StoreUnavailable (answered 503, retried by the client later). */
function writing<T>(work: () => T): T {
  try {
    return work();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && UNAVAILABLE_CODES.test(code)) {
      throw new StoreUnavailable(`the database cannot write now: ${(err as Error).message}`, { cause: err });
    }
    throw err;
  }
}

function prepareStatements(db: SqliteDatabase) {
  const p = (sql: string) => db.prepare(sql);
  return {
    headForUpdate: p(`SELECT h.seq, h.hash, h.recorded_at, a.status FROM chain_heads h
                      JOIN agents a ON a.id = h.agent_id WHERE h.agent_id = ?`),
    idempotencyExists: p('SELECT 1 FROM idempotency_keys WHERE agent_id = ? AND key = ?'),
    insertNonce: p('INSERT INTO nonces (agent_id, nonce, record_id) VALUES (?, ?, ?)'),
    nonceExists: p('SELECT 1 FROM nonces WHERE agent_id = ? AND nonce = ?'),
    insertRecord: p(INSERT_RECORD_SQLITE),
    insertIdempotency: p(`INSERT INTO idempotency_keys (agent_id, key, fingerprint, record_id, status, body, created_at)
                          VALUES (?, ?, ?, ?, ?, ?, ?)`),
    updateHead: p(`UPDATE chain_heads SET seq = ?, hash = ?, recorded_at = ?, decision_count = decision_count + ?,
                     execution_count = execution_count + ?, activity_count = activity_count + ?, signed_count = signed_count + ? WHERE agent_id = ?`),
    findIdempotent: p(`SELECT k.fingerprint, k.status, k.body, ${RECORD_COLUMNS} FROM idempotency_keys k
                       LEFT JOIN records r ON r.id = k.record_id LEFT JOIN agents a ON a.id = r.agent_id
                       WHERE k.agent_id = ? AND k.key = ?`),
    dataVersion: p('PRAGMA data_version').pluck(),
    findKeyHolder: p(`SELECT ${KEY_HOLDER_COLUMNS} FROM api_keys k JOIN agents a ON a.id = k.agent_id WHERE k.secret_hash = ?`),
    newestSortKey: p('SELECT sort_key FROM records ORDER BY sort_key DESC LIMIT 1'),
    findSigningKey: p('SELECT * FROM signing_keys WHERE agent_id = ? AND id = ?'),
    signingKeyUsable: p('SELECT 1 FROM signing_keys WHERE agent_id = ? AND id = ? AND revoked_at IS NULL'),
    findRecord: p(`SELECT ${RECORD_COLUMNS} FROM records r JOIN agents a ON a.id = r.agent_id WHERE r.id = ?`),
  };
}
type Statements = ReturnType<typeof prepareStatements>;

const KEY_HOLDER_CACHE_LIMIT = 10_000;
/** A WAL that has grown past this is cut back to it when it starts over. */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/** The wings' stores: declared once (WingStores, store/port.ts), assigned in the constructor. */
export interface SqliteStore extends WingStores {}

export class SqliteStore implements LedgerStore {
  /** Transactions run one after another on this connection; later batches may commit while earlier ones fsync. */
  readonly maxBatchesInFlight = 4;
  readonly db: SqliteDatabase;
  private prepared: Statements | null = null;
  private keyHolders: { version: number; byHash: Map<string, KeyHolder> } = { version: -1, byHash: new Map() };
  /** Null for an in-memory database, which has no WAL and nothing to make durable. */
  private readonly walSync: WalSync | null;
  readonly checkpointer: Checkpointer | null;

  /** `checkpoints` null: this connection never checkpoints the WAL (a read thread's; the serving thread's does). */
  constructor(readonly path: string, checkpoints: Partial<CheckpointPolicy> | null = DEFAULT_CHECKPOINT_POLICY) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma('busy_timeout = 10000'); // first: switching to WAL waits too while another process holds the file
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('foreign_keys = ON');
    // The market adapter keeps the performance wing's reports too.
    const marketStore = new SqliteMarketStore(this);
    const wings: WingStores = {
      log: new SqliteLogStore(this),
      anchors: new SqliteAnchorStore(this.db),
      cosignatures: new SqliteCosignatureStore(this.db),
      webhooks: new SqliteWebhookStore(this),
      vault: new SqliteVaultStore(this),
      brokers: new SqliteBrokerStore(this),
      directory: new SqliteDirectoryStore(this),
      site: new SqliteSiteStore(this),
      market: marketStore,
      performance: marketStore,
    };
    Object.assign(this, wings);
    if (path === ':memory:') {
      this.walSync = null;
      this.checkpointer = null;
    } else {
      this.walSync = new WalSync(`${path}-wal`);
      this.db.pragma('wal_autocheckpoint = 0');
      this.db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      this.checkpointer = checkpoints && new Checkpointer(path, (pages) => this.db.pragma(`wal_autocheckpoint = ${pages}`), checkpoints);
    }
  }

  async migrate(): Promise<void> {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    const applied = new Set(
      (this.db.prepare('SELECT version FROM schema_migrations').all() as Row[]).map((r) => Number(r.version)),
    );
    const apply = this.db.transaction((version: number, sql: string) => {
      this.db.exec(sql);
      this.db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(version, new Date().toISOString());
    });
    const pending = SQLITE_MIGRATIONS.map((sql, i) => ({ version: i + 1, sql })).filter(({ version }) => !applied.has(version));
    for (const { version, sql } of pending) apply.immediate(version, sql);
    // A new schema leaves hundreds of pages in the WAL: copied out and emptied here, before any
    // append, so the WAL's bounds count from zero. Only after a migration: an operator command
    // beside a running service must not hold off its writers. A reader in another process can
    // delay it (busy_timeout) or leave the WAL as it was, which the checkpointer then bounds.
    if (pending.length > 0 && this.path !== ':memory:') this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.prepared = prepareStatements(this.db);
    this.checkpointer?.start();
  }

  /** A connection beside the one that migrated (a read thread's): checks the schema is current, and writes nothing to do so. */
  async attach(): Promise<void> {
    const newest = this.db.prepare('SELECT max(version) FROM schema_migrations').pluck().get() as number | null;
    if ((newest ?? 0) < SQLITE_MIGRATIONS.length) throw new Error(`the database is at schema version ${newest ?? 0}, not ${SQLITE_MIGRATIONS.length}: it is migrated by the serving process`);
    this.prepared = prepareStatements(this.db);
  }

  private get statements(): Statements {
    if (!this.prepared) throw new Error('SqliteStore: migrate() must run before use');
    return this.prepared;
  }

  async close(): Promise<void> {
    await this.checkpointer?.close();
    await this.walSync?.close();
    if (this.db.open) this.db.close();
  }

  /** Fails after a failed WAL fsync too: the database answers, but this process may write nothing more. */
  async ping(): Promise<void> {
    this.walSync?.assertHealthy();
    this.db.prepare('SELECT 1').get();
  }

  gauges(): StoreGauges {
    if (!this.walSync || !this.checkpointer) return {};
    const { runs, truncates } = this.checkpointer.stats;
    return { wal: { bytes: this.checkpointer.walBytes(), fsyncs: this.walSync.stats.syncs, fsyncSeconds: this.walSync.stats.seconds, checkpoints: runs, truncates } };
  }

  async createAgent(agent: Agent, firstKey: ApiKey & { secretHash: string }): Promise<void> {
    writing(() => this.db.transaction(() => {
      this.db.prepare('INSERT INTO agents (id, handle, display_name, status, demo, created_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(agent.id, agent.handle, agent.displayName, agent.status, agent.demo ? 1 : 0, agent.createdAt);
      this.db.prepare('INSERT INTO chain_heads (agent_id, seq, hash, recorded_at) VALUES (?, 0, ?, NULL)')
        .run(agent.id, GENESIS_PREV_HASH);
      this.insertApiKey(firstKey);
    }).immediate());
  }

  async findAgentByHandle(handle: string): Promise<Agent | null> {
    const row = this.db.prepare('SELECT * FROM agents WHERE handle = ?').get(handle) as Row | undefined;
    return row ? agentFromRow(row) : null;
  }

  async listAgents(): Promise<Agent[]> {
    return (this.db.prepare('SELECT * FROM agents ORDER BY handle').all() as Row[]).map(agentFromRow);
  }

  async setAgentStatus(agentId: string, status: AgentStatus): Promise<void> {
    writing(() => this.db.prepare('UPDATE agents SET status = ? WHERE id = ?').run(status, agentId));
    this.forgetKeyHolders();
  }

  async createApiKey(key: ApiKey & { secretHash: string }): Promise<void> {
    writing(() => this.insertApiKey(key));
  }

  private insertApiKey(key: ApiKey & { secretHash: string }): void {
    this.db.prepare('INSERT INTO api_keys (id, agent_id, prefix, secret_hash, scopes, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, NULL)')
      .run(key.id, key.agentId, key.prefix, key.secretHash, key.scopes.join(' '), key.createdAt);
  }

  /**
   * Every authenticated request asks this, so known keys are remembered, but only while nothing
   * could have changed them: another connection's commit (any process) moves PRAGMA data_version,
   * and this connection's own key and agent changes clear the cache where they are made. Unknown
   * keys are never remembered.
   */
  async findKeyHolder(secretHash: string): Promise<KeyHolder | null> {
    const version = this.statements.dataVersion.get() as number;
    if (version !== this.keyHolders.version) this.forgetKeyHolders(version);
    const known = this.keyHolders.byHash.get(secretHash);
    if (known) return known;
    const row = this.statements.findKeyHolder.get(secretHash) as Row | undefined;
    if (!row) return null;
    const holder: KeyHolder = { key: apiKeyFromRow(row), secretHash: String(row.secret_hash), agent: prefixedAgentFromRow(row) };
    if (this.keyHolders.byHash.size >= KEY_HOLDER_CACHE_LIMIT) this.keyHolders.byHash.clear();
    this.keyHolders.byHash.set(secretHash, holder);
    return holder;
  }

  private forgetKeyHolders(version = this.keyHolders.version): void {
    this.keyHolders = { version, byHash: new Map() };
  }

  async findApiKey(id: string): Promise<ApiKey | null> {
    const row = this.db.prepare('SELECT * FROM api_keys WHERE id = ?').get(id) as Row | undefined;
    return row ? apiKeyFromRow(row) : null;
  }

  async listApiKeys(agentId?: string): Promise<ApiKey[]> {
    const rows = agentId
      ? this.db.prepare('SELECT * FROM api_keys WHERE agent_id = ? ORDER BY id').all(agentId)
      : this.db.prepare('SELECT * FROM api_keys ORDER BY id').all();
    return (rows as Row[]).map(apiKeyFromRow);
  }

  async revokeApiKey(id: string, at: string): Promise<void> {
    writing(() => this.db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at, id));
    this.forgetKeyHolders();
  }

  async createSigningKey(key: SigningKey): Promise<SigningKey> {
    return writing(() => this.db.transaction(() => {
      this.db.prepare(`INSERT INTO signing_keys (id, agent_id, public_key, label, created_at, revoked_at)
        VALUES (?, ?, ?, ?, ?, NULL) ON CONFLICT (agent_id, public_key) DO NOTHING`)
        .run(key.id, key.agentId, key.publicKey, key.label, key.createdAt);
      return signingKeyFromRow(this.db.prepare('SELECT * FROM signing_keys WHERE agent_id = ? AND public_key = ?').get(key.agentId, key.publicKey) as Row);
    }).immediate());
  }

  async findSigningKey(agentId: string, id: string): Promise<SigningKey | null> {
    const row = this.statements.findSigningKey.get(agentId, id) as Row | undefined;
    return row ? signingKeyFromRow(row) : null;
  }

  async listSigningKeys(agentId: string): Promise<SigningKey[]> {
    return (this.db.prepare('SELECT * FROM signing_keys WHERE agent_id = ? ORDER BY id').all(agentId) as Row[]).map(signingKeyFromRow);
  }

  async revokeSigningKey(agentId: string, id: string, at: string): Promise<void> {
    // IMMEDIATE: no batch can chain a record between reading the head and revoking.
    writing(() => this.db.transaction(() => {
      const head = this.db.prepare('SELECT recorded_at FROM chain_heads WHERE agent_id = ?').get(agentId) as Row | undefined;
      const latest = (head?.recorded_at as string | null | undefined) ?? null;
      this.db.prepare('UPDATE signing_keys SET revoked_at = ? WHERE agent_id = ? AND id = ? AND revoked_at IS NULL')
        .run(latest !== null && latest > at ? latest : at, agentId, id);
    }).immediate());
  }

  async findIdempotent(agentId: string, key: string): Promise<IdempotentResult | null> {
    const row = this.statements.findIdempotent.get(agentId, key) as Row | undefined;
    return row ? idempotentFromRow(row) : null;
  }

  async appendBatch<T>(questions: AppendQuestions, plan: (facts: AppendFacts) => AppendPlan<T>): Promise<T> {
    const append = () => writing(() => this.db.transaction(() => {
      const { rows, result } = plan(this.appendFacts(questions));
      this.writeAppend(rows);
      return { result, count: rows.records.length };
    }).immediate());
    if (!this.walSync) return append().result;
    this.walSync.assertHealthy();
    await this.checkpointer?.beforeAppend();
    // db.pragma each time, not a statement prepared once: SQLite applies `synchronous` while it
    // compiles the pragma, so re-running a prepared one does not reliably set it (tried).
    this.db.pragma('synchronous = NORMAL');
    let appended: { result: T; count: number };
    try {
      appended = append();
    } finally {
      this.db.pragma('synchronous = FULL');
    }
    this.checkpointer?.afterAppend(appended.count);
    await this.walSync.sync(); // only now is the batch durable, and only now is it answered
    return appended.result;
  }

  /**
   * A write beside the record path (the webhook outbox): committed like an append, without an
   * fsync on the event loop, then made durable off it. Durable when this resolves (unless
   * `durable` is false: then a power loss may forget it, a process crash does not); the WAL sync
   * also covers every commit before it.
   */
  async writeOffLoop<T>(write: () => T, durable = true): Promise<T> {
    if (!this.walSync) return write();
    this.walSync.assertHealthy();
    await this.checkpointer?.beforeAppend();
    this.db.pragma('synchronous = NORMAL');
    let result: T;
    try {
      result = write();
    } finally {
      this.db.pragma('synchronous = FULL');
    }
    this.checkpointer?.afterAppend(1);
    if (durable) await this.walSync.sync();
    return result;
  }

  writeTransaction<T>(work: () => T, durable = true): Promise<T> {
    return this.writeOffLoop(() => this.db.transaction(work).immediate(), durable);
  }

  /** Inside the IMMEDIATE transaction, which no other writer (of any process) shares. */
  private appendFacts(questions: AppendQuestions): AppendFacts {
    const statements = this.statements;
    const heads = new Map<string, HeadFact>();
    for (const agentId of questions.agentIds) {
      const row = statements.headForUpdate.get(agentId) as Row | undefined;
      if (row) heads.set(agentId, { seq: Number(row.seq), hash: String(row.hash), recordedAt: (row.recorded_at as string | null) ?? null, active: row.status === 'active' });
    }
    const matching = (pairs: AgentValue[], statement: SqliteStatement) =>
      new Set(pairs.filter((p) => statement.get(p.agentId, p.value) !== undefined).map((p) => agentValueKey(p.agentId, p.value)));
    return {
      heads,
      usedIdempotencyKeys: matching(questions.idempotencyKeys, statements.idempotencyExists),
      usableSigningKeys: matching(questions.signingKeyIds, statements.signingKeyUsable),
      usedNonces: matching(questions.nonces, statements.nonceExists),
      newestSortKey: ((statements.newestSortKey.get() as Row | undefined)?.sort_key as string | undefined) ?? null,
    };
  }

  private writeAppend(rows: AppendRows): void {
    const statements = this.statements;
    for (const record of rows.records) statements.insertRecord.run(...recordParams(record));
    for (const k of rows.idempotencyKeys) statements.insertIdempotency.run(k.agentId, k.key, k.fingerprint, k.recordId, k.status, '', k.createdAt);
    for (const n of rows.nonces) statements.insertNonce.run(n.agentId, n.nonce, n.recordId);
    for (const h of rows.heads) statements.updateHead.run(h.seq, h.hash, h.recordedAt, h.added.decision, h.added.execution, h.added.activity, h.added.signed, h.agentId);
  }

  async chainHead(agentId: string): Promise<ChainHead> {
    const row = this.db.prepare('SELECT seq, hash, recorded_at FROM chain_heads WHERE agent_id = ?').get(agentId) as Row | undefined;
    if (!row) return { seq: 0, hash: GENESIS_PREV_HASH, recordedAt: null };
    return { seq: Number(row.seq), hash: String(row.hash), recordedAt: (row.recorded_at as string | null) ?? null };
  }

  async findRecord(id: string): Promise<StoredRecord | null> {
    const row = this.statements.findRecord.get(id) as Row | undefined;
    return row ? recordFromRow(row) : null;
  }

  async listAgentRecords(agentId: string, type: RecordType, page: Page): Promise<StoredRecord[]> {
    const rows = page.before
      ? this.db.prepare(`SELECT ${RECORD_COLUMNS} FROM records r JOIN agents a ON a.id = r.agent_id
          WHERE r.agent_id = ? AND r.type = ? AND r.sort_key < ? ORDER BY r.sort_key DESC LIMIT ?`)
          .all(agentId, type, sortKeyOf(page.before), page.limit)
      : this.db.prepare(`SELECT ${RECORD_COLUMNS} FROM records r JOIN agents a ON a.id = r.agent_id
          WHERE r.agent_id = ? AND r.type = ? ORDER BY r.sort_key DESC LIMIT ?`)
          .all(agentId, type, page.limit);
    return (rows as Row[]).map(recordFromRow);
  }

  async isNonceUsed(agentId: string, nonce: string): Promise<boolean> {
    return this.db.prepare('SELECT 1 FROM nonces WHERE agent_id = ? AND nonce = ?').get(agentId, nonce) !== undefined;
  }

  // Public reads. Statements are prepared once per distinct SQL text (the ledger's filters
  // combine into a handful of shapes).
  private readonly readStatements = new Map<string, SqliteStatement>();

  private read(sql: string): SqliteStatement {
    let statement = this.readStatements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.readStatements.set(sql, statement);
    }
    return statement;
  }

  async findAgentById(id: string): Promise<Agent | null> {
    const row = this.read('SELECT * FROM agents WHERE id = ?').get(id) as Row | undefined;
    return row ? agentFromRow(row) : null;
  }

  async listChain(agentId: string, afterSeq: number, limit: number, maxBytes?: number): Promise<StoredRecord[]> {
    const rows = maxBytes === undefined
      ? this.read(`SELECT ${RECORD_COLUMNS} FROM records r JOIN agents a ON a.id = r.agent_id
        WHERE r.agent_id = ? AND r.chain_seq > ? ORDER BY r.chain_seq LIMIT ?`).all(agentId, afterSeq, limit)
      : this.read(BOUNDED_CHAIN_SQL).all(agentId, afterSeq, limit, maxBytes);
    return (rows as Row[]).map(recordFromRow);
  }

  async listLedger(query: LedgerQuery): Promise<StoredRecord[]> {
    const { sql, params } = ledgerSql(query, '?', 'a.demo = 0');
    return (this.read(sql).all(...params) as Row[]).map(recordFromRow);
  }

  async countRecords(agentId?: string): Promise<RecordCounts> {
    const row = (agentId ? this.read(`${COUNT_SUMS} WHERE agent_id = ?`).get(agentId) : this.read(COUNT_SUMS).get()) as Row | undefined;
    return recordCountsFromSums(row);
  }

  async newestSortKey(): Promise<string | null> {
    return ((this.statements.newestSortKey.get() as Row | undefined)?.sort_key as string | undefined) ?? null;
  }

  async listHeads(): Promise<AgentHead[]> {
    const rows = this.read(`SELECT a.*, h.seq AS head_seq, h.hash AS head_hash, h.recorded_at AS head_recorded_at
      FROM agents a JOIN chain_heads h ON h.agent_id = a.id ORDER BY a.handle`).all() as Row[];
    return rows.map(agentHeadFromRow);
  }
}
