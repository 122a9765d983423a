// The directory sub-port on SQLite (store/directory-port.ts): the same database file as the SqliteStore.
import type { BoardCounts, BoardFilter, BoardPageQuery, BoardSort, BoardState, DirectoryStore, Headline, RecordedAfter } from '../../directory/port.ts';
import {
  boardFromRow, countsFromRow, countsSql, headlineFromRow, headlineValues, insertHeadlineSql, pageParams, pageSql, recordedAfterSql, recordedFromRows, staleSql, windowEndSql,
} from '../directory-rows.ts';
import type { Row } from '../rows.ts';
import type { SqliteHost } from './host.ts';

/** Named parameters (@p1, @p2, ...): the board version is used twice. */
const q = (i: number) => `@p${i}`;
const named = (values: unknown[]) => Object.fromEntries(values.map((v, i) => [`p${i + 1}`, v]));
const INSERT = insertHeadlineSql(q);
const bool = (b: boolean) => (b ? 1 : 0);

export class SqliteDirectoryStore implements DirectoryStore {
  constructor(private readonly store: SqliteHost) {}

  private get db() {
    return this.store.db;
  }

  async board(): Promise<BoardState> {
    return boardFromRow(this.db.prepare('SELECT * FROM agent_headlines_board WHERE id = 1').get() as Row | undefined);
  }

  async page(query: BoardPageQuery): Promise<Headline[]> {
    return (this.db.prepare(pageSql(query, q)).all(named(pageParams(query))) as Row[]).map(headlineFromRow);
  }

  async counts(filter: BoardFilter, sort: BoardSort, version: number): Promise<BoardCounts> {
    return countsFromRow(this.db.prepare(countsSql(filter, sort, q)).get(named([version])) as Row);
  }

  async staleAgents(afterId: string, window: number): Promise<{ stale: string[]; last: string | null }> {
    const end = this.db.prepare(windowEndSql(q)).pluck().get(named([afterId, window - 1])) as string | undefined;
    const stale = this.db.prepare(staleSql(q, end !== undefined)).pluck().all(named(end === undefined ? [afterId] : [afterId, end])) as string[];
    return { stale, last: end ?? null };
  }

  async recordedAfter(sortKey: string, limit: number): Promise<RecordedAfter> {
    return recordedFromRows(this.db.prepare(recordedAfterSql(q)).all(named([sortKey, limit])) as Row[]);
  }

  // The directory job's writes commit off the event loop, as the appends do.
  async project(h: Headline): Promise<number> {
    return this.store.writeTransaction(() => {
      const version = this.db.prepare('UPDATE agent_headlines_board SET version = version + 1, projected_at = ? WHERE id = 1 RETURNING version')
        .pluck().get(h.projectedAt) as number;
      this.db.prepare('UPDATE agent_headlines SET superseded_version = ?, superseded_at = ? WHERE agent_id = ? AND superseded_version IS NULL')
        .run(version, h.projectedAt, h.agentId);
      this.db.prepare(INSERT).run(named([h.agentId, version, ...headlineValues(h, bool)]));
      return version;
    });
  }

  async prune(before: string): Promise<number> {
    return this.store.writeTransaction(() => {
      const through = this.db.prepare('SELECT MAX(superseded_version) FROM agent_headlines WHERE superseded_version IS NOT NULL AND superseded_at < ?')
        .pluck().get(before) as number | null;
      if (through !== null) {
        this.db.prepare('DELETE FROM agent_headlines WHERE superseded_version IS NOT NULL AND superseded_version <= ?').run(through);
        this.db.prepare('UPDATE agent_headlines_board SET pruned_through = MAX(pruned_through, ?) WHERE id = 1').run(through);
      }
      return Number((this.db.prepare('SELECT pruned_through FROM agent_headlines_board WHERE id = 1').get() as Row).pruned_through);
    });
  }
}
