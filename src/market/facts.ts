// The market facts the pricing job keeps: for every symbol any report values (a priced decision's,
// from the provider that priced it, a demo agent's from the synthetic model; a broker portfolio's,
// held through fills, activities or reported positions, from the configured provider) and the
// benchmark of every source in use, the corporate actions from the symbol's first date to today
// and the raw daily closes up to yesterday (docs/pricing.md). Owns the pass over those symbols: a chunk of symbols per step (one actions
// request, then their closes through DailyCloses, which fetches only what is not stored), a cursor
// over the list, a new pass every `everyMs` (a provider's correction of an old action is found by
// the next pass). A failure ends the step; it is retried with backoff (the provider's Retry-After
// when it gave one) and said once when it starts and once when it ends. Never on the write path.
import { dateOfDay, dayNumber } from '../method/perf/calendar.ts';
import { widen } from '../method/perf/known.ts';
import { DailyCloses } from './closes.ts';
import { assetKindOf, type KnownRange, type MarketData, type MarketError, type MarketStore, type PricedSymbol, type PriceSource } from './port.ts';

export const FACTS_DEFAULTS = {
  /** A new pass over every symbol this often. */
  everyMs: 6 * 60 * 60_000,
  /** Symbols per step: one corporate-actions request, then their closes. */
  chunk: 50,
  /** First wait after a failure, doubled per failing step up to maxBackoffMs. */
  backoffMs: 60_000,
  maxBackoffMs: 60 * 60_000,
};

/** Days before a symbol's first decision its closes are kept from (a report's base is the close before it). */
export const CLOSES_LOOKBACK_DAYS = 10;

export type FactsOptions = Partial<typeof FACTS_DEFAULTS> & {
  store: MarketStore;
  /** The provider of each source the observations name (the configured one, and the synthetic model for demo agents). */
  providers: Partial<Record<PriceSource, MarketData>>;
  /** LEDGER_BENCHMARK: kept for every source in use. */
  benchmark: string | null;
  /** The source broker portfolios are valued by (the configured provider): their symbols' facts come from it. Absent: none kept. */
  brokerSource?: PriceSource;
  now?: () => Date;
  onNotice?: (level: 'info' | 'warn', message: string) => void;
};

/** What operators see on /readyz under `pricing.facts`. */
export type FactsStatus = {
  /** due: a pass is to run; fetching: a pass is under way; current: the last pass ended; waiting: backing off. */
  state: 'due' | 'fetching' | 'current' | 'waiting';
  /** Symbols (with the benchmark) of the pass under way or the last one. */
  symbols: number | null;
  /** Corporate actions stored by this process: new ones, and corrections of known ones. */
  actions_added: number;
  actions_revised: number;
  last_pass_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  failing_since: string | null;
  retry_at: string | null;
};

type Target = PricedSymbol & { provider: MarketData };

export class MarketFacts {
  private readonly o: typeof FACTS_DEFAULTS;
  private readonly closes: DailyCloses;
  private pass: Target[] | null = null;
  private cursor = 0;
  private nextAt = 0;
  private failures = 0;
  private readonly state: FactsStatus = {
    state: 'due', symbols: null, actions_added: 0, actions_revised: 0, last_pass_at: null, last_error: null, last_error_at: null, failing_since: null, retry_at: null,
  };

