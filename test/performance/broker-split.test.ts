// Issue 39's account, end to end on both stores, against the Alpaca trading and market-data
// simulators: 10 SPLT bought at 1,000, a 10:1 split (Alpaca's REMOVE and ADD rows, dated the
// ex-date), a 25.00 dividend, SPY paying 1.50 meanwhile. The market facts job asks for SPLT's and
// SPY's corporate actions though no decision priced them (a symbol held only through a broker);
// each split and dividend is applied once, from the account's rows where the report's method can
// use them, else from the market's actions, and each event says which; the benchmark moves by its
// total return on SPY's ex-date; the funded account (time-weighted) ends with the same holdings;
// the same account at a SnapTrade broker (its SPLIT row's units undocumented) takes the split from
// the market; `ledger verify --performance` recomputes every report.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import { AlpacaMarketData } from '../../src/market/alpaca.ts';
import { MarketFacts } from '../../src/market/facts.ts';
import { performanceOf } from '../../src/performance/service.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { verifyPerformance } from '../../src/verify/performance.ts';
import { splitAccount, startAlpacaSim, type AlpacaSim } from '../sim/alpaca.ts';
import { snapTradeSplitAccount, startSnapTradeSim, type SnapTradeSim } from '../sim/snaptrade.ts';
import { startAlpacaDataSim, type AlpacaDataSim, type SimBar, type SimTrade } from '../sim/alpaca-data.ts';
import { forEachStore } from '../support/stores.ts';
import { brokerTestApp, connectAlpaca, type BrokerTestApp } from '../brokers/wiring-support.ts';

const KEY = { keyId: 'PKDATA39', secret: 'sim-data-secret-39' };
const NOW = new Date('2026-03-06T15:00:00.000Z');
const DAY = 86_400_000;
const DATES = Array.from({ length: 32 }, (_, i) => new Date(Date.parse('2026-02-02') + i * DAY)).filter((d) => ![0, 6].includes(d.getUTCDay())).map((d) => d.toISOString().slice(0, 10));
const LAST = DATES.at(-1) as string;

/** SPLT about 1,000 before its ex-date 2026-02-10, about 100 from it, 104.261 on the last day; SPY about 600, 1.50 lower from its ex-date 2026-02-17. */
const close = (symbol: string, date: string, i: number): number => {
  if (symbol === 'SPY') return 600 + 0.5 * i - (date >= '2026-02-17' ? 1.5 : 0);
  if (date === LAST) return 104.261;
  return date < '2026-02-10' ? 1000 + 2 * i : 100.6 + 0.15 * i;
};
const closeOf = (symbol: string, date: string) => close(symbol, date, DATES.indexOf(date));
const bars = (symbol: string): SimBar[] => DATES.map((d, i) => ({ t: `${d}T05:00:00Z`, o: close(symbol, d, i), h: close(symbol, d, i), l: close(symbol, d, i), c: close(symbol, d, i) }));
const trades = (symbol: string): SimTrade[] => DATES.map((d, i) => ({ t: `${d}T15:00:00.000Z`, p: close(symbol, d, i) }));

const ACTIONS = {
  forward_splits: [{ id: '00000000-0000-4000-a000-000000003901', symbol: 'SPLT', cusip: '000000SP2', new_rate: 10, old_rate: 1, process_date: '2026-02-10', ex_date: '2026-02-10', record_date: '2026-02-06', payable_date: '2026-02-09' }],
  cash_dividends: [
    { id: '00000000-0000-4000-a000-000000003902', symbol: 'SPLT', cusip: '000000SP2', rate: 0.25, special: false, foreign: false, process_date: '2026-02-20', ex_date: '2026-02-13', record_date: '2026-02-13', payable_date: '2026-02-20' },
    { id: '00000000-0000-4000-a000-000000003903', symbol: 'SPY', cusip: '78462F103', rate: 1.5, special: false, foreign: false, process_date: '2026-02-27', ex_date: '2026-02-17', record_date: '2026-02-17', payable_date: '2026-02-27' },
  ],
};

type Event = { date: string; phase: string; type: string; source: string; symbol: string; quantity_after: string; amount: string | null };
type Doc = {
  basis: string; start_value: string; series: Array<{ date: string; value: string; daily_return: string; benchmark_value: string | null }>;
  holdings: { cash: string; positions: Array<{ symbol: string; quantity: string }> }; caveats: Array<{ code: string; message: string }>;
  corporate_actions: { events: Event[]; missing?: unknown[] }; benchmark: { basis: string; missing?: unknown };
};

