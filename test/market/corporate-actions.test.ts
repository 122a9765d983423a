// Corporate actions from the providers (issue 25): the Alpaca client against the data simulator
// (every page merged, 429 answered with its Retry-After, a 5xx retried, every type kept under its
// singular name, JSON doubles read as the decimal text they are written with, a dividend found by
// its ex-date although Alpaca dates it by its payable date), raw bars, and the synthetic model's
// actions: deterministic, and consistent with its raw closes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { AlpacaMarketData } from '../../src/market/alpaca.ts';
import type { CorporateAction } from '../../src/market/port.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { SimNumber, startAlpacaDataSim, type AlpacaDataSim, type SimAction } from '../sim/alpaca-data.ts';

const NOW = new Date('2024-09-02T15:00:00.000Z');
const KEY = { keyId: 'PKACTIONS', secret: 'sim-secret-actions' };

/** Alpaca's shapes (reference §1.3), numbers as JSON numbers. */
function actions(): Record<string, SimAction[]> {
  return {
    forward_splits: [{ id: 'f1a0c1e2-0000-4000-8000-000000000001', symbol: 'NVDA', cusip: '67066G104', new_rate: 10, old_rate: 1, process_date: '2024-06-10', ex_date: '2024-06-10', record_date: '2024-06-06', payable_date: '2024-06-07' }],
    reverse_splits: [{ id: 'f1a0c1e2-0000-4000-8000-000000000002', symbol: 'MNTS', old_cusip: '553750105', new_cusip: '553750204', new_rate: 1, old_rate: 50, process_date: '2024-06-12', ex_date: '2024-06-12' }],
    cash_dividends: [
      // Ex-date in the range, processed (paid) two weeks after it ends: found only by widening the window.
      { id: 'f1a0c1e2-0000-4000-8000-000000000003', symbol: 'TPG', cusip: '872657101', rate: 0.61, special: false, foreign: false, process_date: '2024-07-05', ex_date: '2024-06-20', record_date: '2024-06-20', payable_date: '2024-07-05' },
      { id: 'f1a0c1e2-0000-4000-8000-000000000004', symbol: 'NVDA', cusip: '67066G104', rate: new SimNumber('0.12345678901234567891'), special: true, foreign: false, process_date: '2024-06-28', ex_date: '2024-06-11', payable_date: '2024-06-28' },
      // Ex-date before the range, paid within it: not one of the range's actions.
      { id: 'f1a0c1e2-0000-4000-8000-000000000005', symbol: 'TPG', cusip: '872657101', rate: 0.5, special: false, foreign: false, process_date: '2024-06-14', ex_date: '2024-05-20', payable_date: '2024-06-14' },
    ],
    stock_dividends: [{ id: 'f1a0c1e2-0000-4000-8000-000000000006', symbol: 'MSBC', cusip: '000000001', rate: 0.05, process_date: '2024-06-17', ex_date: '2024-06-17' }],
    spin_offs: [{ id: 'f1a0c1e2-0000-4000-8000-000000000007', source_symbol: 'NVDA', source_cusip: '67066G104', source_rate: 19.35, new_symbol: 'NVSP', new_cusip: '000000002', new_rate: 1, process_date: '2024-06-24', ex_date: '2024-06-24' }],
    cash_mergers: [{ id: 'f1a0c1e2-0000-4000-8000-000000000008', acquiree_symbol: 'MNTS', acquiree_cusip: '553750204', acquirer_symbol: 'BIG', rate: new SimNumber('1.5e-1'), process_date: '2024-06-27', effective_date: '2024-06-26' }],
    // A type this client does not know: kept as named.
    capital_gains_distributions: [{ id: 'f1a0c1e2-0000-4000-8000-000000000009', symbol: 'TPG', rate: 1.25, process_date: '2024-06-25', ex_date: '2024-06-25' }],
  };
}

let sim: AlpacaDataSim;
const data = actions();

function client(): AlpacaMarketData {
  return new AlpacaMarketData({ ...KEY, baseUrl: sim.url, now: () => NOW, retryDelayMs: 1 });
}

