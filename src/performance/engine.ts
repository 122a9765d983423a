// perf_v1, resumable: the accounting of portfolio.ts, the valuation of valueDaily and the outcomes
// of outcomes.ts carried in a plain, serialisable state, so that a report grows with each new
// record and each new close instead of being recomputed from the agent's first record.
// Owns: the state, `advance` (apply records and closes after the state's `valued_through` date)
// and `publish` (the public report of a state). Pure: no I/O, no clock; the input state is never
// modified. Fed the same records and closes, from scratch or in any number of steps, it reaches
// the same figures as modelPerformance / brokerPerformance (test/performance/engine.test.ts).
//
// Invariants that make resuming exact: every record not yet applied is dated (UTC) after
// `valued_through`; every close up to `valued_through` has been used; no day is valued before the
// date of a record already applied. `advance` refuses (`out_of_order`) a step that would break
// one; the caller then starts again from scratch.

import { Dec, money } from './numbers.ts';
import { addToDate, directionOf, firstIndexFrom, hitRateOf, parseHorizon, type HitRate } from './outcomes.ts';
import { METHOD, benchmarkValue, summarise, type SeriesRow } from './perf.ts';
import {
  Book, START_VALUE, applyFill, decisionEffect, utcDate, type BookState, type Close, type DecisionInput, type FillFlags, type FillInput,
  type Note, type NoteCode,
} from './portfolio.ts';
import type { Metrics, RelativeMetrics } from './metrics.ts';

export const STATE_VERSION = 2;
/** Notes kept with their message (the newest); every note is counted by code. */
export const RECENT_NOTES = 20;

export type Portfolio = 'model' | 'broker';
export type HorizonKey = '1d' | '5d' | '21d' | 'stated';
const HORIZON_KEYS: HorizonKey[] = ['1d', '5d', '21d', 'stated'];

/**
 * A priced, directional decision whose outcome at some horizon is still pending (a tuple: an agent
 * may have thousands, kept in the stored report): [symbol, date, receipt price, direction, closes
 * seen after its date, open horizons, stated horizon: trading days (number) or the calendar date it
 * ends on (string), or null].
 */
export type Pending = [symbol: string, date: string, price: string, direction: 1 | -1, seen: number, open: HorizonKey[], stated: number | string | null];

export type EngineState = {
  version: typeof STATE_VERSION;
  portfolio: Portfolio;
  start_value: string;
  /** The first record's instant; the curve starts on its UTC date. */
  inception: string | null;
  /** Every close dated up to this date has been used (and every record dated up to it applied). */
  valued_through: string | null;
  book: BookState;
  /** [date, value, benchmark value or null], 2 decimals. */
  series: Array<[date: string, value: string, benchmark: string | null]>;
  benchmark: { symbol: string; base_price: string | null; base_from: 'inception_price' | 'previous_close' | 'first_close' | null };
  pending: Pending[];
  /** Per horizon: [hits, counted]. */
  hits: Record<HorizonKey, [number, number]>;
  counts: { records: number; unpriced: number; traded: number };
  notes: { counts: Partial<Record<NoteCode, number>>; recent: Note[] };
  /** Broker only: the once-only notes already given. */
  flags: { cash_noted: boolean; short_noted: string[] };
  /** The last record applied (its instant and id): a broker fill sorting before it forces a recomputation. */
  last: { at: string; id: string } | null;
};

export function startState(portfolio: Portfolio, benchmark: string, startValue: string = START_VALUE): EngineState {
  return {
    version: STATE_VERSION,
    portfolio,
    start_value: new Dec(startValue).toFixed(),
    inception: null,
    valued_through: null,
    book: { cash: new Dec(startValue).toFixed(), invested: '0', holdings: [] },
    series: [],
    benchmark: { symbol: benchmark, base_price: null, base_from: null },
    pending: [],
    hits: { '1d': [0, 0], '5d': [0, 0], '21d': [0, 0], stated: [0, 0] },
    counts: { records: 0, unpriced: 0, traded: 0 },
    notes: { counts: {}, recent: [] },
    flags: { cash_noted: false, short_noted: [] },
    last: null,
  };
}

