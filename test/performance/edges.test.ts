// The perf_v1 cases accounting.test.ts and metrics.test.ts leave out, each computed by hand (the
// arithmetic in the comments), and the broker worked example of docs/perf_v1.md §6.2.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { computeMetrics, relativeMetrics } from '../../src/method/perf/metrics.ts';
import { benchmarkBase, brokerPerformance } from '../../src/method/perf/perf.ts';
import { reconstructModel, type DecisionInput } from '../../src/method/perf/portfolio.ts';

const day = '2026-02-02';
let seq = 0;
const dec = (d: Partial<DecisionInput> & Pick<DecisionInput, 'action'>): DecisionInput => ({
  id: `e${String(++seq).padStart(3, '0')}`,
  recorded_at: `${day}T15:${String(seq % 60).padStart(2, '0')}:00.000Z`,
  symbol: 'XYZ',
  price: '20',
  ...d,
});
const rows = (ds: DecisionInput[]) => reconstructModel(ds, [day], { XYZ: [{ date: day, close: '25' }] }).applied
  .map((a) => [a.action, a.sizing, a.traded_quantity, a.cash_after, a.position_after, a.notes.join(',')]);

describe('model accounting: the remaining sizes', () => {
  it('a target above 100 % trades nothing (invalid_size)', () => {
    assert.deepEqual(rows([dec({ action: 'BUY', target_allocation_pct: '150' })]), [['BUY', 'target_allocation_pct', '0', '100000', '0', 'invalid_size']]);
  });

  it('INCREASE by notional and by quantity buys like BUY', () => {
    // notional 3000 at 20: cut(150) = 150 for 3000, cash 97000; then quantity 2.5: 50, cash 96950
    assert.deepEqual(rows([dec({ action: 'INCREASE', notional: '3000' }), dec({ action: 'INCREASE', quantity: '2.5' })]), [
      ['INCREASE', 'notional', '150', '97000', '150', ''],
      ['INCREASE', 'quantity', '2.5', '96950', '152.5', ''],
    ]);
  });

  it('REDUCE by quantity and notional, SELL by quantity', () => {
    const buy = dec({ action: 'BUY', quantity: '100' }); // cash 98000, 100 held
    // REDUCE 30: 30 × 20 = 600, cash 98600, 70 held; REDUCE notional 500 at 20: cut(25) = 25, cash 99100, 45 held; SELL 45: cash 100000
    assert.deepEqual(rows([buy, dec({ action: 'REDUCE', quantity: '30' }), dec({ action: 'REDUCE', notional: '500' }), dec({ action: 'SELL', quantity: '45' })]).slice(1), [
      ['REDUCE', 'quantity', '-30', '98600', '70', ''],
      ['REDUCE', 'notional', '-25', '99100', '45', ''],
      ['SELL', 'quantity', '-45', '100000', '0', ''],
    ]);
  });

  it('a notional that divides unevenly is cut, not rounded, to 8 decimals', () => {
    // notional 100 at 3: 100 / 3 = 33.333…, cut to 33.33333333; cost 99.99999999, cash 99900.00000001
    assert.deepEqual(rows([dec({ action: 'BUY', notional: '100', price: '3' })]), [['BUY', 'notional', '33.33333333', '99900.00000001', '33.33333333', '']]);
  });
});

describe('benchmark base', () => {
  const closes = [{ date: '2026-01-02', close: '495' }, { date: '2026-01-05', close: '500' }];
  it('is the price observed at the first record, else the last close before its date, else the first close', () => {
    assert.deepEqual(benchmarkBase({ symbol: 'SPY', closes, inception_price: '498.5' }, '2026-01-05'), { price: '498.5', from: 'inception_price', date: '2026-01-05' });
    assert.deepEqual(benchmarkBase({ symbol: 'SPY', closes }, '2026-01-05'), { price: '495', from: 'previous_close', date: '2026-01-02' });
    assert.deepEqual(benchmarkBase({ symbol: 'SPY', closes }, '2026-01-01'), { price: '495', from: 'first_close', date: '2026-01-02' });
    assert.deepEqual(benchmarkBase({ symbol: 'SPY', closes: [] }, '2026-01-01'), { price: null, from: null, date: null });
  });
});

