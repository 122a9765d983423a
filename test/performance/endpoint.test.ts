// GET /v1/agents/{handle}/performance (JSON and CSV) and the profile's portfolios and performance,
// over HTTP (inject) on both stores: shapes as documented in OpenAPI, caching, errors, synthetic marked.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Ajv } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { buildApp, type LedgerApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { PerformanceResponse } from '../../src/api/routes/public/performance-schemas.ts';
import { ProfileResponse } from '../../src/api/routes/public/schemas.ts';
import { loadConfig } from '../../src/config.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import type { DailyBars, MarketData, MarketResult, TradePrice } from '../../src/market/port.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { PerformanceService } from '../../src/performance/service.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { idempotencyKey, postDecision } from '../support/app.ts';
import type { MarketStore } from '../../src/market/port.ts';
import { observeDecisions } from '../support/observe.ts';
import { forEachStore } from '../support/stores.ts';

const DAY = 86_400_000;

function validator(schema: TSchema) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addFormat('date-time', true);
  ajv.addFormat('uri', true);
  const check = ajv.compile(schema);
  return (body: unknown) => assert.ok(check(body), JSON.stringify(check.errors?.slice(0, 5)));
}
const validPerformance = validator(PerformanceResponse);
const validProfile = validator(ProfileResponse);

/** Synthetic prices whose daily bars can be made to fail. */
class Switchable implements MarketData {
  readonly source = 'synthetic' as const;
  readonly synthetic = true;
  readonly description = 'synthetic prices (test)';
  failing = false;
  private readonly inner = new SyntheticMarketData('endpoint-test');
  latestTrade(symbol: string, at: Date): Promise<MarketResult<TradePrice>> {
    return this.inner.latestTrade(symbol, at);
  }
  async dailyBars(symbol: string, from: string, to: string): Promise<MarketResult<DailyBars>> {
    if (this.failing) return { ok: false, error: { code: 'provider_error', message: 'upstream answered 502', status: 502 } };
    return this.inner.dailyBars(symbol, from, to);
  }
  corporateActions(symbols: readonly string[], from: string, to: string) {
    return this.inner.corporateActions(symbols, from, to);
  }
}

