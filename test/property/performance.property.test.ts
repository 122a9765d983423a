// Properties of perf_v2 (src/method/perf/engine.ts), on random worlds of decisions, raw closes and
// corporate actions (splits, reverse splits, cash and stock dividends, other types, unusable terms,
// corrections, actions learned before or after their date, on held symbols, others and the benchmark):
//  1. for any order of arrival (steps valuing through random dates, records arriving in chain
//     order with some of the next day's, actions arriving at random steps), the report reached
//     step by step is byte-identical to the one computed from scratch, both benchmark bases;
//  2. a report computed at any step equals the final one on every day before the earliest date
//     of an action it did not know yet (or of any version of one corrected later): raw closes
//     mean nothing before an ex-date changes (a report
//     computed before a split equals, up to the split, the one computed after it).
// CI tries ENGINE_DEFAULT_RUNS worlds; LEDGER_PROPERTY_RUNS=<n> tries n (npm run test:nightly).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { effectiveDate, type ActionInput } from '../../src/method/perf/actions.ts';
import type { Action, Close, DecisionInput } from '../../src/method/perf/portfolio.ts';
import { fromScratch, report, stepwise, text, type Step, type World } from '../performance/perf-v2-driver.ts';
import { engineRuns, nightly } from './runs.ts';

const RUNS = engineRuns();
const TIMEOUT = nightly() ? { timeout: Infinity } : {};
const DAY = 86_400_000;
const T0 = Date.UTC(2025, 0, 6);
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const SYMBOLS = ['AAA', 'BBB', 'CCC'];
const ACTIONS: Action[] = ['BUY', 'SELL', 'HOLD', 'INCREASE', 'REDUCE', 'CLOSE'];
const LENGTH = 40; // calendar days

const trading = Array.from({ length: LENGTH }, (_, i) => dateOf(T0 + i * DAY)).filter((d) => ![0, 6].includes(new Date(d).getUTCDay()));

/** Raw closes: a walk, with a hole now and then (a symbol's close may be missing on a trading day). */
const closesArb = (start: number) => fc.array(fc.tuple(fc.integer({ min: -40, max: 40 }), fc.boolean()), { minLength: trading.length, maxLength: trading.length })
  .map((steps) => {
    let p = start;
    const out: Close[] = [];
    steps.forEach(([move, missing], i) => {
      p = Math.max(1, p * (1 + move / 1000));
      if (!missing || i === 0) out.push({ date: trading[i] as string, close: p.toFixed(2) });
    });
    return out;
  });

const decisionArb = fc.record({
  minute: fc.integer({ min: 0, max: (LENGTH - 1) * 1440 }),
  symbol: fc.constantFrom(...SYMBOLS),
  action: fc.oneof({ arbitrary: fc.constant<Action>('BUY'), weight: 3 }, { arbitrary: fc.constantFrom(...ACTIONS), weight: 2 }),
  size: fc.oneof(
    fc.record({ quantity: fc.integer({ min: 1, max: 400 }).map(String) }),
    fc.record({ target_allocation_pct: fc.integer({ min: 0, max: 60 }).map(String) }),
    fc.record({ notional: fc.integer({ min: 100, max: 30000 }).map(String) }),
    fc.constant({}),
  ),
  price: fc.option(fc.integer({ min: 100, max: 30000 }).map((c) => (c / 100).toFixed(2)), { freq: 12 }),
});

const actionArb = fc.record({
  id: fc.integer({ min: 0, max: 7 }),
  kind: fc.constantFrom('forward_split', 'reverse_split', 'cash_dividend', 'stock_dividend', 'spin_off', 'bad_split'),
  symbol: fc.constantFrom('AAA', 'AAA', 'BBB', 'CCC', 'IDX', 'ZZZ'),
  day: fc.integer({ min: -2, max: LENGTH }),
  payLag: fc.integer({ min: 0, max: 15 }),
  ratio: fc.integer({ min: 2, max: 10 }),
  rate: fc.integer({ min: 1, max: 300 }).map((c) => (c / 100).toFixed(2)),
  seen: fc.integer({ min: -10 * 24, max: (LENGTH + 5) * 24 }), // hours from T0
});

type Drawn = { id: number; kind: string; symbol: string; day: number; payLag: number; ratio: number; rate: string; seen: number };

function toAction(a: Drawn): ActionInput {
  const ex = dateOf(T0 + a.day * DAY);
  const base = { provider_id: `ca-${a.id}`, symbol: a.symbol, ex_date: ex, payable_date: null, process_date: ex, old_rate: null, new_rate: null, rate: null, seen_at: new Date(T0 + a.seen * 3600_000).toISOString() };
  switch (a.kind) {
    case 'forward_split': return { ...base, type: 'forward_split', new_rate: String(a.ratio), old_rate: '1' };
    case 'reverse_split': return { ...base, type: 'reverse_split', new_rate: '1', old_rate: String(a.ratio) };
    case 'cash_dividend': return { ...base, type: 'cash_dividend', rate: a.rate, payable_date: dateOf(T0 + (a.day + a.payLag) * DAY) };
    case 'stock_dividend': return { ...base, type: 'stock_dividend', rate: '0.05' };
    case 'bad_split': return { ...base, type: 'forward_split', new_rate: '0', old_rate: '1' };
    default: return { ...base, type: a.kind };
  }
}

