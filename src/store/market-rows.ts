// Rows of the market tables <-> the market port's types (market/port.ts), shared by both adapters.
import type { ChainInput, ChainTerms, PendingPrice, PricedDecision, PriceObservation, PriceSource } from '../market/port.ts';
import type { StoredReport } from '../performance/port.ts';
import type { Row } from './rows.ts';

export const OBSERVATION_COLUMNS = [
  'record_id', 'agent_id', 'chain_seq', 'symbol', 'asked_at', 'observed_at', 'source', 'feed', 'synthetic',
  'status', 'price', 'provider_time', 'age_ms', 'stale', 'reason',
] as const;

const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** Column values in OBSERVATION_COLUMNS order; booleans as `bool` makes them (SQLite 0/1, PostgreSQL true/false). */
export function observationValues<B>(o: PriceObservation, bool: (b: boolean) => B): unknown[] {
  const common = [o.recordId, o.agentId, o.chainSeq, o.symbol, o.askedAt, o.observedAt, o.source, o.feed, bool(o.synthetic), o.status];
  return o.status === 'priced'
    ? [...common, o.price, o.providerTime, o.ageMs, bool(o.stale), null]
    : [...common, null, null, null, null, o.reason];
}

export function observationFromRow(r: Row): PriceObservation {
  // One object per row, no intermediate: an export reads these a thousand at a time.
  const o = {
    recordId: String(r.record_id),
    agentId: String(r.agent_id),
    chainSeq: Number(r.chain_seq),
    symbol: String(r.symbol),
    askedAt: String(r.asked_at),
    observedAt: String(r.observed_at),
    source: String(r.source) as PriceSource,
    feed: strOrNull(r.feed),
    synthetic: Boolean(r.synthetic),
  } as Record<string, unknown>;
  if (r.status === 'priced') {
    o.status = 'priced';
    o.price = String(r.price);
    o.providerTime = String(r.provider_time);
    o.ageMs = Number(r.age_ms);
    o.stale = Boolean(r.stale);
  } else {
    o.status = 'unpriced';
    o.reason = String(r.reason);
  }
  return o as PriceObservation;
}

/**
 * The chain of one agent with each record's observation, read as arrays (CHAIN_INPUT_SQL's column
 * order): at 100,000 records a report from scratch reads every one of them.
 */
export function chainInputSql(p: (i: number) => string): string {
  return `SELECT r.chain_seq, r.id, r.type, r.recorded_at, r.symbol, r.content, o.status, o.price, o.reason, o.source, o.feed, o.synthetic
    FROM records r LEFT JOIN price_observations o ON o.record_id = r.id
    WHERE r.agent_id = ${p(1)} AND r.chain_seq > ${p(2)} ORDER BY r.chain_seq LIMIT ${p(3)}`;
}

export function chainInputFromArray(a: unknown[]): ChainInput {
  // Two literal shapes, no spread: 100,000 of these are made for one report from scratch.
  let observation: ChainInput['observation'] = null;
  if (a[6] === 'priced') observation = { status: 'priced', price: String(a[7]), source: String(a[9]) as PriceSource, feed: strOrNull(a[10]), synthetic: Boolean(a[11]) };
  else if (a[6] !== null && a[6] !== undefined) observation = { status: 'unpriced', reason: String(a[8]), source: String(a[9]) as PriceSource, feed: strOrNull(a[10]), synthetic: Boolean(a[11]) };
  return { chainSeq: Number(a[0]), id: String(a[1]), type: String(a[2]), recordedAt: String(a[3]), symbol: strOrNull(a[4]), content: String(a[5]), observation };
}

/** The decision terms a page of outcomes reads, in chainTermsFromArray's order (DecisionTerms). */
export const TERM_NAMES = ['symbol', 'action', 'target_allocation_pct', 'quantity', 'notional', 'time_horizon'] as const;

/**
 * How a dialect reads a term out of `r.content`: `join` is added after the records (a lateral
 * parse, or ''), `term(name)` is the term's text, or NULL when it is absent or not a JSON string
 * (as the priced_decisions projection reads it). Only a decision with no row in priced_decisions
 * (not observed yet) has its content parsed.
 */
