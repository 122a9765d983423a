// perf_v1 metrics: each formula on a hand-computed case, and each minimum-history gate on both sides.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { computeMetrics, covariance, downsideDeviation, maxDrawdown, mean, relativeMetrics, stdev } from '../../src/method/perf/metrics.ts';
import { hitRate, parseHorizon } from '../../src/method/perf/outcomes.ts';

const near = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} vs ${b}`);

/** Daily series from 2025-01-01 on, one point a day. */
function series(values: string[], firstDay = 0) {
  return values.map((value, i) => ({ date: new Date(Date.UTC(2025, 0, 1 + firstDay + i)).toISOString().slice(0, 10), value }));
}

describe('statistics', () => {
  const r = [0.01, -0.01, 0.02, 0];
  it('mean, sample standard deviation, downside deviation, covariance', () => {
    near(mean(r), 0.005); // 0.02 / 4
    // deviations .005 −.015 .015 −.005; squares sum 0.0005; / 3
    near(stdev(r), Math.sqrt(0.0005 / 3));
    // only −0.01 falls below 0: sqrt(0.0001 / 4) = 0.005
    near(downsideDeviation(r), 0.005);
    // rb = 0.02 0 0.01 −0.01: mean 0.005; products .005×.015 + (−.015)(−.005) + .015×.005 + (−.005)(−.015) = 0.0003; / 3
    near(covariance(r, [0.02, 0, 0.01, -0.01]), 0.0001);
  });

  it('max drawdown: 100 → 120 → 90 → 130 → 110 is −25 %', () => {
    assert.deepEqual(maxDrawdown('100', '2025-01-01', series(['120', '90', '130', '110'], 1)), {
      value: '-0.250000', peak_date: '2025-01-02', trough_date: '2025-01-03', recovery_date: '2025-01-04',
    });
    // never recovers; the start value is the first peak, on the inception date
    assert.deepEqual(maxDrawdown('100', '2025-01-01', series(['95', '97'], 1)), { value: '-0.050000', peak_date: '2025-01-01', trough_date: '2025-01-02', recovery_date: null });
    assert.deepEqual(maxDrawdown('100', '2025-01-01', series(['100', '101'], 1)), { value: '0.000000', peak_date: null, trough_date: null, recovery_date: null });
  });
});

describe('minimum history', () => {
  // values alternate 101000, 100000: returns 0.01, then −1000/101000, ...
  const alternating = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? '101000.00' : '100000.00'));

  it('everything is null before the first valuation', () => {
    const m = computeMetrics('100000', '2025-01-01', []);
    assert.equal(m.cumulative_return.value, null);
    assert.match(String(m.max_drawdown.value === null && m.max_drawdown.reason), /no valuation/);
  });

  it('risk metrics need 252 daily returns', () => {
    const short = computeMetrics('100000', '2025-01-01', series(alternating(251)));
    for (const k of ['volatility', 'sharpe', 'sortino'] as const) assert.deepEqual(short[k], { value: null, reason: 'needs 252 daily returns, has 251' });
    const full = computeMetrics('100000', '2025-01-01', series(alternating(252)));
    // 126 returns of +0.01 and 126 of −1/101: the formulas of the method doc, in plain doubles
    const r = Array.from({ length: 252 }, (_, i) => (i % 2 === 0 ? 0.01 : -1000 / 101000));
    const m = r.reduce((a, b) => a + b, 0) / 252;
    const sd = Math.sqrt(r.reduce((a, x) => a + (x - m) ** 2, 0) / 251);
    const dd = Math.sqrt((126 * (1000 / 101000) ** 2) / 252);
    assert.equal(Number(full.volatility.value), Number((sd * Math.sqrt(252)).toFixed(6)));
    assert.equal(Number(full.sharpe.value), Number(((m / sd) * Math.sqrt(252)).toFixed(4)));
    assert.equal(Number(full.sortino.value), Number(((m / dd) * Math.sqrt(252)).toFixed(4)));
  });

  it('annualised return needs 365 days', () => {
    // 100000 → 110000 over 364 days: null; over 365 days: (1.1)^(365/365) − 1 = 0.1
    assert.deepEqual(computeMetrics('100000', '2025-01-01', [{ date: '2025-12-31', value: '110000.00' }]).annualised_return, { value: null, reason: 'needs 365 days of history, has 364' });
    assert.deepEqual(computeMetrics('100000', '2025-01-01', [{ date: '2026-01-01', value: '110000.00' }]).annualised_return, { value: '0.100000' });
    // 730 days: sqrt(1.21) − 1 = 0.1
    assert.deepEqual(computeMetrics('100000', '2025-01-01', [{ date: '2027-01-01', value: '121000.00' }]).annualised_return, { value: '0.100000' });
  });

  it('Sharpe is null when returns do not vary, Sortino when none is negative', () => {
    const flat = computeMetrics('100000', '2025-01-01', series(Array(252).fill('100000.00')));
    assert.deepEqual(flat.sharpe, { value: null, reason: 'daily returns do not vary' });
    assert.deepEqual(flat.sortino, { value: null, reason: 'no daily return below 0' });
  });

  it('beta needs 252 aligned returns; twice the benchmark\'s moves give beta 2', () => {
    const bench = Array.from({ length: 252 }, (_, i) => (i % 2 === 0 ? '101000.00' : '100000.00'));
    const port = Array.from({ length: 252 }, (_, i) => (i % 2 === 0 ? '102000.00' : '100000.00'));
    const few = relativeMetrics('100000', series(port.slice(0, 10)), series(bench.slice(0, 10)));
    assert.deepEqual(few.beta, { value: null, reason: 'needs 252 daily returns, has 10' });
    assert.deepEqual(few.excess_return, { value: '0.000000' }); // both end at 100000
    // port returns 0.02 / −2000/102000, bench 0.01 / −1000/101000: not exactly 2×, computed as the doc says
    const rp = port.map((_, i) => (i % 2 === 0 ? 0.02 : -2000 / 102000));
    const rb = bench.map((_, i) => (i % 2 === 0 ? 0.01 : -1000 / 101000));
    const full = relativeMetrics('100000', series(port), series(bench));
    assert.equal(Number(full.beta.value), Number((covariance(rp, rb) / covariance(rb, rb)).toFixed(4)));
    assert.ok(Math.abs(Number(full.beta.value) - 2) < 0.05);
  });

  it('hit rate needs 20 resolved directional outcomes', () => {
    const o = (hit: boolean) => ({ date: '2025-01-02', close: '1', return: '0', hit });
    assert.deepEqual(hitRate(Array(19).fill(o(true))), { value: null, reason: 'needs 20 resolved directional decisions, has 19', hits: 19, counted: 19 });
    // 15 hits of 20 = 0.75; HOLD (hit null) and pending outcomes are not counted
    const twenty = [...Array(15).fill(o(true)), ...Array(5).fill(o(false)), { date: '2025-01-02', close: '1', return: '0', hit: null }, { date: null, reason: 'pending' }];
    assert.deepEqual(hitRate(twenty), { value: '0.750000', hits: 15, counted: 20 });
  });
});

describe('stated horizons', () => {
  it('parses counts with units and ISO durations, and nothing else', () => {
    assert.deepEqual(parseHorizon('5 trading days'), { kind: 'trading_days', n: 5 });
    assert.deepEqual(parseHorizon('10d'), { kind: 'days', n: 10 });
    assert.deepEqual(parseHorizon(' 2 Weeks '), { kind: 'days', n: 14 });
    assert.deepEqual(parseHorizon('3 months'), { kind: 'months', n: 3 });
    assert.deepEqual(parseHorizon('1 year'), { kind: 'months', n: 12 });
    assert.deepEqual(parseHorizon('P6M'), { kind: 'months', n: 6 });
    assert.deepEqual(parseHorizon('p2w'), { kind: 'days', n: 14 });
    for (const t of ['long term', '1-3 months', '0 days', 'P1Y2M', '', null, 'next week']) assert.equal(parseHorizon(t), null, String(t));
  });
});

describe('outcome at a calendar horizon', () => {
  it('ends at the first close on or after the date a month ahead, clamped to the month end', async () => {
    const { decisionOutcomes } = await import('../../src/method/perf/outcomes.ts');
    const closes = { XYZ: [{ date: '2025-02-27', close: '9' }, { date: '2025-03-03', close: '12' }] };
    // 2025-01-31 + 1 month = 2025-02-28 (clamped); first close on or after: 2025-03-03, 12/10 − 1 = 0.2
    const [o] = decisionOutcomes([{ id: 'd', recorded_at: '2025-01-31T15:00:00.000Z', symbol: 'XYZ', action: 'SELL', time_horizon: '1 month', price: '10' }], closes);
    assert.deepEqual(o!.stated.outcome, { date: '2025-03-03', close: '12', return: '0.200000', hit: false });
    const [pending] = decisionOutcomes([{ id: 'e', recorded_at: '2025-02-28T15:00:00.000Z', symbol: 'XYZ', action: 'BUY', time_horizon: 'P1Y', price: '10' }], closes);
    assert.deepEqual(pending!.stated.outcome, { date: null, reason: 'pending: no close on or after 2026-02-28 yet' });
  });
});
