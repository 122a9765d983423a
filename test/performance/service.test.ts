// The performance use case on real ledger stores: decisions recorded through the service with a
// held clock, priced at receipt by the synthetic model, reports equal to perf_v1 computed
// directly, brought up to date incrementally, stored, and every way there is no report.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp, type LedgerApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import { NoMarketData } from '../../src/market/none.ts';
import type { MarketData } from '../../src/market/port.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { modelPerformance } from '../../src/method/perf/perf.ts';
import { PerformanceService } from '../../src/performance/service.ts';
import type { Computed } from '../../src/performance/types.ts';
import type { DecisionInput } from '../../src/method/perf/portfolio.ts';
import type { Agent } from '../../src/domain/types.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { idempotencyKey, postDecision } from '../support/app.ts';
import type { MarketStore } from '../../src/market/port.ts';
import type { PerformanceStore } from '../../src/performance/port.ts';
import { counting, forgetting } from './fixtures.ts';
import { observeDecisions } from '../support/observe.ts';
import { forEachStore } from '../support/stores.ts';

const DAY = 86_400_000;
const SYMBOLS = ['AAPL', 'MSFT', 'BTC/USD', 'NVDA'];
const ACTIONS = ['BUY', 'BUY', 'INCREASE', 'HOLD', 'REDUCE', 'SELL', 'CLOSE'];

/** A clock the test moves. */
class HeldClock {
  constructor(public t: number) {}
  now() {
    return new Date(this.t);
  }
}

/** A provider whose calls can be made to fail, and counted. */
class Flaky implements MarketData {
  failing = false;
  bars = 0;
  constructor(private readonly inner: MarketData) {}
  get source() {
    return this.inner.source;
  }
  get synthetic() {
    return this.inner.synthetic;
  }
  get description() {
    return this.inner.description;
  }
  latestTrade(symbol: string, at: Date) {
    return this.inner.latestTrade(symbol, at);
  }
  async dailyBars(symbol: string, from: string, to: string) {
    this.bars++;
    if (this.failing) return { ok: false as const, error: { code: 'provider_error' as const, message: 'upstream answered 503', status: 503 } };
    return this.inner.dailyBars(symbol, from, to);
  }
  corporateActions(symbols: readonly string[], from: string, to: string) {
    return this.inner.corporateActions(symbols, from, to);
  }
}

type Fixture = { store: LedgerStore; market: MarketStore & { calls: Record<string, number> }; reports: PerformanceStore & { calls: Record<string, number> }; clock: HeldClock; provider: Flaky; service: PerformanceService; ledger: LedgerApp; ops: Operators };

async function fixture(store: LedgerStore, provider: MarketData = new SyntheticMarketData('perf-test')): Promise<Fixture> {
  const market = counting(store.market);
  const reports = counting(store.performance);
  const clock = new HeldClock(Date.UTC(2025, 0, 6, 15, 0, 0));
  const flaky = new Flaky(provider);
  const service = new PerformanceService({ store, market, reports, provider: flaky, synthetic: new SyntheticMarketData('perf-test'), benchmark: 'SPY', clock });
  const config = loadConfig({ LEDGER_DATABASE_URL: 'sqlite::memory:' });
  const ledger = await buildApp(compose({ store, config, clock, checkSignature: signatureChecker(store) }, { performance: service }));
  return { store, market, reports, clock, provider: flaky, service, ledger, ops: new Operators(store, clock) };
}

async function agentWith(f: Fixture, handle: string, n: number, stepDays = 7): Promise<{ agent: Agent; secret: string }> {
  const created = await f.ops.createAgent({ handle });
  if (!created.ok) throw new Error(created.error.message);
  for (let i = 0; i < n; i++) {
    await post(f, created.value.apiKey.secret, i);
    f.clock.t += stepDays * DAY + 37 * 60_000;
  }
  return { agent: created.value.agent, secret: created.value.apiKey.secret };
}

async function post(f: Fixture, secret: string, i: number) {
  const body: Record<string, string> = { symbol: SYMBOLS[i % SYMBOLS.length]!, action: ACTIONS[i % ACTIONS.length]!, thesis: `decision ${i}`, time_horizon: i % 3 === 0 ? '2 weeks' : '5 trading days' };
  if (i % 4 === 0) body.target_allocation_pct = '20';
  else if (i % 4 === 1) body.notional = '5000';
  const res = await postDecision(f.ledger, secret, body, idempotencyKey());
  assert.equal(res.statusCode, 201, res.body);
}

