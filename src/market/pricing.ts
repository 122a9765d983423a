// The pricing job (rule 6: "model portfolios price every decision at the moment the service
// received it"). It is responsible for observing each decision's price at its recorded_at, after
// the record is written and never on its path: it works through the pending decisions oldest first,
// asks the provider for the last trade at or before recorded_at, and saves one observation per
// decision (priced, with the provider's own timestamp, its age and whether it is stale; or
// unpriced, with the provider's final answer). Transient failures (provider_error, rate_limited)
// save nothing and are retried with exponential backoff, honouring the provider's retry_after; an
// outage is logged once when it starts and once when it ends. One process prices at a time (the
// store's hold); observations are insert-if-absent, so a job killed at any point and started again
// observes each decision exactly once. Its status (pending, last error, since when failing) is on
// /readyz. Demo agents' decisions are priced by the synthetic model whatever the provider (`demo`):
// `ledger demo` prices them so too, and whichever writes first, their prices come from one source.
// With `facts` (the serving process), a round with nothing pending also keeps the market facts of
// the priced symbols and the benchmark (facts.ts: corporate actions and raw closes), a step at a
// time, shown under `facts` in the status.
import type { MarketData, MarketError, MarketStore, PendingPrice, PriceObservation, PriceSource, PricingHold, TradePrice } from './port.ts';
import { SingletonJob } from '../runtime/job-loop.ts';
import { MarketFacts, type FactsOptions, type FactsStatus } from './facts.ts';

/** Asset classes no provider here has a market price for: unpriced without asking. */
const UNPRICED_CLASSES = new Set(['PREDICTION_MARKET', 'PERPETUAL']);

/** The pending count on the status stops here: counting a long backlog would cost a scan of it. */
export const PENDING_CAP = 10_000;

export const PRICING_DEFAULTS = {
  /** Decisions read per round. */
  batchSize: 100,
  /** Provider calls in flight at once; the provider's own limiter keeps the plan's rate. */
  concurrency: 4,
  /** Observations per write. */
  flushEvery: 25,
  /** Wait between rounds when nothing is pending. */
  pollMs: 1_000,
  /** Wait before asking again for the hold another process has. */
  holdRetryMs: 10_000,
  /** First backoff after a failure, doubled per failing round up to maxBackoffMs. */
  backoffMs: 1_000,
  maxBackoffMs: 5 * 60_000,
  /** How long stop() waits for a round in flight. */
  stopWaitMs: 3_000,
};

export type PricingOptions = Partial<typeof PRICING_DEFAULTS> & {
  market: MarketData;
  store: MarketStore;
  now?: () => Date;
  /** Said once when an outage starts (warn, or info for rate limits) and once when it ends. */
  onNotice?: (level: 'info' | 'warn', message: string) => void;
  /** The synthetic model demo agents are priced by, and which agents are demo agents (a flag set at creation). */
  demo?: { market: MarketData; isDemo: (agentId: string) => Promise<boolean> };
  /** Keep the market facts (corporate actions, raw closes) of the priced symbols and of `benchmark` (LEDGER_BENCHMARK). */
  facts?: Omit<FactsOptions, 'store' | 'providers' | 'now' | 'onNotice'>;
};

/** Agents whose demo flag is remembered (the flag never changes). */
const DEMO_FLAGS_KEPT = 10_000;

export type PricingState = 'off' | 'standby' | 'idle' | 'pricing' | 'waiting';

/** What operators see on /readyz under `pricing`. */
export type PricingStatus = {
  source: string;
  /** off: provider none; standby: another process prices; idle: nothing pending; waiting: backing off. */
  state: PricingState;
  description: string;
  /** Decisions not yet observed, counted up to PENDING_CAP (null before the first round). */
  pending: number | null;
  pending_capped: boolean;
  /** Observations saved by this process since it started. */
  observed: number;
  last_error: string | null;
  last_error_at: string | null;
  /** When the current outage began; null while the provider answers. */
  failing_since: string | null;
  retry_at: string | null;
  /** The market facts kept beside the prices (null when this job keeps none). */
  facts: FactsStatus | null;
};

type Failure = { code: string; message: string; retryAfterMs?: number };
type Outcome = { kind: 'observed'; observation: PriceObservation } | { kind: 'transient'; failure: Failure };