await forEachStore('GET /v1/agents/{handle}/performance and the profile', (kind) => {
  let store: LedgerStore;
  let ledger: LedgerApp;
  let market: MarketStore;
  let provider: Switchable;
  const clock = { t: Date.UTC(2025, 2, 3, 15, 0, 0), now() { return new Date(this.t); } };
  const handle = `endpoint-${kind.name}`;

  before(async () => {
    store = await kind.open();
    market = store.market;
    provider = new Switchable();
    const performance = new PerformanceService({ store, market, reports: store.performance, provider, synthetic: provider, benchmark: 'SPY', clock });
    ledger = await buildApp(compose({ store, config: loadConfig({ LEDGER_DATABASE_URL: 'sqlite::memory:' }), clock, checkSignature: signatureChecker(store) }, { performance }));
    const ops = new Operators(store, clock);
    for (const [name, n] of [[handle, 30], [`${handle}-x`, 2]] as const) {
      const created = await ops.createAgent({ handle: name, demo: name === handle });
      assert.ok(created.ok);
      const t0 = clock.t;
      for (let i = 0; i < n; i++) {
        const res = await postDecision(ledger, created.value.apiKey.secret, { symbol: name !== handle ? 'NVDA' : i % 2 ? 'MSFT' : 'AAPL', action: i % 3 === 2 ? 'SELL' : 'BUY', notional: '10000' }, idempotencyKey());
        assert.equal(res.statusCode, 201, res.body);
        clock.t += 3 * DAY;
      }
      if (name === handle) await observeDecisions(store, market, provider, created.value.agent.id);
      else clock.t = t0 + 90 * DAY;
    }
  });
  after(async () => {
    await ledger.close();
    await store.close();
    await kind.cleanup();
  });

  const get = (url: string, headers: Record<string, string> = {}) => ledger.app.inject({ method: 'GET', url, headers });

  it('answers the model portfolio by default: documented shape, synthetic, cached with an ETag', async () => {
    const res = await get(`/v1/agents/${handle}/performance`);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.headers['cache-control'], 'public, max-age=5');
    assert.equal(res.headers['access-control-allow-origin'], '*');
    const body = res.json();
    validPerformance(body);
    assert.equal(body.portfolio, 'model');
    assert.equal(body.status, 'computed');
    assert.equal(body.synthetic, true);
    assert.ok(body.caveats.some((c: { code: string }) => c.code === 'synthetic_prices'));
    assert.ok(body.series.length > 40);
    assert.equal(body.links.csv, `http://localhost:8080/v1/agents/${handle}/performance?portfolio=model&format=csv`);
    const etag = String(res.headers.etag);
    assert.ok(etag);
    const again = await get(`/v1/agents/${handle}/performance?portfolio=model`, { 'if-none-match': etag });
    assert.equal(again.statusCode, 304);
  });

  it('answers the series as CSV with the documented columns, the same figures as the JSON', async () => {
    const json = (await get(`/v1/agents/${handle}/performance`)).json();
    const res = await get(`/v1/agents/${handle}/performance?format=csv`);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/csv/);
    const lines = res.body.trimEnd().split('\r\n');
    assert.equal(lines[0], 'date,value,daily_return,benchmark_value');
    assert.deepEqual(lines.slice(1), json.series.map((s: Record<string, string>) => `${s.date},${s.value},${s.daily_return},${s.benchmark_value}`));
  });

  it('the broker portfolio says there is no execution', async () => {
    const body = (await get(`/v1/agents/${handle}/performance?portfolio=broker`)).json();
    validPerformance(body);
    assert.deepEqual([body.status, body.code], ['unavailable', 'no_records']);
  });

  it('refuses a bad portfolio or format (400) and an unknown agent (404)', async () => {
    for (const q of ['portfolio=account', 'format=xml', 'extra=1']) {
      const res = await get(`/v1/agents/${handle}/performance?${q}`);
      assert.equal(res.statusCode, 400, q);
      assert.equal(res.json().error.code, 'invalid_request');
    }
    const missing = await get('/v1/agents/no-such-agent/performance');
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().error.code, 'not_found');
  });

  it('the profile carries the portfolio, the performance summary and the caveats', async () => {
    const res = await get(`/v1/agents/${handle}`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    validProfile(body);
    assert.equal(body.portfolios.length, 1);
    assert.equal(body.portfolios[0].portfolio, 'model');
    assert.equal(body.portfolios[0].synthetic, true);
    assert.equal(body.performance.model.status, 'computed');
    assert.equal(body.performance.broker.status, 'unavailable');
    const codes = body.caveats.map((c: { code: string }) => c.code);
    for (const code of ['demo_agent', 'synthetic_prices', 'model_portfolio', 'benchmark_total_return', 'corporate_actions_applied', 'broker_performance_unavailable', 'records_state_intent_only']) assert.ok(codes.includes(code), code);
    assert.ok(!codes.includes('performance_not_computed'));
  });

  it('a provider failure with nothing stored is 502 provider_error; the profile still answers, saying why', async () => {
    provider.failing = true;
    try {
      const res = await get(`/v1/agents/${handle}-x/performance`);
      // its decisions were never observed: the first awaits its price, nothing is fetched;
      // once priced, NVDA's closes are not cached (the benchmark's and the other agent's are)
      assert.equal(res.json().code, 'awaiting_price');
      await observeDecisions(store, market, new SyntheticMarketData('endpoint-test'), (await store.findAgentByHandle(`${handle}-x`))!.id);
      const failed = await get(`/v1/agents/${handle}-x/performance`);
      assert.equal(failed.statusCode, 502);
      assert.equal(failed.json().error.code, 'provider_error');
      assert.equal(failed.json().error.type, 'api_error');
      assert.ok(failed.json().error.request_id);
      const profile = await get(`/v1/agents/${handle}-x`);
      assert.equal(profile.statusCode, 200);
      validProfile(profile.json());
      assert.equal(profile.json().performance, null);
      assert.ok(profile.json().caveats.some((c: { code: string; message: string }) => c.code === 'model_performance_unavailable' && /502/.test(c.message)));
    } finally {
      provider.failing = false;
    }
    const recovered = await get(`/v1/agents/${handle}-x/performance`);
    assert.equal(recovered.statusCode, 200);
    assert.equal(recovered.json().status, 'computed');
  });
});
