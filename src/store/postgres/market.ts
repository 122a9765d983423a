// The market wing's storage port (market/port.ts) and the performance wing's stored reports
// (performance/port.ts) on PostgreSQL, over the PostgresStore's pool. The pricing job's hold is a
// session advisory lock on a connection of its own: one API node prices at a time, and when it
// dies (or its connection does) PostgreSQL frees the lock for another.
import pg from 'pg';
import type {
  ActionsKnown, BrokerSymbol, ChainInput, ChainTerms, CloseFact, CloseFetch, CorporateActionFacts, MarketStore, PendingPrice, PricedDecision, PricedSymbol, PriceObservation, PriceSource, PricingHold, SavedActions,
  StoredClose, StoredCorporateAction,
} from '../../market/port.ts';
import type { PerformanceStore, StoredReport } from '../../performance/port.ts';
import { actionHistorySql, actionsFromRows, actionsKnownFromRows, saveActionsKnownSql, brokerSymbolFromRow, brokerSymbolsSql, currentActionsSql, PRICED_SYMBOLS_SQL, pricedSymbolFromRow, saveActionSql, saveActionValues } from '../corporate-action-rows.ts';
import {
  chainInputFromArray, chainInputSql, chainTermsFromArray, chainTermsSql, TERM_NAMES, COUNT_OBSERVATIONS_SQL, countPendingSql, NEWEST_DECISION_SQL, OBSERVATION_COLUMNS, observationFromRow, observationValues, observedPrefixOf,
  observedPrefixSql, pendingFromRow, pendingSql, pricedDecisionFromArray, pricedDecisionsSql, reportFromRow,
} from '../market-rows.ts';
import type { Row } from '../rows.ts';
import { takeSessionLock } from './session-lock.ts';
import type { PostgresHost } from './pool.ts';

export const pricingLockKey = (schema: string) => `ledger-pricing:${schema}`;

const p = (i: number) => `$${i}`;
const OBSERVED_PREFIX_SQL = observedPrefixSql(p);
const BROKER_SYMBOLS_SQL = brokerSymbolsSql({
  member: (column, name) => `((${column})::json ->> '${name}')`,
  elements: (column) => `json_array_elements(CASE WHEN json_typeof((${column})::json) = 'array' THEN (${column})::json ELSE '[]'::json END)`,
});
const PRICED_DECISIONS_SQL = pricedDecisionsSql(p);
/** A decision not observed yet has its content parsed once (as the priced_decisions projection parses it); no other record. */
export const CHAIN_TERMS_SQL = chainTermsSql(p, {
  join: `LEFT JOIN LATERAL (SELECT * FROM json_to_record(r.content::json) AS t(${TERM_NAMES.map((n) => `${n} json`).join(', ')})
    WHERE r.type = 'decision' AND pd.chain_seq IS NULL) c ON true`,
  term: (name) => `CASE json_typeof(c.${name}) WHEN 'string' THEN c.${name} #>> '{}' END`,
});
const SAVE_ACTION_SQL = saveActionSql(p);
const CURRENT_ACTIONS_SQL = currentActionsSql(p);
const ACTION_HISTORY_SQL = actionHistorySql(p);

/** Observations per INSERT: well under PostgreSQL's 65,535 bound parameters. */
const INSERT_CHUNK = 500;

export class PostgresMarketStore implements MarketStore, PerformanceStore {
  constructor(private readonly store: PostgresHost) {}

