// Row mapping and SQL shared by both adapters for the public reads (ledger page, heads).
// The two dialects differ only in placeholders and in how the demo flag is tested.
import type { AgentHead } from '../domain/types.ts';
import type { LedgerQuery } from './port.ts';
import { agentFromRow, RECORD_COLUMNS, type Row } from './rows.ts';

/**
 * The ledger page query: newest first by sort key, only the filters that are set (so each
 * combination is one plain indexed query), LIMIT last. `placeholder` yields `?` or `$n`. With
 * `maxBytes`, the content sizes come first, as in boundedChainSql, and only the records whose
 * running total of content before them is under the budget are read. CROSS JOIN keeps the page
 * (at most `limit` ids) the outer loop in SQLite: joined plainly, its planner scanned every record
 * in sort-key order to skip a sort of the page's few rows (bench/history/write.md).
 */
export function ledgerSql(
  q: LedgerQuery,
  placeholder: string | (() => string),
  demoHidden: string,
): { sql: string; params: unknown[] } {
  const next = typeof placeholder === 'string' ? () => placeholder : placeholder;
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (condition: (p: string) => string, value: unknown) => {
    where.push(condition(next()));
    params.push(value);
  };
  if (q.beforeSortKey !== undefined) add((p) => `r.sort_key < ${p}`, q.beforeSortKey);
  if (q.symbol !== undefined) add((p) => `r.symbol = ${p}`, q.symbol);
  if (q.agentId !== undefined) add((p) => `r.agent_id = ${p}`, q.agentId);
  if (q.type !== undefined) add((p) => `r.type = ${p}`, q.type);
  if (!q.includeDemo) where.push(demoHidden);
  const limit = next();
  params.push(q.limit);
  const filtered = `FROM records r JOIN agents a ON a.id = r.agent_id${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`;
  if (q.maxBytes === undefined) return { sql: `SELECT ${RECORD_COLUMNS} ${filtered} ORDER BY r.sort_key DESC LIMIT ${limit}`, params };
  const maxBytes = next();
  params.push(q.maxBytes);
  const sql = `WITH sizes AS (SELECT r.id, r.sort_key, octet_length(r.content) AS bytes ${filtered} ORDER BY r.sort_key DESC LIMIT ${limit}),
    page AS (SELECT id, sum(bytes) OVER (ORDER BY sort_key DESC ROWS UNBOUNDED PRECEDING) - bytes AS before FROM sizes)
    SELECT ${RECORD_COLUMNS} FROM page p CROSS JOIN records r JOIN agents a ON a.id = r.agent_id
    WHERE r.id = p.id AND p.before < ${maxBytes} ORDER BY r.sort_key DESC`;
  return { sql, params };
}

/**
 * listChain with a byte budget: the sizes of the next `limit` contents first (octet_length reads
 * no content: SQLite takes it from the record header, PostgreSQL from the TOAST pointer), then
 * the records whose running total of content before them is under the budget, so at least one.
 * Parameters: agent, after seq, limit, max bytes.
 */
export function boundedChainSql(p: () => string): string {
  return `WITH sizes AS (SELECT id, chain_seq, octet_length(content) AS bytes FROM records
      WHERE agent_id = ${p()} AND chain_seq > ${p()} ORDER BY chain_seq LIMIT ${p()}),
    page AS (SELECT id, sum(bytes) OVER (ORDER BY chain_seq ROWS UNBOUNDED PRECEDING) - bytes AS before FROM sizes)
    SELECT ${RECORD_COLUMNS} FROM page p CROSS JOIN records r JOIN agents a ON a.id = r.agent_id
    WHERE r.id = p.id AND p.before < ${p()} ORDER BY r.chain_seq`;
}

/** An agents row with `head_seq`, `head_hash`, `head_recorded_at` from chain_heads. */
export function agentHeadFromRow(r: Row): AgentHead {
  return {
    agent: agentFromRow(r),
    head: {
      seq: Number(r.head_seq),
      hash: String(r.head_hash),
      recordedAt: r.head_recorded_at === null || r.head_recorded_at === undefined ? null : String(r.head_recorded_at),
    },
  };
}
