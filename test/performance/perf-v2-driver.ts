// Drives the perf_v2 engine over a world of records, raw closes and corporate actions the way the
// service does: from scratch with everything known at once, or in steps (each valuing through
// one date, with the records and actions that arrived by then), starting again from scratch with
// everything known when a step answers `restate` or `out_of_order`. Shared by the hand-computed
// vectors (perf-v2.test.ts) and the properties (test/property/performance.property.test.ts).
import assert from 'node:assert/strict';
import { closesStoredBefore, type ActionInput, type CloseSave } from '../../src/method/perf/actions.ts';
import { advance, publish, startState, type EngineState, type PublishOptions, type PublishedReport } from '../../src/method/perf/engine.ts';
import { benchmarkBase } from '../../src/method/perf/perf.ts';
import type { Close, DecisionInput } from '../../src/method/perf/portfolio.ts';

export type World = {
  start_value?: string;
  benchmark: { symbol: string; closes: Close[]; inception_price?: string | null };
  closes: Record<string, Close[]>;
  decisions: DecisionInput[];
  actions: ActionInput[];
};

/** One step: value through `through` with the decisions and actions given (those already given are skipped by the engine or the driver). */
export type Step = { through: string; decisions: DecisionInput[]; actions: ActionInput[] };

/** The instant this world's closes were stored: the close of date D at D + 1, 00:30 UTC (as the pricing job keeps them). */
export const storedAt = (date: string) => new Date(Date.parse(`${date}T00:30:00.000Z`) + 86_400_000).toISOString();

/** The actions with when a close they change was stored before them (actions.ts closesStoredBefore), by storedAt. */
export function withStoredCloses(w: World, actions: ActionInput[]): ActionInput[] {
  const saves = (list: Close[]): CloseSave[] => list.map((c) => ({ fetched_at: storedAt(c.date), last_date: c.date }));
  const bySymbol = new Map<string, CloseSave[]>([[w.benchmark.symbol, saves(w.benchmark.closes)], ...Object.entries(w.closes).map(([s, l]) => [s, saves(l)] as [string, CloseSave[]])]);
  return closesStoredBefore(actions, (symbol) => bySymbol.get(symbol) ?? []);
}

const inRange = (list: Close[], after: string | null, through: string) => list.filter((c) => (after === null || c.date > after) && c.date <= through);

function closesFor(w: World, after: string | null, through: string): Record<string, Close[]> {
  return Object.fromEntries(Object.entries(w.closes).map(([s, l]) => [s, inRange(l, after, through)]));
}

function base(w: World, decisions: DecisionInput[]) {
  const first = decisions[0];
  return first === undefined ? undefined : benchmarkBase({ symbol: w.benchmark.symbol, closes: w.benchmark.closes, inception_price: w.benchmark.inception_price ?? null }, first.recorded_at.slice(0, 10));
}

/** From scratch: every decision and action given, valued through `through`. */
export function fromScratch(w: World, through: string, decisions: DecisionInput[] = w.decisions, actions: ActionInput[] = w.actions): EngineState {
  const got = advance(startState('model', w.benchmark.symbol, w.start_value, 'perf_v2'), {
    decisions, through, benchmark: inRange(w.benchmark.closes, null, through), benchmarkBase: base(w, decisions), closes: closesFor(w, null, through), actions: withStoredCloses(w, actions),
  });
  assert.ok(got.ok, got.ok ? '' : got.message);
  return got.state;
}

/** In steps; returns the final state, the state after each step and how many steps started again from scratch. */
export function stepwise(w: World, steps: Step[]): { state: EngineState; states: EngineState[]; restarts: number } {
  let state = startState('model', w.benchmark.symbol, w.start_value, 'perf_v2');
  const decisions: DecisionInput[] = [];
  const actions: ActionInput[] = [];
  const states: EngineState[] = [];
  let restarts = 0;
  for (const step of steps) {
    const fresh = step.decisions;
    decisions.push(...fresh);
    actions.push(...step.actions);
    const got = advance(state, {
      decisions: fresh, through: step.through, benchmark: inRange(w.benchmark.closes, state.valued_through, step.through),
      benchmarkBase: state.inception === null ? base(w, fresh) : undefined, closes: closesFor(w, state.valued_through, step.through), actions: withStoredCloses(w, step.actions),
    });
    if (got.ok) state = JSON.parse(JSON.stringify(got.state)) as EngineState; // stored as JSON between steps, as the service does
    else {
      restarts++;
      state = fromScratch(w, step.through, decisions, actions);
    }
    states.push(state);
  }
  return { state, states, restarts };
}

/** The published report as text: what byte-identity is checked on. */
export const text = (s: EngineState, options: PublishOptions = {}): string => JSON.stringify(publish(s, { synthetic: false, caveats: [] }, null, options));
export const report = (s: EngineState, options: PublishOptions = {}): PublishedReport => publish(s, { synthetic: false, caveats: [] }, null, options);

/** Steps valuing through each of `dates`: the decisions dated up to it, the actions learned (UTC date of seen_at) up to it. */
export function daily(w: World, dates: string[]): Step[] {
  const given = new Set<DecisionInput | ActionInput>();
  return dates.map((through) => {
    const take = <T extends DecisionInput | ActionInput>(list: T[], dateOf: (x: T) => string) => list.filter((x) => !given.has(x) && dateOf(x) <= through && given.add(x));
    return { through, decisions: take(w.decisions, (d) => d.recorded_at.slice(0, 10)), actions: take(w.actions, (a) => a.seen_at.slice(0, 10)) };
  });
}
