// Price at receipt (issue 14, rule 6) with the Alpaca data simulator, on both stores: a decision
// POSTed through the app, priced by the job, published on its proof and in the export (hashed bytes
// unchanged, `ledger verify` passes); a stale price; a missing symbol; 429 and 5xx (nothing saved,
// backoff, one notice per outage, writes still 201); crypto; the synthetic provider; provider none.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { buildApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import { AlpacaMarketData } from '../../src/market/alpaca.ts';
import { PricingJob, type PricingOptions, type PricingStatus } from '../../src/market/pricing.ts';
import { selectMarketData } from '../../src/market/select.ts';
import { pricingService } from '../../src/market/service.ts';
import type { MarketData } from '../../src/market/port.ts';
import type { MarketStore } from '../../src/market/port.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { ADMIN_TOKEN, postDecision, testApp, type TestApp } from '../support/app.ts';
import { startAlpacaDataSim, type AlpacaDataSim } from '../sim/alpaca-data.ts';
import { verify } from '../cli/verify-fixture.ts';

const KEY = { keyId: 'PKPRICINGTEST', secret: 'sim-secret-pricing' };
const T0 = Date.parse('2026-03-16T15:00:00.000Z'); // Monday 11:00 New York: the market is open
const SIM_NOW = new Date(T0 + 60_000); // the provider answers a minute after the decisions
const FRIDAY_CLOSE = '2026-03-13T20:59:58Z';

type Notice = { level: string; message: string };
type Proof = { price_observation: Record<string, unknown> | null; record: { entry: { recorded_at: string } } };

function alpaca(sim: AlpacaDataSim): AlpacaMarketData {
  return new AlpacaMarketData({ ...KEY, baseUrl: sim.url, now: () => SIM_NOW, retryDelayMs: 1 });
}

