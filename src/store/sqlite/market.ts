// The market wing's storage port (market/port.ts) and the performance wing's stored reports
// (performance/port.ts) on SQLite: the same database file as the SqliteStore (its connection).
// SQLite serves one process, so the pricing job's hold is kept in this process. Its writes commit
// off the event loop, as the appends do (the host's writeOffLoop).
import type {
  ActionsKnown, BrokerSymbol, ChainInput, ChainTerms, CloseFact, CloseFetch, CorporateActionFacts, MarketStore, PendingPrice, PricedDecision, PricedSymbol, PriceObservation, PriceSource, PricingHold, SavedActions,
  StoredClose, StoredCorporateAction,
} from '../../market/port.ts';
import type { PerformanceStore, StoredReport } from '../../performance/port.ts';
import { actionHistorySql, actionsFromRows, actionsKnownFromRows, saveActionsKnownSql, brokerSymbolFromRow, brokerSymbolsSql, currentActionsSql, PRICED_SYMBOLS_SQL, pricedSymbolFromRow, saveActionSql, saveActionValues } from '../corporate-action-rows.ts';
import {
  chainInputFromArray, chainInputSql, chainTermsFromArray, chainTermsSql, COUNT_OBSERVATIONS_SQL, countPendingSql, NEWEST_DECISION_SQL, OBSERVATION_COLUMNS, observationFromRow, observationValues, observedPrefixOf,
  observedPrefixSql, pendingFromRow, pendingSql, PRICED_DECISION_COLUMNS, pricedDecisionFromArray, pricedDecisionsSql, reportFromRow,
} from '../market-rows.ts';
import type { Row } from '../rows.ts';
import type { SqliteStatement } from './driver.ts';
import type { SqliteHost } from './host.ts';

/** Pricing holds taken in this process, by database path (an in-memory database by its store). */
const heldPricing = new Set<unknown>();

const q = () => '?';
/** Named parameters (@p1, @p2, ...), bound by `named`: for SQL that uses one parameter twice. */
const n = (i: number) => `@p${i}`;
const named = (values: unknown[]) => Object.fromEntries(values.map((v, i) => [`p${i + 1}`, v]));
const OBSERVED_PREFIX_SQL = observedPrefixSql(q);
const BROKER_SYMBOLS_SQL = brokerSymbolsSql({ member: (column, name) => `json_extract(${column}, '$.${name}')`, elements: (column) => `json_each(${column})` });
/** SQLite parses a text once for the json_ calls of a row (its JSON cache). */
const CHAIN_TERMS_SQL = chainTermsSql(q, {
  join: '',
  term: (name) => `CASE json_type(r.content, '$.${name}') WHEN 'text' THEN json_extract(r.content, '$.${name}') END`,
});

export class SqliteMarketStore implements MarketStore, PerformanceStore {
  private chainRead: SqliteStatement | null = null;
  private pricedRead: SqliteStatement | null = null;
  private termsRead: SqliteStatement | null = null;
  private closesRead: SqliteStatement | null = null;

  constructor(private readonly store: SqliteHost) {}

  private get db() {
    return this.store.db;
  }

  private rows(sql: string, ...params: unknown[]): Row[] {
    return this.db.prepare(sql).all(...params) as Row[];
  }

  private scanCursor(): string {
    const [row] = this.rows('SELECT sort_key FROM price_scan WHERE id = 1');
    return row ? String(row.sort_key) : '';
  }

  async pendingPrices(_source: PriceSource, limit: number): Promise<PendingPrice[]> {
    const cursor = this.scanCursor();
    // Read before the scan: every decision up to it is committed, so if the scan finds none
    // pending, all of them are observed and the cursor may move to it.
    const [newest] = this.rows(NEWEST_DECISION_SQL);
    const rows = this.rows(pendingSql(q, "json_extract(r.content, '$.asset_class')"), cursor, limit);
    const next = rows.length > 0 ? String(rows[0]!.sort_key) : newest ? String(newest.sort_key) : cursor;
    if (next > cursor) {
      this.db.prepare('INSERT INTO price_scan (id, sort_key) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET sort_key = MAX(sort_key, excluded.sort_key)').run(next);
    }
    return rows.map(pendingFromRow);
  }

