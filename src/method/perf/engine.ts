// perf_v1 and perf_v2, resumable: the accounting of portfolio.ts, the valuation of valueDaily and the
// outcomes of outcomes.ts carried in a plain, serialisable state, so that a report grows with each
// new record and each new close instead of being recomputed from the agent's first record.
// perf_v2 values raw closes and applies corporate actions (actions.ts): splits and stock dividends
// on the ex-date before the open, cash dividends accrued on the ex-date and paid on the payable
// date, cash in lieu of fractions at the ex-date's close, a total-return benchmark (and the price
// return beside it), the events applied and the restatements listed in the report.
// It owns the state, `advance` (apply records and closes after the state's `valued_through` date)
// and `publish` (the public report of a state). Pure: no I/O, no clock; the input state is never
// modified. Fed the same records and closes, from scratch or in any number of steps, it reaches
// the same figures as modelPerformance / brokerPerformance (test/performance/engine.test.ts).
//
// Invariants that make resuming exact: every record not yet applied is dated (UTC) after
// `valued_through`; every close up to `valued_through` has been used; no day is valued before the
// date of a record already applied; (perf_v2) every action event dated up to `corporate.applied_through`
// is applied. `advance` refuses (`out_of_order`, or `restate` for a corporate action learned after
// what it changes was valued) a step that would break one; the caller then starts again from
// scratch with every input it knows, and the report lists the restatement (restatements depend on
// the facts alone: an action learned after a close dated on or after its effective date was stored,
// actions.ts closesStoredBefore; so from scratch and step by step agree).

import { compareActions, effectiveDate, factKey, latestVersions, learnedLate, payDate, ratioText, sourceOf, termsOf, type ActionInput, type AppliedAction } from './actions.ts';

export type { AppliedAction } from './actions.ts';
import { plusDays } from './calendar.ts';
import { describeMissing, missingPart, type ActionsKnown, type Missing } from './known.ts';
import { Dec, money, plain } from './numbers.ts';
import { addToDate, directionOf, firstIndexFrom, hitRateOf, parseHorizon, type HitRate } from './outcomes.ts';
import { benchmarkValue, summarise, type SeriesRow } from './perf.ts';
import type { Dec as D } from './numbers.ts';
import {
  Book, START_VALUE, applyFill, decisionEffect, utcDate, type BookState, type Close, type DecisionInput, type FillFlags, type FillInput,
  type Note, type NoteCode,
} from './portfolio.ts';
import type { Metrics, RelativeMetrics } from './metrics.ts';

/** 4: events say their source, and broker reports take splits and dividends from the account or the market (holding-actions.ts); a stored state of an earlier version is computed again from scratch. */
export const STATE_VERSION = 4;
export type Method = 'perf_v1' | 'perf_v2';
/** The benchmark's basis in a perf_v2 report: dividends reinvested at the ex-date close (default), or not. */
export type BenchmarkReturn = 'total' | 'price';
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

/** An action of the benchmark's symbol applied to its index. */
export type BenchmarkEvent = { date: string; type: string; provider_id: string; ratio: string | null; rate: string | null; close: string; total_factor: string; price_factor: string };

/** Why the report's figures from `from` on differ from those published before the action was known. */
export type Restatement = {
  from: string; provider_id: string; type: string; symbol: string; reason: 'late_action' | 'correction'; seen_at: string;
  /** When a close of the symbol dated from `from` on was stored, before the action was learned (so a report could value it without). */
  close_stored_at: string;
};

/** An action touching a holding that perf_v2 does not apply (another type, or unusable terms). */
export type NotApplied = { date: string; symbol: string; type: string; provider_id: string; reason: string };

/** perf_v2's corporate-action state. */
export type CorporateState = {
  /** Every version of every action given so far, in canonical order (actions.ts compareActions). */
  actions: ActionInput[];
  /** Action events dated up to this date are applied to the book (at least valued_through; more when a record of a later date was applied). */
  applied_through: string | null;
  /** [symbol, the date it was first held (after that date's records)], by symbol: an action on or before that date changes nothing. */
  held_from: Array<[symbol: string, date: string]>;
  /** Dividends accrued, not yet paid: [pay date, symbol, amount, provider id, type]. */
  receivables: Array<[pay: string, symbol: string, amount: string, provider_id: string, type: string]>;
  /** Fractions of shares to be paid in cash at the close of `date`: [date, symbol, fraction, value held meanwhile, mark, provider id, type]. */
  in_lieu: Array<[date: string, symbol: string, fraction: string, held: string, mark: string, provider_id: string, type: string]>;
  events: AppliedAction[];
  restatements: Restatement[];
  not_applied: NotApplied[];
  /** The benchmark's index: the date of its base price, its factors (splits, and splits with dividends reinvested), its events. */
  benchmark: { base_date: string | null; total: string; price: string; events: BenchmarkEvent[] };
};