export type AdvanceInput = {
  /** New records in their order (decisions in chain order; fills in any order, sorted here). */
  decisions?: DecisionInput[];
  fills?: FillInput[];
  /** The new valued_through date: closes up to it are final. */
  through: string;
  /** The benchmark's closes dated after the state's valued_through, up to `through`, in date order. */
  benchmark: Close[];
  /** The base of the benchmark, given once the first record is known (ignored after). */
  benchmarkBase?: { price: string | null; from: EngineState['benchmark']['base_from'] };
  /** Closes dated after valued_through up to `through` of every symbol held, pending or traded. */
  closes: Record<string, Close[]>;
};

export type Advanced = { ok: true; state: EngineState } | { ok: false; reason: 'out_of_order'; message: string };

/**
 * The new records in application order: their instants, ids and UTC dates, and how the i-th is
 * applied (one function for all of them, not a closure per record: there may be 100,000).
 */
type Events = { length: number; at: (i: number) => string; id: (i: number) => string; dates: string[]; apply: (book: Book, i: number) => void };

/** A copy deep enough that advancing it never touches `state` (the book is rebuilt from text anyway). */
function copyOf(state: EngineState): EngineState {
  return {
    ...state,
    series: [...state.series],
    benchmark: { ...state.benchmark },
    pending: state.pending.map((p) => [p[0], p[1], p[2], p[3], p[4], [...p[5]], p[6]]),
    hits: { '1d': [...state.hits['1d']], '5d': [...state.hits['5d']], '21d': [...state.hits['21d']], stated: [...state.hits.stated] },
    counts: { ...state.counts },
    notes: { counts: { ...state.notes.counts }, recent: [...state.notes.recent] },
    flags: { cash_noted: state.flags.cash_noted, short_noted: [...state.flags.short_noted] },
  };
}

/** Applies new records and closes to a copy of `state`. */
export function advance(state: EngineState, input: AdvanceInput): Advanced {
  const s = copyOf(state);
  const log = new NoteLog(s);
  const events = eventsOf(s, input, log);
  if (events.length > 0 && s.valued_through !== null && (events.dates[0] as string) <= s.valued_through) {
    return { ok: false, reason: 'out_of_order', message: `a record dated ${events.dates[0]} arrived after the series was valued through ${s.valued_through}` };
  }
  if (events.length > 0 && s.last !== null && (events.at(0) < s.last.at || (events.at(0) === s.last.at && events.id(0) < s.last.id))) {
    return { ok: false, reason: 'out_of_order', message: `record ${events.id(0)} sorts before ${s.last.id}, already applied` };
  }
  const firstDay = input.benchmark.find((c) => (s.valued_through === null || c.date > s.valued_through) && c.date <= input.through);
  if (s.last !== null && firstDay !== undefined && firstDay.date < utcDate(s.last.at)) {
    return { ok: false, reason: 'out_of_order', message: `record ${s.last.id} (${s.last.at}) is applied, so ${firstDay.date} can no longer be valued` };
  }
  if (s.valued_through !== null && input.through < s.valued_through) {
    return { ok: false, reason: 'out_of_order', message: `valued through ${s.valued_through}, asked to value through ${input.through}` };
  }
  if (s.inception === null && events.length > 0) {
    s.inception = events.at(0);
    if (input.benchmarkBase) s.benchmark = { ...s.benchmark, base_price: input.benchmarkBase.price, base_from: input.benchmarkBase.from };
  }
  const book = Book.restore(s.book);
  valueDays(s, book, events, input);
  if (events.length > 0) s.last = { at: events.at(events.length - 1), id: events.id(events.length - 1) };
  s.book = book.snapshot();
  log.close();
  resolveOutcomes(s, input.closes, input.through);
  s.valued_through = input.through;
  return { ok: true, state: s };
}