await forEachStore('a broker account through a split and a dividend (issue 39)', (kind) => {
  let trading: AlpacaSim;
  let snap: SnapTradeSim;
  let data: AlpacaDataSim;
  let store: LedgerStore;
  let t: BrokerTestApp;
  let base: string;
  let closeServer = async () => undefined as void;
  const agents: Record<'funded' | 'midLife' | 'noRows' | 'snapTrade', { handle: string }> = {} as never;
  const doc = async (handle: string) => (await (await fetch(`${base}/v1/agents/${handle}/performance?portfolio=broker`)).json()) as Doc;

  before(async () => {
    trading = await startAlpacaSim({ scenario: splitAccount({ deposit: true }) });
    data = await startAlpacaDataSim({ ...KEY, now: () => NOW, bars: { SPLT: bars('SPLT'), SPY: bars('SPY') }, trades: { SPLT: trades('SPLT'), SPY: trades('SPY') }, actions: ACTIONS });
    store = await kind.open();
    snap = await startSnapTradeSim({ scenario: snapTradeSplitAccount() });
    const p = snap.scenario.partner;
    t = await brokerTestApp(store, {
      LEDGER_ALPACA_TRADING_URL: trading.url, LEDGER_SNAPTRADE_URL: snap.url, LEDGER_SNAPTRADE_CLIENT_ID: p.clientId, LEDGER_SNAPTRADE_CONSUMER_KEY: p.consumerKey,
    }, '2026-03-06T12:00:00.000Z');
    const connect = async (name: keyof typeof agents, scenario: ReturnType<typeof splitAccount>) => {
      trading.scenario.activities = scenario.activities;
      const agent = await t.agent();
      const synced = await t.brokers.syncNow(await connectAlpaca(t, agent.secret, trading));
      assert.equal(synced.kind, 'synced', JSON.stringify(synced));
      agents[name] = agent;
    };
    await connect('funded', splitAccount({ deposit: true }));
    await connect('midLife', splitAccount({ deposit: false }));
    await connect('noRows', splitAccount({ deposit: false, rows: false }));
    agents.snapTrade = await connectSnapTrade(t);

    const provider = new AlpacaMarketData({ ...KEY, baseUrl: data.url, now: () => NOW, retryDelayMs: 1 });
    const facts = new MarketFacts({ store: store.market, providers: { alpaca: provider }, benchmark: 'SPY', brokerSource: 'alpaca', now: () => NOW });
    for (let i = 0; i < 10 && !(await facts.step()); i++);
    assert.equal(facts.status().state, 'current', JSON.stringify(facts.status()));

    const clock = { now: () => NOW };
    const performance = performanceOf(store, { provider, seed: 'issue-39', benchmark: 'SPY', clock });
    const ledger = await buildApp(compose({ store, config: loadConfig({ LEDGER_DATABASE_URL: 'sqlite::memory:' }), clock, checkSignature: signatureChecker(store) }, { performance }));
    base = await ledger.app.listen({ port: 0, host: '127.0.0.1' });
    closeServer = () => ledger.close();
  });
  after(async () => {
    await closeServer();
    await t?.close();
    await store?.close();
    await trading?.close();
    await snap?.close();
    await data?.close();
    await kind.cleanup();
  });

  it('the market facts job asked for the corporate actions of SPLT (held only through the broker) and of SPY', () => {
    const asked = data.requests.filter((r) => r.path === '/v1/corporate-actions').flatMap((r) => (r.query.get('symbols') ?? '').split(','));
    assert.ok(asked.includes('SPLT') && asked.includes('SPY'), asked.join(','));
  });

  describe('connected mid-life (no deposit: trade-derived)', () => {
    it('shows no fall on the split\'s ex-date and the true gain since the buy (+451.10)', async () => {
      const d = await doc(agents.midLife.handle);
      assert.equal(d.basis, 'trade_derived');
      const exDay = d.series.find((r) => r.date === '2026-02-10')!;
      assert.ok(Number(exDay.daily_return) > -0.02, `daily return on the ex-date ${exDay.daily_return}`);
      for (const r of d.series) assert.ok(Number(r.daily_return) > -0.02, `${r.date}: ${r.daily_return}`);
      const gain = Number(d.series.at(-1)!.value) - Number(d.start_value);
      assert.ok(Math.abs(gain - 451.1) <= 4.511, `gain ${gain}`);
      assert.deepEqual(d.holdings.positions.map((p) => [p.symbol, p.quantity]), [['SPLT', '100']]);
    });

    it('lists the split and the dividend once each, from the account\'s rows', async () => {
      const d = await doc(agents.midLife.handle);
      const applied = d.corporate_actions.events.filter((e) => e.symbol === 'SPLT' && e.phase === 'ex');
      assert.deepEqual(applied.map((e) => [e.date, e.type, e.source, e.quantity_after, e.amount]), [['2026-02-10', 'forward_split', 'account', '100', null], ['2026-02-20', 'cash_dividend', 'account', '100', '25']]);
    });

    it('moves the benchmark by SPY\'s total return on its ex-date, and says total return (the facts job asked about SPY\'s actions for the whole period)', async () => {
      const d = await doc(agents.midLife.handle);
      assert.equal(d.benchmark.basis, 'total_return');
      assert.equal(d.benchmark.missing, null);
      assert.deepEqual(d.corporate_actions.missing, []);
      const codes = d.caveats.map((c) => c.code);
      assert.ok(codes.includes('benchmark_total_return') && codes.includes('trade_derived') && !codes.includes('time_weighted'), codes.join());
      const i = d.series.findIndex((r) => r.date === '2026-02-17');
      const r = Number(d.series[i]!.benchmark_value) / Number(d.series[i - 1]!.benchmark_value) - 1;
      const previous = d.series[i - 1]!.date;
      const total = (closeOf('SPY', '2026-02-17') + 1.5) / closeOf('SPY', previous) - 1;
      const price = closeOf('SPY', '2026-02-17') / closeOf('SPY', previous) - 1;
      assert.ok(price < 0 && total > 0, 'the two returns differ in sign: the test tells them apart');
      assert.ok(Math.abs(r - total) < 1e-6, `benchmark ${r}, total return ${total}, price return ${price}`);
    });
  });

  describe('the same account without split and dividend rows', () => {
    it('takes the split and the dividend from the market\'s corporate actions, to the same holdings and gain', async () => {
      const d = await doc(agents.noRows.handle);
      assert.equal(d.basis, 'trade_derived');
      const applied = d.corporate_actions.events.filter((e) => e.symbol === 'SPLT' && e.phase === 'ex');
      assert.deepEqual(applied.map((e) => [e.date, e.type, e.source, e.quantity_after]), [['2026-02-10', 'forward_split', 'market', '100'], ['2026-02-13', 'cash_dividend', 'market', '100']]);
      assert.deepEqual(d.holdings.positions.map((p) => [p.symbol, p.quantity]), [['SPLT', '100']]);
      const gain = Number(d.series.at(-1)!.value) - Number(d.start_value);
      assert.ok(Math.abs(gain - 451.1) <= 4.511, `gain ${gain}`);
    });
  });

  describe('funded by a deposit first (time-weighted)', () => {
    it('ends with the same holdings, the split and dividend from the account\'s rows, once', async () => {
      const d = await doc(agents.funded.handle);
      assert.equal(d.basis, 'time_weighted');
      const codes = d.caveats.map((c) => c.code);
      assert.ok(codes.includes('time_weighted') && !codes.includes('trade_derived') && codes.includes('benchmark_total_return'), codes.join());
      assert.equal(d.benchmark.basis, 'total_return');
      assert.deepEqual(d.holdings.positions.map((p) => [p.symbol, p.quantity]), [['SPLT', '100']]);
      assert.equal(d.holdings.cash, '2025', '12,000 in, 10,000 for 10 SPLT, 25.00 dividend');
      const events = d.corporate_actions.events.filter((e) => e.symbol === 'SPLT');
      assert.deepEqual(events.map((e) => [e.date, e.type, e.source]), [['2026-02-10', 'forward_split', 'account'], ['2026-02-20', 'cash_dividend', 'account']]);
      for (const r of d.series) assert.ok(Number(r.daily_return) > -0.02, `${r.date}: ${r.daily_return}`);
    });
  });

  describe('a SnapTrade account with a split', () => {
    it('takes the split from the market\'s actions (its SPLIT row cannot be applied) and the dividend from its row: a true curve', async () => {
      const d = await doc(agents.snapTrade.handle);
      assert.equal(d.basis, 'trade_derived');
      const applied = d.corporate_actions.events.filter((e) => e.symbol === 'SPLT' && e.phase === 'ex');
      assert.deepEqual(applied.map((e) => [e.date, e.type, e.source, e.quantity_after, e.amount]), [['2026-02-10', 'forward_split', 'market', '100', null], ['2026-02-20', 'cash_dividend', 'account', '100', '25']]);
      for (const r of d.series) assert.ok(Number(r.daily_return) > -0.02, `${r.date}: ${r.daily_return}`);
      const gain = Number(d.series.at(-1)!.value) - Number(d.start_value);
      assert.ok(Math.abs(gain - 451.1) <= 4.511, `gain ${gain}`);
    });
  });

  describe('ledger verify --performance', () => {
    for (const name of ['funded', 'midLife', 'noRows', 'snapTrade'] as const) {
      it(`recomputes the ${name} account's broker report`, async () => {
        const out: string[] = [];
        assert.equal(await verifyPerformance(`${base}/agents/${agents[name].handle}`, (l) => out.push(l)), 0, out.join('\n'));
        assert.ok(out.some((l) => l.startsWith('ok   performance broker')), out.join('\n'));
      });
    }
  });
});

/** Connects the simulator's SnapTrade account to a new agent through the portal and imports it. */
async function connectSnapTrade(t: BrokerTestApp): Promise<{ handle: string }> {
  const agent = await t.agent();
  const start = await t.app.inject({ method: 'POST', url: '/v1/brokers/snaptrade', headers: { authorization: `Bearer ${agent.secret}`, 'content-type': 'application/json' }, payload: '{}' });
  assert.equal(start.statusCode, 201, start.body);
  const portal = await fetch(start.json().portal_url, { redirect: 'manual' });
  const back = new URL(portal.headers.get('location')!);
  const done = await t.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` });
  assert.equal(done.statusCode, 200, done.body);
  await t.brokers.drain();
  return agent;
}