export type EngineState = {
  version: typeof STATE_VERSION;
  method: Method;
  portfolio: Portfolio;
  start_value: string;
  /** The first record's instant; the curve starts on its UTC date. */
  inception: string | null;
  /** Every close dated up to this date has been used (and every record dated up to it applied). */
  valued_through: string | null;
  book: BookState;
  /** [date, value, benchmark value or null], 2 decimals; perf_v2: the benchmark's total return, then its price return. */
  series: Array<[date: string, value: string, benchmark: string | null, price?: string | null]>;
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
  /** perf_v2 only (null in perf_v1). */
  corporate: CorporateState | null;
};

export function startState(portfolio: Portfolio, benchmark: string, startValue: string = START_VALUE, method: Method = 'perf_v1'): EngineState {
  return {
    version: STATE_VERSION,
    method,
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
    corporate: method === 'perf_v1' ? null : {
      actions: [], applied_through: null, held_from: [], receivables: [], in_lieu: [], events: [], restatements: [], not_applied: [],
      benchmark: { base_date: null, total: '1', price: '1', events: [] },
    },
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
  /** The base of the benchmark, given once the first record is known (ignored after); `date`: the date of that price (perf_v2). */
  benchmarkBase?: { price: string | null; from: EngineState['benchmark']['base_from']; date?: string | null };
  /** Closes dated after valued_through up to `through` of every symbol held, pending or traded (perf_v2: raw). */
  closes: Record<string, Close[]>;
  /**
   * perf_v2: corporate actions as they become known, in any order, of the symbols of `closes` and
   * of the benchmark. Facts already given (same provider id and seen_at) are ignored; one dated at
   * or before what it changes was valued makes `advance` answer `restate`.
   */
  actions?: ActionInput[];
};

export type Advanced = { ok: true; state: EngineState } | { ok: false; reason: 'out_of_order' | 'restate'; message: string; from?: string };

/**
 * The new records in application order: their instants, ids and UTC dates, and how the i-th is
 * applied (one function for all of them, not a closure per record: there may be 100,000).
 */
type Events = { length: number; at: (i: number) => string; id: (i: number) => string; symbol: (i: number) => string; dates: string[]; apply: (book: Book, i: number) => void };

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
    corporate: state.corporate === null ? null : {
      ...state.corporate,
      actions: [...state.corporate.actions],
      held_from: [...state.corporate.held_from],
      receivables: [...state.corporate.receivables],
      in_lieu: [...state.corporate.in_lieu],
      events: [...state.corporate.events],
      restatements: [...state.corporate.restatements],
      not_applied: [...state.corporate.not_applied],
      benchmark: { ...state.corporate.benchmark, events: [...state.corporate.benchmark.events] },
    },
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
  if (s.corporate !== null) {
    const late = takeActions(s, s.corporate, input.actions ?? []);
    if (late !== null) return late;
  }
  if (s.inception === null && events.length > 0) {
    s.inception = events.at(0);
    if (input.benchmarkBase) {
      s.benchmark = { ...s.benchmark, base_price: input.benchmarkBase.price, base_from: input.benchmarkBase.from };
      if (s.corporate !== null) s.corporate.benchmark = { ...s.corporate.benchmark, base_date: input.benchmarkBase.date ?? utcDate(events.at(0)) };
    }
  }
  const book = Book.restore(s.book);
  if (s.corporate === null) valueDays(s, book, events, input);
  else new Timeline(s, s.corporate, book, events, input).run();
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
      symbol: (i) => (decisions[i] as DecisionInput).symbol,
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
    symbol: (i) => (fills[i] as FillInput).symbol,
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

// ---------------------------------------------------------------------------------------------
// perf_v2: corporate actions

/** The canonical copy of an action a state keeps (the fields perf_v2 reads, nothing else). */
function kept(a: ActionInput): ActionInput {
  return {
    provider_id: a.provider_id, type: a.type, symbol: a.symbol, ex_date: a.ex_date ?? null, payable_date: a.payable_date ?? null, process_date: a.process_date ?? null,
    old_rate: a.old_rate ?? null, new_rate: a.new_rate ?? null, rate: a.rate ?? null, special: a.special ?? null, seen_at: a.seen_at,
    close_stored_at: a.close_stored_at ?? null,
    ...(a.origin === undefined ? {} : { origin: a.origin }),
    ...(a.covered_by == null ? {} : { covered_by: a.covered_by }),
    ...(a.amount == null ? {} : { amount: a.amount }),
  };
}

/**
 * Adds the actions not known yet to the state. One whose provider id has a version (this one or
 * another) dated where the valuation already used the book or the benchmark without it makes the
 * step answer `restate` (from that date): the caller starts again from scratch.
 */
function takeActions(s: EngineState, corp: CorporateState, given: ActionInput[]): Advanced | null {
  if (given.length === 0) return null;
  const known = new Set(corp.actions.map(factKey));
  const fresh: ActionInput[] = [];
  for (const a of given) {
    const key = factKey(a);
    if (known.has(key)) continue;
    known.add(key);
    fresh.push(kept(a));
  }
  if (fresh.length === 0) return null;
  const all = [...corp.actions, ...fresh];
  const ids = new Set(fresh.map((a) => a.provider_id));
  const heldFrom = new Map(corp.held_from);
  const lastValued = s.series.at(-1)?.[0] ?? null;
  let from: string | null = null;
  let why: ActionInput | null = null;
  for (const v of all) {
    const date = effectiveDate(v);
    if (!ids.has(v.provider_id) || date === null) continue;
    const first = heldFrom.get(v.symbol);
    const onBook = corp.applied_through !== null && date <= corp.applied_through && first !== undefined && first < date;
    const onBenchmark = v.symbol === s.benchmark.symbol && lastValued !== null && date <= lastValued && (corp.benchmark.base_date === null || date > corp.benchmark.base_date);
    if ((onBook || onBenchmark) && (from === null || date < from)) {
      from = date;
      why = v;
    }
  }
  if (from !== null && why !== null) {
    return { ok: false, reason: 'restate', from, message: `${why.type} ${why.provider_id} of ${why.symbol} (effective ${from}, learned ${why.seen_at}) changes what is valued from ${from}: compute again from scratch` };
  }
  corp.actions = all.sort(compareActions);
  return null;
}

/** The text of the later of two dates (null is earliest). */
const later = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : a > b ? a : b);

