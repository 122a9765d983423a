// Decision outcomes of perf_v1: each priced decision's return from its receipt price to the close
// 1, 5 and 21 trading days later and at its stated horizon where that parses; hit rates.
// It owns the horizon grammar and the hit rule. Pure: no I/O.

import { daysFromCivil, daysInMonth } from '../../core/time.ts';
import { Dec, ratio } from './numbers.ts';
import type { Close, DecisionInput } from './portfolio.ts';

export const OUTCOME_HORIZONS = [1, 5, 21] as const;
export const MIN_OUTCOMES_FOR_HIT_RATE = 20;

export type Horizon = { kind: 'trading_days'; n: number } | { kind: 'days'; n: number } | { kind: 'months'; n: number };

export type OutcomeValue = { date: string; close: string; return: string; hit: boolean | null } | { date: null; reason: string };

export type DecisionOutcome = {
  record_id: string;
  symbol: string;
  action: string;
  price: string | null;
  /** +1 when a rise proves the decision right (BUY, INCREASE), −1 for a fall (SELL, REDUCE, CLOSE), 0 for HOLD. */
  direction: 1 | -1 | 0;
  at: { [h in (typeof OUTCOME_HORIZONS)[number]]: OutcomeValue };
  stated: { horizon: string | null; parsed: Horizon | null; outcome: OutcomeValue };
};

export type HitRate = { value: string; hits: number; counted: number } | { value: null; reason: string; hits: number; counted: number };

const UNITS: Array<[RegExp, (n: number) => Horizon]> = [
  [/^(trading[ -]?days?|td)$/, (n) => ({ kind: 'trading_days', n })],
  [/^(d|days?)$/, (n) => ({ kind: 'days', n })],
  [/^(w|wk|wks|weeks?)$/, (n) => ({ kind: 'days', n: 7 * n })],
  [/^(m|mo|mos|months?)$/, (n) => ({ kind: 'months', n })],
  [/^(y|yr|yrs|years?)$/, (n) => ({ kind: 'months', n: 12 * n })],
];

/**
 * `<n> <unit>` (n from 1 to 9999; units trading days, days, weeks, months, years and their short
 * forms, any case) or an ISO 8601 duration with one designator (P10D, P2W, P3M, P1Y). Anything
 * else ("long term", "1-3 months") does not parse.
 */
export function parseHorizon(text: string | null | undefined): Horizon | null {
  if (typeof text !== 'string') return null;
  const t = text.trim().toLowerCase();
  const iso = /^p([1-9][0-9]{0,3})([dwmy])$/.exec(t);
  if (iso) return (UNITS.find(([re]) => re.test(iso[2] as string)) as [RegExp, (n: number) => Horizon])[1](Number(iso[1]));
  const m = /^([1-9][0-9]{0,3})\s*([a-z][a-z -]*[a-z]|[a-z])$/.exec(t);
  if (!m) return null;
  const unit = UNITS.find(([re]) => re.test(m[2] as string));
  return unit ? unit[1](Number(m[1])) : null;
}

/** The date `h` after `date` (months by calendar, the day clamped to the month's end). */
export function addToDate(date: string, h: Exclude<Horizon, { kind: 'trading_days' }>): string {
  const y = Number(date.slice(0, 4));
  const mo = Number(date.slice(5, 7));
  const d = Number(date.slice(8, 10));
  if (h.kind === 'days') return new Date((daysFromCivil(y, mo, d) + h.n) * 86_400_000).toISOString().slice(0, 10);
  const months = y * 12 + (mo - 1) + h.n;
  const ny = Math.floor(months / 12);
  const nm = (months % 12) + 1;
  const day = Math.min(d, daysInMonth(ny, nm));
  return `${String(ny).padStart(4, '0')}-${String(nm).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** Index of the first close dated after `date` (or on it, when `inclusive`); closes are in date order. */
export function firstIndexFrom(list: Close[], date: string, inclusive = false): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const d = (list[mid] as Close).date;
    if (d < date || (!inclusive && d === date)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function directionOf(action: string): 1 | -1 | 0 {
  if (action === 'BUY' || action === 'INCREASE') return 1;
  if (action === 'SELL' || action === 'REDUCE' || action === 'CLOSE') return -1;
  return 0;
}

/** The outcome of a decision priced `price` at `close` (the close resolving a horizon), or why there is none. */
export function outcomeAt(price: Dec | null, direction: 1 | -1 | 0, close: Close | undefined, pending: string): OutcomeValue {
  if (price === null || price.lte(0)) return { date: null, reason: 'decision has no price at receipt' };
  if (close === undefined) return { date: null, reason: pending };
  const r = new Dec(close.close).div(price).minus(1);
  return { date: close.date, close: close.close, return: ratio(r), hit: direction === 0 ? null : r.times(direction).gt(0) };
}

export function decisionOutcomes(decisions: DecisionInput[], closes: Record<string, Close[]>): DecisionOutcome[] {
  return decisions.map((d) => {
    const direction = directionOf(d.action);
    const list = closes[d.symbol] ?? [];
    const date = new Date(Date.parse(d.recorded_at)).toISOString().slice(0, 10);
    const price = d.price === null ? null : new Dec(d.price);
    const first = firstIndexFrom(list, date, false);
    const outcome = (close: Close | undefined, pending: string) => outcomeAt(price, direction, close, pending);
    const at = Object.fromEntries(OUTCOME_HORIZONS.map((n) => [n, outcome(list[first + n - 1], `pending: fewer than ${n} closes since the decision`)])) as DecisionOutcome['at'];
    const parsed = parseHorizon(d.time_horizon);
    let stated: OutcomeValue;
    if (parsed === null) stated = { date: null, reason: d.time_horizon ? 'time_horizon not understood' : 'no time_horizon' };
    else if (parsed.kind === 'trading_days') stated = outcome(list[first + parsed.n - 1], `pending: fewer than ${parsed.n} closes since the decision`);
    else {
      const target = addToDate(date, parsed);
      stated = outcome(list[firstIndexFrom(list, target, true)], `pending: no close on or after ${target} yet`);
    }
    return { record_id: d.id, symbol: d.symbol, action: d.action, price: price === null ? null : d.price, direction, at, stated: { horizon: d.time_horizon ?? null, parsed, outcome: stated } };
  });
}

/** Share of directional decisions whose outcome at the horizon went their way; HOLD is not counted. */
export function hitRate(outcomes: OutcomeValue[]): HitRate {
  let hits = 0;
  let counted = 0;
  for (const o of outcomes) {
    if (o.date === null || o.hit === null) continue;
    counted++;
    if (o.hit) hits++;
  }
  return hitRateOf(hits, counted);
}

/** The published hit rate of `hits` among `counted` resolved directional outcomes. */
export function hitRateOf(hits: number, counted: number): HitRate {
  if (counted < MIN_OUTCOMES_FOR_HIT_RATE) return { value: null, reason: `needs ${MIN_OUTCOMES_FOR_HIT_RATE} resolved directional decisions, has ${counted}`, hits, counted };
  return { value: ratio(new Dec(hits).div(counted)), hits, counted };
}
