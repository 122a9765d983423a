// The performance wing's storage port: the stored performance reports (derived, recomputable,
// replaced as they grow), one per agent and portfolio, opened as `store.performance`. The market
// wing's adapters (store/{sqlite,postgres}/market.ts) implement it over the same database.

/** A performance report as stored: the JSON of src/performance's report and what it was computed from. */
export type StoredReport = {
  agentId: string;
  portfolio: 'model' | 'broker';
  /** The agent's chain seq and the newest observation/close date the report includes. */
  throughSeq: number;
  asOf: string;
  computedAt: string;
  report: string;
};

export interface PerformanceStore {
  /** The stored report of the agent's portfolio, or null while none is stored. */
  report(agentId: string, portfolio: StoredReport['portfolio']): Promise<StoredReport | null>;
  /** Stores the report, replacing the one stored for its agent and portfolio. */
  saveReport(report: StoredReport): Promise<void>;
}
