// The performance use case: an agent's model portfolio (its decisions at the price observed at
// receipt) and broker portfolio (its imported executions: time-weighted when the account's imported
// activity history is complete, docs/perf_v1.md §3.1; trade-derived otherwise), valued daily against
// the benchmark, as perf_v1 or perf_v2 reports (PerformanceDeps.method) kept through the wing's
// storage port (port.ts, PerformanceStore.saveReport). perf_v2 reads the corporate actions of the symbols it values
// and of the benchmark through PerformanceDeps.corporateActions: performanceOf reads every stored
// revision from the agent's price source (market/facts.ts keeps them).
//
// A stored report carries the engine's state (engine.ts), so bringing it up to date applies only
// what came since: the records after its through_seq and the closes after its as_of. It is
// brought up to date when read and found behind the chain head or the last finished day.
// Closes come through the cache (market/closes.ts) from the provider of the agent's observations:
// synthetic observations (demo agents) are valued with the synthetic model, and everything
// computed from them says so. When a close that is needed cannot be had, the last stored report
// is served with its as_of and a `stale` caveat; with none stored the answer is provider_error.
// The stored copy is rewritten on a new valued day or every PERSIST_EVERY; in between the copy held
// in memory is served (any process reaches the same figures from the stored one).
// It decides what a report is computed from, when it is brought up to date, and its caveats.

import { errors, fail, ok, type Result } from '../domain/errors.ts';
import type { Clock } from '../domain/clock.ts';
import type { Agent, StoredRecord } from '../domain/types.ts';
import type { BrokerStore } from '../brokers/port.ts';
import type { LedgerStore } from '../store/port.ts';
import { DailyCloses } from '../market/closes.ts';
import { SyntheticMarketData } from '../market/synthetic.ts';
import { plusDays } from '../method/perf/calendar.ts';
import type { ActionsKnown, MarketData, MarketError, MarketStore, PriceSource, StoredCorporateAction } from '../market/port.ts';
import type { PerformanceStore, StoredReport } from './port.ts';
import { closesStoredBefore, effectiveDate, type ActionInput, type CloseSave } from '../method/perf/actions.ts';
import { keepsActions, tradeDerivedActions, uncoveredForTimeWeighted } from '../method/perf/holding-actions.ts';
import { activityVerdict, historyVerdict, timeWeightedView, type ActivityInput, type HistoryVerdict } from '../method/perf/broker-history.ts';
import {
  STATE_VERSION, actionSymbols, advance, publish, startState, symbolsNeeded, type AdvanceInput, type BenchmarkReturn, type Caveat, type EngineState, type Method, type Portfolio, type PublishedReport, type TimeWeightedView,
} from '../method/perf/engine.ts';
import { inputsHeader, inputsLines, type BundleSource } from './bundle.ts';
import type { InputsHeader } from '../method/perf/bundle.ts';
import { readDecisions, readFills } from './inputs.ts';
import { outcomePage, type OutcomeBasis, type OutcomePage } from './outcome-pages.ts';
import { Dec, money } from '../method/perf/numbers.ts';
import { benchmarkBase } from '../method/perf/perf.ts';
import { START_VALUE, utcDate, type Close } from '../method/perf/portfolio.ts';
import type { Computed, PortfolioReport, PriceSourceView, Reconciliation, Unavailable } from './types.ts';
import { headlineOf, profileSections, type Failed, type ReportHeadline } from './views.ts';

/** What a stored report's text holds. */
type Saved = {
  published: PublishedReport;
  state: EngineState;
  source: PriceSourceView | null;
  mixed_sources: boolean;
  /** True when any price behind the report is synthetic: an observation, or the closes. */
  synthetic: boolean;
  awaiting: { id: string; recorded_at: string } | null;
  /** Broker only: whether the account's imported history is complete from a known balance (broker-history.ts). */
  history?: HistoryVerdict | null;
  /** Broker, history complete (perf_v2): the time-weighted curve published in place of the trade-derived one. */
  time_weighted?: TimeWeightedView | null;
  /** perf_v2: the days whose corporate actions the service knew of the benchmark and each symbol held, when computed (absent before they were recorded). */
  actions_known?: ActionsKnown;
};