/**
 * One perf_v2 step: records, action events and valuation days interleaved by date. On a date,
 * actions go first (before the open: dividends accrued on the holding at the previous close,
 * then stock dividends and splits), then dividends payable that day, then the records; the
 * valuation at the close comes last, after the benchmark's own actions and the cash in lieu of
 * fractions paid at that close.
 */
class Timeline {
  private readonly closeOf = new Map<string, Map<string, string>>();
  private readonly heldFrom: Map<string, string>;
  private readonly latest: Map<string, ActionInput>;
  private readonly versions = new Map<string, number>();
  /** The portfolio's action versions dated after applied_through, in canonical order, and the next one's index and date. */
  private readonly queue: ActionInput[];
  private qi = 0;
  /** The benchmark's action versions dated after its last valued day (or its base). */
  private readonly benchQueue: ActionInput[];
  private bi = 0;
  private next = 0;
  private nextPay: string | null = null;

  constructor(
    private readonly s: EngineState,
    private readonly corp: CorporateState,
    private readonly book: Book,
    private readonly events: Events,
    private readonly input: AdvanceInput,
  ) {
    for (const [symbol, list] of Object.entries(input.closes)) this.closeOf.set(symbol, new Map(list.map((c) => [c.date, c.close])));
    this.heldFrom = new Map(corp.held_from);
    this.latest = latestVersions(corp.actions);
    for (const a of corp.actions) this.versions.set(a.provider_id, (this.versions.get(a.provider_id) ?? 0) + 1);
    const after = corp.applied_through;
    this.queue = corp.actions.filter((a) => { const d = effectiveDate(a); return d !== null && (after === null || d > after); });
    const benchAfter = s.series.at(-1)?.[0] ?? corp.benchmark.base_date;
    this.benchQueue = corp.actions.filter((a) => { const d = effectiveDate(a); return a.symbol === s.benchmark.symbol && a.origin !== 'account' && d !== null && (benchAfter === null || d > benchAfter); });
    this.nextPay = corp.receivables.reduce<string | null>((m, r) => (m === null || r[0] < m ? r[0] : m), null);
  }

