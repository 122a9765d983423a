// The directory port's SQL, one text for both adapters (placeholders from `p`).
import type { AgentStatus } from '../domain/types.ts';
import { LEVEL_SHARE_PERCENT, UNRANKED_KEY } from '../directory/port.ts';
import type { BoardSort, Headline, BoardFilter, BoardPageQuery, BoardState, BoardCounts, RecordedAfter } from '../directory/port.ts';

// Filter values are typed (an enum, an integer, booleans) and written into the text; instants, keys
// and ids are parameters.

export const HEADLINE_COLUMNS = [
  'agent_id', 'version', 'superseded_version', 'superseded_at', 'projected_at', 'handle', 'display_name', 'status', 'demo', 'synthetic',
  'created_at', 'records', 'decisions', 'executions', 'signed', 'linked', 'first_record_at', 'last_record_at', 'history_days', 'figures',
  'model_computed_at', 'broker_computed_at', 'k_excess_return', 'k_sharpe', 'k_records', 'k_newest', 'k_last_active',
] as const;

const KEY_COLUMN: Record<BoardSort, string> = {
  excess_return: 'k_excess_return', sharpe: 'k_sharpe', records: 'k_records', newest: 'k_newest', last_active: 'k_last_active',
};

const STATUSES = new Set<AgentStatus>(['active', 'paused', 'retired']);

/** The rows of the board at version `v` (a placeholder). */
export const visibleAt = (v: string) => `version <= ${v} AND (superseded_version IS NULL OR superseded_version > ${v})`;

const VERIFIED = `(executions > 0 AND linked * 100 >= executions * ${LEVEL_SHARE_PERCENT})`;
const SIGNED = `(decisions > 0 AND signed * 100 >= decisions * ${LEVEL_SHARE_PERCENT})`;

/** The filter as SQL (TRUE when it keeps everything). */
export function filterSql(f: BoardFilter): string {
  const parts: string[] = [];
  if (!f.includeDemo) parts.push('demo = FALSE AND synthetic = FALSE');
  if (f.status !== undefined) {
    if (!STATUSES.has(f.status)) throw new Error(`not an agent status: ${String(f.status)}`);
    parts.push(`status = '${f.status}'`);
  }
  if (f.minHistoryDays !== undefined) {
    if (!Number.isSafeInteger(f.minHistoryDays) || f.minHistoryDays < 0) throw new Error('min_history_days: a whole number of days');
    parts.push(`history_days >= ${f.minHistoryDays}`);
  }
  if (f.verified !== undefined) parts.push(f.verified ? VERIFIED : `NOT ${VERIFIED}`);
  if (f.signed !== undefined) parts.push(f.signed ? SIGNED : `NOT ${SIGNED}`);
  return parts.length === 0 ? 'TRUE' : parts.join(' AND ');
}

/** A page of the board: $1 version, then (after a row) $2 key and $3 agent id, then the limit. */
export function pageSql(q: BoardPageQuery, p: (i: number) => string): string {
  const key = KEY_COLUMN[q.sort];
  const after = q.after === null ? '' : ` AND (${key}, agent_id) > (${p(2)}, ${p(3)})`;
  return `SELECT * FROM agent_headlines WHERE ${visibleAt(p(1))} AND ${filterSql(q)}${after}
    ORDER BY ${key}, agent_id LIMIT ${p(q.after === null ? 2 : 4)}`;
}

export function pageParams(q: BoardPageQuery): unknown[] {
  return q.after === null ? [q.version, q.limit] : [q.version, q.after.key, q.after.agentId, q.limit];
}

/** The board's counts at version $1 under the filter (unranked: on excess_return and sharpe only); read from agent_headlines_counts alone. */
export function countsSql(f: BoardFilter, sort: BoardSort, p: (i: number) => string): string {
  const kept = filterSql(f);
  const n = (cond: string) => `COALESCE(SUM(CASE WHEN ${cond} THEN 1 ELSE 0 END), 0)`;
  const unranked = sort === 'excess_return' || sort === 'sharpe' ? n(`${kept} AND ${KEY_COLUMN[sort]} >= ${UNRANKED_KEY}`) : '0';
  return `SELECT COUNT(*) AS n_all, ${n(kept)} AS n_listed, ${unranked} AS n_unranked,
      ${f.includeDemo ? '0' : n('demo = TRUE')} AS n_demo, ${f.includeDemo ? '0' : n('demo = FALSE AND synthetic = TRUE')} AS n_synthetic
    FROM agent_headlines WHERE ${visibleAt(p(1))}`;
}

