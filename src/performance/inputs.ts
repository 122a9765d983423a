// The records of an agent as perf_v1 inputs: decisions with the price observed at their receipt
// (rule 6), and imported executions as fills. Decisions come from two reads, in chain order: the
// observed prefix of the chain (every decision there priced, by the pricing job's scan cursor)
// from the priced_decisions projection, narrow and with no content to parse; then the rest of the
// chain record by record (chainTerms: an observed decision's row of the projection, no content),
// stopping at the first decision that has no observation yet: records are applied in chain
// order, so nothing after it can be applied until the pricing job has priced it.
// It owns the reading of a decision's and an execution's content document for the accounting.

import type { ChainInput, DecisionTerms, MarketStore, ObservedPrice, PriceSource, PricedDecision } from '../market/port.ts';
import type { Action, DecisionInput, FillInput } from './portfolio.ts';

const ACTIONS = new Set<string>(['BUY', 'SELL', 'HOLD', 'INCREASE', 'REDUCE', 'CLOSE']);
/** Records per read: small first (a fresh report usually needs few), larger while there are more. */
const PAGES = [100, 1000, 10_000];

type Content = { [key: string]: unknown };

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** What the accounting reads of an observation: the price, or why there is none. */
export type PriceAtReceipt = Pick<ObservedPrice & { status: 'priced' }, 'status' | 'price'> | Pick<ObservedPrice & { status: 'unpriced' }, 'status' | 'reason'>;

/** The terms of a decision's content document (as the priced_decisions projection reads them in SQL). */
export function termsOf(record: ChainInput): DecisionTerms {
  const c = JSON.parse(record.content) as Content;
  return {
    symbol: text(c.symbol) ?? record.symbol ?? '',
    action: text(c.action),
    targetAllocationPct: text(c.target_allocation_pct),
    quantity: text(c.quantity),
    notional: text(c.notional),
    timeHorizon: text(c.time_horizon),
  };
}

/** A decision's terms and observation as an accounting input (an unknown action holds). */
export function decisionOf(id: string, recordedAt: string, terms: DecisionTerms, observation: PriceAtReceipt): DecisionInput {
  return {
    id,
    recorded_at: recordedAt,
    symbol: terms.symbol,
    action: (terms.action !== null && ACTIONS.has(terms.action) ? terms.action : 'HOLD') as Action,
    target_allocation_pct: terms.targetAllocationPct,
    quantity: terms.quantity,
    notional: terms.notional,
    time_horizon: terms.timeHorizon,
    price: observation.status === 'priced' ? observation.price : null,
    price_missing_reason: observation.status === 'priced' ? null : observation.reason,
  };
}

/**
 * Rows with seq in (afterSeq, headSeq], a page at a time, each page asked for before the one before
 * it is worked through (PostgreSQL prepares it meanwhile).
 */
async function* pagesOf<T extends { chainSeq: number }>(read: (after: number, size: number) => Promise<T[]>, afterSeq: number, headSeq: number): AsyncGenerator<T[]> {
  let page = 0;
  const ask = (after: number) => {
    const size = Math.min(PAGES[page] as number, headSeq - after);
    page = Math.min(page + 1, PAGES.length - 1);
    return { size, entries: read(after, size) };
  };
  let next: ReturnType<typeof ask> | null = afterSeq < headSeq ? ask(afterSeq) : null;
  try {
    while (next !== null) {
      const { size, entries } = next;
      next = null;
      const got = await entries;
      const last = got[got.length - 1];
      if (last === undefined) return;
      if (got.length === size && last.chainSeq < headSeq) next = ask(last.chainSeq);
      yield got;
    }
  } finally {
    void next?.entries.catch(() => undefined); // asked for and no longer wanted
  }
}

/** The agent's records, each with its observation, seq in (afterSeq, headSeq]. */
const chainPages = (market: MarketStore, agentId: string, afterSeq: number, headSeq: number) =>
  pagesOf((after, size) => market.chainInputs(agentId, after, size), afterSeq, headSeq);

/**
 * The agent's records with their decisions' terms and observations, seq in (afterSeq, headSeq],
 * none of their content read but the first decision not observed yet's (a page ends with it).
 */
