// The records of an agent as perf_v1 inputs: decisions with the price observed at their receipt
// (rule 6), and imported executions as fills. Decisions come from two reads, in chain order: the
// observed prefix of the chain (every decision there priced, by the pricing job's scan cursor)
// from the priced_decisions projection, narrow and with no content to parse; then the rest of the
// chain record by record (chainTerms: an observed decision's row of the projection, no content),
// stopping at the first decision that has no observation yet: records are applied in chain
// order, so nothing after it can be applied until the pricing job has priced it.
// The content documents themselves are read by the method (method/perf/inputs.ts).

import type { MarketStore, ObservedPrice, PriceSource, PricedDecision } from '../market/port.ts';
import type { DecisionInput, FillInput } from '../method/perf/portfolio.ts';
import { decisionOf, fillInput } from '../method/perf/inputs.ts';

/** Records per read: small first (a fresh report usually needs few), larger while there are more. */
const PAGES = [100, 1000, 10_000];

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