export type PerformanceDeps = {
  store: LedgerStore;
  market: MarketStore;
  /** Where the reports are stored (the store's `performance`). */
  reports: PerformanceStore;
  /** The configured provider (LEDGER_MARKET_DATA). */
  provider: MarketData;
  /** The seeded synthetic model, for agents whose decisions it priced (demo agents). */
  synthetic: MarketData;
  /** LEDGER_BENCHMARK. */
  benchmark: string;
  clock: Clock;
  brokers?: BrokerStore | null;
  /**
   * The method of the reports computed: perf_v2 (default: raw closes, corporate actions fed below);
   * perf_v1 (no action applied: a split of a held symbol shows as a fall), kept for the tests of its
   * vectors and of a stored perf_v1 report being computed again. A stored report of
   * another method is computed again from scratch.
   */
  method?: Method;
  /**
   * perf_v2: every corporate action the ledger knows of these symbols (the symbols valued, and the
   * benchmark) from the agent's price source, each with the instant the ledger learned it;
   * corrections as further facts with the same provider id. The engine skips facts it already has.
   * Default: none.
   */
  corporateActions?: (source: PriceSource, symbols: string[]) => Promise<ActionInput[]>;
  /** perf_v2: the days whose corporate actions were asked about, by symbol (market/facts.ts keeps them). Absent: the report is not told, and its labels say what it asked for. */
  actionsKnown?: (source: PriceSource, symbols: string[]) => Promise<ActionsKnown>;
};

/** The service over an open store's market, performance and broker sub-ports; agents priced synthetically are valued with the model of `seed`. */
export function performanceOf(store: LedgerStore, o: { provider: MarketData; seed: string; benchmark: string; clock: Clock }): PerformanceService {
  const synthetic = o.provider.source === 'synthetic' ? o.provider : new SyntheticMarketData(o.seed);
  const { market } = store;
  return new PerformanceService({
    store, market, reports: store.performance, provider: o.provider, synthetic, benchmark: o.benchmark, clock: o.clock, brokers: store.brokers,
    method: 'perf_v2', corporateActions: (source, symbols) => storedActions(market, source, symbols), actionsKnown: (source, symbols) => market.actionsKnown(source, symbols),
  });
}

/**
 * Every stored revision of the symbols' corporate actions from `source`, oldest first, as perf_v2
 * reads them: each with when a close it changes was first stored, if before the ledger learned it.
 */
export async function storedActions(market: MarketStore, source: PriceSource, symbols: string[]): Promise<ActionInput[]> {
  const out: StoredCorporateAction[] = [];
  const seen = new Set<number>(); // an action naming two of the symbols (a revision renamed it) is read once
  for (const symbol of symbols) {
    for (const a of await market.corporateActionHistory(source, symbol)) {
      if (seen.has(a.id)) continue;
      seen.add(a.id);
      out.push(a);
    }
  }
  const actions = out.sort((a, b) => a.id - b.id).map(actionInput);
  // Only an action learned after its effective date's UTC day can follow a close it changes (a close
  // is stored once its day is over): the saves of the other symbols are not read.
  const saves = new Map<string, CloseSave[]>();
  const maybeLate = actions.filter((a) => { const d = effectiveDate(a); return d !== null && utcDate(a.seen_at) > d; });
  for (const symbol of new Set(maybeLate.map((a) => a.symbol))) {
    saves.set(symbol, (await market.closeFetches(source, symbol)).map((f) => ({ fetched_at: f.fetchedAt, last_date: f.lastDate })));
  }
  return closesStoredBefore(actions, (symbol) => saves.get(symbol) ?? []);
}

function actionInput(a: StoredCorporateAction): ActionInput {
  return {
    provider_id: a.provider_id, type: a.type, symbol: a.symbol,
    ex_date: a.ex_date, payable_date: a.payable_date, process_date: a.process_date,
    old_rate: a.old_rate, new_rate: a.new_rate, rate: a.rate, special: a.special,
    seen_at: a.seen_at,
  };
}

/** The publish option of what a saved report knew of the corporate actions (none when stored before it was recorded). */
const known = (saved: Saved) => (saved.actions_known === undefined ? {} : { actions_known: saved.actions_known });

/** A report as this process holds it, and the chain head and day it was last found current at. */
type Held = { row: StoredReport; saved: Saved; checked: { head: number; day: string } | null; persisted: { seq: number; at: number } };

/** When a report that moved on by records alone is stored again (a new valued day always is). */
const PERSIST_EVERY = { records: 100, ms: 60_000 };

/** Absences kept in memory, and the text of the reports kept parsed (the oldest are dropped first). */
const MEMO_ENTRIES = 10_000;
const CACHE_CHARS = 64 * 1024 * 1024;

/** How many days before the first record the benchmark's closes are read (its base may be the close before). */
const BASE_LOOKBACK_DAYS = 10;


type Attempt = { ok: true; saved: Saved; row: StoredReport; scratch: boolean } | { ok: false; unavailable?: Unavailable; failure?: string };

