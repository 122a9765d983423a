// The pricing job runs in `ledger serve` (src/server.ts), on both stores: a decision POSTed to the
// service is priced in the background and its proof shows the observation; /readyz shows the job;
// the service stops promptly.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { systemClock } from '../../src/domain/clock.ts';
import type { PricingStatus } from '../../src/market/pricing.ts';
import { startServer } from '../../src/server.ts';
import { postDecision } from '../support/app.ts';
import { forEachStore } from '../support/stores.ts';
import { startAlpacaDataSim, type AlpacaDataSim } from '../sim/alpaca-data.ts';

const KEY = { keyId: 'PKSERVETEST', secret: 'sim-secret-serve' };

await forEachStore('ledger serve prices decisions in the background', (kind) => {
  let sim: AlpacaDataSim;
  before(async () => {
    sim = await startAlpacaDataSim({ ...KEY, trades: { NVDA: [{ t: new Date(Date.now() - 90_000).toISOString(), p: 131.07 }] } });
  });
  after(async () => {
    await sim.close();
    await kind.cleanup();
  });

  test('POST, then the proof shows the price at receipt; /readyz shows the job; a prompt stop', async () => {
    const server = await startServer(loadConfig({
      PORT: '0', LEDGER_DATABASE_URL: await kind.freshUrl(), LEDGER_LOG_LEVEL: 'silent',
      LEDGER_ALPACA_DATA_KEY_ID: KEY.keyId, LEDGER_ALPACA_DATA_SECRET: KEY.secret, LEDGER_ALPACA_DATA_URL: sim.url,
      LEDGER_OTS_CALENDARS: 'http://127.0.0.1:9', LEDGER_BITCOIN_HEADERS_URL: 'http://127.0.0.1:9',
    }));
    try {
      const created = await new Operators(server.store, systemClock).createAgent({ handle: `pricing-serve-${process.pid}`, demo: false });
      assert.ok(created.ok);
      const res = await postDecision(server.ledger, created.value.apiKey.secret, { symbol: 'NVDA', action: 'BUY' });
      assert.equal(res.statusCode, 201, res.body);
      const { id } = res.json() as { id: string };
      let observation: Record<string, unknown> | null = null;
      for (let i = 0; i < 100 && observation === null; i++) {
        await new Promise((r) => setTimeout(r, 100));
        observation = (await server.ledger.app.inject({ url: `/v1/proof/${id}` })).json().price_observation;
      }
      assert.ok(observation, 'priced within 10 s');
      assert.equal(observation.price, '131.07');
      assert.equal(observation.source, 'alpaca');
      // The job counts a batch once its save has committed; a SQLite commit runs off the event loop, so
      // the proof can show the observation a moment before the count moves.
      const readyz = async () => (await server.ledger.app.inject({ url: '/readyz' })).json() as { pricing: PricingStatus };
      let ready = await readyz();
      for (let i = 0; i < 20 && ready.pricing.observed === 0; i++) {
        await new Promise((r) => setTimeout(r, 50));
        ready = await readyz();
      }
      assert.equal(ready.pricing.source, 'alpaca');
      assert.equal(ready.pricing.observed, 1);
      assert.equal(ready.pricing.failing_since, null);
      assert.doesNotMatch(JSON.stringify(ready), new RegExp(KEY.secret), 'the data key never shows');
    } finally {
      const started = Date.now();
      await server.stop();
      assert.ok(Date.now() - started < 5_000, 'shutdown is not held up by pricing');
    }
  });
});
