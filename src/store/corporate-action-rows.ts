// Rows of the raw closes and corporate actions <-> the market port's types (market/port.ts), and
// their SQL, shared by both adapters. Owns how a correction becomes a new revision: one statement
// inserts the next revision of a provider_id unless its current one is identical, so a re-fetch
// writes nothing and two writers racing on one revision leave one row (the UNIQUE key).
import type { ActionsKnown, BrokerSymbol, CorporateActionFacts, PricedSymbol, PriceSource, StoredCorporateAction } from '../market/port.ts';
import type { Row } from './rows.ts';

const ACTION_FIELDS = [
  'type', 'symbol', 'ex_date', 'payable_date', 'process_date', 'record_date', 'old_rate', 'new_rate', 'rate', 'special', 'raw',
] as const;

/**
 * Inserts the next revision of one action (parameters: source, provider_id, then ACTION_FIELDS,
 * then seen_at) unless the current revision has the same type and raw text; returns its revision.
 */
export function saveActionSql(p: (i: number) => string): string {
  // PostgreSQL reads an untyped parameter in a SELECT list as text: `special` needs its type said.
  const fields = ACTION_FIELDS.map((f, i) => (f === 'special' ? `CAST(${p(i + 3)} AS BOOLEAN)` : p(i + 3)));
  const typeParam = p(3);
  const rawParam = p(3 + ACTION_FIELDS.indexOf('raw'));
  return `WITH latest AS (SELECT revision, type, raw FROM corporate_actions WHERE source = ${p(1)} AND provider_id = ${p(2)} ORDER BY revision DESC LIMIT 1)
    INSERT INTO corporate_actions (source, provider_id, revision, ${ACTION_FIELDS.join(', ')}, seen_at)
    SELECT ${p(1)}, ${p(2)}, COALESCE((SELECT revision FROM latest), 0) + 1, ${fields.join(', ')}, ${p(3 + ACTION_FIELDS.length)}
    WHERE NOT EXISTS (SELECT 1 FROM latest WHERE type = ${typeParam} AND raw = ${rawParam})
    ON CONFLICT (source, provider_id, revision) DO NOTHING
    RETURNING revision`;
}

/** saveActionSql's parameters; `special` as `bool` makes it (SQLite 0/1, PostgreSQL true/false). */
export function saveActionValues<B>(a: CorporateActionFacts, seenAt: string, bool: (b: boolean) => B): unknown[] {
  return [a.source, a.provider_id, a.type, a.symbol, a.ex_date, a.payable_date, a.process_date, a.record_date, a.old_rate, a.new_rate, a.rate,
    a.special === null ? null : bool(a.special), a.raw, seenAt];
}

/** The current revision of each provider_id that names the symbol, by ex_date (none last), then provider_id. */
export function currentActionsSql(p: (i: number) => string): string {
  return `SELECT a.* FROM corporate_actions a WHERE a.source = ${p(1)} AND a.symbol = ${p(2)}
      AND a.revision = (SELECT MAX(b.revision) FROM corporate_actions b WHERE b.source = a.source AND b.provider_id = a.provider_id)
    ORDER BY a.ex_date IS NULL, a.ex_date, a.provider_id`;
}

/** Every revision of the provider_ids that named the symbol in any revision, oldest row first. */
export function actionHistorySql(p: (i: number) => string): string {
  return `SELECT a.* FROM corporate_actions a WHERE a.source = ${p(1)}
      AND a.provider_id IN (SELECT b.provider_id FROM corporate_actions b WHERE b.source = ${p(1)} AND b.symbol = ${p(2)})
    ORDER BY a.id`;
}

/** Rows of one of those reads, with each row's successor (the next revision of its provider_id) found among them. */
export function actionsFromRows(rows: Row[], successors: Row[] = rows): StoredCorporateAction[] {
  const next = new Map<string, number>();
  for (const r of successors) next.set(`${String(r.provider_id)}\n${Number(r.revision)}`, Number(r.id));
  return rows.map((r) => ({
    id: Number(r.id),
    revision: Number(r.revision),
    seen_at: String(r.seen_at),
    superseded_by: next.get(`${String(r.provider_id)}\n${Number(r.revision) + 1}`) ?? null,
    provider_id: String(r.provider_id),
    source: String(r.source) as PriceSource,
    type: String(r.type),
    symbol: String(r.symbol),
    ex_date: strOrNull(r.ex_date),
    payable_date: strOrNull(r.payable_date),
    process_date: strOrNull(r.process_date),
    record_date: strOrNull(r.record_date),
    old_rate: strOrNull(r.old_rate),
    new_rate: strOrNull(r.new_rate),
    rate: strOrNull(r.rate),
    special: r.special === null || r.special === undefined ? null : Boolean(r.special),
    raw: String(r.raw),
  }));
}

export const PRICED_SYMBOLS_SQL = `SELECT source, symbol, MIN(asked_at) AS first_at FROM price_observations WHERE status = 'priced'
  GROUP BY source, symbol ORDER BY source, symbol`;

/**
 * The symbols of broker records (the fill's or activity's own date, else when recorded) and of the
 * positions brokers reported (their reconciliation rows), each with its earliest date. `content`
 * and `positions` read a JSON member or the array of a text column in the store's dialect.
 */
export function brokerSymbolsSql(d: { member: (column: string, name: string) => string; elements: (column: string) => string }): string {
  const first = `COALESCE(${d.member('r.content', 'filled_at')}, ${d.member('r.content', 'occurred_at')}, r.recorded_at)`;
  return `SELECT symbol, MIN(first_at) AS first_at FROM (
    SELECT r.symbol AS symbol, ${first} AS first_at FROM records r WHERE r.type IN ('execution', 'activity') AND r.symbol IS NOT NULL
    UNION ALL
    SELECT ${d.member('p.value', 'symbol')} AS symbol, s.taken_at AS first_at FROM broker_snapshots s, ${d.elements('s.reconciliation')} p
  ) held WHERE symbol IS NOT NULL AND symbol <> '' GROUP BY symbol ORDER BY symbol`;
}

export function brokerSymbolFromRow(r: Row): BrokerSymbol {
  return { symbol: String(r.symbol), firstDate: String(r.first_at).slice(0, 10) };
}

export function pricedSymbolFromRow(r: Row): PricedSymbol {
  return { source: String(r.source) as PriceSource, symbol: String(r.symbol), firstDate: String(r.first_at).slice(0, 10) };
}

const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** Keeps a symbol's days asked about (source, symbol, from, through), replacing the row kept. */
export const saveActionsKnownSql = (p: (i: number) => string) => `INSERT INTO market_actions_known (source, symbol, from_date, through_date)
  VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)})
  ON CONFLICT (source, symbol) DO UPDATE SET from_date = excluded.from_date, through_date = excluded.through_date`;

/** Rows of market_actions_known as ActionsKnown. */
export function actionsKnownFromRows(rows: Row[]): ActionsKnown {
  return Object.fromEntries(rows.map((r) => [String(r.symbol), { from: String(r.from_date), through: String(r.through_date) }]));
}
