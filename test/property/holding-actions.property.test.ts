// Property (issue 39): for any broker account history (with or without a first deposit, with or
// without the account's split and dividend rows, the market's actions known or not yet, in any
// order of arrival of fills, activities and market facts), each split and dividend of a holding is
// applied exactly once, in the trade-derived book (the engine resumed step by step as the service
// does it, from scratch when an arrival changes which source applies an action) and in the
// time-weighted curve; and the holding ends at the bought quantity times the split's ratio.
// CI tries ENGINE_DEFAULT_RUNS histories; LEDGER_PROPERTY_RUNS sets the number (nightly).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { ActionInput } from '../../src/method/perf/actions.ts';
import { historyVerdict, timeWeightedView, type ActivityInput } from '../../src/method/perf/broker-history.ts';
import { advance, startState, type AppliedAction, type EngineState } from '../../src/method/perf/engine.ts';
import { keepsActions, tradeDerivedActions, uncoveredForTimeWeighted } from '../../src/method/perf/holding-actions.ts';
import { START_VALUE, type Close, type FillInput } from '../../src/method/perf/portfolio.ts';
import { engineRuns, nightly } from './runs.ts';

const DAY = 86_400_000;
const DATES = Array.from({ length: 40 }, (_, i) => new Date(Date.parse('2026-02-02') + i * DAY)).filter((d) => ![0, 6].includes(d.getUTCDay())).map((d) => d.toISOString().slice(0, 10));

type World = {
  qty: number; ratio: number; buyDay: number; splitDay: number; divDay: number; deposit: boolean; splitRows: boolean; divRows: boolean;
  /** The step (0..3) at which each input arrives: the fill, the activities, the market's split, the market's dividend. */
  arrivals: [fill: number, activities: number, split: number, dividend: number];
};

const world: fc.Arbitrary<World> = fc.record({
  qty: fc.integer({ min: 1, max: 50 }), ratio: fc.integer({ min: 2, max: 10 }), buyDay: fc.integer({ min: 1, max: 5 }),
  splitDay: fc.integer({ min: 6, max: 12 }), divDay: fc.integer({ min: 13, max: 18 }),
  deposit: fc.boolean(), splitRows: fc.boolean(), divRows: fc.boolean(),
  arrivals: fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 })),
});

const day = (i: number) => DATES[i] as string;
/** The stock's close: 1,000 before the split's ex-date, 1,000 / ratio from it. */
const closesOf = (w: World): Close[] => DATES.map((d, i) => ({ date: d, close: String(i < w.splitDay ? 1000 : 1000 / w.ratio) }));
const benchmark: Close[] = DATES.map((d) => ({ date: d, close: '500' }));

function inputs(w: World) {
  const fill: FillInput = { id: 'exe_1', executed_at: `${day(w.buyDay)}T15:00:00.000000000Z`, symbol: 'SPLT', side: 'buy', quantity: String(w.qty), price: '1000' };
  const row = (id: string, type: string, at: string, fields: Partial<ActivityInput>): ActivityInput => ({
    id, broker: 'alpaca', account_ref: 'acct', broker_activity_id: id, activity_type: type, activity_sub_type: null, status: 'executed', symbol: null, quantity: null, amount: null, occurred_at: at, ...fields,
  });
  const held = w.qty * w.ratio;
  const activities: ActivityInput[] = [];
  if (w.deposit) activities.push(row('act_dep', 'CSD', day(0), { amount: '100000' }));
  if (w.splitRows) {
    activities.push(row('act_rem', 'SPLIT', day(w.splitDay), { activity_sub_type: 'FSPLIT', symbol: 'SPLT', quantity: String(-w.qty) }));
    activities.push(row('act_add', 'SPLIT', day(w.splitDay), { activity_sub_type: 'FSPLIT', symbol: 'SPLT', quantity: String(held) }));
  }
  if (w.divRows) activities.push(row('act_div', 'DIV', day(w.divDay + 2), { activity_sub_type: 'CDIV', symbol: 'SPLT', quantity: String(held), amount: String(held * 0.25) }));
  const action = (id: string, fields: Partial<ActionInput>): ActionInput => ({
    provider_id: id, type: 'cash_dividend', symbol: 'SPLT', ex_date: null, payable_date: null, process_date: null, old_rate: null, new_rate: null, rate: null, seen_at: '2026-02-01T00:00:00Z', ...fields,
  });
  const split = action('mkt-split', { type: 'forward_split', ex_date: day(w.splitDay), process_date: day(w.splitDay), new_rate: String(w.ratio), old_rate: '1' });
  const dividend = action('mkt-div', { ex_date: day(w.divDay), payable_date: day(w.divDay + 2), process_date: day(w.divDay + 2), rate: '0.25' });
  return { fill, activities, split, dividend };
}