export type TermReader = { join: string; term: (name: (typeof TERM_NAMES)[number]) => string };

/**
 * chainTerms in both dialects. An observed decision's terms and observation come from the
 * priced_decisions projection; only a decision not observed yet has its content read, and only
 * within the budget: the sizes of those contents come first (octet_length reads no content:
 * SQLite takes it from the record header, PostgreSQL from the TOAST pointer), then the records
 * whose running total before them is under the budget. Parameters: agent, after seq, limit, max bytes.
 */
export function chainTermsSql(p: (i: number) => string, reader: TermReader): string {
  const unread = `r.type = 'decision' AND pd.chain_seq IS NULL`;
  const term = (name: (typeof TERM_NAMES)[number]) => `CASE WHEN pd.chain_seq IS NOT NULL THEN pd.${name} WHEN ${unread} THEN ${reader.term(name)} END`;
  // Whether a record is observed, as a lookup of its own key (a scalar subquery: run per record,
  // never turned into a join or a hash of the table). Joined to the records of one agent,
  // PostgreSQL's planner, with statistics taken while that agent had few rows (a new agent writing
  // fast), scanned every observed decision of the agent for each record (slow: see
  // bench/history/hostile.md).
  const notObserved = '(SELECT o.chain_seq FROM priced_decisions o WHERE o.agent_id = r.agent_id AND o.chain_seq = r.chain_seq) IS NULL';
  return `WITH sizes AS (SELECT r.id, r.chain_seq, CASE WHEN r.type = 'decision' AND ${notObserved} THEN octet_length(r.content) ELSE 0 END AS bytes
      FROM records r
      WHERE r.agent_id = ${p(1)} AND r.chain_seq > ${p(2)} ORDER BY r.chain_seq LIMIT ${p(3)}),
    page AS (SELECT id, bytes, sum(bytes) OVER (ORDER BY chain_seq ROWS UNBOUNDED PRECEDING) - bytes AS before FROM sizes)
    SELECT r.chain_seq, r.id, r.type, r.recorded_at, p.bytes, r.symbol, ${TERM_NAMES.map(term).join(', ')},
      pd.status, pd.price, pd.reason, pd.source, pd.feed, pd.synthetic
    FROM page p JOIN records r ON r.id = p.id
      LEFT JOIN priced_decisions pd ON pd.agent_id = r.agent_id AND pd.chain_seq = r.chain_seq ${reader.join}
    WHERE p.before < ${p(4)} ORDER BY r.chain_seq`;
}

export function chainTermsFromArray(a: unknown[]): ChainTerms {
  const type = String(a[2]);
  let observation: ChainTerms['observation'] = null;
  if (a[12] === 'priced') observation = { status: 'priced', price: String(a[13]), source: String(a[15]) as PriceSource, feed: strOrNull(a[16]), synthetic: Boolean(a[17]) };
  else if (a[12] !== null && a[12] !== undefined) observation = { status: 'unpriced', reason: String(a[14]), source: String(a[15]) as PriceSource, feed: strOrNull(a[16]), synthetic: Boolean(a[17]) };
  const terms = type !== 'decision' ? null : {
    symbol: strOrNull(a[6]) ?? strOrNull(a[5]) ?? '',
    action: strOrNull(a[7]),
    targetAllocationPct: strOrNull(a[8]),
    quantity: strOrNull(a[9]),
    notional: strOrNull(a[10]),
    timeHorizon: strOrNull(a[11]),
  };
  return { chainSeq: Number(a[0]), id: String(a[1]), type, recordedAt: String(a[3]), terms, observation, contentBytes: Number(a[4]) };
}

/**
 * One query: the agent's first seq at or after the pricing scan's cursor (no row before the first
 * scan). `+ 0` keeps the planners on (agent_id, sort_key): the tail after the cursor is short.
 */
export function observedPrefixSql(p: (i: number) => string): string {
  return `SELECT (SELECT min(r.chain_seq + 0) FROM records r WHERE r.agent_id = ${p(1)} AND r.sort_key >= s.sort_key) AS first_after
    FROM price_scan s WHERE s.id = 1`;
}