/** perf_v1 computed directly (src/method/perf/perf.ts) from the records, their observations and the provider's closes. */
async function direct(f: Fixture, agent: Agent, provider: MarketData, through: string) {
  const decisions: DecisionInput[] = [];
  for (const r of await f.store.listChain(agent.id, 0, 10_000)) {
    const o = await f.market.observationOf(r.id);
    const c = JSON.parse(r.content) as Record<string, string>;
    decisions.push({
      id: r.id, recorded_at: r.recordedAt, symbol: c.symbol!, action: c.action as DecisionInput['action'], target_allocation_pct: c.target_allocation_pct ?? null,
      quantity: c.quantity ?? null, notional: c.notional ?? null, time_horizon: c.time_horizon ?? null,
      price: o?.status === 'priced' ? o.price : null,
    });
  }
  const from = decisions[0]!.recorded_at.slice(0, 10);
  const closesOf = async (symbol: string, start: string) => {
    const got = await provider.dailyBars(symbol, start, through);
    assert.ok(got.ok);
    return got.value.bars.map((b) => ({ date: b.date, close: b.close }));
  };
  const closes = Object.fromEntries(await Promise.all([...new Set(decisions.map((d) => d.symbol))].map(async (s) => [s, await closesOf(s, from)] as const)));
  const inception = await provider.latestTrade('SPY', new Date(decisions[0]!.recorded_at));
  assert.ok(inception.ok);
  const benchFrom = new Date(Date.parse(from) - 10 * DAY).toISOString().slice(0, 10);
  const bench = (await closesOf('SPY', benchFrom)).filter((c) => c.date >= from || true);
  return modelPerformance({ decisions, closes, benchmark: { symbol: 'SPY', closes: bench, inception_price: inception.value.price }, as_of: through, synthetic: true });
}

const computed = (r: Awaited<ReturnType<PerformanceService['report']>>): Computed => {
  assert.ok(r.ok, r.ok ? '' : r.error.message);
  assert.equal(r.value.status, 'computed', JSON.stringify(r.value));
  return r.value as Computed;
};

