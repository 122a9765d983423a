// perf_v2 end to end, over HTTP on both stores: the service as buildApp wires it (performanceOf)
// reads the corporate actions stored by the pricing job for the agent's price source, so a
// synthetic 3-for-1 split of a held symbol changes the quantity on its ex-date instead of showing a
// 67 % fall; the benchmark is its total return, its price return with benchmark_return=price.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Ajv } from 'ajv';
import { Decimal } from 'decimal.js';
import { buildApp, type LedgerApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { PerformanceResponse } from '../../src/api/routes/public/performance-schemas.ts';
import { loadConfig } from '../../src/config.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import { DEFAULT_SYNTHETIC_SEED } from '../../src/market/select.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { idempotencyKey, postDecision } from '../support/app.ts';
import { observeDecisions } from '../support/observe.ts';
import { forEachStore } from '../support/stores.ts';

/** The synthetic model's META (seed decision-ledger) splits 3-for-1 with this ex-date. */
const EX_DATE = '2024-01-24';

const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat('date-time', true);
ajv.addFormat('uri', true);
const checkPerformance = ajv.compile(PerformanceResponse);
const validPerformance = (body: unknown) => assert.ok(checkPerformance(body), JSON.stringify(checkPerformance.errors?.slice(0, 5)));

type Row = { date: string; value: string; daily_return: string; benchmark_value: string | null };

await forEachStore('perf_v2 over HTTP: corporate actions from the store', (kind) => {
  let store: LedgerStore;
  let ledger: LedgerApp;
  const provider = new SyntheticMarketData(DEFAULT_SYNTHETIC_SEED);
  const clock = { t: Date.UTC(2024, 0, 10, 15, 0, 0), now() { return new Date(this.t); } };
  const handle = `split-${kind.name}`;
  const get = (url: string) => ledger.app.inject({ method: 'GET', url });

  before(async () => {
    store = await kind.open();
    const market = store.market;
    ledger = await buildApp(compose({ store, config: loadConfig({ LEDGER_DATABASE_URL: 'sqlite::memory:' }), clock, checkSignature: signatureChecker(store) }, { market: provider }));
    const created = await new Operators(store, clock).createAgent({ handle, demo: true });
    assert.ok(created.ok);
    const res = await postDecision(ledger, created.value.apiKey.secret, { symbol: 'META', action: 'BUY', notional: '50000' }, idempotencyKey());
    assert.equal(res.statusCode, 201, res.body);
    await observeDecisions(store, market, provider, created.value.agent.id);
    // The pricing job's facts, learned before the ex-date (so nothing is restated).
    const actions = await provider.corporateActions(['META', 'SPY'], '2024-01-01', '2024-02-29');
    assert.ok(actions.ok);
    await market.saveCorporateActions(actions.value, '2024-01-10T16:00:00.000Z');
    await market.saveActionsKnown('synthetic', { META: { from: '2024-01-01', through: '2024-02-29' }, SPY: { from: '2024-01-01', through: '2024-02-29' } }); // and the days it asked about
    clock.t = Date.UTC(2024, 1, 20, 15, 0, 0);
  });
  after(async () => {
    await ledger.close();
    await store.close();
    await kind.cleanup();
  });

  it('applies the split on its ex-date: the quantity triples, the value is continuous, the event is listed', async () => {
    const raw = await provider.dailyBars('META', '2024-01-22', '2024-01-25');
    assert.ok(raw.ok);
    const [before, on] = [raw.value.bars.find((b) => b.date < EX_DATE && b.date >= '2024-01-23'), raw.value.bars.find((b) => b.date === EX_DATE)];
    assert.ok(new Decimal(on!.close).div(before!.close).lt(0.5), 'the raw close falls by about two thirds: perf_v1 would show it as a loss');

    const res = await get(`/v1/agents/${handle}/performance`);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    validPerformance(body);
    assert.equal(body.method, 'perf_v2');
    assert.equal(body.benchmark.basis, 'total_return');
    const split = body.corporate_actions.events.find((e: { symbol: string; type: string }) => e.symbol === 'META' && e.type === 'forward_split');
    assert.ok(split, JSON.stringify(body.corporate_actions));
    assert.equal(split.date, EX_DATE);
    assert.equal(split.ratio, '3:1');
    assert.ok(new Decimal(split.quantity_after).eq(new Decimal(split.quantity_before).times(3)));
    assert.equal(split.cash_after, split.cash_before);
    assert.equal(body.restatement, null, 'learned before its ex-date: nothing restated');
    assert.ok(new Decimal(body.holdings.positions[0].quantity).eq(split.quantity_after));
    const series = body.series as Row[];
    const exRow = series.find((r) => r.date === EX_DATE)!;
    assert.ok(new Decimal(exRow.daily_return).abs().lt(0.15), `value continuous across the ex-date: ${JSON.stringify(exRow)}`);
    assert.ok(series.every((r) => new Decimal(r.daily_return).gt(-0.3)), 'no day loses what the split took off the close');
    const codes = body.caveats.map((c: { code: string }) => c.code);
    for (const code of ['benchmark_total_return', 'corporate_actions_applied']) assert.ok(codes.includes(code), code);
    assert.ok(!codes.includes('corporate_actions_not_applied'));
  });

  it('benchmark_return=price answers the price-return benchmark from the same state', async () => {
    const total = (await get(`/v1/agents/${handle}/performance`)).json();
    const res = await get(`/v1/agents/${handle}/performance?benchmark_return=price`);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    validPerformance(body);
    assert.equal(body.benchmark.basis, 'price_return');
    assert.ok(body.caveats.some((c: { code: string }) => c.code === 'benchmark_price_return'));
    assert.ok(!body.caveats.some((c: { code: string }) => c.code === 'benchmark_total_return'));
    assert.deepEqual(body.series.map((r: Row) => r.value), total.series.map((r: Row) => r.value), 'the portfolio is the same');
    const dividends = (total.benchmark.events as Array<{ type: string }>).filter((e) => e.type === 'cash_dividend');
    if (dividends.length > 0) assert.notDeepEqual(body.series.map((r: Row) => r.benchmark_value), total.series.map((r: Row) => r.benchmark_value));
    const explicit = (await get(`/v1/agents/${handle}/performance?benchmark_return=total`)).json();
    assert.deepEqual(explicit.series, total.series);
  });

  it('refuses an unknown benchmark_return (400, param benchmark_return)', async () => {
    const res = await get(`/v1/agents/${handle}/performance?benchmark_return=dividends`);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error.code, 'invalid_request');
    assert.equal(res.json().error.param, 'benchmark_return');
  });
});