  run(): void {
    const { s, book, input } = this;
    const inceptionDate = s.inception === null ? null : utcDate(s.inception);
    for (const { date, close } of input.benchmark) {
      if (s.valued_through !== null && date <= s.valued_through) continue;
      if (date > input.through) break;
      if (inceptionDate === null || date < inceptionDate) continue;
      this.applyThrough(date);
      this.benchmarkActions(date, close);
      for (const symbol of [...book.holdings.keys()]) {
        const c = this.closeOf.get(symbol)?.get(date);
        if (c !== undefined) book.mark(symbol, new Dec(c));
      }
      this.payInLieu(date);
      s.series.push([date, money(book.value()), ...this.benchmarkValues(close)]);
    }
    const lastRecord = this.events.length > 0 ? (this.events.dates[this.events.length - 1] as string) : null;
    const limit = later(input.through, lastRecord) as string;
    this.applyThrough(limit);
    this.corp.applied_through = later(this.corp.applied_through, limit);
    this.corp.held_from = [...this.heldFrom].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** Everything dated up to `limit`: action events, payments and records, in that order on each date. */
  private applyThrough(limit: string): void {
    const { events } = this;
    for (;;) {
      const a = this.queue[this.qi];
      const aDate = a === undefined ? null : (effectiveDate(a) as string);
      const t = aDate === null ? this.nextPay : this.nextPay === null || aDate <= this.nextPay ? aDate : this.nextPay;
      const r = this.next < events.length ? (events.dates[this.next] as string) : null;
      if (t !== null && t <= limit && (r === null || t <= r)) {
        if (a !== undefined && aDate === t) {
          this.qi++;
          this.action(a, t);
        } else this.pay(t);
        continue;
      }
      if (r === null || r > limit) return;
      const i = this.next++;
      events.apply(this.book, i);
      const symbol = events.symbol(i);
      if (!this.heldFrom.has(symbol) && this.book.holdings.has(symbol)) this.heldFrom.set(symbol, r);
    }
  }

  /** One version of an action on its date, on the holding as it is before that day's open. */
  private action(a: ActionInput, date: string): void {
    const { book, corp } = this;
    if (!book.holdings.has(a.symbol)) return; // not held: nothing to do
    if (a.covered_by != null) return; // the account's own event applies it (holding-actions.ts)
    const inForce = this.latest.get(a.provider_id) as ActionInput;
    if (inForce !== a) {
      if (learnedLate(inForce)) this.restated(date, inForce, 'correction');
      return;
    }
    if (learnedLate(a)) this.restated(date, a, (this.versions.get(a.provider_id) ?? 1) > 1 ? 'correction' : 'late_action');
    const terms = termsOf(a);
    if (terms.kind === 'none') {
      corp.not_applied.push({ date, symbol: a.symbol, type: a.type, provider_id: a.provider_id, reason: terms.reason });
      return;
    }
    const cash = plain(book.cash);
    if (terms.kind === 'cash') {
      const q = book.quantity(a.symbol);
      const amount = terms.fixed ?? q.times(terms.rate);
      book.receivable = book.receivable.plus(amount);
      const pay = payDate(a, date);
      corp.receivables.push([pay, a.symbol, plain(amount), a.provider_id, a.type]);
      corp.receivables.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)); // stable: same pay date in the order accrued
      this.nextPay = corp.receivables[0]?.[0] ?? null;
      const qty = plain(q);
      corp.events.push({ date, phase: 'ex', symbol: a.symbol, type: a.type, provider_id: a.provider_id, ratio: null, rate: terms.fixed ? null : plain(terms.rate), quantity_before: qty, quantity_after: qty, cash_before: cash, cash_after: cash, amount: plain(amount), source: sourceOf(a.provider_id) });
      return;
    }
    const r = book.rebase(a.symbol, terms.num, terms.den, terms.places);
    if (!r.fraction.isZero()) {
      const held = r.fraction.times(r.mark);
      book.receivable = book.receivable.plus(held);
      corp.in_lieu.push([date, a.symbol, plain(r.fraction), plain(held), plain(r.mark), a.provider_id, a.type]);
    }
    corp.events.push({
      date, phase: 'ex', symbol: a.symbol, type: a.type, provider_id: a.provider_id, ratio: ratioText(a), rate: a.type === 'stock_dividend' ? a.rate : null,
      quantity_before: plain(r.before), quantity_after: plain(r.after), cash_before: cash, cash_after: cash, amount: null, source: sourceOf(a.provider_id),
    });
  }

  /** Dividends payable on `date` move from receivable into cash. */
  private pay(date: string): void {
    const { book, corp } = this;
    while (corp.receivables.length > 0 && (corp.receivables[0] as CorporateState['receivables'][number])[0] <= date) {
      const [, symbol, amount, provider_id, type] = corp.receivables.shift() as CorporateState['receivables'][number];
      const before = plain(book.cash);
      book.cash = book.cash.plus(amount);
      book.receivable = book.receivable.minus(amount);
      const qty = plain(book.quantity(symbol));
      corp.events.push({ date, phase: 'payable', symbol, type, provider_id, ratio: null, rate: null, quantity_before: qty, quantity_after: qty, cash_before: before, cash_after: plain(book.cash), amount, source: sourceOf(provider_id) });
    }
    this.nextPay = corp.receivables[0]?.[0] ?? null;
  }

  /**
   * Fractions cut by an action dated up to `date` are paid in cash at this close, the first
   * valuation on or after their date (their ex-date's own close when it is a trading day), else at
   * their re-based mark. Only this step's closes are read, so a step and a computation from
   * scratch pay the same price.
   */
  private payInLieu(date: string): void {
    const { book, corp } = this;
    if (corp.in_lieu.length === 0) return;
    const still: CorporateState['in_lieu'] = [];
    for (const line of corp.in_lieu) {
      const [on, symbol, fraction, held, mark, provider_id, type] = line;
      if (on > date) {
        still.push(line);
        continue;
      }
      const price = this.closeOf.get(symbol)?.get(date) ?? mark;
      const before = plain(book.cash);
      const amount = new Dec(fraction).times(price);
      book.cash = book.cash.plus(amount);
      book.receivable = book.receivable.minus(held);
      const qty = plain(book.quantity(symbol));
      corp.events.push({ date: on, phase: 'in_lieu', symbol, type, provider_id, ratio: null, rate: null, quantity_before: qty, quantity_after: qty, cash_before: before, cash_after: plain(book.cash), amount: plain(amount), fraction, price, source: sourceOf(provider_id) });
    }
    corp.in_lieu = still;
  }

  /**
   * The benchmark's actions dated up to `date` (after its last valued day): dividends per share
   * held at the previous close, reinvested at this close in the total-return index; splits and
   * stock dividends multiply both indices.
   */
  private benchmarkActions(date: string, close: string): void {
    const { corp } = this;
    const due = this.benchQueue[this.bi];
    if (due === undefined || (effectiveDate(due) as string) > date) return;
    let total = new Dec(corp.benchmark.total);
    let price = new Dec(corp.benchmark.price);
    let dividends: D | null = null;
    const applied: ActionInput[] = [];
    for (; this.bi < this.benchQueue.length; this.bi++) {
      const a = this.benchQueue[this.bi] as ActionInput;
      const on = effectiveDate(a) as string;
      if (on > date) break;
      const inForce = this.latest.get(a.provider_id) as ActionInput;
      if (inForce !== a) {
        if (learnedLate(inForce)) this.restated(on, inForce, 'correction');
        continue;
      }
      if (learnedLate(a)) this.restated(on, a, (this.versions.get(a.provider_id) ?? 1) > 1 ? 'correction' : 'late_action');
      const terms = termsOf(a);
      if (terms.kind === 'none') {
        corp.not_applied.push({ date: on, symbol: a.symbol, type: a.type, provider_id: a.provider_id, reason: `benchmark: ${terms.reason}` });
        continue;
      }
      if (terms.kind === 'cash') {
        const cash = total.times(terms.rate);
        dividends = dividends === null ? cash : dividends.plus(cash);
      } else {
        total = total.times(terms.num).div(terms.den);
        price = price.times(terms.num).div(terms.den);
      }
      applied.push(a);
    }
    if (applied.length === 0) return;
    if (dividends !== null) total = total.plus(dividends.div(close));
    corp.benchmark = { ...corp.benchmark, total: plain(total), price: plain(price), events: [...corp.benchmark.events] };
    for (const a of applied) {
      corp.benchmark.events.push({
        date: effectiveDate(a) as string, type: a.type, provider_id: a.provider_id, ratio: ratioText(a), rate: a.type === 'cash_dividend' || a.type === 'stock_dividend' ? a.rate : null,
        close, total_factor: corp.benchmark.total, price_factor: corp.benchmark.price,
      });
    }
  }

  /** B_d = start × close_d × factor / base, 2 decimals: total return, then price return (null without a base). */
  private benchmarkValues(close: string): [string | null, string | null] {
    const base = this.s.benchmark.base_price;
    if (base === null) return [null, null];
    const { total, price } = this.corp.benchmark;
    const at = (factor: string) => (factor === '1' ? benchmarkValue(this.s.start_value, close, base) : money(new Dec(this.s.start_value).times(close).times(factor).div(base)));
    return [at(total), at(price)];
  }

  /** The report is restated from `from` because of `a`: one row per provider id, from its earliest date. */
  private restated(from: string, a: ActionInput, reason: Restatement['reason']): void {
    const list = this.corp.restatements;
    const i = list.findIndex((r) => r.provider_id === a.provider_id);
    if (i >= 0 && (list[i] as Restatement).from <= from) return;
    const row: Restatement = { from, provider_id: a.provider_id, type: a.type, symbol: a.symbol, reason, seen_at: a.seen_at, close_stored_at: a.close_stored_at as string };
    if (i >= 0) list[i] = row;
    else list.push(row);
  }
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