  constructor(private readonly options: FactsOptions) {
    this.o = { ...FACTS_DEFAULTS };
    for (const key of Object.keys(FACTS_DEFAULTS) as (keyof typeof FACTS_DEFAULTS)[]) {
      const value = options[key];
      if (value !== undefined) this.o[key] = value;
    }
    this.closes = new DailyCloses(options.store, () => this.now());
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  status(): FactsStatus {
    return { ...this.state };
  }

  /** True when a step is to run now: a pass is due or under way, and no backoff is running. */
  due(): boolean {
    return this.now().getTime() >= this.nextAt;
  }

  /** One chunk of the pass (its first step lists the symbols); answers whether the pass is over. Never throws. */
  async step(): Promise<boolean> {
    try {
      if (this.pass === null) {
        this.pass = await this.targets();
        this.cursor = 0;
        Object.assign(this.state, { state: 'fetching', symbols: this.pass.length });
      }
      const chunk = this.nextChunk();
      const failure = chunk.length === 0 ? null : await this.fetch(chunk);
      if (failure) return this.failed(failure);
      this.cursor += chunk.length;
      this.recovered();
      if (this.cursor < this.pass.length) return false;
      const now = this.now();
      this.pass = null;
      this.nextAt = now.getTime() + this.o.everyMs;
      Object.assign(this.state, { state: 'current', last_pass_at: now.toISOString() });
      return true;
    } catch (err) {
      return this.failed({ code: 'database_error', message: (err as Error).message });
    }
  }

  /**
   * The symbols of the priced observations by source and those broker portfolios hold (from the
   * broker source), each from its earliest date, and the benchmark of each source from the
   * earliest date of that source's symbols.
   */
  private async targets(): Promise<Target[]> {
    const bySymbol = new Map<string, Target>();
    const earliest = new Map<PriceSource, string>();
    const add = (s: PricedSymbol) => {
      const provider = this.options.providers[s.source];
      if (!provider) return;
      const known = bySymbol.get(`${s.source}\n${s.symbol}`);
      if (known) known.firstDate = known.firstDate < s.firstDate ? known.firstDate : s.firstDate;
      else bySymbol.set(`${s.source}\n${s.symbol}`, { ...s, provider });
      const first = earliest.get(s.source);
      if (first === undefined || s.firstDate < first) earliest.set(s.source, s.firstDate);
    };
    for (const s of await this.options.store.pricedSymbols()) add(s);
    const brokerSource = this.options.brokerSource;
    if (brokerSource !== undefined) for (const s of await this.options.store.brokerSymbols()) if (assetKindOf(s.symbol) !== null) add({ ...s, source: brokerSource });
    const benchmark = this.options.benchmark;
    for (const [source, firstDate] of benchmark === null ? [] : earliest) {
      const known = bySymbol.get(`${source}\n${benchmark}`);
      if (known) known.firstDate = firstDate;
      else bySymbol.set(`${source}\n${benchmark}`, { source, symbol: benchmark!, firstDate, provider: this.options.providers[source]! });
    }
    return [...bySymbol.values()].sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : a.firstDate < b.firstDate ? -1 : a.firstDate > b.firstDate ? 1 : a.symbol < b.symbol ? -1 : 1));
  }

  /** The next symbols of the pass with one source. */
  private nextChunk(): Target[] {
    const pass = this.pass ?? [];
    const first = pass[this.cursor];
    if (!first) return [];
    return pass.slice(this.cursor, this.cursor + this.o.chunk).filter((t) => t.source === first.source);
  }

  /** The chunk's corporate actions (stocks), then its closes; the first failure, or null. */
  private async fetch(chunk: Target[]): Promise<MarketError | null> {
    const provider = chunk[0]!.provider;
    const today = this.now().toISOString().slice(0, 10);
    const from = chunk.reduce((min, t) => (t.firstDate < min ? t.firstDate : min), today);
    const stocks = chunk.filter((t) => assetKindOf(t.symbol) === 'stock').map((t) => t.symbol);
    if (stocks.length > 0) {
      const actions = await provider.corporateActions(stocks, from, today);
      if (!actions.ok) return actions.error;
      const saved = await this.options.store.saveCorporateActions(actions.value, this.now().toISOString());
      this.state.actions_added += saved.added;
      this.state.actions_revised += saved.revised;
      if (saved.revised > 0) this.options.onNotice?.('info', `market facts: ${saved.revised} corporate action${saved.revised === 1 ? '' : 's'} corrected by ${provider.source} (stored as new revisions)`);
      await this.keepAsked(chunk[0]!.source, stocks, { from, through: today });
    }
    for (const t of chunk) {
      if (assetKindOf(t.symbol) === null) continue;
      const got = await this.closes.get(provider, t.symbol, dateOfDay(dayNumber(t.firstDate) - CLOSES_LOOKBACK_DAYS), today);
      if (!got.ok) return got.error;
    }
    return null;
  }

  /** Widens each symbol's days asked about by a request that answered (every page of it). */
  private async keepAsked(source: PriceSource, symbols: string[], asked: KnownRange): Promise<void> {
    const known = await this.options.store.actionsKnown(source, symbols);
    await this.options.store.saveActionsKnown(source, Object.fromEntries(symbols.map((s) => [s, widen(known[s] ?? null, asked)])));
  }

  private failed(e: { code: string; message: string; retry_after_ms?: number }): boolean {
    const now = this.now();
    this.failures++;
    const backoff = Math.min(this.o.backoffMs * 2 ** (this.failures - 1), this.o.maxBackoffMs);
    const waitMs = e.retry_after_ms !== undefined ? Math.max(e.retry_after_ms, 1_000) : backoff;
    const message = `${e.code}: ${e.message}`;
    if (this.state.failing_since === null) {
      this.state.failing_since = now.toISOString();
      this.options.onNotice?.(e.code === 'rate_limited' ? 'info' : 'warn', `market facts: ${message}; corporate actions and closes wait, retrying with backoff (first retry in ${Math.ceil(waitMs / 1000)} s)`);
    }
    this.nextAt = now.getTime() + waitMs;
    Object.assign(this.state, { state: 'waiting', last_error: message, last_error_at: now.toISOString(), retry_at: new Date(this.nextAt).toISOString() });
    return false;
  }

  private recovered(): void {
    this.failures = 0;
    this.state.retry_at = null;
    if (this.pass !== null) this.state.state = 'fetching';
    if (this.state.failing_since === null) return;
    this.options.onNotice?.('info', `market facts: the provider answers again (failing since ${this.state.failing_since})`);
    this.state.failing_since = null;
  }
}