await forEachStore('pricing at receipt', (kind) => {
  let store: LedgerStore;
  let market: MarketStore;
  let t: TestApp;
  let sim: AlpacaDataSim;
  let clock = T0;
  const notices: Notice[] = [];

  before(async () => {
    sim = await startAlpacaDataSim({
      ...KEY,
      now: () => SIM_NOW,
      trades: {
        // The latest trade is after the decision: the price at receipt is the one before it.
        AAPL: [{ t: '2026-03-16T14:59:59.5Z', p: 250.25 }, { t: '2026-03-16T15:00:30.25Z', p: 250.4 }],
        THIN: [{ t: FRIDAY_CLOSE, p: 12.5 }],
        LATE: [{ t: '2026-03-16T15:00:45Z', p: 3.25 }],
        'BTC/USD': [{ t: '2026-03-16T14:59:30.25Z', p: 71234.56 }],
        MSFT: [{ t: '2026-03-16T14:58:00Z', p: 410.5 }],
      },
    });
    store = await kind.open();
    market = store.market;
    // A node configured with the provider (its jobs are the tests' own): a decision not priced yet waits for it.
    t = await testApp(store, {
      clock: { now: () => new Date(clock++) },
      env: {
        LEDGER_WRITE_LIMIT_PER_MIN: '100000', LEDGER_READ_LIMIT_PER_MIN: '100000',
        LEDGER_ALPACA_DATA_KEY_ID: KEY.keyId, LEDGER_ALPACA_DATA_SECRET: KEY.secret, LEDGER_ALPACA_DATA_URL: sim.url,
      },
    });
  });
  after(async () => {
    await t?.close();
    await store?.close();
    await sim?.close();
    await kind.cleanup();
  });

  function job(provider: MarketData = alpaca(sim), extra: Partial<PricingOptions> = {}): PricingJob {
    notices.length = 0;
    return new PricingJob({ market: provider, store: market, onNotice: (level, message) => notices.push({ level, message }), ...extra });
  }

  /** Rounds until nothing is pending (each must succeed). */
  async function drain(j: PricingJob): Promise<void> {
    for (let i = 0; i < 20 && (await market.countPendingPrices(100)) > 0; i++) {
      await j.round();
      assert.equal(j.status().failing_since, null, JSON.stringify(j.status()));
    }
    assert.equal(await market.countPendingPrices(100), 0);
  }

  async function decide(secret: string, body: Record<string, unknown>): Promise<{ id: string; recorded_at: string }> {
    const res = await postDecision(t, secret, body);
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }

  async function proof(id: string): Promise<{ body: Proof }> {
    const res = await t.app.inject({ url: `/v1/proof/${id}` });
    assert.equal(res.statusCode, 200, res.body);
    return { body: res.json() as Proof };
  }

  async function exportText(handle: string): Promise<string> {
    const res = await t.app.inject({ url: `/v1/export?agent=${handle}` });
    assert.equal(res.statusCode, 200, res.body);
    return res.body;
  }

  test('a decision priced at receipt, end to end: POST, the job, then its proof and the export; no hashed byte changes', async () => {
    const a = await t.agent();
    const d = await decide(a.secret, { symbol: 'AAPL', action: 'BUY', quantity: 10 });
    assert.equal((await proof(d.id)).body.price_observation, null, 'not observed yet');
    const exportBefore = await exportText(a.handle);
    const etagBefore = String((await t.app.inject({ url: `/v1/export?agent=${a.handle}` })).headers.etag);
    assert.equal((await t.app.inject({ url: `/v1/export?agent=${a.handle}`, headers: { 'if-none-match': etagBefore } })).statusCode, 304);

    sim.requests.length = 0;
    await drain(job());
    const expected = {
      record_id: d.id, symbol: 'AAPL', status: 'priced', asked_at: d.recorded_at, price: '250.25', provider_time: '2026-03-16T14:59:59.5Z',
      age_ms: Date.parse(d.recorded_at) - Date.parse('2026-03-16T14:59:59.5Z'), stale: false, reason: null,
      source: 'alpaca', feed: 'iex', synthetic: false,
    };
    const priced = (await proof(d.id)).body;
    assert.deepEqual({ ...priced.price_observation, observed_at: undefined }, { ...expected, observed_at: undefined });
    assert.ok(Date.parse(String(priced.price_observation!.observed_at)) > 0);
    // Asked at recorded_at: the latest trade is later, so the trade at or before it was looked up.
    assert.deepEqual(sim.requests.map((r) => r.path), ['/v2/stocks/trades/latest', '/v2/stocks/trades']);
    assert.equal(sim.requests[1]!.query.get('end'), d.recorded_at);

    const exportAfter = await exportText(a.handle);
    const revalidated = await t.app.inject({ url: `/v1/export?agent=${a.handle}`, headers: { 'if-none-match': etagBefore } });
    assert.equal(revalidated.statusCode, 200, 'an export whose observations grew is never answered 304');
    const [headerBefore, lineBefore] = exportBefore.trimEnd().split('\n');
    const [headerAfter, lineAfter] = exportAfter.trimEnd().split('\n');
    assert.equal(JSON.parse(headerBefore!).price_observations, 0);
    assert.equal(JSON.parse(headerAfter!).price_observations, 1);
    const line = JSON.parse(lineAfter!) as Record<string, unknown>;
    assert.deepEqual(line.price_observation, priced.price_observation, 'the export carries the same observation');
    const { price_observation: _, ...rest } = line;
    assert.equal(JSON.stringify(rest), lineBefore, 'the record itself is byte for byte what it was');

    const dir = mkdtempSync(join(tmpdir(), 'ledger-pricing-'));
    try {
      writeFileSync(join(dir, 'export.ndjson'), exportAfter);
      const verified = await verify(join(dir, 'export.ndjson'));
      assert.equal(verified.code, 0, verified.out);
      const forged = exportAfter.replace(`"asked_at":"${d.recorded_at}"`, '"asked_at":"2026-03-16T16:00:00.000Z"');
      writeFileSync(join(dir, 'forged.ndjson'), forged);
      const refused = await verify(join(dir, 'forged.ndjson'));
      assert.equal(refused.code, 1, 'an observation that is not about its record fails the check');
      assert.match(refused.out, /price_observation.asked_at/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a stale price: the market was closed, so the last trade is old; marked stale with its age', async () => {
    const a = await t.agent();
    const d = await decide(a.secret, { symbol: 'THIN', action: 'BUY' });
    await drain(job());
    const o = (await proof(d.id)).body.price_observation!;
    assert.equal(o.status, 'priced');
    assert.equal(o.price, '12.5');
    assert.equal(o.provider_time, FRIDAY_CLOSE);
    assert.equal(o.age_ms, Date.parse(d.recorded_at) - Date.parse(FRIDAY_CLOSE));
    assert.equal(o.stale, true);
  });

  test('final answers are unpriced with the reason: a missing symbol, no trade before the instant, a prediction market (not asked)', async () => {
    const a = await t.agent();
    const missing = await decide(a.secret, { symbol: 'ZZZZ', action: 'BUY' });
    const late = await decide(a.secret, { symbol: 'LATE', action: 'SELL' });
    const market_ = await decide(a.secret, { symbol: 'PRES-2028-X', action: 'BUY', asset_class: 'PREDICTION_MARKET' });
    sim.requests.length = 0;
    await drain(job());
    const reasons = await Promise.all([missing, late, market_].map(async (d) => (await proof(d.id)).body.price_observation!));
    for (const o of reasons) {
      assert.equal(o.status, 'unpriced');
      assert.equal(o.price, null);
      assert.equal(o.provider_time, null);
      assert.equal(o.stale, null);
    }
    assert.match(String(reasons[0]!.reason), /^unknown_symbol: /);
    assert.match(String(reasons[1]!.reason), /^no_price: /);
    assert.match(String(reasons[2]!.reason), /^not_priced: asset class PREDICTION_MARKET/);
    assert.ok(!sim.requests.some((r) => r.query.get('symbols') === 'PRES-2028-X'), 'no provider call for a prediction market');
  });

  test('crypto: BTC/USD is priced from the crypto endpoint, without a stock feed', async () => {
    const a = await t.agent();
    const d = await decide(a.secret, { symbol: 'BTC/USD', action: 'BUY', asset_class: 'CRYPTO', notional: 1000 });
    sim.requests.length = 0;
    await drain(job());
    const o = (await proof(d.id)).body.price_observation!;
    assert.equal(o.status, 'priced');
    assert.equal(o.price, '71234.56');
    assert.equal(o.feed, null);
    assert.equal(o.stale, false);
    assert.equal(sim.requests[0]!.path, '/v1beta3/crypto/us/latest/trades');
  });

  test('429: nothing saved, the wait is Retry-After, one notice; then priced, and /readyz says so throughout', async () => {
    const a = await t.agent();
    const d = await decide(a.secret, { symbol: 'MSFT', action: 'BUY' });
    const j = job();
    const app = await buildApp(compose({ store, config: t.config, checkSignature: signatureChecker(store) }, { pricing: j }));
    try {
      sim.script.push({ status: 429, headers: { 'retry-after': '3' } });
      const wait = await j.round();
      assert.equal(wait, 3_000, 'the provider\'s Retry-After is honoured');
      assert.equal(await market.observationOf(d.id), null, 'nothing saved on a transient failure');
      const failing = (await app.app.inject({ url: '/readyz' })).json() as { status: string; pricing: PricingStatus };
      assert.equal(failing.status, 'ready', 'pricing never makes a node unready');
      assert.equal(failing.pricing.state, 'waiting');
      assert.equal(failing.pricing.source, 'alpaca');
      assert.equal(failing.pricing.pending, 1);
      assert.match(String(failing.pricing.last_error), /^rate_limited: /);
      assert.ok(failing.pricing.failing_since);
      assert.deepEqual(notices.map((n) => n.level), ['info']);
      await drain(j);
      assert.equal((await market.observationOf(d.id))?.status, 'priced');
      const ready = (await app.app.inject({ url: '/readyz' })).json() as { pricing: PricingStatus };
      assert.equal(ready.pricing.failing_since, null);
      assert.equal(ready.pricing.pending, 0);
      assert.equal(ready.pricing.observed, 1);
      assert.match(String(ready.pricing.last_error), /^rate_limited: /, 'the last error stays for the operator to see');
      assert.deepEqual(notices.map((n) => n.level), ['info', 'info']);
      assert.match(notices[1]!.message, /answers again/);
    } finally {
      await app.close();
    }
  });

  test('5xx: retried later with backoff, logged once per outage; writes still answer 201 meanwhile; then each decision priced once', async () => {
    const a = await t.agent();
    const j = job(alpaca(sim), { pollMs: 5, backoffMs: 10, maxBackoffMs: 40 });
    for (let i = 0; i < 400; i++) sim.script.push({ status: 503, body: { message: 'upstream unavailable' } });
    sim.requests.length = 0;
    j.start();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await decide(a.secret, { symbol: 'MSFT', action: 'BUY', quantity: i + 1 })).id);
      for (let i = 0; i < 200 && sim.requests.length < 12; i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(sim.requests.length >= 12, 'the job kept retrying');
      assert.equal(await market.countObservations(a.agentId, 3), 0, 'nothing saved while the provider fails');
      const status = j.status();
      assert.ok(['waiting', 'pricing'].includes(status.state), status.state);
      assert.match(String(status.last_error), /^provider_error: Alpaca answered 503/);
      assert.ok(status.failing_since);
      assert.deepEqual(notices.map((n) => n.level), ['warn'], 'one notice for the whole outage, not one per decision or round');
      assert.match(notices[0]!.message, /provider_error/);
      sim.script.length = 0;
      for (let i = 0; i < 300 && (await market.countObservations(a.agentId, 3)) < 3; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(await market.countObservations(a.agentId, 3), 3);
      for (const id of ids) {
        const o = await market.observationOf(id);
        assert.equal(o?.status === 'priced' && o.price, '410.5');
      }
      for (let i = 0; i < 100 && notices.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(notices.map((n) => n.level), ['warn', 'info']);
    } finally {
      sim.script.length = 0;
      await j.stop();
    }
  });

  test('the synthetic provider: observations are marked synthetic, with its deterministic price', async () => {
    const selected = selectMarketData({ LEDGER_MARKET_DATA: 'synthetic', LEDGER_SYNTHETIC_SEED: 'pricing-test' });
    assert.ok(selected.ok);
    const a = await t.agent();
    const d = await decide(a.secret, { symbol: 'AAPL', action: 'BUY' });
    await drain(job(selected.market));
    const o = (await proof(d.id)).body.price_observation!;
    const direct = await selected.market.latestTrade('AAPL', new Date(d.recorded_at));
    assert.ok(direct.ok);
    assert.equal(o.status, 'priced');
    assert.equal(o.source, 'synthetic');
    assert.equal(o.synthetic, true);
    assert.equal(o.price, direct.value.price);
    assert.equal(o.provider_time, direct.value.provider_time);
  });

  test('provider none: the job does not run, nothing is priced, and the status and the proof say why', async () => {
    const none = selectMarketData({});
    assert.ok(none.ok);
    assert.equal(none.market.source, 'none');
    const pricing = pricingService(store, none.market, () => assert.fail('no notice'));
    pricing.start();
    const app = await buildApp(compose({ store, config: loadConfig({ LEDGER_ADMIN_TOKEN: ADMIN_TOKEN }), checkSignature: signatureChecker(store) }, { pricing }));
    try {
      const a = await t.agent();
      const d = await decide(a.secret, { symbol: 'AAPL', action: 'BUY' });
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(await market.observationOf(d.id), null, 'nothing stored');
      const unpriced = (await app.app.inject({ url: `/v1/proof/${d.id}` })).json() as Proof;
      assert.equal(unpriced.price_observation?.status, 'unpriced');
      assert.match(String(unpriced.price_observation?.reason), /^not_configured: no market data: LEDGER_ALPACA_DATA_KEY_ID and LEDGER_ALPACA_DATA_SECRET are not set/);
      const ready = (await app.app.inject({ url: '/readyz' })).json() as { pricing: PricingStatus };
      assert.equal(ready.pricing.state, 'off');
      assert.equal(ready.pricing.source, 'none');
      assert.match(ready.pricing.description, /LEDGER_ALPACA_DATA_KEY_ID and LEDGER_ALPACA_DATA_SECRET are not set/);
      // Left pending, not lost: a provider configured later prices it at its recorded_at.
      assert.ok((await market.pendingPrices('alpaca', 100)).some((p) => p.recordId === d.id));
      await drain(job());
      assert.equal((await market.observationOf(d.id))?.status, 'priced');
      const priced = (await app.app.inject({ url: `/v1/proof/${d.id}` })).json() as Proof;
      assert.equal(priced.price_observation?.status, 'priced', 'the stored observation replaces the not_configured answer');
    } finally {
      await pricing.stop();
      await app.close();
    }
  });
});
