// perf_v1 accounting edges, one hand-computed case each (arithmetic in the comments).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reconstructBroker, reconstructModel, type DecisionInput } from '../../src/method/perf/portfolio.ts';

const day = '2026-02-02';
const cal = [day];
let seq = 0;
const dec = (d: Partial<DecisionInput> & Pick<DecisionInput, 'action'>): DecisionInput => ({
  id: `d${++seq}`,
  recorded_at: `${day}T15:00:${String(seq).padStart(2, '0')}.000Z`,
  symbol: 'XYZ',
  price: '20',
  ...d,
});
const run = (ds: DecisionInput[]) => reconstructModel(ds, cal, { XYZ: [{ date: day, close: '25' }] });
const rows = (ds: DecisionInput[]) => run(ds).applied.map((a) => [a.action, a.sizing, a.traded_quantity, a.cash_after, a.position_after, a.notes.join(',')]);

describe('model accounting, action by action', () => {
  it('BUY by target, quantity, notional and unsized', () => {
    // target 25 %: cut(100000 × 25/100 / 20) = 1250, cash 100000 − 25000 = 75000
    assert.deepEqual(rows([dec({ action: 'BUY', target_allocation_pct: '25' })]), [['BUY', 'target_allocation_pct', '1250', '75000', '1250', '']]);
    // quantity 3.5: cost 70, cash 99930
    assert.deepEqual(rows([dec({ action: 'BUY', quantity: '3.5' })]), [['BUY', 'quantity', '3.5', '99930', '3.5', '']]);
    // notional 1000 at 30: cut(33.333…) = 33.33333333, cost 999.9999999, cash 99000.0000001
    assert.deepEqual(rows([dec({ action: 'BUY', notional: '1000', price: '30' })]), [['BUY', 'notional', '33.33333333', '99000.0000001', '33.33333333', '']]);
    // unsized: 10 % of 100000 = 10000 at 20 = 500
    assert.deepEqual(rows([dec({ action: 'BUY' })]), [['BUY', 'default', '500', '90000', '500', 'unsized_default']]);
  });

  it('INCREASE to a target buys the difference; a target already met buys nothing', () => {
    // after buying 1000 (cash 80000, V 100000): target 30 % → 1500, buy 500
    // then BUY to 10 % → 500 < 1500 held: nothing (no sale on a BUY)
    assert.deepEqual(rows([dec({ action: 'BUY', quantity: '1000' }), dec({ action: 'INCREASE', target_allocation_pct: '30' }), dec({ action: 'BUY', target_allocation_pct: '10' })]), [
      ['BUY', 'quantity', '1000', '80000', '1000', ''],
      ['INCREASE', 'target_allocation_pct', '500', '70000', '1500', ''],
      ['BUY', 'target_allocation_pct', '0', '70000', '1500', 'target_already_met'],
    ]);
  });

  it('SELL and REDUCE by target, quantity, notional and unsized', () => {
    const buy = dec({ action: 'BUY', quantity: '1000' }); // cash 80000, V 100000
    // REDUCE to 5 %: target 100000 × 5/100 / 20 = 250; sell 750 → cash 95000
    assert.deepEqual(rows([buy, dec({ action: 'REDUCE', target_allocation_pct: '5' })]).at(-1), ['REDUCE', 'target_allocation_pct', '-750', '95000', '250', '']);
    // SELL notional 2000 at 20 = 100 → cash 82000
    assert.deepEqual(rows([buy, dec({ action: 'SELL', notional: '2000' })]).at(-1), ['SELL', 'notional', '-100', '82000', '900', '']);
    // REDUCE unsized: half of 1000 → cash 90000
    assert.deepEqual(rows([buy, dec({ action: 'REDUCE' })]).at(-1), ['REDUCE', 'default', '-500', '90000', '500', 'unsized_default']);
    // SELL unsized: all 1000 → cash 100000
    assert.deepEqual(rows([buy, dec({ action: 'SELL' })]).at(-1), ['SELL', 'default', '-1000', '100000', '0', 'unsized_default']);
    // SELL to a target above the holding (50 % = 2500 > 1000): nothing
    assert.deepEqual(rows([buy, dec({ action: 'SELL', target_allocation_pct: '50' })]).at(-1), ['SELL', 'target_allocation_pct', '0', '80000', '1000', 'target_already_met']);
  });

  it('CLOSE sells everything and ignores sizes; HOLD trades nothing', () => {
    const buy = dec({ action: 'BUY', quantity: '10' }); // cash 99800
    assert.deepEqual(rows([buy, dec({ action: 'CLOSE', quantity: '3' })]).at(-1), ['CLOSE', 'all', '-10', '100000', '0', 'sizing_ignored']);
    assert.deepEqual(rows([buy, dec({ action: 'HOLD', target_allocation_pct: '90' })]).at(-1), ['HOLD', 'none', '0', '99800', '10', 'sizing_ignored']);
    assert.deepEqual(rows([dec({ action: 'CLOSE' })]), [['CLOSE', 'all', '0', '100000', '0', 'nothing_held']]);
  });

  it('sells only what is held, never short', () => {
    assert.deepEqual(rows([dec({ action: 'SELL', quantity: '5' })]), [['SELL', 'quantity', '0', '100000', '0', 'nothing_held']]);
    assert.deepEqual(rows([dec({ action: 'BUY', quantity: '5' }), dec({ action: 'REDUCE', quantity: '8' })]).at(-1), ['REDUCE', 'quantity', '-5', '100000', '0', 'sell_clipped_to_holding']);
  });

  it('buys only what cash pays for', () => {
    // 6000 at 20 = 120000 > 100000: cut(100000/20) = 5000; then no cash at all
    assert.deepEqual(rows([dec({ action: 'BUY', quantity: '6000' }), dec({ action: 'BUY', quantity: '1' })]), [
      ['BUY', 'quantity', '5000', '0', '5000', 'buy_clipped_to_cash'],
      ['BUY', 'quantity', '0', '0', '5000', 'no_cash'],
    ]);
  });

  it('uses the first size given, notes the others, and refuses a negative size', () => {
    assert.deepEqual(rows([dec({ action: 'BUY', quantity: '2', notional: '999' })]), [['BUY', 'quantity', '2', '99960', '2', 'sizing_ignored']]);
    assert.deepEqual(rows([dec({ action: 'BUY', quantity: '-2' })]), [['BUY', 'quantity', '0', '100000', '0', 'invalid_size']]);
  });

  it('does not apply a decision without a price, and says why', () => {
    const r = run([dec({ action: 'BUY', quantity: '1', price: null, price_missing_reason: 'not_configured' })]);
    assert.deepEqual(r.applied.map((a) => [a.sizing, a.traded_quantity, a.price, a.notes.join()]), [['none', '0', null, 'unpriced']]);
    assert.match(r.notes[0]!.message, /not_configured/);
    assert.deepEqual(r.values, [{ date: day, value: '100000.00' }]); // still starts the curve
  });

  it('values at the close, and starts the curve at the first record, not before', () => {
    // 1000 bought at 20 (cash 80000), valued at the close of 25: 80000 + 25000
    const r = reconstructModel([dec({ action: 'BUY', quantity: '1000' })], ['2026-01-30', day, '2026-02-03'], { XYZ: [{ date: day, close: '25' }] });
    assert.deepEqual(r.values, [
      { date: day, value: '105000.00' },
      { date: '2026-02-03', value: '105000.00' }, // no close that day: last price kept
    ]);
  });
});

