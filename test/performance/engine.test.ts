// The resumable engine reaches, from scratch and in any number of steps, exactly the figures of
// modelPerformance / brokerPerformance on the same records and closes (random agents, fixed seeds).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { advance, publish, startState, type EngineState, type Method } from '../../src/method/perf/engine.ts';
import { benchmarkBase, brokerPerformance, modelPerformance, type PerformanceReport } from '../../src/method/perf/perf.ts';
import type { Action, Close, DecisionInput, FillInput } from '../../src/method/perf/portfolio.ts';

/** mulberry32: a small seeded generator, so every failure replays. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DAY = 86_400_000;
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const T0 = Date.UTC(2024, 0, 1);
const ACTIONS: Action[] = ['BUY', 'SELL', 'HOLD', 'INCREASE', 'REDUCE', 'CLOSE'];
const HORIZONS = [null, '3 trading days', '2 weeks', '1 month', 'P10D', 'long term'];

type World = { days: string[]; bench: Close[]; closes: Record<string, Close[]>; decisions: DecisionInput[]; fills: FillInput[] };

function world(seed: number, nDays = 120, nDecisions = 150): World {
  const r = rng(seed);
  const days: string[] = [];
  for (let i = 0; i < nDays; i++) {
    const ms = T0 + i * DAY;
    const wd = new Date(ms).getUTCDay();
    if (wd !== 0 && wd !== 6) days.push(dateOf(ms));
  }
  const walk = (start: number, everyDay: boolean): Close[] => {
    let p = start;
    const out: Close[] = [];
    for (let i = 0; i < nDays; i++) {
      const date = dateOf(T0 + i * DAY);
      if (!everyDay && !days.includes(date)) continue;
      if (r() < 0.03) continue; // a missing close now and then
      p = Math.max(0.5, p * (1 + (r() - 0.5) * 0.06));
      out.push({ date, close: p.toFixed(2) });
    }
    return out;
  };
  const closes = { AAA: walk(20, false), BBB: walk(150, false), 'BTC/USD': walk(40000, true), ZZZ: [] as Close[] };
  const bench = walk(500, false).filter((c) => days.includes(c.date));
  const symbols = Object.keys(closes);
  const decisions: DecisionInput[] = [];
  let t = T0 + 14 * 3600_000;
  for (let i = 0; i < nDecisions; i++) {
    t += Math.floor(r() * (nDays * DAY) / nDecisions);
    if (r() < 0.1) t += 0; // equal instants happen
    const symbol = symbols[Math.floor(r() * symbols.length)] as string;
    const size = r();
    const d: DecisionInput = {
      id: `d${String(i).padStart(4, '0')}`,
      recorded_at: new Date(t).toISOString(),
      symbol,
      action: ACTIONS[Math.floor(r() * ACTIONS.length)] as Action,
      time_horizon: HORIZONS[Math.floor(r() * HORIZONS.length)] ?? null,
      price: r() < 0.08 ? null : (10 + r() * 200).toFixed(2),
      price_missing_reason: 'unknown_symbol',
    };
    if (size < 0.3) d.target_allocation_pct = (r() * 60).toFixed(1);
    else if (size < 0.55) d.quantity = (r() * 300).toFixed(3);
    else if (size < 0.75) d.notional = (r() * 30000).toFixed(2);
    else if (size < 0.78) d.quantity = '-1';
    decisions.push(d);
  }
  const fills: FillInput[] = decisions.filter((d) => d.price !== null && d.action !== 'HOLD').map((d, i) => ({
    id: `f${String(i).padStart(4, '0')}`,
    executed_at: new Date(Date.parse(d.recorded_at) + 60_000).toISOString(),
    symbol: d.symbol,
    side: d.action === 'BUY' || d.action === 'INCREASE' ? 'buy' : 'sell',
    quantity: (1 + r() * 50).toFixed(2),
    price: d.price as string,
    fee: r() < 0.3 ? '1.25' : null,
  }));
  return { days, bench, closes, decisions, fills };
}

const inRange = (list: Close[], after: string | null, through: string) => list.filter((c) => (after === null || c.date > after) && c.date <= through);
const sliceCloses = (w: World, after: string | null, through: string) =>
  Object.fromEntries(Object.entries(w.closes).map(([s, l]) => [s, inRange(l, after, through)]));

/** Runs the engine over `w` in steps ending at each of `cuts` (dates), then at `asOf`. */
function stepwise(w: World, portfolio: 'model' | 'broker', cuts: string[], asOf: string, r: () => number, method: Method = 'perf_v1'): EngineState {
  let state = startState(portfolio, 'SPY', undefined, method);
  const records = portfolio === 'model' ? w.decisions : [...w.fills].sort((a, b) => (a.executed_at < b.executed_at ? -1 : 1));
  const dateOfRecord = (x: DecisionInput | FillInput) => ('recorded_at' in x ? x.recorded_at : x.executed_at).slice(0, 10);
  let applied = 0;
  for (const through of [...cuts, asOf]) {
    // every record dated up to `through` (yesterday, to the service), and some of the next day's (today's)
    let upto = applied;
    while (upto < records.length && dateOfRecord(records[upto]!) <= through) upto++;
    const today = dateOf(Date.parse(through) + DAY);
    let extra = Math.floor(r() * 4);
    while (through !== asOf && extra-- > 0 && upto < records.length && dateOfRecord(records[upto]!) <= today) upto++;
    if (through === asOf) upto = records.length;
    const batch = records.slice(applied, upto);
    const first = batch[0] ?? records[0];
    const base = first ? benchmarkBase({ symbol: 'SPY', closes: w.bench }, dateOfRecord(first)) : undefined;
    const next = advance(state, {
      [portfolio === 'model' ? 'decisions' : 'fills']: batch,
      through,
      benchmark: inRange(w.bench, state.valued_through, through),
      benchmarkBase: base,
      closes: sliceCloses(w, state.valued_through, through),
    });
    assert.ok(next.ok, next.ok ? '' : next.message);
    state = next.state;
    applied = upto;
  }
  return state;
}