/** observedPrefix from that query's row: every decision with sort_key below the cursor is observed. */
export function observedPrefixOf(row: Row | undefined, headSeq: number): number {
  if (row === undefined) return 0;
  if (row.first_after === null) return headSeq;
  return Math.max(0, Math.min(headSeq, Number(row.first_after) - 1));
}

/** priced_decisions columns in pricedDecisionFromArray's order. */
export const PRICED_DECISION_COLUMNS = 'chain_seq, record_id, recorded_at, symbol, action, target_allocation_pct, quantity, notional, time_horizon, status, price, reason, source, feed, synthetic';

export function pricedDecisionsSql(p: (i: number) => string): string {
  return `SELECT ${PRICED_DECISION_COLUMNS}
    FROM priced_decisions WHERE agent_id = ${p(1)} AND chain_seq > ${p(2)} AND chain_seq <= ${p(3)} ORDER BY chain_seq LIMIT ${p(4)}`;
}

export function pricedDecisionFromArray(a: unknown[]): PricedDecision {
  const source = String(a[12]) as PriceSource;
  const feed = strOrNull(a[13]);
  const synthetic = Boolean(a[14]);
  return {
    chainSeq: Number(a[0]),
    id: String(a[1]),
    recordedAt: String(a[2]),
    terms: { symbol: String(a[3]), action: strOrNull(a[4]), targetAllocationPct: strOrNull(a[5]), quantity: strOrNull(a[6]), notional: strOrNull(a[7]), timeHorizon: strOrNull(a[8]) },
    observation: a[9] === 'priced'
      ? { status: 'priced', price: String(a[10]), source, feed, synthetic }
      : { status: 'unpriced', reason: String(a[11]), source, feed, synthetic },
  };
}

export function pendingFromRow(r: Row): PendingPrice {
  return {
    recordId: String(r.id),
    agentId: String(r.agent_id),
    chainSeq: Number(r.chain_seq),
    symbol: String(r.symbol ?? ''),
    recordedAt: String(r.recorded_at),
    assetClass: String(r.asset_class ?? 'US_EQUITY'),
  };
}

export function reportFromRow(r: Row): StoredReport {
  return {
    agentId: String(r.agent_id),
    portfolio: String(r.portfolio) as StoredReport['portfolio'],
    throughSeq: Number(r.through_seq),
    asOf: String(r.as_of),
    computedAt: String(r.computed_at),
    report: String(r.report),
  };
}

/**
 * The pending scan, in both dialects: decisions at or after the cursor with no observation, oldest
 * first, through records_type_sort (type, sort_key) and the observations' primary key. `json` is the
 * dialect's way to read asset_class out of the stored canon_v1 content.
 */
export function pendingSql(p: (i: number) => string, assetClass: string): string {
  return `SELECT r.id, r.agent_id, r.chain_seq, r.symbol, r.recorded_at, r.sort_key, ${assetClass} AS asset_class FROM records r
    WHERE r.type = 'decision' AND r.sort_key >= ${p(1)}
      AND NOT EXISTS (SELECT 1 FROM price_observations o WHERE o.record_id = r.id)
    ORDER BY r.sort_key LIMIT ${p(2)}`;
}

export function countPendingSql(p: (i: number) => string): string {
  return `SELECT COUNT(*) AS n FROM (SELECT 1 FROM records r WHERE r.type = 'decision' AND r.sort_key >= ${p(1)}
    AND NOT EXISTS (SELECT 1 FROM price_observations o WHERE o.record_id = r.id) ORDER BY r.sort_key LIMIT ${p(2)}) pending`;
}

export const NEWEST_DECISION_SQL = "SELECT sort_key FROM records WHERE type = 'decision' ORDER BY sort_key DESC LIMIT 1";

/**
 * An agent's observations of records up to a seq: the trigger-kept total less the few beyond the
 * seq (records after an export's head), so an export's ETag never counts the whole table.
 */
export const COUNT_OBSERVATIONS_SQL = `SELECT COALESCE((SELECT observations FROM price_counts WHERE agent_id = $1), 0)
  - (SELECT COUNT(*) FROM price_observations WHERE agent_id = $2 AND chain_seq > $3) AS n`;