export class PricingJob {
  private readonly o: typeof PRICING_DEFAULTS;
  private readonly source: PriceSource;
  private readonly job: SingletonJob<PricingHold>;
  private failures = 0;
  private readonly demoFlags = new Map<string, boolean>();
  private readonly facts: MarketFacts | null;
  private readonly state: Omit<PricingStatus, 'source' | 'description' | 'facts'> = {
    state: 'idle', pending: null, pending_capped: false, observed: 0, last_error: null, last_error_at: null, failing_since: null, retry_at: null,
  };

  constructor(private readonly options: PricingOptions) {
    if (options.market.source === 'none') throw new Error('the pricing job needs a market-data provider (LEDGER_MARKET_DATA is none)');
    this.source = options.market.source;
    this.o = { ...PRICING_DEFAULTS };
    for (const key of Object.keys(PRICING_DEFAULTS) as (keyof typeof PRICING_DEFAULTS)[]) {
      const value = options[key];
      if (value !== undefined) this.o[key] = value;
    }
    this.facts = options.facts ? new MarketFacts({
      ...options.facts,
      store: options.store,
      providers: { ...(options.demo ? { synthetic: options.demo.market } : {}), [options.market.source]: options.market },
      brokerSource: options.market.source,
      now: () => this.now(),
      onNotice: options.onNotice,
    }) : null;
    this.job = new SingletonJob({
      take: () => this.takeHold(),
      turn: () => this.round(),
      standbyMs: this.o.holdRetryMs,
      failed: (err) => this.failed({ code: 'database_error', message: err.message }, false),
      // Observations saved under the hold stay valid: an error keeps it, unless it is lost.
      onError: 'keep',
    });
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  status(): PricingStatus {
    return { source: this.source, description: this.options.market.description, ...this.state, facts: this.facts?.status() ?? null };
  }

  start(): void {
    this.job.start();
  }

  /** Stops taking work, waits a bounded time for the round in flight, and gives the hold back. */
  stop(): Promise<void> {
    return this.job.stop(this.o.stopWaitMs);
  }

  /** The hold, or null (standby) while another process prices. */
  private async takeHold(): Promise<PricingHold | null> {
    const hold = await this.options.store.tryPricingHold();
    if (!hold) this.state.state = 'standby';
    return hold;
  }

  /** Prices up to one batch of pending decisions, oldest first. */
  async round(): Promise<number> {
    const batch = await this.options.store.pendingPrices(this.source, this.o.batchSize);
    if (batch.length === 0) {
      Object.assign(this.state, { state: 'idle', pending: 0, pending_capped: false });
      this.recovered();
      // Nothing to price: a step of the market facts when they are due (the step notes its own failures).
      if (this.facts?.due() && !this.job.stopping) return (await this.facts.step()) || !this.facts.due() ? this.o.pollMs : 0;
      return this.o.pollMs;
    }
    this.state.state = 'pricing';
    await this.countPending();
    const { saved, failure } = await this.priceBatch(batch);
    await this.countPending();
    if (failure) return this.failed(failure, saved > 0);
    this.recovered();
    return batch.length < this.o.batchSize ? this.o.pollMs : 0;
  }

  private async countPending(): Promise<void> {
    const n = await this.options.store.countPendingPrices(PENDING_CAP);
    Object.assign(this.state, { pending: n, pending_capped: n >= PENDING_CAP });
  }

  /** Observes the batch with bounded concurrency; the first transient failure stops new calls. */
  private async priceBatch(batch: PendingPrice[]): Promise<{ saved: number; failure: Failure | null }> {
    const queue = [...batch];
    const buffer: PriceObservation[] = [];
    let failure: Failure | null = null;
    let saved = 0;
    const flush = async () => {
      const rows = buffer.splice(0);
      if (rows.length === 0) return;
      await this.options.store.saveObservations(rows);
      saved += rows.length;
      this.state.observed += rows.length;
    };
    const worker = async () => {
      for (let item = queue.shift(); item && !failure && !this.job.stopping; item = queue.shift()) {
        const outcome = await this.observe(item);
        if (outcome.kind === 'transient') {
          failure ??= outcome.failure;
          return;
        }
        buffer.push(outcome.observation);
        if (buffer.length >= this.o.flushEvery) await flush();
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.o.concurrency, batch.length) }, worker));
    await flush();
    return { saved, failure };
  }

  /** The observation of one decision, or the transient failure that leaves it pending. */
  async observe(p: PendingPrice): Promise<Outcome> {
    if (UNPRICED_CLASSES.has(p.assetClass)) {
      return this.unpriced(p, 'not_priced', `asset class ${p.assetClass} has no market price from ${this.source}`);
    }
    const market = await this.marketFor(p.agentId);
    const answer = await market.latestTrade(p.symbol, new Date(p.recordedAt));
    if (answer.ok) return { kind: 'observed', observation: this.priced(p, market, answer.value) };
    const e: MarketError = answer.error;
    switch (e.code) {
      case 'unknown_symbol':
      case 'no_price':
      case 'invalid_request':
        return this.unpriced(p, e.code, e.message, market);
      case 'rate_limited':
        return { kind: 'transient', failure: { code: e.code, message: e.message, retryAfterMs: e.retry_after_ms } };
      default:
        return { kind: 'transient', failure: { code: e.code, message: e.message } };
    }
  }

  /** The provider of an agent's prices: the synthetic model for a demo agent, else the configured one. */
  private async marketFor(agentId: string): Promise<MarketData> {
    const demo = this.options.demo;
    if (!demo || this.options.market.source === 'synthetic') return this.options.market;
    let flag = this.demoFlags.get(agentId);
    if (flag === undefined) {
      flag = await demo.isDemo(agentId);
      if (this.demoFlags.size >= DEMO_FLAGS_KEPT) this.demoFlags.clear();
      this.demoFlags.set(agentId, flag);
    }
    return flag ? demo.market : this.options.market;
  }

  private base(p: PendingPrice, market: MarketData, synthetic: boolean, feed: string | null) {
    return {
      recordId: p.recordId, agentId: p.agentId, chainSeq: p.chainSeq, symbol: p.symbol, askedAt: p.recordedAt,
      observedAt: this.now().toISOString(), source: market.source as PriceSource, feed, synthetic,
    };
  }

  private priced(p: PendingPrice, market: MarketData, t: TradePrice): PriceObservation {
    return {
      ...this.base(p, market, t.synthetic, t.feed),
      status: 'priced', price: t.price, providerTime: t.provider_time, ageMs: t.age_ms, stale: t.stale,
    };
  }

  private unpriced(p: PendingPrice, code: string, message: string, market: MarketData = this.options.market): Outcome {
    return { kind: 'observed', observation: { ...this.base(p, market, market.synthetic, null), status: 'unpriced', reason: `${code}: ${message}` } };
  }

  /**
   * Notes a failing round and answers the wait before the next: the provider's retry_after when it
   * gave one, else 1 s doubling per round that observed nothing, up to maxBackoffMs.
   */
  private failed(f: Failure, progressed: boolean): number {
    const now = this.now();
    this.failures = progressed ? 1 : this.failures + 1;
    const backoff = Math.min(this.o.backoffMs * 2 ** (this.failures - 1), this.o.maxBackoffMs);
    const waitMs = f.retryAfterMs !== undefined ? Math.max(f.retryAfterMs, this.o.backoffMs) : backoff;
    const message = `${f.code}: ${f.message}`;
    if (this.state.failing_since === null && !this.job.stopping) {
      this.state.failing_since = now.toISOString();
      const level = f.code === 'rate_limited' ? 'info' : 'warn';
      this.options.onNotice?.(level, `pricing: ${message}; ${this.pendingText()} wait, retrying with backoff (first retry in ${Math.ceil(waitMs / 1000)} s)`);
    }
    Object.assign(this.state, { state: 'waiting', last_error: message, last_error_at: now.toISOString(), retry_at: new Date(now.getTime() + waitMs).toISOString() });
    return waitMs;
  }

  private recovered(): void {
    this.failures = 0;
    this.state.retry_at = null;
    if (this.state.failing_since === null) return;
    this.options.onNotice?.('info', `pricing: ${this.source} answers again (failing since ${this.state.failing_since}); ${this.pendingText()} left`);
    this.state.failing_since = null;
  }

  private pendingText(): string {
    const n = this.state.pending;
    if (n === null) return 'pending decisions';
    return `${n}${this.state.pending_capped ? '+' : ''} decision${n === 1 ? '' : 's'}`;
  }

}

/** The status when nothing is priced (provider none): the job does not run, and says why. */
export function pricingOff(market: MarketData): PricingStatus {
  return {
    source: market.source, state: 'off', description: market.description, pending: null, pending_capped: false, observed: 0,
    last_error: null, last_error_at: null, failing_since: null, retry_at: null, facts: null,
  };
}