function comparable(p: PerformanceReport | ReturnType<typeof publish>) {
  return { series: p.series, metrics: p.metrics, benchmark: { base_price: p.benchmark.base_price, base_from: p.benchmark.base_from, metrics: p.benchmark.metrics }, inception: p.inception };
}

describe('resumable engine', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`model, seed ${seed}: one step and many steps equal modelPerformance`, () => {
      const w = world(seed);
      const asOf = w.days.at(-1) as string;
      const reference = modelPerformance({ decisions: w.decisions, closes: w.closes, benchmark: { symbol: 'SPY', closes: w.bench }, as_of: asOf });
      const r = rng(seed * 7);
      const cuts = w.days.filter(() => r() < 0.15);
      for (const state of [stepwise(w, 'model', [], asOf, r), stepwise(w, 'model', cuts, asOf, r)]) {
        const published = publish(state, { synthetic: false, caveats: [] });
        assert.deepEqual(comparable(published), comparable(reference));
        assert.deepEqual(published.holdings, { cash: reference.reconstruction.cash, positions: reference.reconstruction.positions });
        for (const [key, h] of [['1d', 1], ['5d', 5], ['21d', 21]] as const) assert.deepEqual(published.hit_rate?.[key], reference.outcomes?.hit_rate[`${h}d`], key);
        assert.deepEqual(published.hit_rate?.stated, reference.outcomes?.hit_rate.stated);
        const codes: Record<string, number> = {};
        for (const n of reference.notes) codes[n.code] = (codes[n.code] ?? 0) + 1;
        assert.deepEqual(published.notes.counts, codes);
        assert.deepEqual(published.notes.recent, reference.notes.slice(-20));
      }
    });

    it(`perf_v2 without corporate actions, seed ${seed}: the figures of perf_v1 (both benchmark bases)`, () => {
      const w = world(seed);
      const asOf = w.days.at(-1) as string;
      const reference = modelPerformance({ decisions: w.decisions, closes: w.closes, benchmark: { symbol: 'SPY', closes: w.bench }, as_of: asOf });
      const r = rng(seed * 13);
      const state = stepwise(w, 'model', w.days.filter(() => r() < 0.15), asOf, r, 'perf_v2');
      for (const basis of ['total', 'price'] as const) {
        const published = publish(state, { synthetic: false, caveats: [] }, null, { benchmark_return: basis });
        assert.equal(published.method, 'perf_v2');
        assert.deepEqual(comparable(published), comparable(reference));
        assert.deepEqual(published.corporate_actions, { events: [], not_applied: [] });
      }
    });

    it(`broker, seed ${seed}: steps equal brokerPerformance`, () => {
      const w = world(seed + 100);
      const asOf = w.days.at(-1) as string;
      const reference = brokerPerformance({ fills: w.fills, closes: w.closes, benchmark: { symbol: 'SPY', closes: w.bench }, as_of: asOf });
      const r = rng(seed * 11);
      const state = stepwise(w, 'broker', w.days.filter(() => r() < 0.2), asOf, r);
      const published = publish(state, { synthetic: false, caveats: [] });
      assert.deepEqual(comparable(published), comparable(reference));
      assert.deepEqual(published.holdings, { cash: reference.reconstruction.cash, positions: reference.reconstruction.positions });
      assert.equal(published.hit_rate, null);
    });
  }

  it('refuses a record dated on or before the day already valued, and leaves the state untouched', () => {
    const w = world(9);
    const first = advance(startState('model', 'SPY'), { decisions: w.decisions.slice(0, 5), through: '2024-02-01', benchmark: inRange(w.bench, null, '2024-02-01'), closes: sliceCloses(w, null, '2024-02-01') });
    assert.ok(first.ok);
    const before = JSON.stringify(first.state);
    const late = advance(first.state, { decisions: [{ ...w.decisions[0]!, id: 'late', recorded_at: '2024-01-31T10:00:00.000Z' }], through: '2024-02-02', benchmark: [], closes: {} });
    assert.equal(late.ok, false);
    assert.equal(JSON.stringify(first.state), before);
  });

  it('a state survives JSON exactly', () => {
    const w = world(10);
    const asOf = w.days.at(-1) as string;
    const state = stepwise(w, 'model', [], asOf, rng(1));
    assert.deepEqual(JSON.parse(JSON.stringify(state)), state);
  });
});
