// The model report on real market data, on both stores: decisions priced at receipt by the Alpaca
// Market Data client against the local simulator (stocks and crypto), closes fetched through the
// cache and equal to the simulator's bars, not synthetic; then the provider failing (5xx, 429):
// 502 provider_error with nothing stored, the stored report served with `stale` otherwise.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { AlpacaMarketData } from '../../src/market/alpaca.ts';
import { modelPerformance } from '../../src/method/perf/perf.ts';
import type { DecisionInput } from '../../src/method/perf/portfolio.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { idempotencyKey, postDecision } from '../support/app.ts';
import { observeDecisions } from '../support/observe.ts';
import { forEachStore } from '../support/stores.ts';
import { startAlpacaDataSim, type AlpacaDataSim, type SimBar, type SimTrade } from '../sim/alpaca-data.ts';
import { DAY, performanceApp, type PerformanceApp } from './fixtures.ts';
import { Operators } from '../../src/ledger/operators.ts';

const KEY = { keyId: 'PKTEST', secret: 'sim-secret' };
const FIRST = Date.UTC(2026, 1, 2); // Monday 2026-02-02
const NOW = Date.UTC(2026, 2, 16, 15, 0, 0); // Monday 2026-03-16, 11:00 New York

const weekday = (ms: number) => ![0, 6].includes(new Date(ms).getUTCDay());
const days = (every: (ms: number) => boolean) => Array.from({ length: 42 }, (_, i) => FIRST + i * DAY).filter(every);

/** A walk of daily bars (stocks dated at New York midnight, EST; crypto at 00:00 UTC) and one trade a day at 15:00 UTC. */
function market(start: number, crypto: boolean): { bars: SimBar[]; trades: SimTrade[]; closes: Array<{ date: string; close: string }> } {
  const bars: SimBar[] = [];
  const trades: SimTrade[] = [];
  const closes: Array<{ date: string; close: string }> = [];
  days(crypto ? () => true : weekday).forEach((ms, i) => {
    const c = Math.round((start * (1 + 0.01 * Math.sin(i))) * 100) / 100;
    bars.push({ t: new Date(ms + (crypto ? 0 : 5 * 3600_000)).toISOString().replace('.000Z', 'Z'), o: c, h: c, l: c, c });
    trades.push({ t: new Date(ms + 15 * 3600_000).toISOString(), p: Math.round(c * 0.995 * 100) / 100 });
    closes.push({ date: new Date(ms).toISOString().slice(0, 10), close: String(c) });
  });
  return { bars, trades, closes };
}

const SYMBOLS = { AAPL: market(250, false), 'BTC/USD': market(70000, true), SPY: market(600, false), MSFT: market(400, false) };