describe('broker accounting (trade-derived)', () => {
  it('applies fills exactly, with fees, and notes negative cash and short positions once', () => {
    const r = reconstructBroker(
      [
        { id: 'f1', executed_at: `${day}T15:00:00Z`, symbol: 'XYZ', side: 'buy', quantity: '6000', price: '20', fee: '1.5' },
        { id: 'f2', executed_at: `${day}T15:01:00Z`, symbol: 'XYZ', side: 'sell', quantity: '7000', price: '21' },
        { id: 'f3', executed_at: `${day}T15:02:00Z`, symbol: 'XYZ', side: 'buy', quantity: '0', price: '21' },
      ],
      cal,
      { XYZ: [{ date: day, close: '25' }] },
    );
    // f1: cash 100000 − 120000 − 1.5 = −20001.5; f2: + 147000 = 126998.5, XYZ −1000
    assert.deepEqual(r.applied.map((a) => [a.traded_quantity, a.cash_after, a.position_after, a.notes.join()]), [
      ['6000', '-20001.5', '6000', 'negative_cash'],
      ['-7000', '126998.5', '-1000', 'short_position'],
      ['0', '126998.5', '-1000', 'invalid_size'],
    ]);
    // close: 126998.5 − 1000 × 25
    assert.deepEqual(r.values, [{ date: day, value: '101998.50' }]);
  });
});
