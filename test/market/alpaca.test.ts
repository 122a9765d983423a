// The Alpaca Market Data v2 client against the local simulator: headers, latest and historical
// trades, stale prices, paging of bars, crypto, missing symbols, 429, 5xx, timeouts, size limits,
// the plan's call limit and SIP delay; and provider selection from the environment.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AlpacaMarketData, type AlpacaDataOptions } from '../../src/market/alpaca.ts';
import { selectMarketData } from '../../src/market/select.ts';
import { startAlpacaDataSim, type AlpacaDataSim } from '../sim/alpaca-data.ts';

const NOW = new Date('2026-03-16T15:00:00.000Z'); // Monday 11:00 New York
const KEY = { keyId: 'PKTEST', secret: 'sim-secret' };

let sim: AlpacaDataSim;

function client(extra: Partial<AlpacaDataOptions> = {}): AlpacaMarketData {
  return new AlpacaMarketData({ ...KEY, baseUrl: sim.url, now: () => NOW, retryDelayMs: 1, ...extra });
}

function dailyBars(from: number, days: number, close0: number) {
  return Array.from({ length: days }, (_, i) => {
    const t = new Date(Date.UTC(2026, 0, from + i, 5)).toISOString().replace('.000Z', 'Z'); // New York midnight (EST)
    const c = close0 + i;
    return { t, o: c - 0.5, h: c + 1, l: c - 1, c };
  });
}

before(async () => {
  sim = await startAlpacaDataSim({
    ...KEY,
    now: () => NOW,
    freePlan: true,
    pageSize: 4,
    trades: {
      AAPL: [
        { t: '2026-03-16T14:58:00.123456789Z', p: 250.1 },
        { t: '2026-03-16T14:59:59.5Z', p: 250.25 },
        { t: '2026-03-16T14:59:59.9Z', p: 250.3 }, // after the instant asked for below
      ],
      THIN: [{ t: '2026-03-13T20:59:58Z', p: 12.5 }], // last trade on Friday before the close
      'BTC/USD': [{ t: '2026-03-16T14:59:30.25Z', p: 71234.56 }],
    },
    bars: { SPY: dailyBars(5, 10, 600), 'ETH/USD': [{ t: '2026-01-05T06:00:00Z', o: 3000, h: 3100, l: 2900, c: 3050.75 }] },
  });
});
after(() => sim.close());

