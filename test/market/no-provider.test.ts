// Issue 39, scope 4, on both stores: with no market-data provider (a fresh clone's default) a
// decision is never priced, yet its proof settles once the record is in the global log
// (`max-age=60`, as any settled proof) and its price_observation says why it is unpriced; nothing
// is stored, so a provider configured later still prices it at its recorded_at.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PricingJob } from '../../src/market/pricing.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { forEachStore } from '../support/stores.ts';
import { testIntegrator, testLogKey } from '../log/helpers.ts';
import { appendExecution } from '../public/helpers.ts';
import type { LogKey } from '../../src/log/key.ts';

type Proof = { inclusion_proof: unknown; price_observation: Record<string, unknown> | null };

await forEachStore('a proof settles without market data', (kind) => {
  let t: TestApp;
  let key: LogKey;
  before(async () => {
    t = await testApp(await kind.open()); // no LEDGER_ALPACA_DATA_* keys: provider none
    key = (await testLogKey()).key;
  });
  after(() => closeTestApp(t, kind));

  async function integrate(): Promise<void> {
    const integrator = testIntegrator(t.store, key);
    await integrator.integratePending();
    await integrator.stop();
  }

  async function proof(id: string): Promise<{ body: Proof; cacheControl: string }> {
    const res = await t.app.inject({ url: `/v1/proof/${id}` });
    assert.equal(res.statusCode, 200, res.body);
    return { body: res.json() as Proof, cacheControl: String(res.headers['cache-control']) };
  }

  test('unpriced with its reason at once; max-age=60 once in the global log; priced by a provider configured later', async () => {
    const ready = (await t.app.inject({ url: '/readyz' })).json() as { pricing: { source: string; state: string } };
    assert.deepEqual([ready.pricing.source, ready.pricing.state], ['none', 'off']);
    const a = await t.agent();
    const res = await postDecision(t, a.secret, { symbol: 'AAPL', action: 'BUY', quantity: '3' });
    assert.equal(res.statusCode, 201, res.body);
    const { id, recorded_at } = res.json() as { id: string; recorded_at: string };
    const unpriced = {
      record_id: id, symbol: 'AAPL', status: 'unpriced', asked_at: recorded_at, price: null, provider_time: null, age_ms: null, stale: null,
      reason: 'not_configured: no market data: LEDGER_ALPACA_DATA_KEY_ID and LEDGER_ALPACA_DATA_SECRET are not set, so no decision is priced',
      source: 'none', feed: null, synthetic: false, observed_at: null,
    };

    const waiting = await proof(id);
    assert.equal(waiting.body.inclusion_proof, null);
    assert.deepEqual(waiting.body.price_observation, unpriced, 'says why before the log has it');
    assert.equal(waiting.cacheControl, 'public, max-age=5', 'not in the global log yet');

    await integrate();
    const settled = await proof(id);
    assert.notEqual(settled.body.inclusion_proof, null);
    assert.deepEqual(settled.body.price_observation, unpriced);
    assert.equal(settled.cacheControl, 'public, max-age=60', 'settled: it will not be priced here');

    const line = (await t.app.inject({ url: `/v1/export?agent=${a.handle}` })).body.trimEnd().split('\n')[1]!;
    assert.equal('price_observation' in JSON.parse(line), false, 'the export carries stored observations only');

    // Nothing was stored: the decision is still pending, and a provider prices it at its recorded_at.
    assert.equal(await t.store.market.observationOf(id), null);
    await new PricingJob({ market: new SyntheticMarketData('no-provider'), store: t.store.market }).round();
    const priced = await proof(id);
    assert.equal(priced.body.price_observation?.status, 'priced');
    assert.equal(priced.body.price_observation?.source, 'synthetic');
    assert.equal(priced.body.price_observation?.asked_at, recorded_at);
    assert.equal(priced.cacheControl, 'public, max-age=60');
  });

  test('an execution is settled by the log alone, as before: no price_observation', async () => {
    const a = await t.agent();
    const id = await appendExecution(t, a, 'MSFT');
    assert.equal((await proof(id)).cacheControl, 'public, max-age=5');
    await integrate();
    const settled = await proof(id);
    assert.equal(settled.body.price_observation, null);
    assert.equal(settled.cacheControl, 'public, max-age=60');
  });
});
