// The directory sub-port on PostgreSQL (store/directory-port.ts), over the PostgresStore's pool. A
// projection holds the board row from its UPDATE to its commit, so versions commit in order.
import type { BoardCounts, BoardFilter, BoardPageQuery, BoardSort, BoardState, DirectoryStore, Headline, RecordedAfter } from '../../directory/port.ts';
import {
  boardFromRow, countsFromRow, countsSql, headlineFromRow, headlineValues, insertHeadlineSql, pageParams, pageSql, recordedAfterSql, recordedFromRows, staleSql, windowEndSql,
} from '../directory-rows.ts';
import type { Row } from '../rows.ts';
import type { PostgresHost } from './pool.ts';

const p = (i: number) => `$${i}`;
const INSERT = insertHeadlineSql(p);

export class PostgresDirectoryStore implements DirectoryStore {
  constructor(private readonly store: PostgresHost) {}

  private async q(sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.store.pool.query(sql, params)).rows as Row[];
  }

  async board(): Promise<BoardState> {
    return boardFromRow((await this.q('SELECT * FROM agent_headlines_board WHERE id = 1'))[0]);
  }

  async page(query: BoardPageQuery): Promise<Headline[]> {
    return (await this.q(pageSql(query, p), pageParams(query))).map(headlineFromRow);
  }

  async counts(filter: BoardFilter, sort: BoardSort, version: number): Promise<BoardCounts> {
    return countsFromRow((await this.q(countsSql(filter, sort, p), [version]))[0]!);
  }

  async staleAgents(afterId: string, window: number): Promise<{ stale: string[]; last: string | null }> {
    const [end] = await this.q(windowEndSql(p), [afterId, window - 1]);
    const last = end === undefined ? null : String(end.id);
    const rows = await this.q(staleSql(p, last !== null), last === null ? [afterId] : [afterId, last]);
    return { stale: rows.map((r) => String(r.id)), last };
  }

  async recordedAfter(sortKey: string, limit: number): Promise<RecordedAfter> {
    return recordedFromRows(await this.q(recordedAfterSql(p), [sortKey, limit]));
  }

  async project(h: Headline): Promise<number> {
    return this.store.pool.transaction(async (c) => {
      const { rows } = await c.query('UPDATE agent_headlines_board SET version = version + 1, projected_at = $1 WHERE id = 1 RETURNING version', [h.projectedAt]);
      const version = Number((rows[0] as Row).version);
      await c.query('UPDATE agent_headlines SET superseded_version = $1, superseded_at = $2 WHERE agent_id = $3 AND superseded_version IS NULL', [version, h.projectedAt, h.agentId]);
      await c.query(INSERT, [h.agentId, version, ...headlineValues(h, (b) => b)]);
      return version;
    });
  }

  async prune(before: string): Promise<number> {
    return this.store.pool.transaction(async (c) => {
      const { rows } = await c.query('SELECT MAX(superseded_version) AS through FROM agent_headlines WHERE superseded_version IS NOT NULL AND superseded_at < $1', [before]);
      const through = (rows[0] as Row).through;
      if (through !== null && through !== undefined) {
        await c.query('DELETE FROM agent_headlines WHERE superseded_version IS NOT NULL AND superseded_version <= $1', [through]);
        await c.query('UPDATE agent_headlines_board SET pruned_through = GREATEST(pruned_through, $1) WHERE id = 1', [through]);
      }
      const board = await c.query('SELECT pruned_through FROM agent_headlines_board WHERE id = 1');
      return Number((board.rows[0] as Row).pruned_through);
    });
  }
}