describe('Alpaca market data client', () => {
  it('sends the APCA key headers and the feed', async () => {
    sim.requests.length = 0;
    const r = await client().latestTrade('AAPL', NOW);
    assert.ok(r.ok);
    const seen = sim.requests[0]!;
    assert.equal(seen.path, '/v2/stocks/trades/latest');
    assert.equal(seen.headers['apca-api-key-id'], 'PKTEST');
    assert.equal(seen.headers['apca-api-secret-key'], 'sim-secret');
    assert.equal(seen.query.get('feed'), 'iex');
    assert.equal(seen.query.get('symbols'), 'AAPL');
  });

  it('takes the latest trade when it is at or before the instant, with its own timestamp and age', async () => {
    const r = await client().latestTrade('AAPL', NOW);
    assert.deepEqual(r, {
      ok: true,
      value: {
        symbol: 'AAPL', price: '250.3', provider_time: '2026-03-16T14:59:59.9Z', asked_at: '2026-03-16T15:00:00.000Z',
        source: 'alpaca', feed: 'iex', synthetic: false, age_ms: 100, stale: false,
      },
    });
  });

  it('goes to the historical trades when the latest trade is later than the instant', async () => {
    sim.requests.length = 0;
    const r = await client().latestTrade('AAPL', new Date('2026-03-16T14:59:59.800Z'));
    assert.ok(r.ok);
    assert.equal(r.value.price, '250.25');
    assert.equal(r.value.age_ms, 300);
    const history = sim.requests[1]!;
    assert.equal(history.path, '/v2/stocks/trades');
    assert.equal(history.query.get('end'), '2026-03-16T14:59:59.800Z');
    assert.equal(history.query.get('sort'), 'desc');
    assert.equal(history.query.get('limit'), '1');
    assert.equal(history.query.get('start'), '2026-03-09T14:59:59Z');
  });

  it('marks a price older than 15 minutes stale with its age (market closed)', async () => {
    const r = await client().latestTrade('THIN', NOW);
    assert.ok(r.ok);
    assert.equal(r.value.stale, true);
    assert.equal(r.value.age_ms, Date.parse('2026-03-16T15:00:00Z') - Date.parse('2026-03-13T20:59:58Z'));
  });

  it('prices crypto on the v1beta3 endpoints without a feed', async () => {
    sim.requests.length = 0;
    const r = await client().latestTrade('BTC/USD', NOW);
    assert.ok(r.ok);
    assert.equal(r.value.price, '71234.56');
    assert.equal(r.value.feed, null);
    assert.equal(sim.requests[0]!.path, '/v1beta3/crypto/us/latest/trades');
    assert.equal(sim.requests[0]!.query.get('feed'), null);
  });

  it('answers unknown_symbol for a symbol the provider does not know or refuses', async () => {
    const missing = await client().latestTrade('NOPE', NOW);
    assert.ok(!missing.ok && missing.error.code === 'unknown_symbol' && missing.error.symbol === 'NOPE');
    const refused = await client({ baseUrl: `${sim.url}` }).dailyBars('BTC/USD', '2026-01-01', '2026-01-02');
    assert.ok(refused.ok); // well-formed crypto symbol, simply no bars
    const invalid = await client().latestTrade('bad symbol', NOW);
    assert.ok(!invalid.ok && invalid.error.code === 'unknown_symbol');
    // the simulator refuses a crypto symbol without the slash, as Alpaca does
    sim.script.push({ status: 400, body: { message: 'invalid symbol: BTCUSD does not match ^[A-Z]+/[A-Z]+$' } });
    const slashless = await client().latestTrade('ETH/USD', NOW);
    assert.ok(!slashless.ok && slashless.error.code === 'unknown_symbol' && slashless.error.symbol === 'BTCUSD');
  });

  it('reads every page of daily bars and dates them by the New York day', async () => {
    sim.requests.length = 0;
    const r = await client().dailyBars('SPY', '2026-01-05', '2026-01-14');
    assert.ok(r.ok);
    assert.equal(r.value.bars.length, 10);
    assert.deepEqual(r.value.bars[0], { date: '2026-01-05', open: '599.5', high: '601', low: '599', close: '600', provider_time: '2026-01-05T05:00:00Z' });
    assert.equal(r.value.bars[9]!.date, '2026-01-14');
    assert.equal(r.value.adjustment, 'raw');
    assert.equal(sim.requests.length, 3); // 4 + 4 + 2
    assert.equal(sim.requests[1]!.query.get('page_token'), Buffer.from('4').toString('base64url'));
    for (const q of sim.requests) {
      assert.equal(q.query.get('timeframe'), '1Day');
      assert.equal(q.query.get('adjustment'), 'raw');
      assert.equal(q.query.get('feed'), 'sip');
    }
  });

  it('moves a SIP bars request out of the last 15 minutes on the Basic plan', async () => {
    sim.requests.length = 0;
    const r = await client().dailyBars('SPY', '2026-01-05', '2026-03-16');
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(sim.requests[0]!.query.get('end'), '2026-03-16T14:45:00Z');
    const plus = await client({ plan: 'algo_trader_plus' }).dailyBars('SPY', '2026-01-05', '2026-03-16');
    assert.ok(!plus.ok && plus.error.code === 'provider_error' && plus.error.status === 403); // the simulated account is Basic
  });

  it('reads crypto bars, dated by the UTC day', async () => {
    const r = await client().dailyBars('ETH/USD', '2026-01-01', '2026-01-31');
    assert.ok(r.ok);
    assert.deepEqual(r.value.bars.map((b) => [b.date, b.close]), [['2026-01-05', '3050.75']]);
  });

  it('returns rate_limited with the wait from Retry-After or X-RateLimit-Reset on 429, without retrying', async () => {
    sim.requests.length = 0;
    sim.script.push({ status: 429, body: { message: 'too many requests' }, headers: { 'retry-after': '7' } });
    const r = await client().latestTrade('AAPL', NOW);
    assert.deepEqual(r.ok ? null : r.error, { code: 'rate_limited', retry_after_ms: 7000, message: 'Alpaca answered 429' });
    assert.equal(sim.requests.length, 1);
    sim.script.push({ status: 429, body: { message: 'too many requests' }, headers: { 'x-ratelimit-reset': String(NOW.getTime() / 1000 + 42) } });
    const reset = await client().latestTrade('AAPL', NOW);
    assert.ok(!reset.ok && reset.error.code === 'rate_limited' && reset.error.retry_after_ms === 42_000);
  });

  it('retries a 5xx once, then answers provider_error with the status', async () => {
    sim.script.push({ status: 503 });
    const recovered = await client().latestTrade('AAPL', NOW);
    assert.ok(recovered.ok);
    sim.script.push({ status: 500 }, { status: 504 });
    const failed = await client().latestTrade('AAPL', NOW);
    assert.ok(!failed.ok && failed.error.code === 'provider_error' && failed.error.status === 504);
    sim.script.push({ status: 502 });
    const noRetry = await client({ retries: 0 }).latestTrade('AAPL', NOW);
    assert.ok(!noRetry.ok && noRetry.error.code === 'provider_error' && noRetry.error.status === 502);
  });

  it('answers provider_error for bad keys, timeouts, oversized and malformed bodies', async () => {
    const badKey = await new AlpacaMarketData({ keyId: 'PKTEST', secret: 'wrong', baseUrl: sim.url, now: () => NOW }).latestTrade('AAPL', NOW);
    assert.ok(!badKey.ok && badKey.error.code === 'provider_error' && badKey.error.status === 401);
    sim.script.push({ status: 200, body: { trades: {} }, delayMs: 300 });
    const slow = await client({ timeoutMs: 50, retries: 0 }).latestTrade('AAPL', NOW);
    assert.ok(!slow.ok && slow.error.code === 'provider_error' && /50 ms/.test(slow.error.message));
    sim.script.push({ status: 200, rawBody: JSON.stringify({ trades: {}, pad: 'x'.repeat(5000) }) });
    const big = await client({ maxResponseBytes: 1000 }).latestTrade('AAPL', NOW);
    assert.ok(!big.ok && big.error.code === 'provider_error' && /1000-byte/.test(big.error.message));
    sim.script.push({ status: 200, rawBody: '{"trades": {"AAPL": {"t": "yesterday", "p": 1}}}' });
    const malformed = await client().latestTrade('AAPL', NOW);
    assert.ok(!malformed.ok && malformed.error.code === 'provider_error');
  });

  it('keeps to the plan call limit on its own side', async () => {
    let t = NOW.getTime();
    const c = client({ now: () => new Date(t) });
    for (let i = 0; i < 200; i++) assert.ok((await c.dailyBars('ETH/USD', '2026-01-05', '2026-01-05')).ok);
    t += 30_000;
    const r = await c.dailyBars('ETH/USD', '2026-01-05', '2026-01-05');
    assert.ok(!r.ok && r.error.code === 'rate_limited' && r.error.retry_after_ms === 30_000);
    t += 30_000;
    assert.ok((await c.dailyBars('ETH/USD', '2026-01-05', '2026-01-05')).ok);
  });
});

