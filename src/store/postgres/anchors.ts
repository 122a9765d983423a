// Bitcoin anchors on PostgreSQL (anchor/port.ts). The job's hold is a session advisory lock on
// a connection of its own, so one API node anchors at a time and another takes over when it dies;
// the hold's writes go through that connection.
import pg from 'pg';
import type { AnchorCounts, AnchorSession, AnchorStatus, AnchorStore, AnchorUpdate, StoredAnchor } from '../../anchor/port.ts';
import { ANCHOR_COUNTS_SQL, ANCHOR_INSERT_COLUMNS, ANCHOR_UPDATE_COLUMNS, anchorCountsFromRows, anchorFromRow, anchorInsertValues, anchorUpdateValues } from '../anchor-rows.ts';
import type { Row } from '../rows.ts';
import type { LedgerPool } from './pool.ts';
import { takeSessionLock } from './session-lock.ts';

export const anchorJobLockKey = (schema: string) => `ledger-anchor-job:${schema}`;

export class PostgresAnchorStore implements AnchorStore {
  constructor(private readonly pool: LedgerPool, private readonly connection: { connectionString: string; schema: string }) {}

  private async all(sql: string, params: unknown[] = []): Promise<StoredAnchor[]> {
    return ((await this.pool.query(sql, params)).rows as Row[]).map(anchorFromRow);
  }

  async list(limit: number, beforeTreeSize?: number): Promise<StoredAnchor[]> {
    return this.all('SELECT * FROM log_anchors WHERE tree_size < $1 ORDER BY tree_size DESC LIMIT $2', [beforeTreeSize ?? Number.MAX_SAFE_INTEGER, limit]);
  }

  async at(treeSize: number): Promise<StoredAnchor | null> {
    return (await this.all('SELECT * FROM log_anchors WHERE tree_size = $1', [treeSize]))[0] ?? null;
  }

  async latest(status?: AnchorStatus): Promise<StoredAnchor | null> {
    return (status
      ? await this.all('SELECT * FROM log_anchors WHERE status = $1 ORDER BY tree_size DESC LIMIT 1', [status])
      : await this.all('SELECT * FROM log_anchors ORDER BY tree_size DESC LIMIT 1'))[0] ?? null;
  }

  async covering(logIndex: number, status: AnchorStatus): Promise<StoredAnchor | null> {
    return (await this.all('SELECT * FROM log_anchors WHERE status = $1 AND tree_size > $2 ORDER BY tree_size LIMIT 1', [status, logIndex]))[0] ?? null;
  }

  async counts(): Promise<AnchorCounts> {
    return anchorCountsFromRows((await this.pool.query(ANCHOR_COUNTS_SQL)).rows);
  }

  async calendarsUnreachableSince(): Promise<string | null> {
    const { rows } = await this.pool.query('SELECT calendars_unreachable_since AS since FROM log_anchor_state WHERE id = 1');
    return rows[0]?.since ?? null;
  }

  async tryAnchorJob(): Promise<AnchorSession | null> {
    const client = new pg.Client({ connectionString: this.connection.connectionString, options: `-c search_path=${this.connection.schema}` });
    let lost = false;
    client.on('error', () => { lost = true; });
    if (!(await takeSessionLock(client, anchorJobLockKey(this.connection.schema)))) return null;
    const q = async (sql: string, params: unknown[]) => {
      if (lost) throw new Error('the anchoring job\'s lock connection is gone');
      return (await client.query(sql, params)).rows as Row[];
    };
    const cols = ANCHOR_INSERT_COLUMNS.split(',');
    return {
      insert: async (a: StoredAnchor) => { await q(`INSERT INTO log_anchors (${ANCHOR_INSERT_COLUMNS}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`, anchorInsertValues(a)); },
      update: async (treeSize: number, c: AnchorUpdate) => {
        await q(`UPDATE log_anchors SET ${ANCHOR_UPDATE_COLUMNS.map((col, i) => `${col} = $${i + 1}`).join(', ')} WHERE tree_size = $${ANCHOR_UPDATE_COLUMNS.length + 1}`, [...anchorUpdateValues(c), treeSize]);
      },
      due: async (now: string, limit: number) => (await q(`SELECT * FROM log_anchors WHERE status = 'pending'
        AND (next_attempt_at IS NULL OR next_attempt_at <= $1) ORDER BY tree_size LIMIT $2`, [now, limit])).map(anchorFromRow),
      setCalendarsUnreachableSince: async (since: string | null) => { await q('UPDATE log_anchor_state SET calendars_unreachable_since = $1 WHERE id = 1', [since]); },
      release: async () => { await client.end().catch(() => undefined); },
    };
  }
}
