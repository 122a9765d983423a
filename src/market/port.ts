// The market wing's ports. No I/O here.
// - The market-data port: what the rest of the service may ask of a price source (MarketData).
// - The storage port (MarketStore): what the wing keeps beside the records, with a SQLite and a
//   PostgreSQL adapter (store/{sqlite,postgres}/market.ts) over the same database as the
//   LedgerStore, opened as `store.market`. It keeps the price observed at each decision's receipt
//   (rule 6: one per decision, append-only, public on the proof and in the export), the raw daily
//   closes and the corporate actions fetched from the provider (facts: append-only, with their
//   source), and the narrow reads of an agent's chain the performance wing values.
// It owns the shapes of a priced instant and a daily bar, the error values every provider returns,
// the symbol forms (stocks `AAPL`, crypto `BTC/USD`), the staleness rule, the shape of a
// corporate action (corporate-actions.ts reads Alpaca's), and the stored market facts.

import type { ChainInput, CorporateActionFacts, DecisionTerms, ObservedPrice, PriceSource } from '../method/perf/values.ts';
import type { ActionsKnown, KnownRange } from '../method/perf/known.ts';
export type { ActionsKnown, KnownRange };

export type { ChainInput, CorporateActionFacts, DecisionTerms, ObservedPrice, PriceSource };

export type Source = 'alpaca' | 'synthetic' | 'none';
export type AssetKind = 'stock' | 'crypto';

/** The last trade at or before the instant asked for. */
export type TradePrice = {
  symbol: string;
  /** Normalised decimal text (canon_v1 §2), exactly as the provider's number reads. */
  price: string;
  /** The provider's own timestamp of that trade (RFC 3339, as the provider wrote it). */
  provider_time: string;
  /** The instant asked for, `YYYY-MM-DDTHH:MM:SS.sssZ`. */
  asked_at: string;
  source: Source;
  feed: string | null;
  synthetic: boolean;
  /** asked_at − provider_time in milliseconds (never negative: no later trade is ever returned). */
  age_ms: number;
  /** True when age_ms exceeds STALE_AFTER_MS (market closed, halted, or a thin feed). */
  stale: boolean;
};

/** One daily bar, dated by its trading day (New York date for stocks, UTC date for crypto). */
export type DailyBar = {
  date: string;
  open: string;
  high: string;
  low: string;
  close: string;
  provider_time: string;
};

export type DailyBars = {
  symbol: string;
  bars: DailyBar[];
  source: Source;
  feed: string | null;
  /** How prices were adjusted: always `raw` (unadjusted: the price traded that day, before any later split or dividend). */
  adjustment: 'raw';
  synthetic: boolean;
};

/**
 * A corporate action as its provider stated it, a fact of its own:
 * - `provider_id`: Alpaca's UUID `id` (`content:<sha256 prefix>` for an object without one); for the
 *   synthetic model a UUID-shaped hash of its seed, symbol, type and ex-date.
 * - `source`: `alpaca` or `synthetic`.
 * - `type`: Alpaca's singular type name (`forward_split`, `reverse_split`, `cash_dividend`,
 *   `stock_dividend`, `spin_off`, `cash_merger`, ...; a type unknown here is kept as named).
 * - `symbol`: the affected symbol: `symbol`, else the old, source or acquiree symbol.
 * - `ex_date`: `YYYY-MM-DD` (a merger's or unit split's `effective_date`); the other dates as the
 *   provider gave them, or null. A cash dividend's `process_date` is its payable date.
 * - `old_rate`, `new_rate`, `rate`: the provider's members of those names, as normalised decimal
 *   text exactly as its JSON number reads (never through a float); null when absent. A split is
 *   `new_rate` new shares for `old_rate` old; a cash dividend's `rate` is cash per share; a stock
 *   dividend's `rate` the provider's (extra shares per share, UNCONFIRMED).
 * - `special`: the provider's flag for a non-recurring dividend, null when absent.
 * - `raw`: the provider's object as canonical JSON (canon_v1: numbers as decimal strings).
 */
export type CorporateAction = CorporateActionFacts;

export type MarketError =
  | { code: 'provider_error'; message: string; status?: number }
  | { code: 'unknown_symbol'; symbol: string; message: string }
  | { code: 'no_price'; symbol: string; message: string }
  | { code: 'rate_limited'; retry_after_ms: number; message: string }
  | { code: 'not_configured'; message: string }
  | { code: 'invalid_request'; message: string };

export type MarketResult<T> = { ok: true; value: T } | { ok: false; error: MarketError };