await forEachStore('performance service', (kind) => {
  let f: Fixture;
  before(async () => {
    f = await fixture(await kind.open());
  });
  after(async () => {
    await f.ledger.close();
    await f.store.close();
    await kind.cleanup();
  });

  describe('a year of decisions on synthetic prices', () => {
    let agent: Agent;
    let secret: string;
    before(async () => {
      ({ agent, secret } = await agentWith(f, `perf-${kind.name}`, 60));
      await observeDecisions(f.store, f.market, new SyntheticMarketData('perf-test'), agent.id);
    });

    it('equals perf_v1 computed directly from the records, observations and closes, and says it is synthetic', async () => {
      const r = computed(await f.service.report(agent, 'model'));
      const yesterday = new Date(f.clock.t - DAY).toISOString().slice(0, 10);
      const ref = await direct(f, agent, new SyntheticMarketData('perf-test'), yesterday);
      assert.deepEqual(r.report.series, ref.series);
      assert.deepEqual(r.report.metrics, ref.metrics);
      assert.deepEqual(r.report.benchmark.metrics, ref.benchmark.metrics);
      assert.equal(r.report.benchmark.base_price, ref.benchmark.base_price);
      assert.equal(r.report.benchmark.base_from, 'inception_price');
      assert.deepEqual(r.report.holdings, { cash: ref.reconstruction.cash, positions: ref.reconstruction.positions, receivable: '0' });
      assert.equal(r.report.method, 'perf_v2', 'the default method; no corporate action is fed here, so its figures are perf_v1\'s');
      assert.equal(r.report.synthetic, true);
      assert.equal(r.price_source.source, 'synthetic');
      assert.ok(r.report.caveats.some((c) => c.code === 'synthetic_prices'));
      assert.equal(r.report.as_of, yesterday);
      assert.ok(r.report.series.length > 200, `${r.report.series.length} rows`);
      assert.notEqual(r.report.metrics.annualised_return.value, null, 'a year of history');
      assert.equal(r.through_seq, 60);
    });

    it('is stored, and a second read with nothing new computes nothing', async () => {
      const saves = f.reports.calls.saveReport ?? 0;
      const bars = f.provider.bars;
      const again = computed(await f.service.report(agent, 'model'));
      assert.equal(f.reports.calls.saveReport ?? 0, saves);
      assert.equal(f.provider.bars, bars);
      assert.equal(again.through_seq, 60);
      assert.ok(await f.reports.report(agent.id, 'model'));
    });

    it('after one more decision, applies only it (no earlier record is read again) and still equals a computation from scratch', async () => {
      await post(f, secret, 60);
      await observeDecisions(f.store, f.market, new SyntheticMarketData('perf-test'), agent.id);
      const reads = () => ({ narrow: (f.market.calls.pricedDecisions ?? 0) + (f.market.calls.chainTerms ?? 0), content: f.market.calls.chainInputs ?? 0 });
      const before = reads();
      const saves = f.reports.calls.saveReport ?? 0;
      const r = computed(await f.service.report(agent, 'model'));
      assert.equal(r.through_seq, 61);
      assert.equal(reads().narrow - before.narrow, 1, 'one page of decisions and observations after the stored seq');
      assert.equal(reads().content, before.content, 'no record content read');
      assert.equal(f.reports.calls.saveReport ?? 0, saves, 'one decision, same day: the copy held in memory is served, the stored one not rewritten');
      assert.equal((await f.reports.report(agent.id, 'model'))?.throughSeq, 60);
      const fresh = new PerformanceService({ store: f.store, market: f.market, reports: forgetting(f.reports), provider: new SyntheticMarketData('perf-test'), synthetic: new SyntheticMarketData('perf-test'), benchmark: 'SPY', clock: f.clock });
      const scratch = computed(await fresh.report(agent, 'model'));
      assert.deepEqual(r.report, scratch.report);
    });

    it('a new day adds its close incrementally, is stored, and equals a computation from scratch', async () => {
      f.clock.t += 3 * DAY;
      const r = computed(await f.service.report(agent, 'model'));
      assert.equal((await f.reports.report(agent.id, 'model'))?.throughSeq, 61, 'a valued day is stored at once');
      const yesterday = new Date(f.clock.t - DAY).toISOString().slice(0, 10);
      assert.equal(r.report.as_of, yesterday);
      const ref = await direct(f, agent, new SyntheticMarketData('perf-test'), yesterday);
      assert.deepEqual(r.report.series, ref.series);
      assert.deepEqual(r.report.metrics, ref.metrics);
    });

    it('a decision not yet priced stops the series before its day, with a caveat, until it is priced', async () => {
      f.clock.t += 2 * DAY;
      await post(f, secret, 61);
      const unpricedDay = new Date(f.clock.t).toISOString().slice(0, 10);
      f.clock.t += 4 * DAY;
      const waiting = computed(await f.service.report(agent, 'model'));
      assert.ok(waiting.report.as_of! < unpricedDay, `${waiting.report.as_of} < ${unpricedDay}`);
      assert.ok(waiting.report.caveats.some((c) => c.code === 'awaiting_price'));
      assert.equal(waiting.through_seq, 61);
      await observeDecisions(f.store, f.market, new SyntheticMarketData('perf-test'), agent.id);
      const priced = computed(await f.service.report(agent, 'model'));
      assert.equal(priced.through_seq, 62);
      assert.equal(priced.report.as_of, new Date(f.clock.t - DAY).toISOString().slice(0, 10));
      assert.ok(!priced.report.caveats.some((c) => c.code === 'awaiting_price'));
    });

    it('when the provider fails, the stored report is served with a stale caveat', async () => {
      f.clock.t += 2 * DAY;
      f.provider.failing = true;
      try {
        const r = computed(await f.service.report(agent, 'model'));
        assert.match(r.stale ?? '', /503/);
        assert.ok(r.report.caveats.some((c) => c.code === 'stale'));
      } finally {
        f.provider.failing = false;
      }
    });
  });

  describe('no report', () => {
    it('an agent with no record, or with no execution for the broker portfolio, says so', async () => {
      const created = await f.ops.createAgent({ handle: `empty-${kind.name}` });
      assert.ok(created.ok);
      const model = await f.service.report(created.value.agent, 'model');
      assert.deepEqual(model.ok && model.value, { status: 'unavailable', portfolio: 'model', code: 'no_records', reason: 'no record yet: the curve starts at the first decision' });
      const broker = await f.service.report(created.value.agent, 'broker');
      assert.equal(broker.ok && broker.value.status === 'unavailable' && broker.value.code, 'no_records');
    });

    it('a failing provider and nothing stored is provider_error (502)', async () => {
      const { agent } = await agentWith(f, `fail-${kind.name}`, 3);
      await observeDecisions(f.store, f.market, new SyntheticMarketData('perf-test'), agent.id);
      f.provider.failing = true;
      try {
        const r = await f.service.report(agent, 'model');
        assert.equal(r.ok, false);
        assert.equal(!r.ok && r.error.code, 'provider_error');
        assert.equal(!r.ok && r.error.status, 502);
      } finally {
        f.provider.failing = false;
      }
    });
  });
});

await forEachStore('performance service with provider none', (kind) => {
  it('says why nothing is priced', async () => {
    const f = await fixture(await kind.open(), new NoMarketData('no market data: LEDGER_MARKET_DATA is none, so no decision is priced'));
    try {
      const { agent } = await agentWith(f, `none-${kind.name}`, 2);
      const r = await f.service.report(agent, 'model');
      assert.ok(r.ok);
      assert.deepEqual(r.value, { status: 'unavailable', portfolio: 'model', code: 'no_market_data', reason: 'no market data: LEDGER_MARKET_DATA is none, so no decision is priced' });
    } finally {
      await f.ledger.close();
      await f.store.close();
      await kind.cleanup();
    }
  });
});
