// The pricing job keeps the market facts (issue 25), with the Alpaca data simulator, on both
// stores: once nothing is pending, the corporate actions and the raw closes of every priced symbol
// and of the benchmark are fetched and stored (a split's raw close drops on its ex-date); a later
// pass stores a provider's correction as a new revision and nothing for what did not change; a 429
// waits its Retry-After and a 5xx backs off, each said once, shown on the status, pricing unharmed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AlpacaMarketData } from '../../src/market/alpaca.ts';
import { PricingJob } from '../../src/market/pricing.ts';
import type { MarketStore } from '../../src/market/port.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { postDecision, testApp, type TestApp } from '../support/app.ts';
import { startAlpacaDataSim, type AlpacaDataSim, type SimAction } from '../sim/alpaca-data.ts';

const KEY = { keyId: 'PKFACTS', secret: 'sim-secret-facts' };
const T0 = Date.parse('2026-03-16T15:00:00.000Z'); // Monday, the market open
const HOUR = 3_600_000;

/** A daily bar labelled New York midnight of its day (EDT from 2026-03-08). */
const bar = (date: string, c: number) => ({ t: `${date}T0${date < '2026-03-08' ? 5 : 4}:00:00Z`, o: c, h: c, l: c, c });

function actions(): Record<string, SimAction[]> {
  return {
    forward_splits: [{ id: 'b7e2c0de-0000-4000-8000-000000000001', symbol: 'NVDA', cusip: '67066G104', new_rate: 10, old_rate: 1, process_date: '2026-03-18', ex_date: '2026-03-18', record_date: '2026-03-13', payable_date: '2026-03-17' }],
    cash_dividends: [
      { id: 'b7e2c0de-0000-4000-8000-000000000002', symbol: 'NVDA', cusip: '67066G104', rate: 0.01, special: false, foreign: false, process_date: '2026-03-23', ex_date: '2026-03-19', record_date: '2026-03-19', payable_date: '2026-03-23' },
      { id: 'b7e2c0de-0000-4000-8000-000000000003', symbol: 'SPY', cusip: '78462F103', rate: 1.7361, special: false, foreign: false, process_date: '2026-03-20', ex_date: '2026-03-20', record_date: '2026-03-20', payable_date: '2026-03-20' },
      { id: 'b7e2c0de-0000-4000-8000-000000000004', symbol: 'MSFT', cusip: '594918104', rate: 0.83, special: false, foreign: false, process_date: '2026-03-20', ex_date: '2026-03-19', payable_date: '2026-03-20' },
    ],
  };
}

