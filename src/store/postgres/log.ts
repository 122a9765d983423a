// The global log's storage on PostgreSQL (log/port.ts). The integrator's hold is a
// session advisory lock taken on a connection of its own: it lasts while that connection lives,
// so when the holding process dies (or its connection does), PostgreSQL frees the lock and any
// other API node takes over. Every integration runs on that same connection, in one
// transaction, and re-checks the stored tree size, so a session that lost its lock without
// noticing still cannot write a second history.
import pg from 'pg';
import type { StoredRecord } from '../../domain/types.ts';
import type { IntegratorSession, LeafPosition, LogBatch, LogStore, StoredCheckpoint, StoredTile } from '../../log/port.ts';
import { recordFromRow, RECORD_COLUMNS, type Row } from '../rows.ts';
import type { LedgerPool } from './pool.ts';
import { takeSessionLock } from './session-lock.ts';

/** The session advisory lock the integrator holds (hashed with hashtext). */
export const integratorLockKey = (schema: string) => `ledger-log-integrator:${schema}`;

const checkpointFromRow = (r: Row): StoredCheckpoint => ({
  treeSize: Number(r.tree_size), note: String(r.note), vkey: String(r.vkey), createdAt: String(r.created_at),
});

export class PostgresLogStore implements LogStore {
  constructor(
    private readonly pool: LedgerPool,
    private readonly connection: { connectionString: string; schema: string },
  ) {}

  private async q(sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.pool.query(sql, params)).rows as Row[];
  }

  async latestCheckpoint(): Promise<StoredCheckpoint | null> {
    const [row] = await this.q('SELECT tree_size, note, vkey, created_at FROM log_checkpoints ORDER BY tree_size DESC LIMIT 1');
    return row ? checkpointFromRow(row) : null;
  }

  async checkpointAt(treeSize: number): Promise<StoredCheckpoint | null> {
    const [row] = await this.q('SELECT tree_size, note, vkey, created_at FROM log_checkpoints WHERE tree_size = $1', [treeSize]);
    return row ? checkpointFromRow(row) : null;
  }

  async tiles(ids: { level: number; index: number }[]): Promise<StoredTile[]> {
    if (ids.length === 0) return [];
    const rows = await this.q(
      `SELECT t.level, t.tile_index, t.hashes FROM log_tiles t
       JOIN unnest($1::int[], $2::bigint[]) AS w(level, tile_index) ON w.level = t.level AND w.tile_index = t.tile_index`,
      [ids.map((i) => i.level), ids.map((i) => i.index)]);
    return rows.map((r) => ({ level: Number(r.level), index: Number(r.tile_index), hashes: new Uint8Array(r.hashes as Buffer) }));
  }

  async leafOf(recordId: string): Promise<LeafPosition | null> {
    const [row] = await this.q('SELECT log_index FROM log_leaves WHERE record_id = $1', [recordId]);
    return row ? { logIndex: Number(row.log_index), recordId } : null;
  }

  async entries(start: number, count: number): Promise<StoredRecord[]> {
    const rows = await this.q(`SELECT ${RECORD_COLUMNS} FROM log_leaves l JOIN records r ON r.id = l.record_id
      JOIN agents a ON a.id = r.agent_id WHERE l.log_index >= $1 AND l.log_index < $2 ORDER BY l.log_index`, [start, start + count]);
    return rows.map(recordFromRow);
  }

  async tryIntegrator(): Promise<IntegratorSession | null> {
    const client = new pg.Client({
      connectionString: this.connection.connectionString,
      options: `-c search_path=${this.connection.schema}`,
    });
    const session = new PostgresIntegratorSession(client);
    client.on('error', () => session.lose());
    return (await takeSessionLock(client, integratorLockKey(this.connection.schema))) ? session : null;
  }
}

class PostgresIntegratorSession implements IntegratorSession {
  private lost = false;

  constructor(private readonly client: pg.Client) {}

  lose(): void {
    this.lost = true;
  }

  private async q(sql: string, params: unknown[] = []): Promise<Row[]> {
    if (this.lost) throw new Error('the integrator lock connection is gone');
    return (await this.client.query(sql, params)).rows as Row[];
  }

  async lastSortKey(): Promise<string | null> {
    const [row] = await this.q('SELECT sort_key FROM log_leaves ORDER BY log_index DESC LIMIT 1');
    return row ? String(row.sort_key) : null;
  }

  async pending(afterSortKey: string | null, limit: number): Promise<StoredRecord[]> {
    const rows = await this.q(`SELECT ${RECORD_COLUMNS} FROM records r JOIN agents a ON a.id = r.agent_id
      WHERE r.sort_key > $1 ORDER BY r.sort_key LIMIT $2`, [afterSortKey ?? '', limit]);
    return rows.map(recordFromRow);
  }

  async countPending(afterSortKey: string | null, limit: number): Promise<number> {
    const [row] = await this.q('SELECT COUNT(*) AS n FROM (SELECT 1 FROM records WHERE sort_key > $1 ORDER BY sort_key LIMIT $2) p',
      [afterSortKey ?? '', limit]);
    return Number(row!.n);
  }

  async integrate(expectedSize: number, batch: LogBatch): Promise<void> {
    await this.q('BEGIN');
    try {
      const [row] = await this.q('SELECT COALESCE(MAX(tree_size), 0) AS size FROM log_checkpoints');
      if (Number(row!.size) !== expectedSize) throw new Error(`the stored log has ${Number(row!.size)} leaves, not ${expectedSize}: another integrator ran`);
      const { leaves, tiles, checkpoint: c } = batch;
      await this.q('INSERT INTO log_leaves (log_index, record_id, sort_key) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])',
        [leaves.map((l) => l.logIndex), leaves.map((l) => l.recordId), leaves.map((l) => l.sortKey)]);
      await this.q(`INSERT INTO log_tiles (level, tile_index, hashes) SELECT * FROM unnest($1::int[], $2::bigint[], $3::bytea[])
        ON CONFLICT (level, tile_index) DO UPDATE SET hashes = excluded.hashes`,
        [tiles.map((t) => t.level), tiles.map((t) => t.index), tiles.map((t) => Buffer.from(t.hashes))]);
      await this.q('INSERT INTO log_checkpoints (tree_size, root, note, vkey, created_at) VALUES ($1, $2, $3, $4, $5)',
        [c.treeSize, Buffer.from(c.root), c.note, c.vkey, c.createdAt]);
      await this.q('COMMIT');
    } catch (err) {
      if (!this.lost) await this.client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  async release(): Promise<void> {
    this.lost = true;
    // Closing the connection ends the session, which frees its advisory lock.
    await this.client.end().catch(() => undefined);
  }
}