export function countsFromRow(r: Record<string, unknown>): BoardCounts {
  return { all: Number(r.n_all), listed: Number(r.n_listed), unranked: Number(r.n_unranked), demo: Number(r.n_demo), synthetic: Number(r.n_synthetic) };
}

/** The id ending the window of $2 agents after $1 (null when fewer remain: the window runs to the end). */
export function windowEndSql(p: (i: number) => string): string {
  return `SELECT id FROM agents WHERE id > ${p(1)} ORDER BY id LIMIT 1 OFFSET ${p(2)}`;
}

/**
 * The agents with $1 < id <= $2 (or all after $1 when $2 is null, then the text has no $2) whose row is
 * missing, or behind the chain head, the status or a stored report.
 */
export function staleSql(p: (i: number) => string, bounded: boolean): string {
  return `SELECT a.id FROM agents a
      LEFT JOIN chain_heads h ON h.agent_id = a.id
      LEFT JOIN agent_headlines d ON d.agent_id = a.id AND d.superseded_version IS NULL
      LEFT JOIN performance_reports m ON m.agent_id = a.id AND m.portfolio = 'model'
      LEFT JOIN performance_reports b ON b.agent_id = a.id AND b.portfolio = 'broker'
    WHERE a.id > ${p(1)}${bounded ? ` AND a.id <= ${p(2)}` : ''}
      AND (d.agent_id IS NULL OR d.records <> COALESCE(h.seq, 0) OR d.status <> a.status
        OR COALESCE(d.model_computed_at, '') <> COALESCE(m.computed_at, '')
        OR COALESCE(d.broker_computed_at, '') <> COALESCE(b.computed_at, ''))
    ORDER BY a.id`;
}

/** The records after $1 by sort key (the append order), at most $2: their agents and sort keys. */
export function recordedAfterSql(p: (i: number) => string): string {
  return `SELECT agent_id, sort_key FROM records WHERE sort_key > ${p(1)} ORDER BY sort_key LIMIT ${p(2)}`;
}

export function recordedFromRows(rows: Record<string, unknown>[]): RecordedAfter {
  return { agents: [...new Set(rows.map((r) => String(r.agent_id)))], records: rows.length, last: rows.length === 0 ? null : String(rows.at(-1)!.sort_key) };
}

/** The new row's values, in HEADLINE_COLUMNS order after agent_id and version (superseded_* are null). */
export function headlineValues(h: Headline, bool: (b: boolean) => unknown): unknown[] {
  return [
    h.projectedAt, h.handle, h.displayName, h.status, bool(h.demo), bool(h.synthetic), h.createdAt, h.records, h.decisions, h.executions,
    h.signed, h.linked, h.firstRecordAt, h.lastRecordAt, h.historyDays, h.figures, h.modelComputedAt, h.brokerComputedAt,
    h.keys.excess_return, h.keys.sharpe, h.keys.records, h.keys.newest, h.keys.last_active,
  ];
}

/** INSERT of a new current row: $1 agent id, $2 version, then headlineValues. */
export function insertHeadlineSql(p: (i: number) => string): string {
  const columns = HEADLINE_COLUMNS.filter((c) => c !== 'superseded_version' && c !== 'superseded_at');
  return `INSERT INTO agent_headlines (${columns.join(', ')}) VALUES (${columns.map((_, i) => p(i + 1)).join(', ')})`;
}

const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export function headlineFromRow(r: Record<string, unknown>): Headline {
  return {
    agentId: String(r.agent_id),
    handle: String(r.handle),
    displayName: text(r.display_name),
    status: String(r.status) as AgentStatus,
    demo: r.demo === true || r.demo === 1,
    synthetic: r.synthetic === true || r.synthetic === 1,
    createdAt: String(r.created_at),
    records: Number(r.records),
    decisions: Number(r.decisions),
    executions: Number(r.executions),
    signed: Number(r.signed),
    linked: Number(r.linked),
    firstRecordAt: text(r.first_record_at),
    lastRecordAt: text(r.last_record_at),
    historyDays: num(r.history_days),
    figures: String(r.figures),
    modelComputedAt: text(r.model_computed_at),
    brokerComputedAt: text(r.broker_computed_at),
    keys: {
      excess_return: Number(r.k_excess_return), sharpe: Number(r.k_sharpe), records: Number(r.k_records), newest: Number(r.k_newest), last_active: Number(r.k_last_active),
    },
    projectedAt: String(r.projected_at),
  };
}

export function boardFromRow(r: Record<string, unknown> | undefined): BoardState {
  return { version: Number(r?.version ?? 0), projectedAt: text(r?.projected_at), prunedThrough: Number(r?.pruned_through ?? 0) };
}
