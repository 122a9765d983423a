// Demo agents against a running pricing job on real market data (the Alpaca data simulator), on
// both stores: while `ledger demo` writes, the job runs, and it is made to price each demo decision
// first (a round between the record and the demo's own observation). Every demo decision is still
// priced by the synthetic model, at the demo's price, and no report says mixed_price_sources; an
// ordinary agent's decision in the same rounds is priced by Alpaca.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Operators } from '../../src/ledger/operators.ts';
import { AlpacaMarketData } from '../../src/market/alpaca.ts';
import type { PricingJob } from '../../src/market/pricing.ts';
import { pricingService } from '../../src/market/service.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { createDemo } from '../../src/cli/demo-agents.ts';
import { performanceOf } from '../../src/performance/service.ts';
import type { MarketStore, PriceObservation } from '../../src/market/port.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { startAlpacaDataSim, type AlpacaDataSim } from '../sim/alpaca-data.ts';
import { postDecision, testApp, type TestApp } from '../support/app.ts';
import { forEachStore } from '../support/stores.ts';

const KEY = { keyId: 'PKDEMORACE', secret: 'sim-secret-demo-race' };
const NOW = new Date('2026-03-16T15:00:00.000Z');
const SEED = 'demo-race-seed';

await forEachStore('demo agents priced by the synthetic model while the pricing job runs on Alpaca', (kind) => {
  let store: LedgerStore;
  let sim: AlpacaDataSim;
  let t: TestApp;

  before(async () => {
    sim = await startAlpacaDataSim({ ...KEY, now: () => NOW, trades: { AAPL: [{ t: '2026-03-16T14:59:59.5Z', p: 250.25 }], MSFT: [{ t: '2026-03-16T14:58:00Z', p: 410.5 }] } });
    store = await kind.open();
    t = await testApp(store, { clock: { now: () => NOW }, env: { LEDGER_WRITE_LIMIT_PER_MIN: '100000' } });
  });
  after(async () => {
    await t?.close();
    await store?.close();
    await sim?.close();
    await kind.cleanup();
  });

  it('the job prices a demo decision before the demo does: synthetic, the demo\'s price, no mixed sources', async () => {
    const market = store.market;
    const alpaca = new AlpacaMarketData({ ...KEY, baseUrl: sim.url, now: () => NOW, retryDelayMs: 1 });
    const synthetic = new SyntheticMarketData(SEED);
    const job = pricingService(store, alpaca, () => undefined, { pollMs: 5, batchSize: 10, concurrency: 2, holdRetryMs: 5 }, synthetic) as PricingJob;
    // An ordinary agent with a decision waiting: Alpaca prices it in the same rounds.
    const real = await t.agent();
    const res = await postDecision(t, real.secret, { symbol: 'AAPL', action: 'BUY', quantity: 1 });
    assert.equal(res.statusCode, 201, res.body);
    const realId = res.json().id as string;

    // The demo's market port: before each of its observations, a round of the job runs, so the job
    // meets every demo decision first; the job also runs on its own throughout.
    let rounds = 0;
    const racing = new Proxy(market, {
      get: (target, key) => {
        const value = Reflect.get(target, key, target);
        if (key !== 'saveObservations') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return async (rows: PriceObservation[]) => {
          await job.round();
          rounds++;
          return target.saveObservations(rows);
        };
      },
    }) as MarketStore;
    job.start();
    let created;
    try {
      created = await createDemo({ store, market: racing, synthetic, now: NOW }, { prefix: `race-${kind.name}`, days: 45 });
    } finally {
      await job.stop();
    }
    assert.ok(created.ok, JSON.stringify(!created.ok && created.error));
    assert.ok(rounds > 20);

    let byJob = 0;
    for (const agent of created.value) {
      const observations = await market.observationsOf(agent.agent_id, 0, 10_000);
      assert.equal(observations.length, agent.decisions);
      for (const o of observations) {
        assert.equal(o.source, 'synthetic', `${agent.handle} seq ${o.chainSeq} priced by ${o.source}`);
        assert.equal(o.synthetic, true);
        const expected = await synthetic.latestTrade(o.symbol, new Date(o.askedAt));
        if (o.status === 'priced') assert.equal(o.price, expected.ok ? expected.value.price : null);
        if (o.observedAt !== o.askedAt) byJob++; // the demo writes observed_at = recorded_at, the job its own clock
      }
      const performance = performanceOf(store, { provider: alpaca, seed: SEED, benchmark: 'SPY', clock: { now: () => NOW } });
      const agentRow = await store.findAgentById(agent.agent_id);
      const report = await performance.report(agentRow!, 'model');
      assert.ok(report.ok && report.value.status === 'computed', JSON.stringify(report));
      assert.equal(report.value.price_source.source, 'synthetic');
      assert.deepEqual(report.value.report.caveats.filter((c) => c.code === 'mixed_price_sources'), []);
      assert.ok(report.value.report.caveats.some((c) => c.code === 'synthetic_prices'));
    }
    const total = created.value.reduce((n, a) => n + a.decisions, 0);
    assert.equal(byJob, total, 'the job priced every demo decision first');
    const realObservation = await market.observationOf(realId);
    assert.equal(realObservation?.source, 'alpaca');
    assert.equal(realObservation?.status === 'priced' && realObservation.price, '250.25');
  });

  it('an agent created demo through the operators is priced synthetic by the job alone', async () => {
    const ops = new Operators(store, { now: () => NOW });
    const demo = await ops.createAgent({ handle: `plain-demo-${kind.name}`, demo: true });
    assert.ok(demo.ok);
    const res = await postDecision(t, demo.value.apiKey.secret, { symbol: 'MSFT', action: 'SELL', quantity: 1 });
    assert.equal(res.statusCode, 201, res.body);
    const market = store.market;
    const synthetic = new SyntheticMarketData(SEED);
    const job = pricingService(store, new AlpacaMarketData({ ...KEY, baseUrl: sim.url, now: () => NOW, retryDelayMs: 1 }), () => undefined, {}, synthetic) as PricingJob;
    await job.round();
    const o = await market.observationOf(res.json().id);
    const expected = await synthetic.latestTrade('MSFT', new Date(res.json().recorded_at));
    assert.ok(expected.ok);
    assert.deepEqual({ source: o?.source, price: o?.status === 'priced' ? o.price : null }, { source: 'synthetic', price: expected.value.price });
  });
});