/** What a step reads before it values: the records after the stored report, and the price source they name. */
type NewRecords = {
  records: Pick<AdvanceInput, 'decisions' | 'fills'>;
  throughSeq: number;
  newSymbols: string[];
  firstAt: string | null;
  source: PriceSourceView | null;
  mixed: boolean;
  synthetic: boolean;
  awaiting: Saved['awaiting'];
};

export class PerformanceService {
  readonly closes: DailyCloses;
  /** Parsed reports by agent and portfolio: a read that finds them current needs no database read. */
  private readonly cache = new Map<string, Held>();
  private cachedChars = 0;
  /** Why an agent has no report, while its chain and the day stay as they were. */
  private readonly absent = new Map<string, { head: number; day: string; answer: Unavailable }>();
  private readonly inFlight = new Map<string, Promise<Result<PortfolioReport>>>();

  constructor(private readonly deps: PerformanceDeps) {
    this.closes = new DailyCloses(deps.market, () => deps.clock.now());
  }

  private get method(): Method {
    return this.deps.method ?? 'perf_v2';
  }

  /**
   * The agent's report, brought up to date first when the chain or the calendar moved on. perf_v2:
   * the benchmark is its total return, or its price return with `benchmark_return: 'price'` (the
   * same stored state, published on that basis).
   */
  async report(agent: Agent, portfolio: Portfolio, options: { benchmark_return?: BenchmarkReturn } = {}): Promise<Result<PortfolioReport>> {
    const key = `${agent.id}\n${portfolio}`;
    let running = this.inFlight.get(key);
    if (!running) {
      running = this.current(agent, portfolio).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, running);
    }
    const got = await running;
    if (options.benchmark_return !== 'price' || !got.ok || got.value.status !== 'computed' || got.value.report.method !== 'perf_v2') return got;
    const held = this.cache.get(key);
    if (!held) return got;
    const stale = got.value.report.caveats.filter((c) => c.code === 'stale');
    const report = publish(held.saved.state, { synthetic: held.saved.synthetic, caveats: this.caveats(portfolio, held.saved) }, null, { benchmark_return: 'price', time_weighted: held.saved.time_weighted ?? null, ...known(held.saved) });
    return ok({ ...got.value, report: { ...report, caveats: [...report.caveats, ...stale] } });
  }

  /**
   * The inputs bundle of the agent's report (bundle.ts), the report brought up to date first: the
   * lines are read from the store as the caller takes them. not_found while no report is computed.
   */
  async inputs(agent: Agent, portfolio: Portfolio): Promise<Result<{ header: InputsHeader; lines: AsyncGenerator<string> }>> {
    const got = await this.report(agent, portfolio);
    if (!got.ok) return got;
    if (got.value.status !== 'computed') return fail(errors.notFound(`the ${portfolio} portfolio of ${agent.handle} has no report: ${got.value.reason}`));
    const key = `${agent.id}\n${portfolio}`;
    let held: { saved: Saved; row: StoredReport } | undefined = this.cache.get(key);
    if (!held) {
      const row = await this.deps.reports.report(agent.id, portfolio);
      if (row) held = { row, saved: JSON.parse(row.report) as Saved };
    }
    if (!held) return fail(errors.notFound(`the ${portfolio} portfolio of ${agent.handle} has no stored report yet; try again`));
    const source: BundleSource = {
      market: this.deps.market, agentId: agent.id, handle: agent.handle, portfolio, state: held.saved.state, throughSeq: held.row.throughSeq,
      computedAt: held.row.computedAt, synthetic: held.saved.synthetic, actionsKnown: held.saved.actions_known,
      priceSource: held.saved.source && { source: held.saved.source.source, feed: held.saved.source.feed, synthetic: held.saved.source.synthetic },
    };
    return ok({ header: inputsHeader(source), lines: inputsLines(source) });
  }

  /**
   * The stored model report's headline, as the `return` badge shows it: read from the store (or
   * this process's copy), never brought up to date here, so it never waits on a provider.
   * Null while no report is stored; the first one is then computed in the background.
   */
  async storedSummary(agent: Agent): Promise<ReportHeadline | null> {
    const key = `${agent.id}\nmodel`;
    let report = this.cache.get(key)?.saved.published;
    if (!report) {
      const row = await this.deps.reports.report(agent.id, 'model');
      if (!row) {
        void this.report(agent, 'model').catch(() => undefined);
        return null;
      }
      report = (JSON.parse(row.report) as Saved).published;
    }
    return headlineOf(report);
  }

  /** The profile's portfolios, performance and caveats; a provider failure shows there, it fails nothing. */
  async profile(agent: Agent, urls: (portfolio: Portfolio, format: 'json' | 'csv') => string) {
    const sections = [];
    for (const portfolio of ['model', 'broker'] as const) {
      const got = await this.report(agent, portfolio);
      const report: PortfolioReport | Failed = got.ok ? got.value : { status: 'unavailable', portfolio, code: 'provider_error', reason: got.error.message };
      sections.push({ portfolio, report, url: urls(portfolio, 'json'), csvUrl: urls(portfolio, 'csv') });
    }
    return profileSections(sections);
  }

  /**
   * A page of the agent's decisions with their outcomes (outcome-pages.ts), against the closes of
   * the model report brought up to date first: through its as_of, from its source.
   */
  async outcomes(agent: Agent, afterSeq: number, limit: number): Promise<Result<OutcomePage & { report: PortfolioReport }>> {
    const got = await this.report(agent, 'model');
    if (!got.ok) return got;
    const r = got.value;
    let basis: OutcomeBasis;
    if (r.status === 'unavailable') basis = { reason: r.reason };
    else {
      const provider = this.providerFor(r.price_source.source);
      basis = provider
        ? { provider, source: r.price_source.source, asOf: r.report.as_of }
        : { reason: `the ${r.price_source.source} closes of this agent cannot be read: the service's provider is ${this.deps.provider.source}` };
    }
    const page = await outcomePage({ store: this.deps.store, market: this.deps.market, closes: this.closes }, agent.id, basis, afterSeq, limit);
    return ok({ ...page, report: r });
  }

  private async current(agent: Agent, portfolio: Portfolio): Promise<Result<PortfolioReport>> {
    const key = `${agent.id}\n${portfolio}`;
    const head = await this.deps.store.chainHead(agent.id);
    const day = this.closes.yesterday();
    const absent = this.absent.get(key);
    if (absent && absent.head === head.seq && absent.day === day) return ok(absent.answer);
    const fresh = (h: Held) => isCurrent(h.row, head.seq, day) || (h.checked?.head === head.seq && h.checked.day === day);
    // A report held in memory is brought up to date from there: one another process stored meanwhile
    // would give the same figures, so the stored text (hundreds of KB) is read only when none is held.
    let held = this.cache.get(key);
    if (!held) {
      const row = await this.deps.reports.report(agent.id, portfolio);
      const saved = row && (JSON.parse(row.report) as Saved);
      if (row && saved && saved.state.version === STATE_VERSION && saved.state.method === this.method) this.keep(key, (held = { row, saved, checked: null, persisted: { seq: row.throughSeq, at: this.deps.clock.now().getTime() } }));
    }
    if (held && fresh(held)) return ok(await this.view(agent, portfolio, held.saved, held.row, null));
    if (!held) {
      const none = await this.noRecordOfItsKind(agent, portfolio, head.seq);
      if (none) return ok(this.remember(key, head.seq, day, none));
    }
    const attempt = await this.bringUpToDate(agent, portfolio, held ?? null, head.seq);
    if (attempt.ok) {
      // Nothing to do until the chain grows or a day ends, unless a decision awaits its price (which comes without either).
      const checked = attempt.saved.awaiting === null ? { head: head.seq, day } : null;
      const persisted = await this.persist(attempt, held ?? null);
      this.keep(key, { row: attempt.row, saved: attempt.saved, checked, persisted });
      return ok(await this.view(agent, portfolio, attempt.saved, attempt.row, null));
    }
    if (attempt.unavailable) return ok(this.remember(key, head.seq, day, attempt.unavailable));
    if (held) return ok(await this.view(agent, portfolio, held.saved, held.row, attempt.failure ?? 'the provider failed'));
    return fail(errors.providerError(`the ${portfolio} portfolio of ${agent.handle} cannot be computed: ${attempt.failure}; try again later`));
  }

  /**
   * Stores a report that moved on, when it is due: a new valued day (the series changed), a fresh
   * computation, PERSIST_EVERY.records records or PERSIST_EVERY.ms since the stored copy. Between
   * those, the copy held here is the one served; a process that starts without it brings the stored
   * copy up to date from the records after its through_seq, to the same figures.
   */
  private async persist(attempt: { saved: Saved; row: StoredReport; scratch: boolean }, held: Held | null): Promise<Held['persisted']> {
    const now = this.deps.clock.now().getTime();
    const last = held?.persisted;
    if (held && attempt.row === held.row && last) return last;
    const due = !held || !last || attempt.scratch
      || attempt.saved.state.series.length !== held.saved.state.series.length
      || attempt.row.throughSeq - last.seq >= PERSIST_EVERY.records
      || now - last.at >= PERSIST_EVERY.ms;
    if (!due) return last;
    await this.deps.reports.saveReport(attempt.row);
    return { seq: attempt.row.throughSeq, at: now };
  }

  /** Keeps a parsed report, dropping the oldest while the kept reports' text passes CACHE_CHARS. */
  private keep(key: string, held: Held): void {
    const before = this.cache.get(key);
    if (before) this.cachedChars -= before.row.report.length;
    this.cache.delete(key);
    while (this.cache.size > 0 && this.cachedChars + held.row.report.length > CACHE_CHARS) {
      const [oldest, dropped] = this.cache.entries().next().value as [string, Held];
      this.cache.delete(oldest);
      this.cachedChars -= dropped.row.report.length;
    }
    this.cache.set(key, held);
    this.cachedChars += held.row.report.length;
  }

  /** An answer without a report holds until the chain grows or a day ends (one awaiting a price does not). */
  private remember(key: string, head: number, day: string, answer: Unavailable): Unavailable {
    if (answer.code !== 'awaiting_price') this.absent.set(key, { head, day, answer });
    if (this.absent.size > MEMO_ENTRIES) this.absent.delete(this.absent.keys().next().value as string);
    return answer;
  }

  /** The decisions recorded after `afterSeq`, with what they say of the agent's price source. */
  private async newDecisions(agent: Agent, held: Held | null, afterSeq: number, headSeq: number): Promise<NewRecords> {
    const batch = await readDecisions(this.deps.market, agent.id, afterSeq, headSeq);
    let source = held?.saved.source ?? null;
    let mixed = held?.saved.mixed_sources ?? false;
    let synthetic = held?.saved.synthetic ?? false;
    for (const s of batch.sources) {
      if (source === null) source = this.sourceView(s.source, s.feed, s.synthetic);
      else if (s.source !== source.source) mixed = true;
      if (s.synthetic) synthetic = true;
    }
    return {
      records: { decisions: batch.decisions },
      throughSeq: batch.throughSeq,
      newSymbols: batch.decisions.map((d) => d.symbol),
      firstAt: batch.decisions[0]?.recorded_at ?? null,
      source, mixed, synthetic,
      awaiting: batch.awaiting && { id: batch.awaiting.id, recorded_at: batch.awaiting.recordedAt },
    };
  }

  /** The broker fills imported after `afterSeq`, priced by the service's provider. */
  private async newFills(agent: Agent, held: Held | null, afterSeq: number, headSeq: number): Promise<NewRecords> {
    const batch = await readFills(this.deps.market, agent.id, afterSeq, headSeq);
    const source = held?.saved.source
      ?? (this.deps.provider.source === 'none' ? null : this.sourceView(this.deps.provider.source, null, this.deps.provider.synthetic));
    return {
      records: { fills: batch.fills },
      throughSeq: batch.throughSeq,
      newSymbols: batch.fills.map((f) => f.symbol),
      firstAt: batch.fills.map((f) => f.executed_at).sort()[0] ?? null,
      source, mixed: held?.saved.mixed_sources ?? false, synthetic: held?.saved.synthetic ?? false, awaiting: null,
    };
  }

  /** Why there is no report yet, for a portfolio with nothing recorded. */
  private noRecordsYet(portfolio: Portfolio, headSeq: number, awaiting: boolean): Unavailable {
    return portfolio === 'model'
      ? this.nothingYet(portfolio, headSeq, awaiting)
      : { status: 'unavailable', portfolio, code: 'no_records', reason: 'no execution imported from a connected broker yet' };
  }

  /** The closes of every symbol held or new and the benchmark's, from the day after the last valued one through `through`. */
  private async pricesFor(state: EngineState, news: NewRecords, provider: MarketData, through: string): Promise<{ ok: true; value: Pick<AdvanceInput, 'closes' | 'benchmark' | 'benchmarkBase'> } | { ok: false; failure: string }> {
    const inceptionDate = state.inception !== null ? utcDate(state.inception) : utcDate(news.firstAt as string);
    const from = state.valued_through !== null ? plusDays(state.valued_through, 1) : inceptionDate;
    const closes: Record<string, Close[]> = {};
    for (const symbol of symbolsNeeded(state, news.newSymbols)) {
      const got = await this.closes.get(provider, symbol, from, through);
      if (!got.ok) return { ok: false, failure: describe(got.error, symbol) };
      closes[symbol] = got.value;
    }
    const benchFrom = state.valued_through !== null ? from : plusDays(inceptionDate, -BASE_LOOKBACK_DAYS);
    const bench = await this.closes.get(provider, this.deps.benchmark, benchFrom, through);
    if (!bench.ok) return { ok: false, failure: describe(bench.error, this.deps.benchmark) };
    let base: AdvanceInput['benchmarkBase'];
    if (state.inception === null && news.firstAt !== null) {
      const observed = await provider.latestTrade(this.deps.benchmark, new Date(Date.parse(news.firstAt)));
      if (!observed.ok && observed.error.code !== 'no_price' && observed.error.code !== 'unknown_symbol') {
        return { ok: false, failure: describe(observed.error, this.deps.benchmark) };
      }
      base = benchmarkBase({ symbol: this.deps.benchmark, closes: bench.value, inception_price: observed.ok ? observed.value.price : null }, inceptionDate);
    }
    return { ok: true, value: { closes, benchmark: bench.value.filter((c) => c.date >= from), benchmarkBase: base } };
  }

  private async bringUpToDate(agent: Agent, portfolio: Portfolio, held: Held | null, headSeq: number): Promise<Attempt> {
    const first = await this.step(agent, portfolio, held, headSeq);
    if (first.ok || first.unavailable || first.failure !== 'out_of_order') return first;
    return this.step(agent, portfolio, null, headSeq); // a record or a corporate action arrived dated where it is valued: from scratch
  }

  /** One computation: from `held` (or from scratch) through the head and the last finished day. */
  private async step(agent: Agent, portfolio: Portfolio, held: Held | null, headSeq: number): Promise<Attempt> {
    const state = held?.saved.state ?? startState(portfolio, this.deps.benchmark, START_VALUE, this.method);
    const afterSeq = held?.row.throughSeq ?? 0;
    const news = portfolio === 'model' ? await this.newDecisions(agent, held, afterSeq, headSeq) : await this.newFills(agent, held, afterSeq, headSeq);
    if (state.inception === null && news.newSymbols.length === 0) return { ok: false, unavailable: this.noRecordsYet(portfolio, headSeq, news.awaiting !== null) };
    const { source, awaiting, throughSeq, mixed, synthetic } = news;
    const provider = source === null ? null : this.providerFor(source.source);
    if (source === null || provider === null) {
      const why = source === null ? this.deps.provider.description : `the ${source.source} prices of this agent cannot be read: the service's provider is ${this.deps.provider.source}`;
      return { ok: false, unavailable: { status: 'unavailable', portfolio, code: 'no_market_data', reason: why } };
    }

    // Value through the last finished day, but not past the day of a decision still awaiting its price.
    let through = this.closes.yesterday();
    if (awaiting) through = minDate(through, plusDays(utcDate(awaiting.recorded_at), -1));
    if (state.valued_through !== null && through < state.valued_through) through = state.valued_through;
    if (held && throughSeq === afterSeq && through === state.valued_through) return { ok: true, saved: held.saved, row: held.row, scratch: false }; // nothing new
    const prices = await this.pricesFor(state, news, provider, through);
    if (!prices.ok) return { ok: false, failure: prices.failure };
    const market = state.method === 'perf_v2' && this.deps.corporateActions ? await this.deps.corporateActions(source.source, actionSymbols(state, news.newSymbols)) : [];
    const activities = portfolio === 'broker' ? await this.activitiesOf(agent.id, throughSeq) : [];
    const actions = portfolio === 'broker' && state.method === 'perf_v2' ? tradeDerivedActions(activities, market) : market;
    // An account event that now covers a market action already applied (or no longer does): from scratch
    if (held && portfolio === 'broker' && !keepsActions(state.corporate?.actions ?? [], actions)) return { ok: false, failure: 'out_of_order' };
    const advanced = advance(state, { ...news.records, through, ...prices.value, actions });
    if (!advanced.ok) return { ok: false, failure: 'out_of_order' }; // restate as well: the caller starts again from scratch

    const account = portfolio === 'broker' ? await this.brokerHistory(agent.id, throughSeq, activities, advanced.state, provider, through) : { ok: true as const, history: null, view: null };
    if (!account.ok) return { ok: false, failure: account.failure };
    const saved: Saved = {
      state: advanced.state, source, mixed_sources: mixed, synthetic: synthetic || source.synthetic, awaiting, history: account.history, time_weighted: account.view, published: null as never,
    };
    if (advanced.state.corporate !== null && this.deps.actionsKnown) saved.actions_known = await this.deps.actionsKnown(source.source, actionSymbols(advanced.state, []));
    saved.published = publish(advanced.state, { synthetic: saved.synthetic, caveats: this.caveats(portfolio, saved) }, held?.saved.published ?? null, { time_weighted: account.view, ...known(saved) });
    const row: StoredReport = {
      agentId: agent.id, portfolio, throughSeq, asOf: through, computedAt: this.deps.clock.now().toISOString(), report: JSON.stringify(saved),
    };
    return { ok: true, saved, row, scratch: held === null };
  }

  /**
   * Broker: whether the account's imported history (records up to `throughSeq`) is complete and,
   * when it is (perf_v2), its time-weighted curve on the dates of the state's series. Computed
   * from scratch at every step from every fill and activity (broker books are small; the engine's
   * resumable state carries the trade-derived book, the benchmark and the dates).
   */
  private async brokerHistory(agentId: string, throughSeq: number, activities: ActivityInput[], state: EngineState, provider: MarketData, through: string):
    Promise<{ ok: true; history: HistoryVerdict; view: TimeWeightedView | null } | { ok: false; failure: string }> {
    const verdict = activityVerdict(activities, state.inception);
    if (!verdict.complete || state.inception === null || state.method !== 'perf_v2') return { ok: true, history: verdict, view: null };
    const { fills } = await readFills(this.deps.market, agentId, 0, throughSeq);
    const history = historyVerdict(fills, activities);
    if (!history.complete) return { ok: true, history, view: null };
    const closes: Record<string, Close[]> = {};
    for (const symbol of [...new Set(fills.map((f) => f.symbol))].sort()) {
      const got = await this.closes.get(provider, symbol, utcDate(state.inception), through);
      if (!got.ok) return { ok: false, failure: describe(got.error, symbol) };
      closes[symbol] = got.value;
    }
    const market = uncoveredForTimeWeighted(activities, state.corporate?.actions ?? []);
    return { ok: true, history, view: timeWeightedView(fills, activities, state.series.map((row) => row[0]), closes, market) };
  }

  /** The agent's imported activity records up to `throughSeq`, in chain order, as the broker curve reads them. */
  private async activitiesOf(agentId: string, throughSeq: number): Promise<ActivityInput[]> {
    const records: StoredRecord[] = [];
    for (let before: string | undefined; ;) {
      const page = await this.deps.store.listAgentRecords(agentId, 'activity', { limit: 500, before });
      records.push(...page);
      if (page.length < 500) break;
      before = page[page.length - 1]!.id;
    }
    return records.reverse().filter((r) => r.chainSeq <= throughSeq).map((r) => ({ ...(JSON.parse(r.content) as Omit<ActivityInput, 'id'>), id: r.id }));
  }

  /** Without a decision (model) or an execution (broker) there is nothing to read the chain for. */
  private async noRecordOfItsKind(agent: Agent, portfolio: Portfolio, headSeq: number): Promise<Unavailable | null> {
    const counts = await this.deps.store.countRecords(agent.id);
    if (portfolio === 'model' && counts.byType.decision === 0) {
      return headSeq === 0 ? this.nothingYet(portfolio, 0, false) : { status: 'unavailable', portfolio, code: 'no_records', reason: 'no decision recorded yet: the curve starts at the first decision' };
    }
    if (portfolio === 'broker' && counts.byType.execution === 0) {
      return { status: 'unavailable', portfolio, code: 'no_records', reason: 'no execution imported from a connected broker yet' };
    }
    return null;
  }

  private nothingYet(portfolio: Portfolio, headSeq: number, awaiting: boolean): Unavailable {
    if (headSeq === 0) return { status: 'unavailable', portfolio, code: 'no_records', reason: 'no record yet: the curve starts at the first decision' };
    if (this.deps.provider.source === 'none') return { status: 'unavailable', portfolio, code: 'no_market_data', reason: this.deps.provider.description };
    if (awaiting) return { status: 'unavailable', portfolio, code: 'awaiting_price', reason: 'the first decision has not been priced yet (the pricing job looks up its price at receipt shortly after it is recorded)' };
    return { status: 'unavailable', portfolio, code: 'no_records', reason: 'no decision recorded yet: the curve starts at the first decision' };
  }

  private providerFor(source: PriceSource): MarketData | null {
    if (this.deps.provider.source === source) return this.deps.provider;
    if (source === 'synthetic') return this.deps.synthetic;
    return null;
  }

  private sourceView(source: PriceSource, feed: string | null, synthetic: boolean): PriceSourceView {
    const market = this.providerFor(source);
    return { source, feed, synthetic, description: market?.description ?? source };
  }

  private caveats(portfolio: Portfolio, saved: Omit<Saved, 'published'>): Caveat[] {
    const start = money(new Dec(saved.state.start_value));
    const list: Caveat[] = [];
    if (saved.synthetic) {
      list.push({ code: 'synthetic_prices', message: `Priced by the synthetic model (${saved.source?.synthetic ? saved.source.description : 'some of its decisions'}): the figures of this report are computed from those prices and are not a market result.` });
    }
    if (portfolio === 'model') {
      list.push({ code: 'model_portfolio', message: `Model portfolio: each decision applied at the price the service observed when it received it, from ${start} USD in cash; no fees, no slippage, no short sales, no leverage. It is what the decisions would have done, not what any account did.` });
    } else {
      const history = saved.history ?? null;
      if (saved.time_weighted && history?.complete) list.push({ code: 'time_weighted', message: timeWeightedMessage(start, history.opening) });
      else list.push({ code: 'trade_derived', message: tradeDerivedMessage(start, history) });
    }
    if (saved.state.method === 'perf_v1') {
      list.push({ code: 'benchmark_price_return', message: `Benchmark ${saved.state.benchmark.symbol}: price return (split-adjusted closes, dividends not reinvested), from the first record on.` });
      list.push({ code: 'corporate_actions_not_applied', message: 'Splits and dividends are not applied to the portfolio\'s holdings: a split of a held symbol shows as a fall on its day.' });
    } // perf_v2 reports give their benchmark basis, the actions applied and any restatement themselves (engine.ts)
    if (saved.mixed_sources) list.push({ code: 'mixed_price_sources', message: 'The decisions were priced by more than one provider (the service changed provider); the closes come from the first.' });
    if (saved.awaiting) list.push({ code: 'awaiting_price', message: `Decision ${saved.awaiting.id} (recorded ${saved.awaiting.recorded_at}) awaits its price at receipt: the series stops before its day, and later decisions wait with it.` });
    return list;
  }

  private async view(agent: Agent, portfolio: Portfolio, saved: Saved, row: StoredReport, stale: string | null): Promise<Computed> {
    const report = stale === null ? saved.published : {
      ...saved.published,
      caveats: [...saved.published.caveats, { code: 'stale', message: `Not brought up to date (${stale}): figures as of ${row.asOf}, computed ${row.computedAt}.` }],
    };
    return {
      status: 'computed',
      portfolio,
      report,
      price_source: saved.source as PriceSourceView,
      through_seq: row.throughSeq,
      computed_at: row.computedAt,
      stale,
      reconciliation: portfolio === 'broker' ? await this.reconciliation(agent) : null,
    };
  }

  private async reconciliation(agent: Agent): Promise<Reconciliation[]> {
    const brokers = this.deps.brokers;
    if (!brokers) return [];
    const out: Reconciliation[] = [];
    for (const c of await brokers.listConnections(agent.id)) {
      const snap = await brokers.latestSnapshot(c.id);
      if (!snap) continue;
      const checks = Array.isArray(snap.reconciliation) ? (snap.reconciliation as Array<{ matches?: boolean }>) : [];
      out.push({ connection_id: c.id, broker: c.kind, taken_at: snap.takenAt, mismatches: checks.filter((x) => x.matches === false).length, positions: snap.reconciliation });
    }
    return out;
  }
}

