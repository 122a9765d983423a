// An in-memory MarketStore (store/market-port.ts) for the performance wing's unit tests: the same
// contract as the SQLite and PostgreSQL adapters (observations insert-if-absent and never
// changed, closes replaced by date, one report per agent and portfolio), nothing persisted.
// A test fixture: nothing under src/ imports it.
import type { MarketStore, PendingPrice, PriceObservation, PriceSource, StoredClose, StoredReport } from '../../src/store/market-port.ts';

export class MemoryMarketStore implements MarketStore {
  readonly observations = new Map<string, PriceObservation>();
  readonly closeRows = new Map<string, Map<string, string>>();
  readonly reports = new Map<string, StoredReport>();
  /** Calls by method, to assert what a computation read or wrote. */
  readonly calls: Record<string, number> = {};

  private count(name: string): void {
    this.calls[name] = (this.calls[name] ?? 0) + 1;
  }

  async pendingPrices(_source: PriceSource, _limit: number): Promise<PendingPrice[]> {
    return []; // the pricing job's work: not what these tests exercise
  }

  async countPendingPrices(_cap: number): Promise<number> {
    return 0;
  }

  async countObservations(agentId: string, throughSeq: number): Promise<number> {
    return [...this.observations.values()].filter((o) => o.agentId === agentId && o.chainSeq <= throughSeq).length;
  }

  /** One process, one hold: always granted. */
  async tryPricingHold(): Promise<{ readonly lost: boolean; release(): Promise<void> }> {
    return { lost: false, release: async () => undefined };
  }

  async saveObservations(rows: PriceObservation[]): Promise<void> {
    this.count('saveObservations');
    for (const r of rows) if (!this.observations.has(r.recordId)) this.observations.set(r.recordId, structuredClone(r));
  }

  async observationOf(recordId: string): Promise<PriceObservation | null> {
    return this.observations.get(recordId) ?? null;
  }

  async observationsOf(agentId: string, afterSeq: number, limit: number): Promise<PriceObservation[]> {
    this.count('observationsOf');
    return [...this.observations.values()].filter((o) => o.agentId === agentId && o.chainSeq > afterSeq).sort((a, b) => a.chainSeq - b.chainSeq).slice(0, limit);
  }

  async closes(source: PriceSource, symbol: string, from: string, to: string): Promise<StoredClose[]> {
    this.count('closes');
    const rows = this.closeRows.get(`${source}\n${symbol}`) ?? new Map<string, string>();
    return [...rows].filter(([d]) => d >= from && d <= to).sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, close]) => ({ date, close }));
  }

  async saveCloses(source: PriceSource, symbol: string, closes: StoredClose[]): Promise<void> {
    this.count('saveCloses');
    const key = `${source}\n${symbol}`;
    const rows = this.closeRows.get(key) ?? new Map<string, string>();
    for (const c of closes) rows.set(c.date, c.close);
    this.closeRows.set(key, rows);
  }

  async report(agentId: string, portfolio: StoredReport['portfolio']): Promise<StoredReport | null> {
    this.count('report');
    return this.reports.get(`${agentId}\n${portfolio}`) ?? null;
  }

  async saveReport(report: StoredReport): Promise<void> {
    this.count('saveReport');
    this.reports.set(`${report.agentId}\n${report.portfolio}`, { ...report });
  }
}