/**
 * The benchmark's basis as published: its total return or price return when its corporate actions
 * were known for the whole period (or when the report was not told what was known: stored before
 * that was recorded), else `partial_return` (`benchmark.missing` says which days).
 */
export type BenchmarkBasis = 'price_return' | 'total_return' | 'partial_return';

export type PublishedReport = {
  method: Method;
  portfolio: Portfolio;
  basis: 'decisions_at_receipt_price' | 'trade_derived' | 'time_weighted';
  synthetic: boolean;
  caveats: Caveat[];
  inception: string | null;
  /** Closes dated up to this day are in the report (a day with no close adds no row). */
  as_of: string | null;
  start_value: string;
  series: SeriesRow[];
  metrics: Metrics & RelativeMetrics;
  benchmark: EngineState['benchmark'] & { basis: BenchmarkBasis; metrics: Metrics | null; events?: BenchmarkEvent[]; missing?: Missing | null };
  hit_rate: Record<HorizonKey, HitRate> | null;
  holdings: { cash: string; positions: Array<{ symbol: string; quantity: string; mark: string }>; receivable?: string };
  records: EngineState['counts'] & { pending_outcomes: number };
  notes: EngineState['notes'];
  /** perf_v2: the corporate actions applied (and not), and whether the figures were restated. */
  corporate_actions?: { events: AppliedAction[]; not_applied: NotApplied[]; missing?: Missing[] };
  restatement?: { from: string; actions: Restatement[] } | null;
};

