// The broker curve from the account's own history (broker-history.ts, docs/perf_v1.md §3.1): a
// hand-computed month (a deposit, a buy, a 10:1 split as REMOVE and ADD rows, a dividend and its
// withholding, a sale with its fee, a withdrawal) gives the time-weighted figures computed by hand
// below; an incomplete history stays trade-derived and names what is missing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { activitiesInForce, activityKind, historyVerdict, reconstructTimeWeighted, type ActivityInput } from '../../src/method/perf/broker-history.ts';
import { brokerPerformance } from '../../src/method/perf/perf.ts';
import type { FillInput } from '../../src/method/perf/portfolio.ts';

let n = 0;
const act = (type: string, date: string, amount: string | null, more: Partial<ActivityInput> = {}): ActivityInput => ({
  id: `act_${String(++n).padStart(26, '0')}`, broker: 'alpaca', account_ref: 'acct-1', broker_activity_id: `id-${n}`, activity_type: type,
  activity_sub_type: null, status: 'executed', symbol: null, quantity: null, amount, occurred_at: date, ...more,
});

const activities: ActivityInput[] = [
  act('CSD', '2026-01-05', '12000'),
  act('SPLIT', '2026-01-08', '0', { activity_sub_type: 'FSPLIT', symbol: 'XYZ', quantity: '-10' }),
  act('SPLIT', '2026-01-08', '0', { activity_sub_type: 'FSPLIT', symbol: 'XYZ', quantity: '100' }),
  act('DIV', '2026-01-09', '25', { activity_sub_type: 'CDIV', symbol: 'XYZ', quantity: '100' }),
  act('DIVNRA', '2026-01-09', '-3.75', { symbol: 'XYZ' }),
  act('FEE', '2026-01-12', '-0.02', { activity_sub_type: 'REG', symbol: 'XYZ' }),
  act('CSW', '2026-01-13', '-500'),
];
const fills: FillInput[] = [
  { id: 'exe_1', executed_at: '2026-01-06T15:00:01Z', symbol: 'XYZ', side: 'buy', quantity: '10', price: '1000' },
  { id: 'exe_2', executed_at: '2026-01-12T15:00:01Z', symbol: 'XYZ', side: 'sell', quantity: '50', price: '103' },
];
const dates = ['2026-01-05', '2026-01-06', '2026-01-07', '2026-01-08', '2026-01-09', '2026-01-12', '2026-01-13'];
const xyz = ['1000', '1000', '1010', '102', '101.75', '103', '104'].map((close, i) => ({ date: dates[i]!, close }));
const benchmark = { symbol: 'SPY', closes: dates.map((date) => ({ date, close: '500' })) };

describe('broker history: time-weighted from a complete history', () => {
  it('values the account by hand: 12,000 / 12,000 / 12,100 / 12,200 / 12,196.25 / 12,321.23 / 11,871.23', () => {
    const rec = reconstructTimeWeighted(fills, activities, dates, { XYZ: xyz });
    assert.deepEqual(rec.account_values.map((p) => p.value), ['12000.00', '12000.00', '12100.00', '12200.00', '12196.25', '12321.23', '11871.23']);
    assert.deepEqual(rec.flows, [{ date: '2026-01-05', value: '12000.00' }, { date: '2026-01-13', value: '-500.00' }]);
    // r_d = V_d / (V_{d-1} + F_d) - 1: the deposit day and the withdrawal day are not returns.
    assert.deepEqual(rec.daily_returns.map((p) => p.value), ['0.000000', '0.000000', '0.008333', '0.008264', '-0.000307', '0.010247', '0.004230']);
    assert.deepEqual(rec.values.map((p) => p.value), ['100000.00', '100000.00', '100833.33', '101666.67', '101635.42', '102676.92', '103111.21']);
    assert.deepEqual(rec.positions, [{ symbol: 'XYZ', quantity: '50', mark: '104' }]);
    assert.equal(rec.cash, '6671.23');
  });

  it('the report is time-weighted, says so, and its total return is the chained return (+3.1112 %), not the trade-derived one', () => {
    const report = brokerPerformance({ fills, activities, closes: { XYZ: xyz }, benchmark });
    assert.equal(report.basis, 'time_weighted');
    assert.match(report.caveats[0]!, /^time-weighted: .*first deposit \(2026-01-05\)/);
    assert.ok(!report.caveats.some((c) => c.includes('rule 7')));
    assert.equal(report.series.at(-1)!.value, '103111.21');
    const traded = brokerPerformance({ fills, closes: { XYZ: xyz }, benchmark });
    assert.equal(traded.basis, 'trade_derived');
    assert.match(traded.caveats[0]!, /rule 7/);
    assert.notEqual(traded.series.at(-1)!.value, '103111.21', 'without the split row the trade-derived curve shows the split as a fall');
  });
});