  async countPendingPrices(cap: number): Promise<number> {
    const [row] = this.rows(countPendingSql(q), this.scanCursor(), cap);
    return Number(row!.n);
  }

  async saveObservations(observations: PriceObservation[]): Promise<void> {
    if (observations.length === 0) return;
    const insert = this.db.prepare(`INSERT INTO price_observations (${OBSERVATION_COLUMNS.join(', ')})
      VALUES (${OBSERVATION_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (record_id) DO NOTHING`);
    await this.store.writeTransaction(() => {
      for (const o of observations) insert.run(...observationValues(o, (b) => (b ? 1 : 0)));
    });
  }

  async observationOf(recordId: string): Promise<PriceObservation | null> {
    const [row] = this.rows('SELECT * FROM price_observations WHERE record_id = ?', recordId);
    return row ? observationFromRow(row) : null;
  }

  async observationsOf(agentId: string, afterSeq: number, limit: number): Promise<PriceObservation[]> {
    return this.rows('SELECT * FROM price_observations WHERE agent_id = ? AND chain_seq > ? ORDER BY chain_seq LIMIT ?', agentId, afterSeq, limit)
      .map(observationFromRow);
  }

  async chainInputs(agentId: string, afterSeq: number, limit: number): Promise<ChainInput[]> {
    this.chainRead ??= this.db.prepare(chainInputSql(q)).raw(true);
    return (this.chainRead.all(agentId, afterSeq, limit) as unknown[][]).map(chainInputFromArray);
  }

  async chainTerms(agentId: string, afterSeq: number, limit: number, maxBytes: number): Promise<ChainTerms[]> {
    this.termsRead ??= this.db.prepare(CHAIN_TERMS_SQL).raw(true);
    return (this.termsRead.all(agentId, afterSeq, limit, maxBytes) as unknown[][]).map(chainTermsFromArray);
  }

  async observedPrefix(agentId: string, headSeq: number): Promise<number> {
    const [row] = this.rows(OBSERVED_PREFIX_SQL, agentId);
    return observedPrefixOf(row, headSeq);
  }

  async pricedDecisions(agentId: string, afterSeq: number, throughSeq: number, limit: number): Promise<PricedDecision[]> {
    // The page as one JSON text: the driver makes a JavaScript string of each value it hands over
    // (15 a row, 100,000 rows from scratch); SQLite's JSON and V8's parser do the same faster
    // (bench/history/performance.md). The aggregate keeps the subquery's order in practice, not
    // by contract (an ORDER BY in it would sort the page again, at a cost): checked here, and
    // sorted if ever not.
    this.pricedRead ??= this.db.prepare(`SELECT json_group_array(json_array(${PRICED_DECISION_COLUMNS})) FROM (${pricedDecisionsSql(q)})`).pluck();
    const page = JSON.parse(this.pricedRead.get(agentId, afterSeq, throughSeq, limit) as string) as Array<[number, ...unknown[]]>;
    if (!page.every((row, i) => i === 0 || row[0] > (page[i - 1] as [number])[0])) page.sort((a, b) => a[0] - b[0]);
    return page.map(pricedDecisionFromArray);
  }

  async countObservations(agentId: string, throughSeq: number): Promise<number> {
    const [row] = this.rows(COUNT_OBSERVATIONS_SQL.replace(/\$\d/g, '?'), agentId, agentId, throughSeq);
    return Number(row!.n);
  }

  async tryPricingHold(): Promise<PricingHold | null> {
    const key = this.store.path === ':memory:' ? this.store : this.store.path;
    if (heldPricing.has(key)) return null;
    heldPricing.add(key);
    let released = false;
    return {
      lost: false,
      release: async () => {
        if (!released) heldPricing.delete(key);
        released = true;
      },
    };
  }

  async closes(source: PriceSource, symbol: string, from: string, to: string): Promise<StoredClose[]> {
    this.closesRead ??= this.db.prepare('SELECT date, close FROM market_raw_closes WHERE source = ? AND symbol = ? AND date >= ? AND date <= ? ORDER BY date').raw(true);
    return (this.closesRead.all(source, symbol, from, to) as string[][]).map(([date, close]) => ({ date: date!, close: close! }));
  }

