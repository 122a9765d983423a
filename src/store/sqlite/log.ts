// The global log's storage on SQLite (log/port.ts). One writer at a time is SQLite's own
// rule: an integration is one IMMEDIATE transaction, and it re-checks the stored tree size inside
// it, so two serving processes on one file can never integrate the same leaves twice. It commits
// as the appends do (the host's writeOffLoop: the WAL's fsync on the thread pool, not inside the
// COMMIT on the event loop) and resolves once durable, so the integrator publishes no checkpoint
// a power loss could take back.
import type { StoredRecord } from '../../domain/types.ts';
import { LogMovedOn, type IntegratorSession, type LeafPosition, type LogBatch, type LogStore, type StoredCheckpoint, type StoredTile } from '../../log/port.ts';
import { recordFromRow, RECORD_COLUMNS, type Row } from '../rows.ts';
import type { SqliteDatabase, SqliteStatement } from './driver.ts';
import type { SqliteHost } from './host.ts';

const checkpointFromRow = (r: Row): StoredCheckpoint => ({
  treeSize: Number(r.tree_size), note: String(r.note), vkey: String(r.vkey), createdAt: String(r.created_at),
});

const bytes = (v: unknown): Uint8Array => new Uint8Array(v as Buffer);


export class SqliteLogStore implements LogStore {
  /** The reads' statements, prepared at first use (after the migrations) and kept: a proof is two of them. */
  private readonly statements = new Map<string, SqliteStatement>();

  constructor(private readonly host: SqliteHost) {}

  private db(): SqliteDatabase {
    return this.host.db;
  }

  private prepared(sql: string): SqliteStatement {
    let statement = this.statements.get(sql);
    if (!statement) this.statements.set(sql, (statement = this.db().prepare(sql)));
    return statement;
  }

  async latestCheckpoint(): Promise<StoredCheckpoint | null> {
    const row = this.prepared('SELECT * FROM log_checkpoints ORDER BY tree_size DESC LIMIT 1').get() as Row | undefined;
    return row ? checkpointFromRow(row) : null;
  }

  async checkpointAt(treeSize: number): Promise<StoredCheckpoint | null> {
    const row = this.prepared('SELECT * FROM log_checkpoints WHERE tree_size = ?').get(treeSize) as Row | undefined;
    return row ? checkpointFromRow(row) : null;
  }

  async tiles(ids: { level: number; index: number }[]): Promise<StoredTile[]> {
    const statement = this.prepared('SELECT hashes FROM log_tiles WHERE level = ? AND tile_index = ?');
    const out: StoredTile[] = [];
    for (const id of ids) {
      const row = statement.get(id.level, id.index) as Row | undefined;
      if (row) out.push({ level: id.level, index: id.index, hashes: bytes(row.hashes) });
    }
    return out;
  }

  async leafOf(recordId: string): Promise<LeafPosition | null> {
    const row = this.prepared('SELECT log_index FROM log_leaves WHERE record_id = ?').get(recordId) as Row | undefined;
    return row ? { logIndex: Number(row.log_index), recordId } : null;
  }

  async entries(start: number, count: number): Promise<StoredRecord[]> {
    const rows = this.prepared(`SELECT ${RECORD_COLUMNS} FROM log_leaves l JOIN records r ON r.id = l.record_id
      JOIN agents a ON a.id = r.agent_id WHERE l.log_index >= ? AND l.log_index < ? ORDER BY l.log_index`).all(start, start + count);
    return (rows as Row[]).map(recordFromRow);
  }

  async tryIntegrator(): Promise<IntegratorSession | null> {
    return new SqliteIntegratorSession(this.host, (sql) => this.prepared(sql));
  }
}

class SqliteIntegratorSession implements IntegratorSession {
  constructor(private readonly host: SqliteHost, private readonly prepared: (sql: string) => SqliteStatement) {}

  async lastSortKey(): Promise<string | null> {
    const row = this.prepared('SELECT sort_key FROM log_leaves ORDER BY log_index DESC LIMIT 1').get() as Row | undefined;
    return row ? String(row.sort_key) : null;
  }

  async pending(afterSortKey: string | null, limit: number): Promise<StoredRecord[]> {
    const rows = this.prepared(`SELECT ${RECORD_COLUMNS} FROM records r JOIN agents a ON a.id = r.agent_id
      WHERE r.sort_key > ? ORDER BY r.sort_key LIMIT ?`).all(afterSortKey ?? '', limit);
    return (rows as Row[]).map(recordFromRow);
  }

  async countPending(afterSortKey: string | null, limit: number): Promise<number> {
    const row = this.prepared('SELECT COUNT(*) AS n FROM (SELECT 1 FROM records WHERE sort_key > ? LIMIT ?)')
      .get(afterSortKey ?? '', limit) as Row;
    return Number(row.n);
  }

  async integrate(expectedSize: number, batch: LogBatch): Promise<void> {
    await this.host.writeTransaction(() => {
      const row = this.prepared('SELECT COALESCE(MAX(tree_size), 0) AS size FROM log_checkpoints').get() as Row;
      if (Number(row.size) !== expectedSize) throw new LogMovedOn(Number(row.size), expectedSize);
      const leaf = this.prepared('INSERT INTO log_leaves (log_index, record_id, sort_key) VALUES (?, ?, ?)');
      for (const l of batch.leaves) leaf.run(l.logIndex, l.recordId, l.sortKey);
      const tile = this.prepared(`INSERT INTO log_tiles (level, tile_index, hashes) VALUES (?, ?, ?)
        ON CONFLICT (level, tile_index) DO UPDATE SET hashes = excluded.hashes`);
      for (const t of batch.tiles) tile.run(t.level, t.index, Buffer.from(t.hashes));
      const c = batch.checkpoint;
      this.prepared('INSERT INTO log_checkpoints (tree_size, root, note, vkey, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(c.treeSize, Buffer.from(c.root), c.note, c.vkey, c.createdAt);
    });
  }

  async release(): Promise<void> {}
}
