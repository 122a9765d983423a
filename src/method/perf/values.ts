// The values the performance method reads (docs/perf_v1.md): a chain record with its observation,
// a decision's terms, the price observed at its receipt, a corporate action as its provider stated
// it. The market wing's port speaks them too (market/port.ts re-exports them).

/** Where a price or a corporate action came from. */
export type PriceSource = 'alpaca' | 'synthetic';

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

/** What the accounting reads of an observation. */
export type ObservedPrice = { source: PriceSource; feed: string | null; synthetic: boolean } & (
  | { status: 'priced'; price: string }
  | { status: 'unpriced'; reason: string }
);

/**
 * A corporate action as its provider stated it (market/port.ts, CorporateAction, says how each
 * member is read). Rates are normalised decimal text, never floats; `raw` is the provider's object as
 * canonical JSON (canon_v1: numbers as decimal strings).
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