describe('metrics: the remaining cases', () => {
  it('excess return is the difference of the two cumulative returns', () => {
    // portfolio 100000 → 112000: 0.12; benchmark 100000 → 103500: 0.035; excess 0.085
    const v = [{ date: '2026-01-05', value: '104000.00' }, { date: '2026-01-06', value: '112000.00' }];
    const b = [{ date: '2026-01-05', value: '101000.00' }, { date: '2026-01-06', value: '103500.00' }];
    assert.deepEqual(relativeMetrics('100000', v, b).excess_return, { value: '0.085000' });
  });

  it('a value of 0 followed by another gives a daily return of 0, not a division by zero', () => {
    // 100000 → 0: −1; 0 → 0: 0 by rule; the drawdown is −100 %
    const m = computeMetrics('100000', '2026-01-05', [{ date: '2026-01-05', value: '0.00' }, { date: '2026-01-06', value: '0.00' }]);
    assert.deepEqual(m.cumulative_return, { value: '-1.000000' });
    assert.deepEqual(m.time_weighted_return, { value: '-1.000000' });
    assert.equal(m.max_drawdown.value, '-1.000000');
  });

  it('benchmark series on other dates: beta and excess are null with the reason', () => {
    const r = relativeMetrics('100000', [{ date: '2026-01-05', value: '1.00' }], [{ date: '2026-01-06', value: '1.00' }]);
    assert.deepEqual(r.beta, { value: null, reason: 'benchmark series does not cover the same dates' });
  });
});

describe('broker worked example of docs/perf_v1.md §6.2', () => {
  const r = brokerPerformance({
    fills: [
      { id: 'f1', executed_at: '2026-01-05T15:00:00.000Z', symbol: 'XYZ', side: 'buy', quantity: '6000', price: '20', fee: '1.5' },
      { id: 'f2', executed_at: '2026-01-06T15:00:00.000Z', symbol: 'XYZ', side: 'sell', quantity: '7000', price: '21' },
    ],
    closes: { XYZ: [{ date: '2026-01-05', close: '20' }, { date: '2026-01-06', close: '22' }] },
    benchmark: { symbol: 'SPY', closes: [{ date: '2026-01-02', close: '495' }, { date: '2026-01-05', close: '500' }, { date: '2026-01-06', close: '510' }] },
  });

  it('applies the fills exactly and notes negative cash and the short position', () => {
    assert.deepEqual(r.reconstruction.applied.map((a) => [a.cash_after, a.position_after, a.notes.join()]), [['-20001.5', '6000', 'negative_cash'], ['126998.5', '-1000', 'short_position']]);
  });

  it('values the series and computes the figures the doc shows', () => {
    assert.deepEqual(r.series, [
      { date: '2026-01-05', value: '99998.50', daily_return: '-0.000015', benchmark_value: '101010.10' },
      { date: '2026-01-06', value: '104998.50', daily_return: '0.050001', benchmark_value: '103030.30' },
    ]);
    assert.equal(r.basis, 'trade_derived');
    assert.deepEqual([r.benchmark.base_price, r.benchmark.base_from], ['495', 'previous_close']);
    assert.deepEqual(r.metrics.cumulative_return, { value: '0.049985' });
    assert.deepEqual(r.metrics.excess_return, { value: '0.019682' });
    assert.deepEqual(r.metrics.max_drawdown, { value: '-0.000015', peak_date: '2026-01-05', trough_date: '2026-01-05', recovery_date: '2026-01-06' });
    assert.match(r.caveats[0] as string, /deposits, withdrawals and dividends are not imported/);
  });
});