/**
 * Broker, imported history complete (broker-history.ts historyVerdict): the time-weighted curve
 * (reconstructTimeWeighted, valued on the dates of the state's series) and the account it rebuilt,
 * published in place of the trade-derived curve and book. The holdings' splits and dividends are
 * the broker's own activity records where it reported them, else the market's corporate actions
 * (holding-actions.ts: each applied once, docs/perf_v1.md §4.2); `events` lists them with their source.
 */
export type TimeWeightedView = {
  values: Array<{ date: string; value: string }>; cash: string; positions: Array<{ symbol: string; quantity: string; mark: string }>; notes: Note[];
  /** Absent in a report stored before the events were listed. */
  events?: AppliedAction[];
};

export type PublishOptions = {
  benchmark_return?: BenchmarkReturn;
  time_weighted?: TimeWeightedView | null;
  /** perf_v2: the days whose corporate actions the service knew, by symbol; absent in a report stored before they were recorded. */
  actions_known?: ActionsKnown;
};

/** What a perf_v2 report needed of the corporate actions and did not know: the benchmark's, and each holding's while held. */
type Gaps = { benchmark: Missing | null; holdings: Missing[] };

function gapsOf(s: EngineState, known: ActionsKnown, holdings: boolean): Gaps {
  const c = s.corporate;
  const through = s.valued_through;
  if (c === null || through === null || s.inception === null) return { benchmark: null, holdings: [] };
  // An action on the base's date, or on the day a symbol was first held, changes nothing: the days needed start after it.
  const benchmarkFrom = c.benchmark.base_date === null ? utcDate(s.inception) : plusDays(c.benchmark.base_date, 1);
  const benchmark = missingPart(known, s.benchmark.symbol, benchmarkFrom, through);
  const held = holdings ? c.held_from.map(([symbol, date]) => missingPart(known, symbol, plusDays(date, 1), through)) : [];
  return { benchmark, holdings: held.filter((m): m is Missing => m !== null) };
}

/** The basis the numbers follow: what was asked, unless part of the benchmark's actions was not known. */
function basisOf(asked: 'price_return' | 'total_return', gaps: Gaps | null): BenchmarkBasis {
  return gaps?.benchmark ? 'partial_return' : asked;
}

/**
 * The public report of a state: series with daily returns, every metric, hit rates, holdings.
 * `previous`, the report of an earlier state of the same computation, lends its series and
 * metrics when no day was valued since (they depend on the series alone). perf_v2: the benchmark
 * is its total return unless `benchmark_return` is 'price'.
 */
