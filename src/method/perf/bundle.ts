// The inputs bundle of a performance report as published (format `perf_inputs_v1`, NDJSON; docs/
// perf_v1.md §8): every input the report was computed from, so that anyone can compute it again. It
// owns the lines: a header naming the report it belongs to (through_seq, as_of) and its method; the
// records it applied, each with its observation; the corporate actions it was given, with their
// provider ids and revisions; the raw closes of each symbol of the records and of the benchmark,
// with when each was stored; an end line with the counts. The service writes them
// (performance/bundle.ts), the offline verifier reads them (verify/performance.ts).

import type { CorporateActionFacts, ObservedPrice, PriceSource } from './values.ts';
import type { EngineState, Portfolio } from './engine.ts';
import type { ActionsKnown } from './known.ts';

export const INPUTS_FORMAT = 'perf_inputs_v1';
/** Days before the inception date the benchmark's closes are given from (the report's base may be the close before it). */
export const BENCHMARK_LOOKBACK_DAYS = 10;
export type InputsHeader = {
  object: 'performance_inputs';
  format: typeof INPUTS_FORMAT;
  agent: string;
  portfolio: Portfolio;
  method: EngineState['method'];
  /** The report these inputs give: its last chain seq applied and its last valued date. */
  through_seq: number;
  as_of: string | null;
  computed_at: string;
  start_value: string;
  price_source: { source: PriceSource; feed: string | null; synthetic: boolean } | null;
  synthetic: boolean;
  /** The benchmark: its symbol, and the price it was observed at on the first record's receipt (null when its base is a close). */
  benchmark: { symbol: string; inception_price: string | null };
  /** Closes are given from these dates on: the inception date (symbols), BENCHMARK_LOOKBACK_DAYS before it (benchmark). */
  closes_from: { symbols: string | null; benchmark: string | null };
  /**
   * perf_v2: the days whose corporate actions the service knew when it computed the report, of the
   * benchmark and each symbol held (known.ts; the report's labels follow them). Absent when the
   * report was stored before they were recorded: its labels then say what was asked for.
   */
  actions_known?: ActionsKnown;
};

/** One record the report applied: a decision (model) with its observation, or an execution or an account activity (broker). */
export type RecordLine = {
  kind: 'record';
  type: 'decision' | 'execution' | 'activity';
  chain_seq: number;
  id: string;
  recorded_at: string;
  /** The record's symbol column (the decision's symbol when its content has none). */
  symbol: string | null;
  /** The content document, canon_v1 text as hashed in the chain (compare it with the export). */
  content: string;
  observation: ObservedPrice | null;
};

/** A corporate action as the store holds it (its facts), with its revision and when it was seen. */
export type ActionLine = Omit<CorporateActionFacts, 'raw'> & {
  kind: 'corporate_action';
  /** The stored revision of that provider id (1 first), null when the report was given a fact the store does not hold. */
  revision: number | null;
  seen_at: string;
  /** The provider's object as canonical JSON, null when not stored. */
  raw: string | null;
};

export type CloseLine = { kind: 'close'; symbol: string; date: string; close: string; fetched_at: string };
export type EndLine = { kind: 'end'; records: number; corporate_actions: number; closes: number };
export type InputsLine = InputsHeader | RecordLine | ActionLine | CloseLine | EndLine;
