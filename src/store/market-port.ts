// The market sub-port: what the pricing and performance wings keep beside the records, with a
// SQLite and a PostgreSQL adapter over the same database as the LedgerStore (market.ts picks it).
// Owns the price observed at each decision's receipt (rule 6: one per decision, append-only, public
// on the proof and in the export), the daily closes fetched from the provider (a cache: refetchable,
// keyed by source), and the stored performance reports (derived, recomputable, replaced as they grow).

export type PriceSource = 'alpaca' | 'synthetic';

/** The price at a decision's receipt, or why there is none. Written once per decision, never changed. */
export type PriceObservation = {
  recordId: string;
  agentId: string;
  chainSeq: number;
  symbol: string;
  /** The decision's recorded_at: the instant priced. */
  askedAt: string;
  /** When the service got the answer (after the record; retries make it later). */
  observedAt: string;
  source: PriceSource;
  feed: string | null;
  synthetic: boolean;
} & (
  | {
      status: 'priced';
      /** Normalised decimal text, as the provider's number reads. */
      price: string;
      /** The provider's own timestamp of that price. */
      providerTime: string;
      ageMs: number;
      stale: boolean;
    }
  | {
      /** The provider answered for good that it has no price (unknown symbol, no trade before askedAt). */
      status: 'unpriced';
      reason: string;
    }
);

/**
 * A decision recorded and not yet observed: what the pricing job works through, oldest first.
 * `assetClass` is the decision's asset_class (some classes no provider here prices).
 */
export type PendingPrice = { recordId: string; agentId: string; chainSeq: number; symbol: string; recordedAt: string; assetClass: string };

/**
 * The pricing job's hold: one process prices at a time (PostgreSQL: a session advisory lock on a
 * connection of its own, freed when that process or its connection dies; SQLite: one per process).
 * `lost` turns true when the hold's connection fails; work already done stays valid (observations
 * are insert-if-absent), the job just stops and asks again.
 */
export type PricingHold = { readonly lost: boolean; release(): Promise<void> };

/**
 * One record of an agent's chain as the performance wing reads it: only what the accounting needs
 * (the content document, not the hashes or the signature), with the decision's observation beside
 * it (null for an execution, and for a decision not observed yet).
 */
export type ChainInput = {
  chainSeq: number;
  id: string;
  type: string;
  recordedAt: string;
  symbol: string | null;
  content: string;
  observation: ObservedPrice | null;
};

/**
 * What the accounting reads of a decision's content document: each term as text, or null when it
 * is absent or not a JSON string (symbol falls back to the record's symbol column, then "").
 */
export type DecisionTerms = {
  symbol: string;
  action: string | null;
  targetAllocationPct: string | null;
  quantity: string | null;
  notional: string | null;
  timeHorizon: string | null;
};

/**
 * One record of an agent's chain as a page of decision outcomes reads it, without its content: a
 * decision's terms and observation (from the priced_decisions projection once observed; read out
 * of its content by the database before that, with no observation); `terms` is null for a record
 * of another type. `contentBytes` is the content the database read for it (0 but for a decision
 * not observed yet).
 */
export type ChainTerms = {
  chainSeq: number;
  id: string;
  type: string;
  recordedAt: string;
  terms: DecisionTerms | null;
  observation: ObservedPrice | null;
  contentBytes: number;
};

/** An observed decision as the priced_decisions projection keeps it: its terms and its observation. */
export type PricedDecision = { chainSeq: number; id: string; recordedAt: string; terms: DecisionTerms; observation: ObservedPrice };

/** What the accounting reads of an observation. */
export type ObservedPrice = { source: PriceSource; feed: string | null; synthetic: boolean } & (
  | { status: 'priced'; price: string }
  | { status: 'unpriced'; reason: string }
);

export type StoredClose = { date: string; close: string };

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

export interface MarketStore {
  /**
   * Decisions (records of kind decision) with no observation yet, oldest first: what `source` is
   * to price. A decision is observed once, by whichever source priced it first (rule 6: its price
   * at receipt), so one observed by another source (before a provider switch) is not pending. The
   * adapters keep a scan cursor (every decision before it is observed): no walk of the whole table.
   */
  pendingPrices(source: PriceSource, limit: number): Promise<PendingPrice[]>;
  /** How many decisions are pending, counted up to `cap` (the operator's status). */
  countPendingPrices(cap: number): Promise<number>;
  /** Inserts each observation unless the record already has one (idempotent; never updates). */
  saveObservations(rows: PriceObservation[]): Promise<void>;
  observationOf(recordId: string): Promise<PriceObservation | null>;
  /** An agent's observations in chain order, seq > afterSeq, at most `limit`. */
  observationsOf(agentId: string, afterSeq: number, limit: number): Promise<PriceObservation[]>;
  /**
   * An agent's records in chain order, seq > afterSeq, at most `limit`, each with its observation:
   * one narrow read (no hashes, no signature) where listChain and observationsOf make two wide ones.
   */
  chainInputs(agentId: string, afterSeq: number, limit: number): Promise<ChainInput[]>;
  /**
   * An agent's records in chain order, seq > afterSeq, at most `limit`, as ChainTerms, ending with
   * the record whose content read takes the total past `maxBytes` (so at least one): only the
   * content of decisions not observed yet is read (in SQL, for their terms), and none returned.
   */
  chainTerms(agentId: string, afterSeq: number, limit: number, maxBytes: number): Promise<ChainTerms[]>;
  /**
   * The highest seq <= headSeq up to which every decision of the agent has its observation, by the
   * pricing job's scan cursor (0 when no scan has run): the part of the chain pricedDecisions serves.
   */
  observedPrefix(agentId: string, headSeq: number): Promise<number>;
  /**
   * The agent's observed decisions with seq in (afterSeq, throughSeq], in chain order, at most
   * `limit`: one narrow read of the priced_decisions projection, no content to parse. Within
   * observedPrefix these are all of the agent's decisions there; executions are not in it.
   */
  pricedDecisions(agentId: string, afterSeq: number, throughSeq: number, limit: number): Promise<PricedDecision[]>;
  /** How many of the agent's records with seq <= throughSeq have an observation (names an export's content). */
  countObservations(agentId: string, throughSeq: number): Promise<number>;
  /** The pricing job's hold, or null while another process holds it. */
  tryPricingHold(): Promise<PricingHold | null>;

  /** Cached daily closes of `symbol` from `source`, dates from..to inclusive, oldest first. */
  closes(source: PriceSource, symbol: string, from: string, to: string): Promise<StoredClose[]>;
  /** Caches closes (insert or replace by source, symbol, date). */
  saveCloses(source: PriceSource, symbol: string, closes: StoredClose[]): Promise<void>;

  report(agentId: string, portfolio: StoredReport['portfolio']): Promise<StoredReport | null>;
  saveReport(report: StoredReport): Promise<void>;
}