await forEachStore('performance on Alpaca market data (simulator)', (kind) => {
  let store: LedgerStore;
  let sim: AlpacaDataSim;
  let app: PerformanceApp;
  let handle: string;

  before(async () => {
    store = await kind.open();
    sim = await startAlpacaDataSim({
      ...KEY,
      now: () => new Date(NOW),
      trades: Object.fromEntries(Object.entries(SYMBOLS).map(([s, m]) => [s, m.trades])),
      bars: Object.fromEntries(Object.entries(SYMBOLS).map(([s, m]) => [s, m.bars])),
    });
    const provider = new AlpacaMarketData({ ...KEY, baseUrl: sim.url, now: () => new Date(NOW), retryDelayMs: 1 });
    app = await performanceApp(store, provider, undefined, FIRST + 16 * 3600_000);
    handle = `alpaca-${kind.name}`;
    const created = await new Operators(store, app.clock).createAgent({ handle });
    assert.ok(created.ok);
    for (let i = 0; i < 20; i++) {
      const body = { symbol: i % 2 ? 'BTC/USD' : 'AAPL', action: i % 3 === 2 ? 'SELL' : 'BUY', notional: '10000', time_horizon: '3 trading days' };
      const res = await postDecision(app.ledger, created.value.apiKey.secret, body, idempotencyKey());
      assert.equal(res.statusCode, 201, res.body);
      app.clock.t += DAY + 60_000;
      while (!weekday(app.clock.t)) app.clock.t += DAY;
    }
    await observeDecisions(store, app.market, provider, created.value.agent.id);
    app.clock.t = NOW;
  });
  after(async () => {
    await app.ledger.close();
    await sim.close();
    await store.close();
    await kind.cleanup();
  });

  const get = (url: string) => app.ledger.app.inject({ method: 'GET', url });

  it('values the decisions at the simulator\'s bars through yesterday, stocks and crypto, not synthetic', async () => {
    const res = await get(`/v1/agents/${handle}/performance`);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.status, 'computed');
    assert.equal(body.synthetic, false);
    assert.deepEqual([body.price_source.source, body.price_source.feed], ['alpaca', 'iex']);
    assert.ok(!body.caveats.some((c: { code: string }) => c.code === 'synthetic_prices'));
    assert.equal(body.as_of, '2026-03-15');
    const decisions: DecisionInput[] = [];
    for (const r of await store.listChain((await store.findAgentByHandle(handle))!.id, 0, 100)) {
      const c = JSON.parse(r.content);
      const o = await app.market.observationOf(r.id);
      assert.equal(o?.status, 'priced');
      decisions.push({ id: r.id, recorded_at: r.recordedAt, symbol: c.symbol, action: c.action, notional: c.notional, time_horizon: c.time_horizon, price: o?.status === 'priced' ? o.price : null });
    }
    const ref = modelPerformance({
      decisions,
      closes: { AAPL: SYMBOLS.AAPL.closes, 'BTC/USD': SYMBOLS['BTC/USD'].closes },
      benchmark: { symbol: 'SPY', closes: SYMBOLS.SPY.closes, inception_price: body.benchmark.base_price },
      as_of: '2026-03-15',
    });
    assert.deepEqual(body.series, ref.series);
    assert.deepEqual(body.metrics, ref.metrics);
    assert.deepEqual(body.hit_rate['1d'], ref.outcomes!.hit_rate['1d']);
    // the base is SPY's trade at the first decision's receipt: the simulator's trade of 2026-02-02 15:00
    assert.equal(body.benchmark.base_price, String(SYMBOLS.SPY.trades[0]!.p));
    assert.ok(sim.requests.some((r) => r.path === '/v1beta3/crypto/us/bars'), 'crypto bars asked of the crypto endpoint');
  });

  it('a provider failing with nothing stored is 502 provider_error; after it recovers the report is computed', async () => {
    const created = await new Operators(store, app.clock).createAgent({ handle: `${handle}-b` });
    assert.ok(created.ok);
    app.clock.t = Date.UTC(2026, 2, 2, 16, 0, 0);
    const res = await postDecision(app.ledger, created.value.apiKey.secret, { symbol: 'MSFT', action: 'BUY', notional: '5000' }, idempotencyKey());
    assert.equal(res.statusCode, 201);
    const provider = app.provider;
    await observeDecisions(store, app.market, provider, created.value.agent.id);
    app.clock.t = NOW;
    for (const status of [503, 429]) {
      sim.script.push(...Array.from({ length: 4 }, () => ({ status, headers: (status === 429 ? { 'retry-after': '1' } : {}) as Record<string, string> })));
      const failed = await get(`/v1/agents/${handle}-b/performance`);
      assert.equal(failed.statusCode, 502, failed.body);
      assert.equal(failed.json().error.code, 'provider_error');
      sim.script.length = 0;
    }
    const ok = await get(`/v1/agents/${handle}-b/performance`);
    assert.equal(ok.json().status, 'computed');
  });

  it('a provider failing on a later day serves the stored report with `stale` and its as_of', async () => {
    app.clock.t = NOW + 2 * DAY; // Wednesday: Monday's and Tuesday's bars are asked for
    sim.script.push(...Array.from({ length: 4 }, () => ({ status: 500 })));
    const res = await get(`/v1/agents/${handle}/performance`);
    sim.script.length = 0;
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.as_of, '2026-03-15');
    assert.match(body.stale, /provider_error/);
    assert.ok(body.caveats.some((c: { code: string }) => c.code === 'stale'));
  });
});
