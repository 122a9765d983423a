// The broker portfolio from real imported executions, on both stores: a sync of the Alpaca
// simulator's day records the fills, and the trade-derived report equals perf_v1 computed directly
// from those execution records, says so, and carries the connection's reconciled positions.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { brokerPerformance } from '../../src/method/perf/perf.ts';
import { PerformanceService } from '../../src/performance/service.ts';
import type { Computed } from '../../src/performance/types.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { brokerTestApp, connectAlpaca, executions, type BrokerTestApp } from '../brokers/wiring-support.ts';
import { dayOfFills, startAlpacaSim, type AlpacaSim } from '../sim/alpaca.ts';
import { forEachStore } from '../support/stores.ts';

await forEachStore('broker portfolio from imported executions', (kind) => {
  let store: LedgerStore;
  let sim: AlpacaSim;
  let t: BrokerTestApp;
  let agentId: string;
  let report: Computed;
  const synthetic = new SyntheticMarketData('broker-test');
  const clock = { now: () => new Date('2026-03-20T12:00:00.000Z') };

  before(async () => {
    store = await kind.open();
    sim = await startAlpacaSim({ scenario: dayOfFills() });
    t = await brokerTestApp(store, { LEDGER_ALPACA_TRADING_URL: sim.url });
    const owner = await t.agent();
    agentId = owner.agentId;
    const id = await connectAlpaca(t, owner.secret, sim);
    const synced = await t.brokers.syncNow(id);
    assert.equal(synced.kind, 'synced');
    const performance = new PerformanceService({ store, market: store.market, reports: store.performance, provider: synthetic, synthetic, benchmark: 'SPY', clock, brokers: store.brokers });
    const agent = (await store.findAgentById(agentId))!;
    const r = await performance.report(agent, 'broker');
    assert.ok(r.ok && r.value.status === 'computed', JSON.stringify(r));
    report = r.value as Computed;
  });
  after(async () => {
    await t.close();
    await sim.close();
    await store.close();
    await kind.cleanup();
  });

  it('equals perf_v1 on the execution records, valued at the provider\'s closes through yesterday', async () => {
    const fills = (await executions(store, agentId)).map((r) => {
      const c = JSON.parse(r.content);
      return { id: r.id, executed_at: c.filled_at, symbol: c.symbol, side: c.side, quantity: c.quantity, price: c.price };
    });
    assert.equal(fills.length, sim.scenario.fills.length);
    assert.equal(report.report.records.records, fills.length);
    const closesOf = async (symbol: string, from: string) => {
      const got = await synthetic.dailyBars(symbol, from, '2026-03-19');
      assert.ok(got.ok);
      return got.value.bars.map((b) => ({ date: b.date, close: b.close }));
    };
    const symbols = [...new Set(fills.map((f) => f.symbol))];
    const closes = Object.fromEntries(await Promise.all(symbols.map(async (s) => [s, await closesOf(s, '2026-03-13')] as const)));
    const inception = fills.map((f) => f.executed_at).sort()[0] as string;
    const base = await synthetic.latestTrade('SPY', new Date(inception));
    assert.ok(base.ok);
    const ref = brokerPerformance({ fills, closes, benchmark: { symbol: 'SPY', closes: await closesOf('SPY', '2026-03-03'), inception_price: base.value.price }, as_of: '2026-03-19' });
    assert.deepEqual(report.report.series, ref.series);
    assert.deepEqual(report.report.metrics, ref.metrics);
    assert.deepEqual(report.report.holdings, { cash: ref.reconstruction.cash, positions: ref.reconstruction.positions, receivable: '0' });
    assert.equal(report.report.method, 'perf_v2', 'the default method; no corporate action is fed here, so its figures are perf_v1\'s');
    assert.equal(report.report.as_of, '2026-03-19');
    assert.deepEqual(report.report.series.map((s) => s.date), ['2026-03-13', '2026-03-16', '2026-03-17', '2026-03-18', '2026-03-19']);
  });

  it('is labelled trade-derived, says what the imported history lacks, and carries the reconciled positions', () => {
    assert.equal(report.report.basis, 'trade_derived');
    assert.equal(report.report.hit_rate, null);
    assert.ok(report.report.caveats.some((c) => c.code === 'trade_derived'
      && /not complete from a known starting balance; missing the account's deposits, withdrawals and dividends \(none imported\)/.test(c.message)), JSON.stringify(report.report.caveats));
    assert.ok(report.report.caveats.some((c) => c.code === 'synthetic_prices'));
    assert.equal(report.reconciliation?.length, 1);
    const [connection] = report.reconciliation!;
    assert.equal(connection!.broker, 'alpaca');
    assert.ok(Array.isArray(connection!.positions));
    assert.equal(connection!.mismatches, (connection!.positions as Array<{ matches: boolean }>).filter((p) => !p.matches).length);
  });
});