async function fetchActions(symbols = ['NVDA', 'TPG', 'MNTS', 'MSBC']): Promise<CorporateAction[]> {
  const got = await client().corporateActions(symbols, '2024-06-01', '2024-06-30');
  assert.ok(got.ok, JSON.stringify(got));
  return got.value;
}

before(async () => {
  sim = await startAlpacaDataSim({
    ...KEY,
    now: () => NOW,
    actions: data,
    actionsPageSize: 2,
    bars: {
      NVDA: [
        { t: '2024-06-06T04:00:00Z', o: 1200, h: 1215, l: 1190, c: 1209.98 },
        { t: '2024-06-07T04:00:00Z', o: 1205, h: 1210, l: 1195, c: 1208.88 },
        { t: '2024-06-10T04:00:00Z', o: 120.37, h: 122, l: 118, c: 121.79 },
      ],
    },
  });
});
after(() => sim.close());

describe('Alpaca corporate actions', () => {
  it('asks /v1/corporate-actions for every type, 1000 a page, the window widened forward, and merges every page', async () => {
    sim.requests.length = 0;
    const got = await fetchActions();
    const asked = sim.requests.filter((r) => r.path === '/v1/corporate-actions');
    assert.ok(asked.length >= 5, `${asked.length} pages`);
    for (const [i, r] of asked.entries()) {
      assert.equal(r.query.get('symbols'), 'MNTS,MSBC,NVDA,TPG');
      assert.equal(r.query.get('start'), '2024-06-01');
      assert.equal(r.query.get('end'), '2024-09-02', 'widened past the range end (payable dates lag ex-dates), to today at most');
      assert.equal(r.query.get('limit'), '1000');
      assert.equal(r.query.get('sort'), 'asc');
      assert.equal(r.query.get('types'), null, 'every type');
      assert.equal(r.query.get('page_token'), i === 0 ? null : Buffer.from(String(2 * i)).toString('base64url'));
    }
    assert.deepEqual(got.map((a) => [a.ex_date, a.type, a.symbol]), [
      ['2024-06-10', 'forward_split', 'NVDA'],
      ['2024-06-11', 'cash_dividend', 'NVDA'],
      ['2024-06-12', 'reverse_split', 'MNTS'],
      ['2024-06-17', 'stock_dividend', 'MSBC'],
      ['2024-06-20', 'cash_dividend', 'TPG'],
      ['2024-06-24', 'spin_off', 'NVDA'],
      ['2024-06-25', 'capital_gains_distribution', 'TPG'],
      ['2024-06-26', 'cash_merger', 'MNTS'],
    ], 'kept by ex-date (a merger by its effective date): the dividend ex 2024-05-20 paid in June is not in June');
  });

  it('reads every member as the provider stated it: rates as the decimal text of the JSON number, never a double', async () => {
    const got = await fetchActions();
    const byType = (type: string, symbol: string) => got.find((a) => a.type === type && a.symbol === symbol)!;
    assert.deepEqual(byType('forward_split', 'NVDA'), {
      provider_id: 'f1a0c1e2-0000-4000-8000-000000000001', source: 'alpaca', type: 'forward_split', symbol: 'NVDA', ex_date: '2024-06-10',
      payable_date: '2024-06-07', process_date: '2024-06-10', record_date: '2024-06-06', old_rate: '1', new_rate: '10', rate: null, special: null,
      raw: '{"cusip":"67066G104","ex_date":"2024-06-10","id":"f1a0c1e2-0000-4000-8000-000000000001","new_rate":"10","old_rate":"1","payable_date":"2024-06-07","process_date":"2024-06-10","record_date":"2024-06-06","symbol":"NVDA"}',
    });
    const tpg = byType('cash_dividend', 'TPG');
    assert.deepEqual([tpg.rate, tpg.special, tpg.ex_date, tpg.process_date, tpg.payable_date], ['0.61', false, '2024-06-20', '2024-07-05', '2024-07-05']);
    assert.equal(byType('cash_dividend', 'NVDA').rate, '0.12345678901234567891', 'more digits than a double keeps, all of them');
    assert.equal(byType('cash_dividend', 'NVDA').special, true);
    assert.deepEqual([byType('reverse_split', 'MNTS').old_rate, byType('reverse_split', 'MNTS').new_rate], ['50', '1']);
    assert.equal(byType('stock_dividend', 'MSBC').rate, '0.05');
    assert.equal(byType('cash_merger', 'MNTS').rate, '0.15', 'an exponent form read as plain decimal text');
    assert.match(byType('spin_off', 'NVDA').raw, /"source_rate":"19.35"/);
    assert.equal(byType('capital_gains_distribution', 'TPG').rate, '1.25');
  });

  it('answers rate_limited with the Retry-After of a 429 met on any page', async () => {
    sim.requests.length = 0;
    sim.script.push({ status: 200, rawBody: JSON.stringify({ corporate_actions: {}, next_page_token: 'Mg' }) }, { status: 429, body: { message: 'too many requests' }, headers: { 'retry-after': '7' } });
    const got = await client().corporateActions(['NVDA'], '2024-06-01', '2024-06-30');
    assert.deepEqual(got.ok ? null : got.error, { code: 'rate_limited', retry_after_ms: 7000, message: 'Alpaca answered 429' });
    assert.equal(sim.requests.length, 2, 'not retried by the client: the pricing job waits');
  });

  it('retries a 5xx, then reads every page', async () => {
    sim.script.push({ status: 503 });
    assert.equal((await fetchActions()).length, 8);
    sim.script.push({ status: 500 }, { status: 502 });
    const failed = await client().corporateActions(['NVDA'], '2024-06-01', '2024-06-30');
    assert.ok(!failed.ok && failed.error.code === 'provider_error' && failed.error.status === 502);
  });

  it('answers provider_error for a malformed answer, and refuses a bad symbol or range without asking', async () => {
    sim.script.push({ status: 200, rawBody: '{"corporate_actions":{"cash_dividends":[{"id":"x","symbol":"A","rate":"lots","ex_date":"2024-06-03","process_date":"2024-06-03"}]},"next_page_token":null}' });
    const bad = await client().corporateActions(['A'], '2024-06-01', '2024-06-30');
    assert.ok(!bad.ok && bad.error.code === 'provider_error' && /rate is not a number/.test(bad.error.message), JSON.stringify(bad));
    sim.requests.length = 0;
    const symbol = await client().corporateActions(['not a symbol'], '2024-06-01', '2024-06-30');
    assert.ok(!symbol.ok && symbol.error.code === 'unknown_symbol');
    const range = await client().corporateActions(['A'], '2024-07-01', '2024-06-30');
    assert.ok(!range.ok && range.error.code === 'invalid_request');
    const crypto = await client().corporateActions(['BTC/USD'], '2024-06-01', '2024-06-30');
    assert.deepEqual(crypto, { ok: true, value: [] }, 'crypto has no corporate actions');
    assert.equal(sim.requests.length, 0);
  });

  it('reads a correction under the same id as the provider now states it', async () => {
    const first = (await fetchActions(['TPG'])).find((a) => a.provider_id.endsWith('03'))!;
    data.cash_dividends![0] = { ...data.cash_dividends![0]!, rate: 0.62 };
    const again = (await fetchActions(['TPG'])).find((a) => a.provider_id.endsWith('03'))!;
    assert.deepEqual([first.rate, again.rate], ['0.61', '0.62']);
    assert.notEqual(first.raw, again.raw);
    data.cash_dividends![0] = { ...data.cash_dividends![0]!, rate: 0.61 };
  });

  it('asks bars unadjusted: the raw close drops tenfold on a 10-for-1 ex-date', async () => {
    sim.requests.length = 0;
    const bars = await client().dailyBars('NVDA', '2024-06-06', '2024-06-10');
    assert.ok(bars.ok, JSON.stringify(bars));
    assert.equal(sim.requests[0]!.query.get('adjustment'), 'raw');
    assert.equal(bars.value.adjustment, 'raw');
    assert.deepEqual(bars.value.bars.map((b) => [b.date, b.close]), [['2024-06-06', '1209.98'], ['2024-06-07', '1208.88'], ['2024-06-10', '121.79']]);
  });
});