  private async q(sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.store.pool.query(sql, params)).rows as Row[];
  }

  private async scanCursor(): Promise<string> {
    const [row] = await this.q('SELECT sort_key FROM price_scan WHERE id = 1');
    return row ? String(row.sort_key) : '';
  }

  async pendingPrices(_source: PriceSource, limit: number): Promise<PendingPrice[]> {
    const cursor = await this.scanCursor();
    // Read before the scan: appends commit in sort-key order (the append lock), so every decision
    // up to it is committed; if the scan then finds none pending, the cursor may move to it.
    const [newest] = await this.q(NEWEST_DECISION_SQL);
    const rows = await this.q(pendingSql(p, "(r.content::json)->>'asset_class'"), [cursor, limit]);
    const next = rows.length > 0 ? String(rows[0]!.sort_key) : newest ? String(newest.sort_key) : cursor;
    if (next > cursor) {
      // Several nodes may move it; any value one of them computed stays true, so keep the furthest.
      await this.q(`INSERT INTO price_scan (id, sort_key) VALUES (1, $1)
        ON CONFLICT (id) DO UPDATE SET sort_key = GREATEST(price_scan.sort_key, excluded.sort_key)`, [next]);
    }
    return rows.map(pendingFromRow);
  }

  async countPendingPrices(cap: number): Promise<number> {
    const [row] = await this.q(countPendingSql(p), [await this.scanCursor(), cap]);
    return Number(row!.n);
  }

  async saveObservations(observations: PriceObservation[]): Promise<void> {
    for (let i = 0; i < observations.length; i += INSERT_CHUNK) {
      const values = observations.slice(i, i + INSERT_CHUNK).map((o) => observationValues(o, (b) => b));
      const width = OBSERVATION_COLUMNS.length;
      const tuples = values.map((_, r) => `(${OBSERVATION_COLUMNS.map((_, c) => `$${r * width + c + 1}`).join(', ')})`);
      await this.q(`INSERT INTO price_observations (${OBSERVATION_COLUMNS.join(', ')}) VALUES ${tuples.join(', ')}
        ON CONFLICT (record_id) DO NOTHING`, values.flat());
    }
  }

  async observationOf(recordId: string): Promise<PriceObservation | null> {
    const [row] = await this.q('SELECT * FROM price_observations WHERE record_id = $1', [recordId]);
    return row ? observationFromRow(row) : null;
  }

  async observationsOf(agentId: string, afterSeq: number, limit: number): Promise<PriceObservation[]> {
    return (await this.q('SELECT * FROM price_observations WHERE agent_id = $1 AND chain_seq > $2 ORDER BY chain_seq LIMIT $3', [agentId, afterSeq, limit]))
      .map(observationFromRow);
  }

  async chainInputs(agentId: string, afterSeq: number, limit: number): Promise<ChainInput[]> {
    const { rows } = await this.store.pool.query({ text: chainInputSql(p), values: [agentId, afterSeq, limit], rowMode: 'array' });
    return (rows as unknown[][]).map(chainInputFromArray);
  }

  async chainTerms(agentId: string, afterSeq: number, limit: number, maxBytes: number): Promise<ChainTerms[]> {
    const { rows } = await this.store.pool.query({ text: CHAIN_TERMS_SQL, values: [agentId, afterSeq, limit, maxBytes], rowMode: 'array' });
    return (rows as unknown[][]).map(chainTermsFromArray);
  }

  async observedPrefix(agentId: string, headSeq: number): Promise<number> {
    const [row] = await this.q(OBSERVED_PREFIX_SQL, [agentId]);
    return observedPrefixOf(row, headSeq);
  }

  async pricedDecisions(agentId: string, afterSeq: number, throughSeq: number, limit: number): Promise<PricedDecision[]> {
    const { rows } = await this.store.pool.query({ text: PRICED_DECISIONS_SQL, values: [agentId, afterSeq, throughSeq, limit], rowMode: 'array' });
    return (rows as unknown[][]).map(pricedDecisionFromArray);
  }

  async countObservations(agentId: string, throughSeq: number): Promise<number> {
    const [row] = await this.q(COUNT_OBSERVATIONS_SQL, [agentId, agentId, throughSeq]);
    return Number(row!.n);
  }

  async tryPricingHold(): Promise<PricingHold | null> {
    const { connectionString, connectionTimeoutMillis } = this.store.pool.options;
    const client = new pg.Client({ connectionString, connectionTimeoutMillis, options: `-c search_path=${this.store.schema}` });
    const hold = { lost: false, release: async () => { hold.lost = true; await client.end().catch(() => undefined); } };
    client.on('error', () => { hold.lost = true; });
    return (await takeSessionLock(client, pricingLockKey(this.store.schema))) ? hold : null;
  }

  async closes(source: PriceSource, symbol: string, from: string, to: string): Promise<StoredClose[]> {
    return (await this.q('SELECT date, close FROM market_raw_closes WHERE source = $1 AND symbol = $2 AND date >= $3 AND date <= $4 ORDER BY date',
      [source, symbol, from, to])).map((r) => ({ date: String(r.date), close: String(r.close) }));
  }

  async closeFacts(source: PriceSource, symbol: string, from: string, after: string | null, limit: number): Promise<CloseFact[]> {
    return (await this.q('SELECT date, close, fetched_at FROM market_raw_closes WHERE source = $1 AND symbol = $2 AND date >= $3 AND date > $4 ORDER BY date LIMIT $5',
      [source, symbol, from, after ?? '', limit])).map((r) => ({ date: String(r.date), close: String(r.close), fetchedAt: String(r.fetched_at) }));
  }

  async closeFetches(source: PriceSource, symbol: string): Promise<CloseFetch[]> {
    return (await this.q('SELECT fetched_at, MAX(date) AS last_date FROM market_raw_closes WHERE source = $1 AND symbol = $2 GROUP BY fetched_at ORDER BY fetched_at',
      [source, symbol])).map((r) => ({ fetchedAt: String(r.fetched_at), lastDate: String(r.last_date) }));
  }

  async saveCloses(source: PriceSource, symbol: string, closes: StoredClose[], fetchedAt: string): Promise<void> {
    if (closes.length === 0) return;
    await this.q(`INSERT INTO market_raw_closes (source, symbol, date, close, fetched_at)
      SELECT $1, $2, d, c, $5 FROM unnest($3::text[], $4::text[]) AS t(d, c)
      ON CONFLICT (source, symbol, date) DO NOTHING`,
    [source, symbol, closes.map((c) => c.date), closes.map((c) => c.close), fetchedAt]);
  }

  async saveCorporateActions(actions: CorporateActionFacts[], seenAt: string): Promise<SavedActions> {
    const saved = { added: 0, revised: 0 };
    for (const a of actions) {
      const [row] = await this.q(SAVE_ACTION_SQL, saveActionValues(a, seenAt, (b) => b));
      if (row === undefined) continue;
      if (Number(row.revision) === 1) saved.added++;
      else saved.revised++;
    }
    return saved;
  }

  async corporateActions(source: PriceSource, symbol: string): Promise<StoredCorporateAction[]> {
    return actionsFromRows(await this.q(CURRENT_ACTIONS_SQL, [source, symbol]));
  }

  async corporateActionHistory(source: PriceSource, symbol: string): Promise<StoredCorporateAction[]> {
    return actionsFromRows(await this.q(ACTION_HISTORY_SQL, [source, symbol]));
  }

  async pricedSymbols(): Promise<PricedSymbol[]> {
    return (await this.q(PRICED_SYMBOLS_SQL)).map(pricedSymbolFromRow);
  }

  async actionsKnown(source: PriceSource, symbols: string[]): Promise<ActionsKnown> {
    if (symbols.length === 0) return {};
    return actionsKnownFromRows(await this.q('SELECT symbol, from_date, through_date FROM market_actions_known WHERE source = $1 AND symbol = ANY($2::text[])', [source, symbols]));
  }

  async saveActionsKnown(source: PriceSource, known: ActionsKnown): Promise<void> {
    const sql = saveActionsKnownSql(p);
    for (const [symbol, range] of Object.entries(known)) await this.q(sql, [source, symbol, range.from, range.through]);
  }

  async brokerSymbols(): Promise<BrokerSymbol[]> {
    return (await this.q(BROKER_SYMBOLS_SQL)).map(brokerSymbolFromRow);
  }

  async report(agentId: string, portfolio: StoredReport['portfolio']): Promise<StoredReport | null> {
    const [row] = await this.q('SELECT * FROM performance_reports WHERE agent_id = $1 AND portfolio = $2', [agentId, portfolio]);
    return row ? reportFromRow(row) : null;
  }

  async saveReport(r: StoredReport): Promise<void> {
    await this.q(`INSERT INTO performance_reports (agent_id, portfolio, through_seq, as_of, computed_at, report) VALUES ($1, $2, $3, $4, $5, $6)
      ON CONFLICT (agent_id, portfolio) DO UPDATE SET through_seq = excluded.through_seq, as_of = excluded.as_of,
        computed_at = excluded.computed_at, report = excluded.report`,
    [r.agentId, r.portfolio, r.throughSeq, r.asOf, r.computedAt, r.report]);
  }
}