export interface MarketData {
  readonly source: Source;
  readonly synthetic: boolean;
  /** Why nothing is priced (provider `none`), or a one-line description of the provider. */
  readonly description: string;
  /** The last trade of `symbol` at or before `at`. */
  latestTrade(symbol: string, at: Date): Promise<MarketResult<TradePrice>>;
  /** Raw (unadjusted) daily bars with dates from `from` to `to` inclusive (`YYYY-MM-DD`), oldest first. */
  dailyBars(symbol: string, from: string, to: string): Promise<MarketResult<DailyBars>>;
  /**
   * The corporate actions of `symbols` whose ex_date (else process_date) is in from..to inclusive,
   * every type, by ex_date then provider_id. Crypto symbols have none.
   */
  corporateActions(symbols: readonly string[], from: string, to: string): Promise<MarketResult<CorporateAction[]>>;
}

/**
 * Staleness bound: a trade more than 15 minutes older than the instant asked for is stale. Fifteen
 * minutes is the delay of Alpaca's free SIP data; an open market trades a listed symbol far more
 * often, so an older price means the market was closed, the symbol halted, or the feed thin.
 */
export const STALE_AFTER_MS = 15 * 60 * 1000;

export function ageOf(providerEpochMs: number, at: Date): { age_ms: number; stale: boolean } {
  const age = Math.max(0, at.getTime() - providerEpochMs);
  return { age_ms: age, stale: age > STALE_AFTER_MS };
}

const CRYPTO_SYMBOL = /^[A-Z0-9]+\/[A-Z0-9]+$/;
const STOCK_SYMBOL = /^[A-Z0-9][A-Z0-9.\-]{0,19}$/;

/** `BTC/USD` is crypto; `AAPL`, `BRK.B` are stocks; anything else is not a symbol we can price. */
export function assetKindOf(symbol: string): AssetKind | null {
  if (CRYPTO_SYMBOL.test(symbol)) return 'crypto';
  if (STOCK_SYMBOL.test(symbol)) return 'stock';
  return null;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function isIsoDate(s: string): boolean {
  if (!DATE.test(s)) return false;
  const d = new Date(`${s}T00:00:00.000Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

export function invalidSymbol(symbol: string): MarketResult<never> {
  return { ok: false, error: { code: 'unknown_symbol', symbol, message: `not a stock or crypto symbol: ${JSON.stringify(symbol)}` } };
}

export function invalidRange(from: string, to: string): MarketResult<never> {
  return { ok: false, error: { code: 'invalid_request', message: `bad date range ${JSON.stringify(from)}..${JSON.stringify(to)}` } };
}

/** A corporate-actions request's stock symbols (crypto ones dropped), or the error for a symbol or the date range. */
export function checkActionsRequest(symbols: readonly string[], from: string, to: string): MarketResult<string[]> {
  const bad = symbols.find((s) => assetKindOf(s) === null);
  if (bad !== undefined) return invalidSymbol(bad);
  if (!isIsoDate(from) || !isIsoDate(to) || from > to) return invalidRange(from, to);
  return { ok: true, value: [...new Set(symbols.filter((s) => assetKindOf(s) === 'stock'))] };
}

/** A daily-bars request's asset kind, or the error for its symbol or date range. */
export function checkBarsRequest(symbol: string, from: string, to: string): MarketResult<AssetKind> {
  const kind = assetKindOf(symbol);
  if (kind === null) return invalidSymbol(symbol);
  if (!isIsoDate(from) || !isIsoDate(to) || from > to) return invalidRange(from, to);
  return { ok: true, value: kind };
}

// The storage port.


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


/** A raw (unadjusted) daily close, as the provider first answered it. */
export type StoredClose = { date: string; close: string };

/** A stored close with when the ledger stored it (a fact of the performance inputs bundle). */
export type CloseFact = StoredClose & { fetchedAt: string };

/** One save of a symbol's closes: when it was stored, and the latest date it held. */
export type CloseFetch = { fetchedAt: string; lastDate: string };


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
/** A symbol a broker portfolio holds or held, and the earliest date it is known from. */
export type BrokerSymbol = { symbol: string; firstDate: string };

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
  /** The days whose corporate actions `source` was asked about, of each of `symbols` asked about at all. */
  actionsKnown(source: PriceSource, symbols: string[]): Promise<ActionsKnown>;
  /** Keeps each symbol's days asked about (replacing what was kept: the caller widens it, method/perf/known.ts). */
  saveActionsKnown(source: PriceSource, known: ActionsKnown): Promise<void>;
  /** The symbols of priced observations, by source, with the date of the first: what the pricing job keeps facts for. */
  pricedSymbols(): Promise<PricedSymbol[]>;
  /**
   * The symbols any broker portfolio holds or held: of imported executions and activities (from
   * the earliest fill or activity date), and of the positions a broker reported (from the first
   * snapshot listing them). The pricing job keeps their facts from the configured provider.
   */
  brokerSymbols(): Promise<BrokerSymbol[]>;
}
