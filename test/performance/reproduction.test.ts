// A skeptic's check, on both stores: from /v1/export (the decisions and the price observed at each
// one's receipt, published on its line) and from daily closes of any source (here the synthetic
// model the prices came from), an implementation written from docs/perf_v1.md alone
// (independent.ts, which imports nothing of src/performance) reaches every published figure of
// GET /v1/agents/{handle}/performance: the series, the holdings, every metric, the benchmark's,
// and the hit rates. The metrics are also recomputed from the published series alone, and every
// decision's published outcomes (GET .../performance/outcomes, walked page by page) from the
// export and the closes.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { LedgerApp } from '../../src/api/app.ts';
import type { MarketData } from '../../src/market/port.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { benchmarkValues, hitRates, metricsOf, modelSeries, outcomesOf, published, type Close, type Decision } from './independent.ts';
import { performanceApp, recordYear } from './fixtures.ts';
import { forEachStore } from '../support/stores.ts';

const METRICS = ['cumulative_return', 'time_weighted_return', 'annualised_return', 'volatility', 'sharpe', 'sortino', 'max_drawdown'];

async function closesOf(market: MarketData, symbol: string, from: string, to: string): Promise<Close[]> {
  const bars = await market.dailyBars(symbol, from, to);
  return bars.ok ? bars.value.bars.map((b) => ({ date: b.date, close: b.close })) : [];
}

await forEachStore('reproduction from public data alone', (kind) => {
  let store: LedgerStore;
  let ledger: LedgerApp;
  let handle: string;
  let report: Record<string, any>;
  let decisions: Decision[];

  before(async () => {
    store = await kind.open();
    const made = await performanceApp(store, new SyntheticMarketData('reproduction'));
    ledger = made.ledger;
    handle = await recordYear(made, `repro-${kind.name}`);
    const res = await ledger.app.inject({ method: 'GET', url: `/v1/agents/${handle}/performance` });
    assert.equal(res.statusCode, 200, res.body);
    report = res.json();
    assert.equal(report.status, 'computed');
    const lines = (await ledger.app.inject({ method: 'GET', url: `/v1/export?agent=${handle}` })).body.trimEnd().split('\n').map((l) => JSON.parse(l));
    decisions = lines.slice(1).filter((l) => l.entry.type === 'decision').map((l) => {
      const c = JSON.parse(l.content);
      const o = l.price_observation;
      assert.ok(o, `the export publishes the observation of ${l.entry.id}`);
      assert.equal(o.record_id, l.entry.id);
      return {
        id: l.entry.id, recorded_at: l.entry.recorded_at, symbol: c.symbol, action: c.action, time_horizon: c.time_horizon ?? null,
        target_allocation_pct: c.target_allocation_pct ?? null, quantity: c.quantity ?? null, notional: c.notional ?? null,
        price: o.status === 'priced' ? o.price : null,
      };
    });
  });
  after(async () => {
    await ledger.close();
    await store.close();
    await kind.cleanup();
  });

  it('the series and the holdings, from the export, the observations and the closes', async () => {
    const market = new SyntheticMarketData('reproduction'); // any source of the same closes would do
    const asOf = report.as_of as string;
    const first = decisions[0]!.recorded_at.slice(0, 10);
    const symbols = [...new Set(decisions.map((d) => d.symbol))];
    const closes = Object.fromEntries(await Promise.all(symbols.map(async (s) => [s, await closesOf(market, s, first, asOf)] as const)));
    const bench = await closesOf(market, report.benchmark.symbol, first, asOf);
    const mine = modelSeries(decisions, closes, bench, asOf);
    assert.deepEqual(report.series.map((r: { date: string; value: string }) => ({ date: r.date, value: r.value })), mine.series);
    assert.equal(report.holdings.cash, mine.cash);
    assert.deepEqual(report.holdings.positions.map((p: { symbol: string; quantity: string }) => ({ symbol: p.symbol, quantity: p.quantity })).sort((a: { symbol: string }, b: { symbol: string }) => (a.symbol < b.symbol ? -1 : 1)), mine.held);
    // the benchmark: 100000 × close / base, the base observed at the first decision's receipt
    const base = await market.latestTrade(report.benchmark.symbol, new Date(decisions[0]!.recorded_at));
    assert.ok(base.ok);
    assert.equal(report.benchmark.base_price, base.value.price);
    const benchValue = benchmarkValues(bench, base.value.price);
    assert.deepEqual(report.series.map((r: { date: string; benchmark_value: string }) => [r.date, r.benchmark_value]), report.series.map((r: { date: string }) => [r.date, benchValue.get(r.date)]));
    // hit rates at 1, 5, 21 closes and at the stated horizon
    assert.deepEqual(
      Object.fromEntries(Object.entries(report.hit_rate).map(([k, v]: [string, any]) => [k, { value: v.value, hits: v.hits, counted: v.counted }])),
      hitRates(decisions, closes),
    );
  });

  it('every decision\'s outcomes, from the export, the observations and the closes through as_of', async () => {
    const market = new SyntheticMarketData('reproduction');
    const asOf = report.as_of as string;
    const first = decisions[0]!.recorded_at.slice(0, 10);
    const symbols = [...new Set(decisions.map((d) => d.symbol))];
    const closes = Object.fromEntries(await Promise.all(symbols.map(async (s) => [s, await closesOf(market, s, first, asOf)] as const)));
    const rows: Array<Record<string, any>> = [];
    for (let url: string | null = report.links.outcomes; url !== null;) {
      const res = await ledger.app.inject({ method: 'GET', url: url.replace(/^https?:\/\/[^/]+\/v1/, '/v1') });
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json();
      assert.equal(page.as_of, asOf);
      rows.push(...page.data);
      url = page.next;
    }
    const strip = (o: Record<string, unknown>) => ({ date: o.date, close: o.close, return: o.return, hit: o.hit });
    const published = rows.map((r) => ({
      record_id: r.record_id, symbol: r.symbol, action: r.action, price: r.price, direction: r.direction,
      '1d': strip(r.outcomes['1d']), '5d': strip(r.outcomes['5d']), '21d': strip(r.outcomes['21d']), stated: strip(r.stated.outcome),
    }));
    assert.deepEqual(published, outcomesOf(decisions, closes));
    assert.ok(rows.filter((r) => r.stated.outcome.date !== null).length > 50, 'stated horizons resolved');
  });

  it('every metric, and the benchmark\'s, from the published series alone', () => {
    const values = report.series.map((r: { date: string; value: string }) => ({ date: r.date, value: r.value }));
    const bench = report.series.map((r: { date: string; benchmark_value: string }) => ({ date: r.date, value: r.benchmark_value }));
    const inception = (report.inception as string).slice(0, 10);
    assert.ok(values.length >= 252, `${values.length} valued days: every metric has its history`);
    assert.deepEqual(published(report.metrics, [...METRICS, 'beta', 'excess_return']), metricsOf(values, inception, bench));
    assert.deepEqual(published(report.benchmark.metrics, METRICS), metricsOf(bench, inception, null));
    for (const k of [...METRICS, 'beta', 'excess_return']) assert.notEqual(report.metrics[k].value, null, k);
  });
});