/** The trade-derived state as the service keeps it: resumed at each step, from scratch when it must be. */
function tradeDerived(w: World): EngineState {
  const { fill, activities, split, dividend } = inputs(w);
  const closes = closesOf(w);
  const throughs = [day(8), day(14), day(20), day(DATES.length - 1)];
  let state: EngineState | null = null;
  let applied = new Set<string>();
  for (let step = 0; step < 4; step++) {
    const fills = w.arrivals[0] <= step ? [fill] : [];
    if (fills.length === 0) continue;
    const acts = w.arrivals[1] <= step ? activities : [];
    const market = [...(w.arrivals[2] <= step ? [split] : []), ...(w.arrivals[3] <= step ? [dividend] : [])];
    const actions = tradeDerivedActions(acts, market);
    const through = throughs[step] as string;
    const from = (s: EngineState | null) => {
      const after = s?.valued_through ?? null;
      const news = fills.filter((f) => !applied.has(f.id));
      const window = (list: Close[]) => list.filter((c) => (after === null || c.date > after) && c.date <= through);
      return advance(s ?? startState('broker', 'SPY', START_VALUE, 'perf_v2'), {
        fills: news, through, benchmark: window(benchmark), closes: { SPLT: window(closes) }, actions,
        benchmarkBase: { price: '500', from: 'previous_close', date: day(w.buyDay - 1) },
      });
    };
    let got: ReturnType<typeof advance> | null = state !== null && keepsActions(state.corporate?.actions ?? [], actions) ? from(state) : null;
    if (got === null || !got.ok) {
      applied = new Set();
      got = from(null);
    }
    assert.ok(got.ok, JSON.stringify(got));
    state = got.state;
    applied = new Set(fills.map((f) => f.id));
  }
  return state as EngineState;
}

/** The split events and dividend events of SPLT: ex-date events (trade-derived), or a dividend paid from the account's row (time-weighted). */
const applied = (events: readonly AppliedAction[]) => ({
  splits: events.filter((e) => e.symbol === 'SPLT' && e.phase === 'ex' && e.type.endsWith('split')).length,
  dividends: events.filter((e) => e.symbol === 'SPLT' && e.type === 'cash_dividend' && (e.phase === 'ex' || e.source === 'account')).length,
});

test('each split and dividend of a holding is applied exactly once, whatever the history and the order of arrival', { timeout: nightly() ? 0 : 60_000 }, () => {
  fc.assert(fc.property(world, (w) => {
    const final = tradeDerived(w);
    // once every input has arrived (step 3 at the latest), the book holds the split shares and has the dividend once
    {
      const counts = applied(final.corporate!.events.filter((e) => e.phase === 'ex'));
      assert.deepEqual(counts, { splits: 1, dividends: 1 }, JSON.stringify(final.corporate!.events));
      assert.deepEqual(final.book.holdings.map(([s, q]) => [s, q]), [['SPLT', String(w.qty * w.ratio)]]);
      const sources = final.corporate!.events.filter((e) => e.phase === 'ex').map((e) => e.source);
      assert.deepEqual(sources, [w.splitRows ? 'account' : 'market', w.divRows ? 'account' : 'market']);
    }
    // the time-weighted curve of the complete history: the same holding, each event once
    const { fill, activities, split, dividend } = inputs(w);
    if (w.deposit && historyVerdict([fill], activities).complete) {
      const tw = timeWeightedView([fill], activities, DATES.slice(w.buyDay), { SPLT: closesOf(w) }, uncoveredForTimeWeighted(activities, [split, dividend]));
      assert.deepEqual(applied(tw.events ?? []), { splits: 1, dividends: 1 }, JSON.stringify(tw.events));
      assert.deepEqual(tw.positions.map((p) => [p.symbol, p.quantity]), [['SPLT', String(w.qty * w.ratio)]]);
      const cash = Number(tw.cash);
      assert.equal(cash, 100000 - 1000 * w.qty + 0.25 * w.qty * w.ratio);
    }
  }), { numRuns: engineRuns() });
});