export function publish(s: EngineState, meta: { synthetic: boolean; caveats: Caveat[] }, previous: PublishedReport | null = null, options: PublishOptions = {}): PublishedReport {
  const asked = s.corporate !== null && options.benchmark_return !== 'price' ? 'total_return' : 'price_return';
  const tw = s.portfolio === 'broker' ? options.time_weighted ?? null : null;
  const gaps = s.corporate === null || options.actions_known === undefined ? null : gapsOf(s, options.actions_known, tw === null);
  if (tw !== null) return publishTimeWeighted(s, meta, asked, gaps, tw);
  const basis = basisOf(asked, gaps);
  const same = previous !== null && previous.basis !== 'time_weighted' && previous.series.length === s.series.length && previous.inception === s.inception && previous.benchmark.basis === basis;
  const { series, metrics, benchmarkMetrics } = same ? { series: previous.series, metrics: previous.metrics, benchmarkMetrics: previous.benchmark.metrics } : summariseState(s, asked === 'total_return' || s.corporate === null ? 2 : 3);
  const hit_rate = s.portfolio === 'model'
    ? Object.fromEntries(HORIZON_KEYS.map((h) => [h, hitRateOf(s.hits[h][0], s.hits[h][1])])) as Record<HorizonKey, HitRate>
    : null;
  const report: PublishedReport = {
    method: s.method,
    portfolio: s.portfolio,
    basis: s.portfolio === 'model' ? 'decisions_at_receipt_price' : 'trade_derived',
    synthetic: meta.synthetic,
    caveats: s.corporate === null ? meta.caveats : [...meta.caveats, ...corporateCaveats(s, s.corporate, asked, gaps)],
    inception: s.inception,
    as_of: s.valued_through,
    start_value: money(new Dec(s.start_value)),
    series,
    metrics,
    benchmark: { ...s.benchmark, basis, metrics: benchmarkMetrics },
    hit_rate,
    holdings: {
      cash: s.book.cash,
      positions: [...s.book.holdings].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([symbol, quantity, mark]) => ({ symbol, quantity, mark })),
    },
    records: { ...s.counts, pending_outcomes: s.pending.length },
    notes: s.notes,
  };
  if (s.corporate !== null) {
    const c = s.corporate;
    report.benchmark.events = c.benchmark.events;
    report.holdings.receivable = s.book.receivable ?? '0';
    report.corporate_actions = { events: c.events, not_applied: c.not_applied };
    report.restatement = restatementOf(c.restatements);
    if (gaps !== null) {
      report.benchmark.missing = gaps.benchmark;
      report.corporate_actions.missing = gaps.holdings;
    }
  }
  return report;
}

function restatementOf(restatements: Restatement[]): PublishedReport['restatement'] {
  const actions = [...restatements].sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : a.provider_id < b.provider_id ? -1 : a.provider_id > b.provider_id ? 1 : 0));
  return actions.length === 0 ? null : { from: (actions[0] as Restatement).from, actions };
}

/**
 * The time-weighted broker report: the state's benchmark, dates, counts; the curve, holdings,
 * notes and holding events of the account rebuilt from its activities (and the market actions no
 * activity covers). The state's own corporate caveats are the benchmark's (its events, and
 * restatements of its symbol).
 */
function publishTimeWeighted(s: EngineState, meta: { synthetic: boolean; caveats: Caveat[] }, asked: 'price_return' | 'total_return', gaps: Gaps | null, tw: TimeWeightedView): PublishedReport {
  const column = asked === 'total_return' || s.corporate === null ? 2 : 3;
  const basis = basisOf(asked, gaps);
  const dates = s.series.map((row) => row[0]).join('\n');
  if (tw.values.map((p) => p.date).join('\n') !== dates) throw new Error('the time-weighted curve is not valued on the dates of the series');
  const bench = s.benchmark.base_price === null ? null : s.series.map((row) => ({ date: row[0], value: row[column] as string }));
  const { series, metrics, benchmarkMetrics } = summarise(money(new Dec(s.start_value)), s.inception === null ? null : utcDate(s.inception), tw.values, bench);
  const counts: Partial<Record<NoteCode, number>> = { ...s.notes.counts };
  for (const n of tw.notes) counts[n.code] = (counts[n.code] ?? 0) + 1;
  const c = s.corporate;
  const restatements = c === null ? [] : c.restatements.filter((r) => r.symbol === s.benchmark.symbol);
  const benchmarkOnly: CorporateState | null = c === null ? null : { ...c, restatements, not_applied: c.not_applied.filter((n) => n.reason.startsWith('benchmark:')) };
  const caveats = benchmarkOnly === null ? meta.caveats : [...meta.caveats, ...corporateCaveats(s, benchmarkOnly, asked, gaps).filter((x) => x.code !== 'corporate_actions_applied')];
  const report: PublishedReport = {
    method: s.method, portfolio: s.portfolio, basis: 'time_weighted', synthetic: meta.synthetic, caveats, inception: s.inception, as_of: s.valued_through,
    start_value: money(new Dec(s.start_value)), series, metrics, benchmark: { ...s.benchmark, basis, metrics: benchmarkMetrics }, hit_rate: null,
    holdings: { cash: tw.cash, positions: tw.positions },
    records: { ...s.counts, pending_outcomes: s.pending.length },
    notes: { counts, recent: [...s.notes.recent, ...tw.notes].slice(-RECENT_NOTES) },
  };
  if (benchmarkOnly !== null) {
    report.benchmark.events = benchmarkOnly.benchmark.events;
    report.holdings.receivable = '0';
    report.corporate_actions = { events: tw.events ?? [], not_applied: benchmarkOnly.not_applied };
    report.restatement = restatementOf(restatements);
    if (gaps !== null) {
      report.benchmark.missing = gaps.benchmark;
      report.corporate_actions.missing = [];
    }
  }
  return report;
}

