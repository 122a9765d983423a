// Bitcoin anchors on SQLite (anchor/port.ts). The serving process is the only writer, so the
// job's hold is the job itself (one tick at a time in process).
import type { AnchorCounts, AnchorSession, AnchorStatus, AnchorStore, AnchorUpdate, StoredAnchor } from '../../anchor/port.ts';
import { ANCHOR_COUNTS_SQL, ANCHOR_INSERT_COLUMNS, ANCHOR_UPDATE_COLUMNS, anchorCountsFromRows, anchorFromRow, anchorInsertValues, anchorUpdateValues } from '../anchor-rows.ts';
import type { Row } from '../rows.ts';
import type { SqliteDatabase } from './driver.ts';

export class SqliteAnchorStore implements AnchorStore {
  constructor(private readonly db: SqliteDatabase) {}

  private all(sql: string, ...params: unknown[]): StoredAnchor[] {
    return (this.db.prepare(sql).all(...params) as Row[]).map(anchorFromRow);
  }

  async list(limit: number, beforeTreeSize?: number): Promise<StoredAnchor[]> {
    return this.all('SELECT * FROM log_anchors WHERE tree_size < ? ORDER BY tree_size DESC LIMIT ?', beforeTreeSize ?? Number.MAX_SAFE_INTEGER, limit);
  }

  async at(treeSize: number): Promise<StoredAnchor | null> {
    return this.all('SELECT * FROM log_anchors WHERE tree_size = ?', treeSize)[0] ?? null;
  }

  async latest(status?: AnchorStatus): Promise<StoredAnchor | null> {
    return status
      ? this.all('SELECT * FROM log_anchors WHERE status = ? ORDER BY tree_size DESC LIMIT 1', status)[0] ?? null
      : this.all('SELECT * FROM log_anchors ORDER BY tree_size DESC LIMIT 1')[0] ?? null;
  }

  async covering(logIndex: number, status: AnchorStatus): Promise<StoredAnchor | null> {
    return this.all('SELECT * FROM log_anchors WHERE status = ? AND tree_size > ? ORDER BY tree_size LIMIT 1', status, logIndex)[0] ?? null;
  }

  async counts(): Promise<AnchorCounts> {
    return anchorCountsFromRows(this.db.prepare(ANCHOR_COUNTS_SQL).all() as Row[]);
  }

  async calendarsUnreachableSince(): Promise<string | null> {
    const row = this.db.prepare('SELECT calendars_unreachable_since AS since FROM log_anchor_state WHERE id = 1').get() as Row | undefined;
    return row?.since === null || row?.since === undefined ? null : String(row.since);
  }

  async tryAnchorJob(): Promise<AnchorSession | null> {
    const db = this.db;
    return {
      insert: async (a: StoredAnchor) => {
        db.prepare(`INSERT INTO log_anchors (${ANCHOR_INSERT_COLUMNS}) VALUES (${ANCHOR_INSERT_COLUMNS.split(',').map(() => '?').join(', ')})`).run(...anchorInsertValues(a));
      },
      update: async (treeSize: number, c: AnchorUpdate) => {
        db.prepare(`UPDATE log_anchors SET ${ANCHOR_UPDATE_COLUMNS.map((col) => `${col} = ?`).join(', ')} WHERE tree_size = ?`).run(...anchorUpdateValues(c), treeSize);
      },
      due: async (now: string, limit: number) => this.all(`SELECT * FROM log_anchors WHERE status = 'pending'
        AND (next_attempt_at IS NULL OR next_attempt_at <= ?) ORDER BY tree_size LIMIT ?`, now, limit),
      setCalendarsUnreachableSince: async (since: string | null) => {
        db.prepare('UPDATE log_anchor_state SET calendars_unreachable_since = ? WHERE id = 1').run(since);
      },
      release: async () => {},
    };
  }
}
