// The synthetic price model: determinism, the documented formula, trading days, sessions and staleness.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import { sha256Hex } from '../../src/core/sha256.ts';
import { STALE_AFTER_MS } from '../../src/market/port.ts';
import { ORIGIN_DATE, SyntheticMarketData, dailyReturn, startPrice } from '../../src/market/synthetic.ts';

const at = (s: string) => new Date(s);

async function trade(m: SyntheticMarketData, symbol: string, when: string) {
  const r = await m.latestTrade(symbol, at(when));
  if (!r.ok) assert.fail(JSON.stringify(r.error));
  return r.value;
}

async function bars(m: SyntheticMarketData, symbol: string, from: string, to: string) {
  const r = await m.dailyBars(symbol, from, to);
  if (!r.ok) assert.fail(JSON.stringify(r.error));
  return r.value.bars;
}

describe('synthetic market data', () => {
  it('gives the same answers for the same seed, in any order of questions, and other answers for another seed', async () => {
    const a = new SyntheticMarketData('s1');
    const b = new SyntheticMarketData('s1');
    const late = await trade(a, 'AAPL', '2024-06-12T15:00:00Z');
    await bars(b, 'AAPL', '2016-01-01', '2016-02-01'); // b builds its walk in another order
    assert.deepEqual(await trade(b, 'AAPL', '2024-06-12T15:00:00Z'), late);
    assert.deepEqual(await bars(a, 'BTC/USD', '2024-01-01', '2024-01-10'), await bars(b, 'BTC/USD', '2024-01-01', '2024-01-10'));
    const other = await trade(new SyntheticMarketData('s2'), 'AAPL', '2024-06-12T15:00:00Z');
    assert.notEqual(other.price, late.price);
  });

  it('marks every answer synthetic', async () => {
    const m = new SyntheticMarketData('s1');
    assert.equal(m.synthetic, true);
    assert.equal((await trade(m, 'SPY', '2024-06-12T15:00:00Z')).synthetic, true);
    const r = await m.dailyBars('SPY', '2024-06-10', '2024-06-14');
    assert.ok(r.ok && r.value.synthetic && r.value.source === 'synthetic');
  });

  it('follows the documented formula: first close = start × (1 + r), rounded to cents', async () => {
    const seed = 'formula';
    // start price: 20 + (u1 mod 48000)/100, u1 = first 4 bytes of SHA-256("formula\nAAPL\nstart")
    const u1 = parseInt(sha256Hex('formula\nAAPL\nstart').slice(0, 8), 16);
    assert.equal(startPrice(seed, 'AAPL', 'stock'), new Decimal(20).plus(new Decimal(u1 % 48000).div(100)).toFixed(2));
    // 2015-01-01 is a Thursday: the first stock close is on the origin date itself
    const hex = sha256Hex('formula\nAAPL\n2015-01-01');
    const u = [0, 1, 2, 3].map((i) => parseInt(hex.slice(8 * i, 8 * i + 8), 16));
    const z = ((u[0]! + u[1]! + u[2]! + u[3]!) / 4294967296 - 2) * Math.sqrt(3);
    const r = (0.0003 + 0.015 * z).toFixed(6);
    assert.equal(dailyReturn(seed, 'AAPL', '2015-01-01', 'stock'), r);
    const expected = new Decimal(startPrice(seed, 'AAPL', 'stock')).times(new Decimal(1).plus(r)).toDecimalPlaces(2, Decimal.ROUND_HALF_EVEN).toFixed(2);
    const first = await bars(new SyntheticMarketData(seed), 'AAPL', ORIGIN_DATE, ORIGIN_DATE);
    assert.deepEqual(first.map((b) => [b.date, b.open, b.close]), [[ORIGIN_DATE, startPrice(seed, 'AAPL', 'stock'), expected]]);
  });

  it('has stock bars on weekdays only and crypto bars every day, each opening at the previous close', async () => {
    const m = new SyntheticMarketData('s1');
    const stock = await bars(m, 'MSFT', '2024-03-08', '2024-03-12'); // Fri .. Tue
    assert.deepEqual(stock.map((b) => b.date), ['2024-03-08', '2024-03-11', '2024-03-12']);
    assert.equal(stock[1]!.open, stock[0]!.close);
    // New York midnight in UTC: EST before 2024-03-10, EDT after
    assert.equal(stock[0]!.provider_time, '2024-03-08T05:00:00.000Z');
    assert.equal(stock[1]!.provider_time, '2024-03-11T04:00:00.000Z');
    const crypto = await bars(m, 'ETH/USD', '2024-03-08', '2024-03-12');
    assert.equal(crypto.length, 5);
    for (const b of [...stock, ...crypto]) {
      assert.ok(new Decimal(b.low).lte(b.open) && new Decimal(b.low).lte(b.close));
      assert.ok(new Decimal(b.high).gte(b.open) && new Decimal(b.high).gte(b.close));
    }
  });

  it('prices a stock within the session by the minute, and outside it at the last close, marked stale with its age', async () => {
    const m = new SyntheticMarketData('s1');
    const days = await bars(m, 'MSFT', '2024-06-11', '2024-06-14'); // Tue..Fri, EDT
    const open = await trade(m, 'MSFT', '2024-06-12T13:30:00Z'); // 09:30 New York
    assert.equal(open.price, days[0]!.close); // the session starts from the previous close
    assert.equal(open.stale, false);
    const mid = await trade(m, 'MSFT', '2024-06-12T16:45:30.500Z'); // minute 195 of 390
    const expected = new Decimal(days[0]!.close).plus(new Decimal(days[1]!.close).minus(days[0]!.close).times(195).div(390)).toDecimalPlaces(2, Decimal.ROUND_HALF_EVEN).toFixed(2);
    assert.equal(mid.price, expected);
    assert.equal(mid.provider_time, '2024-06-12T16:45:00.000Z');
    assert.equal(mid.age_ms, 30_500);
    const saturday = await trade(m, 'MSFT', '2024-06-15T12:00:00Z');
    assert.equal(saturday.price, days[3]!.close);
    assert.equal(saturday.provider_time, '2024-06-14T20:00:00.000Z'); // Friday 16:00 New York
    assert.equal(saturday.age_ms, 16 * 3_600_000);
    assert.equal(saturday.stale, true);
    const justAfterClose = await trade(m, 'MSFT', new Date(Date.parse('2024-06-14T20:00:00Z') + STALE_AFTER_MS).toISOString());
    assert.equal(justAfterClose.stale, false); // exactly at the bound is not yet stale
  });

  it('prices crypto around the clock and refuses what it cannot price', async () => {
    const m = new SyntheticMarketData('s1');
    const sunday = await trade(m, 'BTC/USD', '2024-06-16T03:00:10Z');
    assert.equal(sunday.stale, false);
    assert.equal(sunday.age_ms, 10_000);
    const before = await m.latestTrade('AAPL', at('2014-06-01T15:00:00Z'));
    assert.ok(!before.ok && before.error.code === 'no_price');
    const bad = await m.latestTrade('not a symbol', at('2024-06-01T15:00:00Z'));
    assert.ok(!bad.ok && bad.error.code === 'unknown_symbol');
    const range = await m.dailyBars('AAPL', '2024-02-01', '2024-01-01');
    assert.ok(!range.ok && range.error.code === 'invalid_request');
  });
});