await forEachStore('the pricing job keeps the market facts', (kind) => {
  let store: LedgerStore;
  let market: MarketStore;
  let t: TestApp;
  let sim: AlpacaDataSim;
  let now = T0 + 9 * 24 * HOUR; // Wednesday 2026-03-25
  const data = actions();
  const notices: Array<{ level: string; message: string }> = [];
  let job: PricingJob;

  before(async () => {
    sim = await startAlpacaDataSim({
      ...KEY,
      now: () => new Date(now),
      actions: data,
      trades: { NVDA: [{ t: '2026-03-16T14:59:00Z', p: 910.5 }], 'BTC/USD': [{ t: '2026-03-16T14:59:30Z', p: 71000 }] },
      bars: {
        NVDA: [bar('2026-03-13', 900), bar('2026-03-16', 910), bar('2026-03-17', 920), bar('2026-03-18', 92.5), bar('2026-03-19', 93.25), bar('2026-03-24', 95)],
        SPY: [bar('2026-03-06', 600), bar('2026-03-16', 605), bar('2026-03-20', 603.5)],
      },
    });
    store = await kind.open();
    market = store.market;
    let clock = T0;
    t = await testApp(store, { clock: { now: () => new Date(clock++) } });
    const provider = new AlpacaMarketData({ ...KEY, baseUrl: sim.url, now: () => new Date(now), retryDelayMs: 1 });
    job = new PricingJob({
      market: provider, store: market, now: () => new Date(now), onNotice: (level, message) => notices.push({ level, message }),
      facts: { benchmark: 'SPY', everyMs: 6 * HOUR, backoffMs: 60_000 },
    });
  });
  after(async () => {
    await t?.close();
    await store?.close();
    await sim?.close();
    await kind.cleanup();
  });

  /** Rounds until a pass ends (or `rounds` run). */
  async function pass(rounds = 10): Promise<void> {
    const last = job.status().facts?.last_pass_at;
    for (let i = 0; i < rounds && job.status().facts?.last_pass_at === last; i++) await job.round();
  }

  test('with nothing pending: the corporate actions and raw closes of every priced symbol and of the benchmark, stored', async () => {
    const a = await t.agent();
    for (const symbol of ['NVDA', 'BTC/USD']) assert.equal((await postDecision(t, a.secret, { symbol, action: 'BUY', quantity: 1, ...(symbol === 'BTC/USD' ? { asset_class: 'CRYPTO' } : {}) })).statusCode, 201);
    assert.equal(job.status().facts?.state, 'due');
    await job.round(); // prices the two decisions; facts wait for a round with nothing pending
    assert.equal(sim.requests.filter((r) => r.path === '/v1/corporate-actions').length, 0, 'pricing first');
    await pass();
    const facts = job.status().facts!;
    assert.equal(facts.state, 'current', JSON.stringify(facts));
    assert.equal(facts.symbols, 3, 'NVDA, BTC/USD and the benchmark');
    assert.equal(facts.last_pass_at, new Date(now).toISOString());

    const asked = sim.requests.filter((r) => r.path === '/v1/corporate-actions');
    assert.deepEqual(asked.map((r) => [r.query.get('symbols'), r.query.get('start'), r.query.get('end')]), [['NVDA,SPY', '2026-03-16', '2026-03-25']],
      'stocks only, from the first decision\'s date to today');
    assert.deepEqual((await market.corporateActions('alpaca', 'NVDA')).map((x) => [x.type, x.ex_date, x.old_rate, x.new_rate, x.rate]),
      [['forward_split', '2026-03-18', '1', '10', null], ['cash_dividend', '2026-03-19', null, null, '0.01']]);
    assert.deepEqual((await market.corporateActions('alpaca', 'SPY')).map((x) => [x.type, x.rate]), [['cash_dividend', '1.7361']]);
    assert.deepEqual(await market.corporateActions('alpaca', 'MSFT'), [], 'only the symbols asked for');
    assert.equal(facts.actions_added, 3);
    assert.deepEqual(await market.actionsKnown('alpaca', ['NVDA', 'SPY', 'BTC/USD', 'MSFT']), {
      NVDA: { from: '2026-03-16', through: '2026-03-25' }, SPY: { from: '2026-03-16', through: '2026-03-25' },
    }, 'the days asked about, kept for the labels of the reports: stocks asked about only');

    assert.deepEqual(await market.closes('alpaca', 'NVDA', '2026-01-01', '2026-12-31'), [
      { date: '2026-03-13', close: '900' }, { date: '2026-03-16', close: '910' }, { date: '2026-03-17', close: '920' },
      { date: '2026-03-18', close: '92.5' }, { date: '2026-03-19', close: '93.25' }, { date: '2026-03-24', close: '95' },
    ], 'raw closes: the split shows on its ex-date, the closes before it are as they traded');
    assert.deepEqual((await market.closes('alpaca', 'SPY', '2026-01-01', '2026-12-31')).map((c) => c.date), ['2026-03-06', '2026-03-16', '2026-03-20'],
      'the benchmark from ten days before the first decision');
    for (const r of sim.requests.filter((x) => x.path === '/v2/stocks/bars')) assert.equal(r.query.get('adjustment'), 'raw');
    assert.equal(job.status().state, 'idle');
  });

  test('the next pass, not before it is due: a correction is a new revision, the rest writes nothing', async () => {
    sim.requests.length = 0;
    await job.round();
    assert.equal(sim.requests.length, 0, 'a pass ran: the next is in six hours');
    data.forward_splits![0] = { ...data.forward_splits![0]!, new_rate: 4 }; // the provider corrects the ratio
    now += 6 * HOUR;
    await pass();
    assert.equal(job.status().facts?.state, 'current');
    const [split] = await market.corporateActions('alpaca', 'NVDA');
    assert.deepEqual([split!.new_rate, split!.revision], ['4', 2]);
    const history = await market.corporateActionHistory('alpaca', 'NVDA');
    assert.deepEqual(history.map((x) => [x.type, x.revision, x.new_rate, x.superseded_by !== null]),
      [['forward_split', 1, '10', true], ['cash_dividend', 1, null, false], ['forward_split', 2, '4', false]]);
    assert.equal(job.status().facts?.actions_revised, 1);
    assert.deepEqual((await market.actionsKnown('alpaca', ['NVDA'])).NVDA, { from: '2026-03-16', through: '2026-03-25' }, 'a pass the same day keeps the days asked about');
    assert.match(notices.at(-1)!.message, /1 corporate action corrected by alpaca/);
  });

  test('429: waits its Retry-After, said once; 5xx: backs off; pricing goes on; then the pass completes', async () => {
    notices.length = 0;
    now += 6 * HOUR;
    sim.script.push({ status: 429, body: { message: 'too many requests' }, headers: { 'retry-after': '30' } });
    await job.round();
    let facts = job.status().facts!;
    assert.equal(facts.state, 'waiting');
    assert.match(String(facts.last_error), /^rate_limited: /);
    assert.equal(facts.retry_at, new Date(now + 30_000).toISOString(), 'the provider\'s Retry-After');
    assert.equal(job.status().failing_since, null, 'pricing is not failing');
    sim.requests.length = 0;
    await job.round();
    assert.equal(sim.requests.length, 0, 'nothing asked before retry_at');
    now += 30_000;
    sim.script.push({ status: 503 }, { status: 503 });
    await job.round();
    facts = job.status().facts!;
    assert.equal(facts.state, 'waiting');
    assert.match(String(facts.last_error), /^provider_error: Alpaca answered 503/);
    assert.equal(facts.retry_at, new Date(now + 120_000).toISOString(), 'backoff doubles per failing step');
    assert.deepEqual(notices.map((n) => n.level), ['info'], 'one notice for the outage');
    const a = await t.agent();
    assert.equal((await postDecision(t, a.secret, { symbol: 'NVDA', action: 'SELL', quantity: 1 })).statusCode, 201);
    await job.round();
    assert.equal(await market.countPendingPrices(10), 0, 'decisions are priced while the facts wait');
    now += 120_000;
    await pass();
    facts = job.status().facts!;
    assert.equal(facts.state, 'current');
    assert.equal(facts.failing_since, null);
    assert.match(notices.at(-1)!.message, /answers again/);
  });
});