/** The caveats a perf_v2 state gives of itself: the benchmark's basis, the actions applied (or not known), restatements, actions not applied. */
function corporateCaveats(s: EngineState, c: CorporateState, asked: 'price_return' | 'total_return', gaps: Gaps | null): Caveat[] {
  const list: Caveat[] = [benchmarkCaveat(s.benchmark.symbol, asked, gaps?.benchmark ?? null)];
  const applied = 'Raw closes; splits and stock dividends change the holdings on their ex-date, cash dividends are accrued on the ex-date and paid into cash on the payable date, fractions left by a reverse split are paid in cash at the ex-date close';
  const missing = gaps?.holdings ?? [];
  list.push(missing.length === 0
    ? { code: 'corporate_actions_applied', message: `${applied}.` }
    : { code: 'corporate_actions_missing', message: `${applied}, for the days the service knew the actions of; it did not know them all while these were held (${missing.map(describeMissing).join('; ')}): an action of those days is not applied, and a split there shows as a gain or a fall on its day.` });
  const restated = [...c.restatements].sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  if (restated.length > 0) {
    const why = restated.map((r) => `${r.reason === 'correction' ? 'a correction of' : 'the late'} ${r.type} ${r.provider_id} of ${r.symbol} (learned ${r.seen_at}, after a close of ${r.symbol} it changes was stored at ${r.close_stored_at}; effective ${r.from})`).join('; ');
    list.push({ code: 'restated', message: `Restated from ${(restated[0] as Restatement).from}: ${why}. Figures before that date are as first published.` });
  }
  const groups = new Map<string, NotApplied[]>();
  for (const n of c.not_applied) {
    const key = `${n.type}\n${n.symbol}`;
    groups.set(key, [...(groups.get(key) ?? []), n]);
  }
  for (const rows of groups.values()) {
    const first = rows[0] as NotApplied;
    list.push({ code: 'corporate_action_not_applied', message: `${first.type} of ${first.symbol} (${rows.map((r) => `${r.date}, ${r.provider_id}`).join('; ')}) touches ${first.reason.startsWith('benchmark:') ? 'the benchmark' : 'a holding'} and is not applied: ${first.reason.replace(/^benchmark: /, '')}; the holding is left as it was.` });
  }
  return list;
}

/** What the benchmark's figures are: the basis asked, or what part of its actions they lack. */
function benchmarkCaveat(symbol: string, asked: 'price_return' | 'total_return', missing: Missing | null): Caveat {
  if (missing !== null) {
    const lacks = asked === 'total_return' ? 'its dividends and splits' : 'its splits';
    return { code: 'benchmark_actions_missing', message: `Benchmark ${symbol}: not a ${asked === 'total_return' ? 'total' : 'price'} return: the service did not know all its corporate actions (${describeMissing(missing)}), so ${lacks} of those days are not in its figures (a partial return).` };
  }
  return asked === 'total_return'
    ? { code: 'benchmark_total_return', message: `Benchmark ${symbol}: total return from raw closes, splits applied on their ex-date and dividends reinvested at the ex-date close (benchmark_return=price for the price return).` }
    : { code: 'benchmark_price_return', message: `Benchmark ${symbol}: price return from raw closes, splits applied on their ex-date, dividends not reinvested (asked with benchmark_return=price).` };
}

function summariseState(s: EngineState, column: 2 | 3) {
  const inceptionDate = s.inception === null ? null : utcDate(s.inception);
  const values = s.series.map(([date, value]) => ({ date, value }));
  const bench = s.benchmark.base_price === null ? null : s.series.map((row) => ({ date: row[0], value: row[column] as string }));
  return summarise(money(new Dec(s.start_value)), inceptionDate, values, bench);
}

/** perf_v2: symbols whose corporate actions the next `advance` needs: those whose closes it reads, every symbol ever held, the benchmark. */
export function actionSymbols(s: EngineState, newSymbols: Iterable<string>): string[] {
  const set = new Set<string>(symbolsNeeded(s, newSymbols));
  for (const [symbol] of s.corporate?.held_from ?? []) set.add(symbol);
  set.add(s.benchmark.symbol);
  return [...set].sort();
}

/** Symbols whose closes the next `advance` needs: held, with pending outcomes, or in the new records. */
export function symbolsNeeded(s: EngineState, newSymbols: Iterable<string>): string[] {
  const set = new Set<string>(newSymbols);
  for (const [symbol] of s.book.holdings) set.add(symbol);
  for (const p of s.pending) set.add(p[0]);
  for (const line of s.corporate?.in_lieu ?? []) set.add(line[1]);
  return [...set].sort();
}