/** Notes of one advance: counted at once, their messages written for the newest RECENT_NOTES only. */
class NoteLog {
  private readonly fresh: Array<{ record_id: string; code: NoteCode; message: string | (() => string) }> = [];

  constructor(private readonly s: EngineState) {}

  add(id: string, n: { code: NoteCode; message: string | (() => string) }): void {
    this.s.notes.counts[n.code] = (this.s.notes.counts[n.code] ?? 0) + 1;
    this.fresh.push({ record_id: id, code: n.code, message: n.message });
    if (this.fresh.length > 4 * RECENT_NOTES) this.fresh.splice(0, this.fresh.length - RECENT_NOTES);
  }

  close(): void {
    const written = this.fresh.slice(-RECENT_NOTES).map((n) => ({ record_id: n.record_id, code: n.code, message: typeof n.message === 'string' ? n.message : n.message() }));
    this.s.notes.recent = [...this.s.notes.recent, ...written].slice(-RECENT_NOTES);
  }
}

/** The records of `input` as events in application order; pending outcomes are registered here. */
function eventsOf(s: EngineState, input: AdvanceInput, log: NoteLog): Events {
  const decisions = input.decisions ?? [];
  if (decisions.length > 0) {
    return {
      length: decisions.length,
      at: (i) => (decisions[i] as DecisionInput).recorded_at,
      id: (i) => (decisions[i] as DecisionInput).id,
      dates: decisions.map((d) => utcDate(d.recorded_at)),
      apply: (book, i) => {
        const d = decisions[i] as DecisionInput;
        const effect = decisionEffect(book, d);
        s.counts.records++;
        if (effect.price === null) s.counts.unpriced++;
        else if (!effect.traded.isZero()) s.counts.traded++;
        for (const n of effect.notes) log.add(d.id, n);
        if (effect.price !== null) track(s, d, effect.price);
      },
    };
  }
  const flags: FillFlags = { cashNoted: s.flags.cash_noted, shortNoted: new Set(s.flags.short_noted) };
  const fills = [...(input.fills ?? [])]
    .sort((a, b) => (a.executed_at !== b.executed_at ? (a.executed_at < b.executed_at ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return {
    length: fills.length,
    at: (i) => (fills[i] as FillInput).executed_at,
    id: (i) => (fills[i] as FillInput).id,
    dates: fills.map((f) => utcDate(f.executed_at)),
    apply: (book, i) => {
      const f = fills[i] as FillInput;
      const outcome = applyFill(book, f, flags);
      s.counts.records++;
      if (outcome.applied.traded_quantity !== '0') s.counts.traded++;
      for (const n of outcome.notes) log.add(f.id, n);
      s.flags = { cash_noted: flags.cashNoted, short_noted: [...flags.shortNoted].sort() };
    },
  };
}

/** valueDaily of portfolio.ts, resumed: each benchmark date after valued_through, from the inception date on. */
function valueDays(s: EngineState, book: Book, events: Events, input: AdvanceInput): void {
  const closeOf = new Map<string, Map<string, string>>();
  for (const [symbol, list] of Object.entries(input.closes)) closeOf.set(symbol, new Map(list.map((c) => [c.date, c.close])));
  const inceptionDate = s.inception === null ? null : utcDate(s.inception);
  let next = 0;
  for (const { date, close } of input.benchmark) {
    if (s.valued_through !== null && date <= s.valued_through) continue;
    if (date > input.through) break;
    if (inceptionDate === null || date < inceptionDate) continue;
    while (next < events.length && (events.dates[next] as string) <= date) events.apply(book, next++);
    for (const symbol of [...book.holdings.keys()]) {
      const c = closeOf.get(symbol)?.get(date);
      if (c !== undefined) book.mark(symbol, new Dec(c));
    }
    const base = s.benchmark.base_price;
    s.series.push([date, money(book.value()), base === null ? null : benchmarkValue(s.start_value, close, base)]);
  }
  while (next < events.length) events.apply(book, next++);
}

/** Registers a priced, directional decision whose outcomes are to come (outcomes.ts rules). */
function track(s: EngineState, d: DecisionInput, price: Dec): void {
  const direction = directionOf(d.action);
  if (direction === 0 || price.lte(0)) return;
  const date = utcDate(d.recorded_at);
  const stated = statedEnd(date, d.time_horizon ?? null);
  const open: HorizonKey[] = stated === null ? ['1d', '5d', '21d'] : [...HORIZON_KEYS];
  s.pending.push([d.symbol, date, d.price as string, direction, 0, open, stated]);
}

/** Stated horizons' ends by horizon text, then date (cached: agents repeat theirs). */
const ends = new Map<string | null, Map<string, number | string | null>>();
let endsKept = 0;

/** A stated horizon as trading days or the date it ends on, or null when it does not parse. */
function statedEnd(date: string, horizon: string | null): number | string | null {
  let end = ends.get(horizon)?.get(date);
  if (end === undefined) {
    const parsed = parseHorizon(horizon);
    end = parsed === null ? null : parsed.kind === 'trading_days' ? parsed.n : addToDate(date, parsed);
    if (endsKept >= 50_000) {
      ends.clear();
      endsKept = 0;
    }
    let byDate = ends.get(horizon);
    if (byDate === undefined) ends.set(horizon, (byDate = new Map()));
    byDate.set(date, end);
    endsKept++;
  }
  return end;
}

/**
 * Each close of a symbol dated after a pending decision counts towards its horizons: the n-th
 * such close resolves a horizon of n trading days, the first on or after its date a calendar one.
 * Found by binary search in the new closes, so the work grows with the pending decisions, not
 * with pending × closes.
 */
function resolveOutcomes(s: EngineState, closes: Record<string, Close[]>, through: string): void {
  if (s.pending.length === 0) return;
  const doubles = new Map<Close[], Float64Array>();
  const still: Pending[] = [];
  for (const p of s.pending) {
    const list = closes[p[0]] ?? [];
    const start = firstIndexFrom(list, p[1]);
    let end = list.length;
    while (end > start && (list[end - 1] as Close).date > through) end--;
    if (end > start) {
      let values = doubles.get(list);
      if (values === undefined) doubles.set(list, (values = Float64Array.from(list, (c) => asDouble(c.close))));
      const price = asDouble(p[2]);
      const open: HorizonKey[] = [];
      for (const h of p[5]) {
        const i = closeIndex(p, h, list, start, end);
        if (i < 0) open.push(h);
        else record(s, h, order(values[i] as number, price, (list[i] as Close).close, p[2]) * p[3] > 0);
      }
      p[4] += end - start;
      p[5] = open;
    }
    if (p[5].length > 0) still.push(p);
  }
  s.pending = still;
}

/**
 * A positive decimal text as a double where that keeps its order exactly, else NaN. Texts of at
 * most 15 characters (so at most 15 digits) do: distinct ones never round to the same double, and
 * rounding keeps their order.
 */
const asDouble = (text: string): number => (text.length <= 15 ? Number(text) : Number.NaN);

/** The order of two positive decimals: by their doubles (asDouble) when both have one, else exactly. */
function order(x: number, y: number, a: string, b: string): number {
  if (!Number.isNaN(x) && !Number.isNaN(y)) return x < y ? -1 : x > y ? 1 : 0;
  return new Dec(a).cmp(b);
}

const TRADING_DAYS: Record<Exclude<HorizonKey, 'stated'>, number> = { '1d': 1, '5d': 5, '21d': 21 };

/** The index in list[start..end) of the close that resolves horizon `h` of `p`, or -1 while there is none. */
function closeIndex(p: Pending, h: HorizonKey, list: Close[], start: number, end: number): number {
  const n = h === 'stated' ? p[6] : TRADING_DAYS[h];
  const i = typeof n === 'number'
    ? start + (n - p[4]) - 1 // p[4]: closes after its date counted in earlier steps
    : Math.max(start, firstIndexFrom(list, n as string, true));
  return i < end ? i : -1;
}

/** A resolved outcome: a hit when the close is beyond the receipt price in the decision's direction. */
function record(s: EngineState, h: HorizonKey, hit: boolean): void {
  const tally = s.hits[h];
  tally[1]++;
  if (hit) tally[0]++;
}

// ---------------------------------------------------------------------------------------------
// Publication

export type Caveat = { code: string; message: string };

export type PublishedReport = {
  method: typeof METHOD;
  portfolio: Portfolio;
  basis: 'decisions_at_receipt_price' | 'trade_derived';
  synthetic: boolean;
  caveats: Caveat[];
  inception: string | null;
  /** Closes dated up to this day are in the report (a day with no close adds no row). */
  as_of: string | null;
  start_value: string;
  series: SeriesRow[];
  metrics: Metrics & RelativeMetrics;
  benchmark: EngineState['benchmark'] & { basis: 'price_return'; metrics: Metrics | null };
  hit_rate: Record<HorizonKey, HitRate> | null;
  holdings: { cash: string; positions: Array<{ symbol: string; quantity: string; mark: string }> };
  records: EngineState['counts'] & { pending_outcomes: number };
  notes: EngineState['notes'];
};

/**
 * The public report of a state: series with daily returns, every metric, hit rates, holdings.
 * `previous`, the report of an earlier state of the same computation, lends its series and
 * metrics when no day was valued since (they depend on the series alone).
 */
export function publish(s: EngineState, meta: { synthetic: boolean; caveats: Caveat[] }, previous: PublishedReport | null = null): PublishedReport {
  const same = previous !== null && previous.series.length === s.series.length && previous.inception === s.inception;
  const { series, metrics, benchmarkMetrics } = same ? { series: previous.series, metrics: previous.metrics, benchmarkMetrics: previous.benchmark.metrics } : summariseState(s);
  const hit_rate = s.portfolio === 'model'
    ? Object.fromEntries(HORIZON_KEYS.map((h) => [h, hitRateOf(s.hits[h][0], s.hits[h][1])])) as Record<HorizonKey, HitRate>
    : null;
  return {
    method: METHOD,
    portfolio: s.portfolio,
    basis: s.portfolio === 'model' ? 'decisions_at_receipt_price' : 'trade_derived',
    synthetic: meta.synthetic,
    caveats: meta.caveats,
    inception: s.inception,
    as_of: s.valued_through,
    start_value: money(new Dec(s.start_value)),
    series,
    metrics,
    benchmark: { ...s.benchmark, basis: 'price_return', metrics: benchmarkMetrics },
    hit_rate,
    holdings: {
      cash: s.book.cash,
      positions: [...s.book.holdings].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([symbol, quantity, mark]) => ({ symbol, quantity, mark })),
    },
    records: { ...s.counts, pending_outcomes: s.pending.length },
    notes: s.notes,
  };
}

function summariseState(s: EngineState) {
  const inceptionDate = s.inception === null ? null : utcDate(s.inception);
  const values = s.series.map(([date, value]) => ({ date, value }));
  const bench = s.benchmark.base_price === null ? null : s.series.map(([date, , b]) => ({ date, value: b as string }));
  return summarise(money(new Dec(s.start_value)), inceptionDate, values, bench);
}

/** Symbols whose closes the next `advance` needs: held, with pending outcomes, or in the new records. */
export function symbolsNeeded(s: EngineState, newSymbols: Iterable<string>): string[] {
  const set = new Set<string>(newSymbols);
  for (const [symbol] of s.book.holdings) set.add(symbol);
  for (const p of s.pending) set.add(p[0]);
  return [...set].sort();
}