  async closeFacts(source: PriceSource, symbol: string, from: string, after: string | null, limit: number): Promise<CloseFact[]> {
    const rows = this.db.prepare('SELECT date, close, fetched_at FROM market_raw_closes WHERE source = ? AND symbol = ? AND date >= ? AND date > ? ORDER BY date LIMIT ?').raw(true)
      .all(source, symbol, from, after ?? '', limit) as string[][];
    return rows.map(([date, close, fetchedAt]) => ({ date: date!, close: close!, fetchedAt: fetchedAt! }));
  }

  async closeFetches(source: PriceSource, symbol: string): Promise<CloseFetch[]> {
    const rows = this.db.prepare('SELECT fetched_at, MAX(date) FROM market_raw_closes WHERE source = ? AND symbol = ? GROUP BY fetched_at ORDER BY fetched_at').raw(true)
      .all(source, symbol) as string[][];
    return rows.map(([fetchedAt, lastDate]) => ({ fetchedAt: fetchedAt!, lastDate: lastDate! }));
  }

  async saveCloses(source: PriceSource, symbol: string, closes: StoredClose[], fetchedAt: string): Promise<void> {
    if (closes.length === 0) return;
    const insert = this.db.prepare(`INSERT INTO market_raw_closes (source, symbol, date, close, fetched_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (source, symbol, date) DO NOTHING`);
    await this.store.writeTransaction(() => {
      for (const c of closes) insert.run(source, symbol, c.date, c.close, fetchedAt);
    });
  }

  async saveCorporateActions(actions: CorporateActionFacts[], seenAt: string): Promise<SavedActions> {
    const saved = { added: 0, revised: 0 };
    if (actions.length === 0) return saved;
    const insert = this.db.prepare(saveActionSql(n)).pluck();
    await this.store.writeTransaction(() => {
      for (const a of actions) {
        const revision = insert.get(named(saveActionValues(a, seenAt, (b) => (b ? 1 : 0)))) as number | undefined;
        if (revision === 1) saved.added++;
        else if (revision !== undefined) saved.revised++;
      }
    });
    return saved;
  }

  async corporateActions(source: PriceSource, symbol: string): Promise<StoredCorporateAction[]> {
    return actionsFromRows(this.rows(currentActionsSql(n), named([source, symbol])));
  }

  async corporateActionHistory(source: PriceSource, symbol: string): Promise<StoredCorporateAction[]> {
    return actionsFromRows(this.rows(actionHistorySql(n), named([source, symbol])));
  }

  async actionsKnown(source: PriceSource, symbols: string[]): Promise<ActionsKnown> {
    if (symbols.length === 0) return {};
    return actionsKnownFromRows(this.rows('SELECT symbol, from_date, through_date FROM market_actions_known WHERE source = ? AND symbol IN (SELECT value FROM json_each(?))', source, JSON.stringify(symbols)));
  }

  async saveActionsKnown(source: PriceSource, known: ActionsKnown): Promise<void> {
    const save = this.db.prepare(saveActionsKnownSql(q));
    await this.store.writeTransaction(() => {
      for (const [symbol, range] of Object.entries(known)) save.run(source, symbol, range.from, range.through);
    });
  }

  async pricedSymbols(): Promise<PricedSymbol[]> {
    return this.rows(PRICED_SYMBOLS_SQL).map(pricedSymbolFromRow);
  }

  async brokerSymbols(): Promise<BrokerSymbol[]> {
    return this.rows(BROKER_SYMBOLS_SQL).map(brokerSymbolFromRow);
  }

  async report(agentId: string, portfolio: StoredReport['portfolio']): Promise<StoredReport | null> {
    const [row] = this.rows('SELECT * FROM performance_reports WHERE agent_id = ? AND portfolio = ?', agentId, portfolio);
    return row ? reportFromRow(row) : null;
  }

  async saveReport(r: StoredReport): Promise<void> {
    const upsert = this.db.prepare(`INSERT INTO performance_reports (agent_id, portfolio, through_seq, as_of, computed_at, report) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (agent_id, portfolio) DO UPDATE SET through_seq = excluded.through_seq, as_of = excluded.as_of,
        computed_at = excluded.computed_at, report = excluded.report`);
    await this.store.writeOffLoop(() => upsert.run(r.agentId, r.portfolio, r.throughSeq, r.asOf, r.computedAt, r.report));
  }
}