const termPages = (market: MarketStore, agentId: string, afterSeq: number, headSeq: number) =>
  pagesOf((after, size) => market.chainTerms(agentId, after, size, 1), afterSeq, headSeq);

/** The agent's observed decisions, seq in (afterSeq, throughSeq] (within the observed prefix). */
const pricedPages = (market: MarketStore, agentId: string, afterSeq: number, throughSeq: number) =>
  pagesOf((after, size) => market.pricedDecisions(agentId, after, throughSeq, size), afterSeq, throughSeq);

/** RFC 3339 instants as fixed-width UTC text (9 fractional digits), so that text order is time order. */
export function instantKey(value: string): string {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/.exec(value);
  if (m) return `${m[1]}.${(m[2] ?? '').padEnd(9, '0')}Z`;
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) return value;
  return instantKey(new Date(ms).toISOString());
}

/** An execution's content document as a fill (a date-only fill counts from 00:00 UTC of its day). */
export function fillInput(record: ChainInput): FillInput {
  const c = JSON.parse(record.content) as Content;
  return {
    id: record.id,
    executed_at: instantKey(text(c.filled_at) ?? record.recordedAt),
    symbol: text(c.symbol) ?? record.symbol ?? '',
    side: c.side === 'sell' ? 'sell' : 'buy',
    quantity: text(c.quantity) ?? '0',
    price: text(c.price) ?? '0',
    fee: null,
  };
}

export type DecisionBatch = {
  decisions: DecisionInput[];
  /** The last chain seq read and applied (executions included); the report's through_seq. */
  throughSeq: number;
  /** The first decision still awaiting its observation, if any. */
  awaiting: { id: string; recordedAt: string } | null;
  /** Sources of the observations read. */
  sources: Array<{ source: PriceSource; feed: string | null; synthetic: boolean }>;
};

/** The agent's decisions with seq in (afterSeq, headSeq], up to the first one not yet observed. */
export async function readDecisions(market: MarketStore, agentId: string, afterSeq: number, headSeq: number): Promise<DecisionBatch> {
  const batch: DecisionBatch = { decisions: [], throughSeq: afterSeq, awaiting: null, sources: [] };
  const seen = new Set<string>();
  let previous: ObservedPrice | null = null;
  const note = (o: ObservedPrice) => {
    if (previous !== null && o.source === previous.source && o.feed === previous.feed) return;
    previous = o;
    const key = `${o.source}\n${o.feed}`;
    if (seen.has(key)) return;
    seen.add(key);
    batch.sources.push({ source: o.source, feed: o.feed, synthetic: o.synthetic });
  };
  const prefix = afterSeq < headSeq ? await market.observedPrefix(agentId, headSeq) : 0;
  if (prefix > afterSeq) {
    for await (const priced of pricedPages(market, agentId, afterSeq, prefix)) {
      for (const d of priced) {
        note(d.observation);
        batch.decisions.push(pricedInput(d));
      }
    }
    batch.throughSeq = prefix;
  }
  for await (const records of termPages(market, agentId, batch.throughSeq, headSeq)) {
    for (const r of records) {
      if (r.chainSeq > headSeq) return batch;
      if (r.terms !== null) {
        const o = r.observation;
        if (o === null) {
          batch.awaiting = { id: r.id, recordedAt: r.recordedAt };
          return batch;
        }
        note(o);
        batch.decisions.push(decisionOf(r.id, r.recordedAt, r.terms, o));
      }
      batch.throughSeq = r.chainSeq;
    }
  }
  return batch;
}

const pricedInput = (d: PricedDecision): DecisionInput => decisionOf(d.id, d.recordedAt, d.terms, d.observation);

export type FillBatch = { fills: FillInput[]; throughSeq: number };

/** The agent's executions with seq in (afterSeq, headSeq]. */
export async function readFills(market: MarketStore, agentId: string, afterSeq: number, headSeq: number): Promise<FillBatch> {
  const batch: FillBatch = { fills: [], throughSeq: afterSeq };
  for await (const records of chainPages(market, agentId, afterSeq, headSeq)) {
    for (const r of records) {
      if (r.chainSeq > headSeq) return batch;
      if (r.type === 'execution') batch.fills.push(fillInput(r));
      batch.throughSeq = r.chainSeq;
    }
  }
  return batch;
}