function isCurrent(row: StoredReport, headSeq: number, yesterday: string): boolean {
  return row.throughSeq === headSeq && row.asOf >= yesterday;
}

function minDate(a: string, b: string): string {
  return a < b ? a : b;
}

function describe(error: MarketError, symbol: string): string {
  return `no daily close of ${symbol}: ${error.code}: ${error.message}`;
}

/** The broker curve's caveat when the imported history is complete (docs/perf_v1.md §3.1). */
function timeWeightedMessage(start: string, opening: string): string {
  return `Time-weighted: the account rebuilt from a zero balance before its first deposit (${opening}) with its imported fills, dividends, splits, fees, deposits and withdrawals; each day's deposits and withdrawals neutralised; published as the growth of ${start} USD from the day of its first fill. The holdings' splits and dividends come from the broker's own activity records where it reported them, else from the market's corporate actions, each applied once (corporate_actions.events says the source of each).`;
}

/**
 * The broker curve's caveat: trade-derived, and why it is not the account's return: what the
 * imported history lacks, or (history complete, perf_v1) that this method does not give the
 * time-weighted curve of docs/perf_v1.md §3.1.
 */
function tradeDerivedMessage(start: string, history: HistoryVerdict | null): string {
  const head = `Trade-derived: the imported fills applied from ${start} USD`;
  if (history === null) return `${head}; deposits, withdrawals and dividends are not imported (rule 7), so this curve is not the account's return.`;
  if (!history.complete) return `${head}, so this curve is not the account's return: the imported history is not complete from a known starting balance; missing ${history.missing.join('; ')}.`;
  return `${head}. The account's imported history is complete from a zero balance before its first deposit (${history.opening}), but the time-weighted curve is computed by perf_v2 only (docs/perf_v1.md §3.1), so this curve is not the account's return.`;
}
