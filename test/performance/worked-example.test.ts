// docs/perf_v1.md §6, reproduced figure for figure (the arithmetic is in the doc).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { modelPerformance } from '../../src/method/perf/perf.ts';
import type { DecisionInput } from '../../src/method/perf/portfolio.ts';

const dates = ['2026-01-05', '2026-01-06', '2026-01-07', '2026-01-08'];
const closes = (xs: string[]) => xs.map((close, i) => ({ date: dates[i] as string, close }));

export const EXAMPLE = {
  benchmark: { symbol: 'SPY', closes: closes(['500', '510', '505', '520']), inception_price: '500' },
  closes: { AAA: closes(['10', '11', '9', '12']), BBB: closes(['50', '50', '50', '60']) },
  decisions: [
    { id: 'd1', recorded_at: '2026-01-05T15:00:00.000Z', symbol: 'AAA', action: 'BUY', target_allocation_pct: '50', time_horizon: '2 trading days', price: '10' },
    { id: 'd2', recorded_at: '2026-01-05T16:00:00.000Z', symbol: 'BBB', action: 'BUY', notional: '20000', price: '40' },
    { id: 'd3', recorded_at: '2026-01-06T15:00:00.000Z', symbol: 'AAA', action: 'SELL', quantity: '6000', price: '10.5' },
    { id: 'd4', recorded_at: '2026-01-07T15:00:00.000Z', symbol: 'BBB', action: 'BUY', quantity: '2000', price: '55' },
    { id: 'd5', recorded_at: '2026-01-08T15:00:00.000Z', symbol: 'BBB', action: 'REDUCE', price: '58' },
    { id: 'd6', recorded_at: '2026-01-08T16:00:00.000Z', symbol: 'AAA', action: 'HOLD', price: '12' },
    { id: 'd7', recorded_at: '2026-01-08T17:00:00.000Z', symbol: 'CCC', action: 'BUY', price: null, price_missing_reason: 'unknown_symbol' },
  ] as DecisionInput[],
};

describe('worked example of docs/perf_v1.md', () => {
  const report = modelPerformance(EXAMPLE);

  it('applies every decision as the table says', () => {
    assert.deepEqual(
      report.reconstruction.applied.map((a) => [a.record_id, a.traded_quantity, a.cash_after, a.position_after, a.notes.join(',')]),
      [
        ['d1', '5000', '50000', '5000', ''],
        ['d2', '500', '30000', '500', ''],
        ['d3', '-5000', '82500', '0', 'sell_clipped_to_holding'],
        ['d4', '1500', '0', '2000', 'buy_clipped_to_cash'],
        ['d5', '-1000', '58000', '1000', 'unsized_default'],
        ['d6', '0', '58000', '0', ''],
        ['d7', '0', '58000', '0', 'unpriced'],
      ],
    );
    assert.equal(report.notes.find((n) => n.record_id === 'd7')?.message, 'not applied: no price at receipt (unknown_symbol)');
    assert.equal(report.inception, '2026-01-05T15:00:00.000Z');
  });

  it('publishes the series', () => {
    assert.deepEqual(report.series, [
      { date: '2026-01-05', value: '105000.00', daily_return: '0.050000', benchmark_value: '100000.00' },
      { date: '2026-01-06', value: '107500.00', daily_return: '0.023810', benchmark_value: '102000.00' },
      { date: '2026-01-07', value: '100000.00', daily_return: '-0.069767', benchmark_value: '101000.00' },
      { date: '2026-01-08', value: '118000.00', daily_return: '0.180000', benchmark_value: '104000.00' },
    ]);
  });

  it('computes the metrics and the minimum-history nulls', () => {
    const m = report.metrics;
    assert.deepEqual(m.cumulative_return, { value: '0.180000' });
    assert.deepEqual(m.time_weighted_return, { value: '0.180000' });
    assert.deepEqual(m.excess_return, { value: '0.140000' });
    assert.deepEqual(m.max_drawdown, { value: '-0.069767', peak_date: '2026-01-06', trough_date: '2026-01-07', recovery_date: '2026-01-08' });
    assert.deepEqual(m.annualised_return, { value: null, reason: 'needs 365 days of history, has 3' });
    for (const k of ['volatility', 'sharpe', 'sortino', 'beta'] as const) assert.deepEqual(m[k], { value: null, reason: 'needs 252 daily returns, has 4' });
    assert.equal(report.benchmark.base_from, 'inception_price');
    assert.deepEqual(report.benchmark.metrics?.cumulative_return, { value: '0.040000' });
    assert.deepEqual(report.benchmark.metrics?.max_drawdown, { value: '-0.009804', peak_date: '2026-01-06', trough_date: '2026-01-07', recovery_date: '2026-01-08' });
  });

  it('computes the decision outcomes and the hit rate', () => {
    const o = report.outcomes!;
    const byId = new Map(o.decisions.map((d) => [d.record_id, d]));
    assert.deepEqual(byId.get('d1')!.at[1], { date: '2026-01-06', close: '11', return: '0.100000', hit: true });
    assert.deepEqual(byId.get('d1')!.stated.outcome, { date: '2026-01-07', close: '9', return: '-0.100000', hit: false });
    assert.deepEqual(byId.get('d1')!.at[5], { date: null, reason: 'pending: fewer than 5 closes since the decision' });
    assert.deepEqual(byId.get('d2')!.at[1], { date: '2026-01-06', close: '50', return: '0.250000', hit: true });
    assert.deepEqual(byId.get('d3')!.at[1], { date: '2026-01-07', close: '9', return: '-0.142857', hit: true });
    assert.deepEqual(byId.get('d4')!.at[1], { date: '2026-01-08', close: '60', return: '0.090909', hit: true });
    assert.equal(byId.get('d6')!.direction, 0);
    assert.deepEqual(byId.get('d7')!.at[1], { date: null, reason: 'decision has no price at receipt' });
    assert.deepEqual(o.hit_rate['1d'], { value: null, reason: 'needs 20 resolved directional decisions, has 4', hits: 4, counted: 4 });
  });
});
