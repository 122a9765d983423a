// The market sub-port: what the pricing and performance wings keep beside the records, with a
// SQLite and a PostgreSQL adapter over the same database as the LedgerStore (market.ts picks it).
// Owns the price observed at each decision's receipt (rule 6: one per decision, append-only, public
// on the proof and in the export), the raw daily closes and the corporate actions fetched from the
// provider (facts: append-only, with their source), and the stored performance reports (derived,
// recomputable, replaced as they grow).

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

/** A raw (unadjusted) daily close, as the provider first answered it. */
export type StoredClose = { date: string; close: string };

/** A stored close with when the ledger stored it (a fact of the performance inputs bundle). */
export type CloseFact = StoredClose & { fetchedAt: string };

/** One save of a symbol's closes: when it was stored, and the latest date it held. */
export type CloseFetch = { fetchedAt: string; lastDate: string };

/**
 * A corporate action as its provider stated it (market/corporate-actions.ts names it
 * CorporateAction and says how each member is read). Rates are normalised decimal text, never
 * floats; `raw` is the provider's object as canonical JSON (canon_v1: numbers as decimal strings).
 */
export type CorporateActionFacts = {
  provider_id: string;
  source: PriceSource;
  type: string;
  symbol: string;
  ex_date: string | null;
  payable_date: string | null;
  process_date: string | null;
  record_date: string | null;
  old_rate: string | null;
  new_rate: string | null;
  rate: string | null;
  special: boolean | null;
  raw: string;
};

/**
 * One stored revision of a corporate action: `id` grows with every row written, `revision` counts
 * the versions of its provider_id (1 first), `seen_at` is when the ledger learned this version,
 * `superseded_by` the id of the next revision (null for the current one).
 */
export type StoredCorporateAction = CorporateActionFacts & { id: number; revision: number; seen_at: string; superseded_by: number | null };

/** What a save of corporate actions wrote: actions new to the ledger, and corrections of known ones. */
export type SavedActions = { added: number; revised: number };

/** A symbol the pricing job keeps facts for: priced by `source`, first observed on `firstDate`. */
export type PricedSymbol = { source: PriceSource; symbol: string; firstDate: string };

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

  /** Stored raw daily closes of `symbol` from `source`, dates from..to inclusive, oldest first. */
  closes(source: PriceSource, symbol: string, from: string, to: string): Promise<StoredClose[]>;
  /**
   * Keeps raw closes (market_raw_closes): each inserted unless that source, symbol and date has one
   * already; a stored close never changes (append-only by trigger). `fetchedAt`: when the provider answered.
   */
  saveCloses(source: PriceSource, symbol: string, closes: StoredClose[], fetchedAt: string): Promise<void>;
  /** Stored closes of `symbol` with their fetched_at, dates after `after` and from `from` on, oldest first, at most `limit`. */
  closeFacts(source: PriceSource, symbol: string, from: string, after: string | null, limit: number): Promise<CloseFact[]>;
  /** The saves of `symbol`'s closes: each fetched_at with the latest date stored then, by fetched_at. */
  closeFetches(source: PriceSource, symbol: string): Promise<CloseFetch[]>;

  /**
   * Keeps corporate actions, append-only: an action whose provider_id is new is stored as revision 1;
   * one that differs (type or raw) from the current revision of its provider_id is stored as the
   * next revision, superseding it; one identical to it writes nothing (a re-fetch is idempotent).
   */
  saveCorporateActions(actions: CorporateActionFacts[], seenAt: string): Promise<SavedActions>;
  /** The current actions of `symbol` from `source` (the latest revision of each provider_id), by ex_date, then provider_id. */
  corporateActions(source: PriceSource, symbol: string): Promise<StoredCorporateAction[]>;
  /** Every revision ever stored of the actions that named `symbol` in any revision, oldest row first. */
  corporateActionHistory(source: PriceSource, symbol: string): Promise<StoredCorporateAction[]>;
  /** The symbols of priced observations, by source, with the date of the first: what the pricing job keeps facts for. */
  pricedSymbols(): Promise<PricedSymbol[]>;

  report(agentId: string, portfolio: StoredReport['portfolio']): Promise<StoredReport | null>;
  saveReport(report: StoredReport): Promise<void>;
}
