// The shapes of a portfolio's report as the performance use case answers it (service.ts) and the
// public views render it (views.ts).
import type { Caveat, Portfolio, PublishedReport } from '../method/perf/engine.ts';
import type { PriceSource } from '../market/port.ts';

export type { Caveat, Portfolio };

/** Where the prices of a report come from. */
export type PriceSourceView = { source: PriceSource; feed: string | null; synthetic: boolean; description: string };

export type Computed = {
  status: 'computed';
  portfolio: Portfolio;
  report: PublishedReport;
  price_source: PriceSourceView;
  through_seq: number;
  computed_at: string;
  /** Set when the report could not be brought up to date and is served as it was. */
  stale: string | null;
  /** Broker only: the latest reconciliation of reported against imported positions, per connection. */
  reconciliation: Reconciliation[] | null;
};

export type Unavailable = { status: 'unavailable'; portfolio: Portfolio; code: UnavailableCode; reason: string };
export type UnavailableCode = 'no_records' | 'no_market_data' | 'awaiting_price';
export type PortfolioReport = Computed | Unavailable;

export type Reconciliation = { connection_id: string; broker: string; taken_at: string; mismatches: number; positions: unknown };