describe('broker history: what makes it incomplete, named', () => {
  const missing = (f: FillInput[], a: ActivityInput[]) => {
    const v = historyVerdict(f, a);
    assert.equal(v.complete, false);
    return v.complete ? '' : v.missing.join(' | ');
  };
  it('nothing imported', () => assert.match(missing(fills, []), /the account's deposits, withdrawals and dividends \(none imported\)/));
  it('no opening deposit', () => assert.match(missing(fills, activities.slice(1)), /opening balance of the alpaca account acct-1: its history does not start with a deposit \(first imported: SPLIT on 2026-01-08\)/));
  it('a fill before the first deposit', () => {
    const early = [{ ...fills[0]!, executed_at: '2026-01-02T15:00:00Z' }, fills[1]!];
    assert.match(missing(early, activities), /what funded the fills before the first deposit \(2026-01-05\)/);
  });
  it('an activity the method cannot apply, counted by type', () => {
    const more = [...activities, act('JNLC', '2026-01-07', '100'), act('SPIN', '2026-01-07', '0', { symbol: 'XYZ' }), act('JNLC', '2026-01-07', '5')];
    assert.match(missing(fills, more), /cannot apply \(alpaca JNLC ×2, alpaca SPIN ×1\)/);
  });
  it('a SnapTrade SPLIT (the meaning of its units is undocumented) and a stock dividend', () => {
    assert.equal(activityKind({ broker: 'snaptrade', activity_type: 'SPLIT', activity_sub_type: null }), 'not_applied');
    assert.equal(activityKind({ broker: 'alpaca', activity_type: 'DIV', activity_sub_type: 'SDIV' }), 'not_applied');
    assert.equal(activityKind({ broker: 'snaptrade', activity_type: 'CONTRIBUTION', activity_sub_type: null }), 'deposit');
  });
  it('a sale beyond the imported holding', () => {
    assert.match(missing(fills, activities.filter((a) => a.activity_type !== 'SPLIT')), /shares sold beyond the imported holding \(XYZ\)/);
  });
  it('the trade-derived report names what is missing instead of rule 7', () => {
    const report = brokerPerformance({ fills, activities: activities.slice(1), closes: { XYZ: xyz }, benchmark });
    assert.equal(report.basis, 'trade_derived');
    assert.match(report.caveats[0]!, /not complete from a known starting balance, missing the opening balance/);
  });
});

describe('broker history: corrections', () => {
  it('a cancelled version of an activity supersedes it: its cash is not counted', () => {
    const div = activities[3]!;
    const cancelled = { ...div, id: 'act_cancel', status: 'canceled' };
    assert.deepEqual(activitiesInForce([...activities, cancelled]).map((a) => a.id), activities.filter((a) => a !== div).map((a) => a.id));
    const rec = reconstructTimeWeighted(fills, [...activities, cancelled], dates, { XYZ: xyz });
    assert.equal(rec.account_values.at(-1)!.value, '11846.23', '25 less than with the dividend');
  });
});
