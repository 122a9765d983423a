// The inputs bundle of a computed performance report, written from the store: the lines of
// method/perf/bundle.ts (format `perf_inputs_v1`), produced as the reader takes them, a store page
// at a time, so a bundle of any size is streamed in bounded memory.

import type { ChainInput, MarketStore, PriceSource, StoredCorporateAction } from '../market/port.ts';
import { BENCHMARK_LOOKBACK_DAYS, INPUTS_FORMAT, type ActionLine, type CloseLine, type EndLine, type InputsHeader, type InputsLine, type RecordLine } from '../method/perf/bundle.ts';
import { factKey, type ActionInput } from '../method/perf/actions.ts';
import type { EngineState, Portfolio } from '../method/perf/engine.ts';
import { fillInput, termsOf } from '../method/perf/inputs.ts';
import { utcDate } from '../method/perf/portfolio.ts';
import { dateOfDay, dayNumber } from '../method/perf/calendar.ts';

/** Rows per store read. */
const PAGE = 1000;
/** Lines are sent in chunks of about this many characters (one socket write each, not one per line). */
const CHUNK_CHARS = 64 * 1024;

export type BundleSource = {
  market: MarketStore;
  agentId: string;
  handle: string;
  portfolio: Portfolio;
  state: EngineState;
  throughSeq: number;
  computedAt: string;
  priceSource: InputsHeader['price_source'];
  synthetic: boolean;
  actionsKnown?: InputsHeader['actions_known'];
};

/** The header of the bundle of a computed report. */
export function inputsHeader(b: BundleSource): InputsHeader {
  const s = b.state;
  const inception = s.inception === null ? null : utcDate(s.inception);
  return {
    object: 'performance_inputs', format: INPUTS_FORMAT, agent: b.handle, portfolio: b.portfolio, method: s.method,
    through_seq: b.throughSeq, as_of: s.valued_through, computed_at: b.computedAt, start_value: s.start_value,
    price_source: b.priceSource, synthetic: b.synthetic,
    benchmark: { symbol: s.benchmark.symbol, inception_price: s.benchmark.base_from === 'inception_price' ? s.benchmark.base_price : null },
    closes_from: { symbols: inception, benchmark: inception === null ? null : dateOfDay(dayNumber(inception) - BENCHMARK_LOOKBACK_DAYS) },
    ...(b.actionsKnown === undefined ? {} : { actions_known: b.actionsKnown }),
  };
}

/** The bundle's text in chunks of whole lines (each ends with a newline), header first, end line last. */
export async function* inputsLines(b: BundleSource): AsyncGenerator<string> {
  let chunk = '';
  for await (const text of bundleLines(b)) {
    chunk += text;
    if (chunk.length < CHUNK_CHARS) continue;
    yield chunk;
    chunk = '';
  }
  if (chunk !== '') yield chunk;
}

async function* bundleLines(b: BundleSource): AsyncGenerator<string> {
  const header = inputsHeader(b);
  yield line(header);
  const symbols = new Set<string>();
  let records = 0;
  for await (const r of recordsOf(b)) {
    if (r.type !== 'activity') symbols.add(r.type === 'decision' ? termsOf(r).symbol : fillInput(r).symbol);
    records++;
    yield line({ kind: 'record', type: r.type as RecordLine['type'], chain_seq: r.chainSeq, id: r.id, recorded_at: r.recordedAt, symbol: r.symbol, content: r.content, observation: r.observation } satisfies RecordLine);
  }
  const actions = await actionLines(b);
  for (const a of actions) yield line(a);
  let closes = 0;
  const source = b.priceSource?.source;
  const { symbols: from, benchmark: benchFrom } = header.closes_from;
  if (source !== undefined && from !== null && benchFrom !== null) {
    symbols.delete(header.benchmark.symbol);
    const lists: Array<[string, string]> = [...[...symbols].sort().map((s): [string, string] => [s, from]), [header.benchmark.symbol, benchFrom]];
    for (const [symbol, since] of lists) {
      if (symbol === '') continue;
      for (let after: string | null = null; ;) {
        const page = await b.market.closeFacts(source, symbol, since, after, PAGE);
        for (const c of page) yield line({ kind: 'close', symbol, date: c.date, close: c.close, fetched_at: c.fetchedAt } satisfies CloseLine);
        closes += page.length;
        if (page.length < PAGE) break;
        after = page[page.length - 1]!.date;
      }
    }
  }
  yield line({ kind: 'end', records, corporate_actions: actions.length, closes } satisfies EndLine);
}

const line = (value: InputsLine) => `${JSON.stringify(value)}\n`;

/**
 * The records the report applied, in chain order, seq up to through_seq: decisions (model), or
 * executions and the account's activities (broker: they decide whether its curve is time-weighted).
 */
async function* recordsOf(b: BundleSource): AsyncGenerator<ChainInput> {
  const types = b.portfolio === 'model' ? ['decision'] : ['execution', 'activity'];
  for (let after = 0; after < b.throughSeq;) {
    const page = await b.market.chainInputs(b.agentId, after, Math.min(PAGE, b.throughSeq - after));
    for (const r of page) {
      if (r.chainSeq > b.throughSeq) return;
      if (types.includes(r.type)) yield r;
    }
    const last = page[page.length - 1];
    if (last === undefined) return;
    after = last.chainSeq;
  }
}

/** The corporate actions the report was given (every version, canonical order), with their stored revisions. */
async function actionLines(b: BundleSource): Promise<ActionLine[]> {
  const given = (b.state.corporate?.actions ?? []).filter((a) => a.origin !== 'account'); // an account's events are its activity records, above
  const source = b.priceSource?.source;
  const stored = new Map<string, StoredCorporateAction>();
  if (source !== undefined) {
    for (const symbol of new Set(given.map((a) => a.symbol))) {
      for (const a of await b.market.corporateActionHistory(source, symbol)) stored.set(factKey(a), a);
    }
  }
  return given.map((a: ActionInput): ActionLine => {
    const s = stored.get(factKey(a));
    return {
      kind: 'corporate_action', provider_id: a.provider_id, revision: s?.revision ?? null, source: s?.source ?? (source as PriceSource), type: a.type, symbol: a.symbol,
      ex_date: a.ex_date, payable_date: a.payable_date, process_date: a.process_date, record_date: s?.record_date ?? null,
      old_rate: a.old_rate, new_rate: a.new_rate, rate: a.rate, special: a.special ?? null, seen_at: a.seen_at, raw: s?.raw ?? null,
    };
  });
}