describe('selectMarketData', () => {
  it('defaults to none without keys, and says why', async () => {
    const s = selectMarketData({});
    assert.ok(s.ok && s.market.source === 'none');
    const r = await s.market.latestTrade('AAPL', NOW);
    assert.ok(!r.ok && r.error.code === 'not_configured' && /LEDGER_ALPACA_DATA_KEY_ID/.test(r.error.message));
  });

  it('defaults to alpaca with both keys, using the configured URL', async () => {
    const s = selectMarketData({ LEDGER_ALPACA_DATA_KEY_ID: 'PKTEST', LEDGER_ALPACA_DATA_SECRET: 'sim-secret', LEDGER_ALPACA_DATA_URL: sim.url }, { now: () => NOW });
    assert.ok(s.ok && s.market.source === 'alpaca');
    const r = await s.market.latestTrade('BTC/USD', NOW);
    assert.ok(r.ok && r.value.price === '71234.56');
  });

  it('chooses synthetic with a seed', async () => {
    const s = selectMarketData({ LEDGER_MARKET_DATA: 'synthetic', LEDGER_SYNTHETIC_SEED: 'x' });
    assert.ok(s.ok && s.market.synthetic && /seed "x"/.test(s.market.description));
  });

  it('refuses bad settings with the variable named', () => {
    const cases: Array<[NodeJS.ProcessEnv, RegExp]> = [
      [{ LEDGER_MARKET_DATA: 'polygon' }, /LEDGER_MARKET_DATA must be one of alpaca, synthetic, none/],
      [{ LEDGER_MARKET_DATA: 'alpaca', LEDGER_ALPACA_DATA_KEY_ID: 'k' }, /needs both LEDGER_ALPACA_DATA_KEY_ID and LEDGER_ALPACA_DATA_SECRET/],
      [{ LEDGER_ALPACA_DATA_KEY_ID: 'k', LEDGER_ALPACA_DATA_SECRET: 's', LEDGER_ALPACA_DATA_URL: 'nope' }, /LEDGER_ALPACA_DATA_URL must be a URL/],
      [{ LEDGER_ALPACA_DATA_KEY_ID: 'k', LEDGER_ALPACA_DATA_SECRET: 's', LEDGER_ALPACA_DATA_URL: 'ftp://x' }, /must use https: or http:/],
      [{ LEDGER_ALPACA_DATA_KEY_ID: 'k', LEDGER_ALPACA_DATA_SECRET: 's', LEDGER_ALPACA_DATA_FEED: 'nasdaq' }, /LEDGER_ALPACA_DATA_FEED must be one of iex/],
      [{ LEDGER_ALPACA_DATA_KEY_ID: 'k', LEDGER_ALPACA_DATA_SECRET: 's', LEDGER_ALPACA_DATA_PLAN: 'gold' }, /LEDGER_ALPACA_DATA_PLAN must be one of basic, algo_trader_plus/],
    ];
    for (const [env, message] of cases) {
      const s = selectMarketData(env);
      assert.ok(!s.ok, JSON.stringify(env));
      assert.match(s.error, message);
    }
  });
});