const worldArb = fc.record({
  closes: fc.tuple(closesArb(50), closesArb(8), closesArb(300), closesArb(400)),
  decisions: fc.array(decisionArb, { minLength: 1, maxLength: 25 }),
  actions: fc.array(actionArb, { minLength: 1, maxLength: 10 }),
  inceptionPrice: fc.boolean(),
}).map(({ closes, decisions, actions, inceptionPrice }): World => {
  const [a, b, c, idx] = closes;
  const sorted = [...decisions].sort((x, y) => x.minute - y.minute);
  const list: DecisionInput[] = sorted.map((d, i) => ({
    id: `d${String(i).padStart(3, '0')}`, recorded_at: new Date(T0 + d.minute * 60_000).toISOString(), symbol: d.symbol, action: d.action, ...d.size,
    price: d.price, price_missing_reason: d.price === null ? 'unknown_symbol' : null,
  }));
  // same provider id twice = a correction; exactly equal facts are one fact
  const seen = new Set<string>();
  const acts = actions.map(toAction).filter((x) => !seen.has(`${x.provider_id}\n${x.seen_at}`) && seen.add(`${x.provider_id}\n${x.seen_at}`));
  return { benchmark: { symbol: 'IDX', closes: idx, inception_price: inceptionPrice ? idx[0]!.close : null }, closes: { AAA: a, BBB: b, CCC: c }, decisions: list, actions: acts };
});

/** Steps: random valuation dates; records in chain order (all of the step's days, some of the next day's); each action at a random step. */
const scheduleArb = fc.record({
  cuts: fc.subarray(trading, { minLength: 0, maxLength: 12 }),
  early: fc.array(fc.nat(3), { minLength: 14, maxLength: 14 }),
  arrivals: fc.array(fc.nat(13), { minLength: 10, maxLength: 10 }),
});

function schedule(w: World, s: { cuts: string[]; early: number[]; arrivals: number[] }): Step[] {
  const throughs = [...s.cuts, trading.at(-1) as string];
  let given = 0;
  return throughs.map((through, k) => {
    const last = k === throughs.length - 1;
    const next = dateOf(Date.parse(through) + DAY);
    let upto = given;
    while (upto < w.decisions.length && w.decisions[upto]!.recorded_at.slice(0, 10) <= through) upto++;
    for (let extra = s.early[k] ?? 0; extra > 0 && upto < w.decisions.length && w.decisions[upto]!.recorded_at.slice(0, 10) <= next; extra--) upto++;
    if (last) upto = w.decisions.length;
    const decisions = w.decisions.slice(given, upto);
    given = upto;
    const actions = w.actions.filter((_, i) => Math.min(s.arrivals[i] ?? 0, throughs.length - 1) === k);
    return { through, decisions, actions };
  });
}

test('perf_v2: step by step, in any order of arrival, equals from scratch to the byte', TIMEOUT, () => {
  fc.assert(fc.property(worldArb, scheduleArb, (w, s) => {
    const steps = schedule(w, s);
    const run = stepwise(w, steps);
    const scratch = fromScratch(w, trading.at(-1) as string);
    assert.equal(text(run.state), text(scratch));
    assert.equal(text(run.state, { benchmark_return: 'price' }), text(scratch, { benchmark_return: 'price' }));
  }), { numRuns: RUNS });
});

test('perf_v2: a report equals the later one on every day before the first action it did not know', TIMEOUT, () => {
  fc.assert(fc.property(worldArb, scheduleArb, (w, s) => {
    const steps = schedule(w, s);
    const run = stepwise(w, steps);
    const final = report(run.state).series;
    const finalPrice = report(run.state, { benchmark_return: 'price' }).series;
    steps.forEach((_, k) => {
      // an action not known yet changes days from its date; a correction, from the date of any version of its provider id
      const lateIds = new Set(steps.slice(k + 1).flatMap((step) => step.actions).map((a) => a.provider_id));
      const unknown = w.actions.filter((a) => lateIds.has(a.provider_id)).map((a) => effectiveDate(a) as string);
      const cutoff = unknown.reduce((m, d) => (d < m ? d : m), '9999-12-31');
      const early = report(run.states[k]!).series.filter((r) => r.date < cutoff);
      assert.deepEqual(early, final.slice(0, early.length), `step ${k} (through ${steps[k]!.through}), cutoff ${cutoff}`);
      const earlyPrice = report(run.states[k]!, { benchmark_return: 'price' }).series.filter((r) => r.date < cutoff);
      assert.deepEqual(earlyPrice, finalPrice.slice(0, earlyPrice.length));
    });
  }), { numRuns: RUNS });
});

test('perf_v2: a split known before its ex-date changes nothing before it', TIMEOUT, () => {
  fc.assert(fc.property(worldArb, fc.integer({ min: 5, max: trading.length - 2 }), fc.integer({ min: 2, max: 10 }), fc.boolean(), (w, at, ratio, reverse) => {
    const ex = trading[at] as string;
    const split: ActionInput = {
      provider_id: 'the-split', type: reverse ? 'reverse_split' : 'forward_split', symbol: 'AAA', ex_date: ex, payable_date: null, process_date: ex,
      new_rate: reverse ? '1' : String(ratio), old_rate: reverse ? String(ratio) : '1', rate: null, seen_at: new Date(T0 - DAY).toISOString(),
    };
    const before = report(fromScratch({ ...w, actions: [] }, trading[at - 1] as string)).series;
    const after = report(fromScratch({ ...w, actions: [split] }, trading.at(-1) as string)).series;
    assert.deepEqual(after.slice(0, before.length), before);
  }), { numRuns: RUNS });
});