describe('the synthetic model\'s corporate actions', () => {
  const SYMBOLS = ['AAPL', 'MSFT', 'NVDA', 'SPY', 'TSLA', 'AMZN', 'GOOG', 'META', 'KO', 'XOM', 'JPM', 'WMT'];

  async function all(m: SyntheticMarketData, symbols = SYMBOLS): Promise<CorporateAction[]> {
    const got = await m.corporateActions(symbols, '2015-01-01', '2026-06-30');
    assert.ok(got.ok, JSON.stringify(got));
    return got.value;
  }

  it('are deterministic: the same seed gives the same actions in any order of questions, another seed others', async () => {
    const a = new SyntheticMarketData('actions-seed');
    const b = new SyntheticMarketData('actions-seed');
    await b.dailyBars('MSFT', '2024-01-01', '2024-02-01'); // b walks in another order
    await b.corporateActions(['KO'], '2020-01-01', '2020-12-31');
    const first = await all(a);
    assert.deepEqual(await all(b), first);
    assert.notDeepEqual(await all(new SyntheticMarketData('other-seed')), first);
    for (const x of first) {
      assert.equal(x.source, 'synthetic');
      assert.match(x.provider_id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
    assert.deepEqual(await a.corporateActions(['BTC/USD'], '2015-01-01', '2026-06-30'), { ok: true, value: [] });
  });

  it('include forward and reverse splits, cash dividends (some special) and stock dividends, each with Alpaca\'s dates', async () => {
    const got = await all(new SyntheticMarketData('actions-seed'));
    const types = new Set(got.map((a) => `${a.type}${a.special ? ' special' : ''}`));
    for (const t of ['forward_split', 'reverse_split', 'cash_dividend', 'cash_dividend special', 'stock_dividend']) assert.ok(types.has(t), `${t} in ${[...types].join(', ')}`);
    for (const a of got) {
      if (a.type === 'cash_dividend') {
        assert.equal(a.process_date, a.payable_date, 'a cash dividend is processed on its payable date');
        assert.ok(a.payable_date! > a.ex_date!);
      } else assert.equal(a.process_date, a.ex_date);
    }
  });

  it('are what the raw closes show: a split divides the previous close on its ex-date, a dividend takes its amount off', async () => {
    const m = new SyntheticMarketData('actions-seed');
    const got = await all(m);
    const checked = new Set<string>();
    for (const a of got) {
      const bars = await m.dailyBars(a.symbol, new Date(Date.parse(a.ex_date!) - 6 * 86_400_000).toISOString().slice(0, 10), a.ex_date!);
      assert.ok(bars.ok);
      const [before, on] = bars.value.bars.slice(-2);
      assert.equal(on!.date, a.ex_date);
      assert.equal(bars.value.adjustment, 'raw');
      const prev = new Decimal(before!.close);
      const expected = a.type === 'cash_dividend' ? prev.minus(a.rate!)
        : a.type === 'stock_dividend' ? prev.div(new Decimal(1).plus(a.rate!))
          : prev.times(a.old_rate!).div(a.new_rate!);
      assert.equal(on!.open, Decimal.max(expected.toDecimalPlaces(2, Decimal.ROUND_HALF_EVEN), '0.01').toFixed(2), `${a.type} of ${a.symbol} on ${a.ex_date}`);
      checked.add(a.type);
    }
    assert.ok(checked.has('forward_split') && checked.has('reverse_split'));
    const split = got.find((a) => a.type === 'forward_split' && a.new_rate === '10') ?? got.find((a) => a.type === 'forward_split')!;
    const trade = await m.latestTrade(split.symbol, new Date(`${split.ex_date}T18:00:00Z`));
    const close = await m.dailyBars(split.symbol, split.ex_date!, split.ex_date!);
    assert.ok(trade.ok && close.ok);
    const ratio = new Decimal(trade.value.price).div(close.value.bars[0]!.close);
    assert.ok(ratio.gt(0.8) && ratio.lt(1.25), 'a trade on the ex-date is on the new basis');
  });
});
