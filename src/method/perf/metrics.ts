// Metrics of perf_v1, computed from a published daily series alone (dates and 2-decimal values),
// so that anyone holding the series reaches the same figures.
// It owns the formulas and each metric's minimum history. Pure: no I/O.

import { daysFromCivil } from '../../core/time.ts';
import { Dec, fromDouble, ratio, type Dec as D } from './numbers.ts';
import type { SeriesPoint } from './portfolio.ts';

export const TRADING_DAYS_PER_YEAR = 252;
/** Risk-free rate and minimum acceptable return of Sharpe and Sortino: 0 (stated, not looked up). */
export const RISK_FREE_RATE = 0;
export const MIN_DAYS_ANNUALISED = 365;
export const MIN_RETURNS_RISK = 252;

export type Metric = { value: string; reason?: undefined } | { value: null; reason: string };

export type Drawdown = { value: string; peak_date: string | null; trough_date: string | null; recovery_date: string | null } | { value: null; reason: string };

export type Metrics = {
  days: number;
  daily_returns: number;
  cumulative_return: Metric;
  time_weighted_return: Metric;
  annualised_return: Metric;
  volatility: Metric;
  sharpe: Metric;
  sortino: Metric;
  max_drawdown: Drawdown;
};

export type RelativeMetrics = { beta: Metric; excess_return: Metric };

export function dayNumber(date: string): number {
  return daysFromCivil(Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10)));
}

const none = (reason: string): { value: null; reason: string } => ({ value: null, reason });

/** Exact daily returns of the published values, the first against the start value. */
export function exactReturns(start: string, values: SeriesPoint[]): D[] {
  const out: D[] = [];
  let previous = new Dec(start);
  for (const p of values) {
    const v = new Dec(p.value);
    out.push(previous.isZero() ? new Dec(0) : v.div(previous).minus(1));
    previous = v;
  }
  return out;
}

export function mean(xs: number[]): number {
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/** Sample standard deviation (n − 1), summed in date order. */
export function stdev(xs: number[]): number {
  const m = mean(xs);
  let sum = 0;
  for (const x of xs) sum += (x - m) * (x - m);
  return Math.sqrt(sum / (xs.length - 1));
}

/** Downside deviation below 0: sqrt(Σ min(r, 0)² / n). */
export function downsideDeviation(xs: number[]): number {
  let sum = 0;
  for (const x of xs) if (x < 0) sum += x * x;
  return Math.sqrt(sum / xs.length);
}

/** Sample covariance (n − 1). */
export function covariance(xs: number[], ys: number[]): number {
  const mx = mean(xs);
  const my = mean(ys);
  let sum = 0;
  for (let i = 0; i < xs.length; i++) sum += ((xs[i] as number) - mx) * ((ys[i] as number) - my);
  return sum / (xs.length - 1);
}

/**
 * Worst fall from a running peak, value / peak − 1; the start value is the first peak, on the
 * inception date. The first occurrence of the worst fall is reported, with the first later date
 * at which the value is back at that peak (null while it is not).
 */
export function maxDrawdown(start: string, inceptionDate: string, values: SeriesPoint[]): Drawdown {
  if (values.length === 0) return none('no valuation yet');
  let peak = new Dec(start);
  let peakDate = inceptionDate;
  let worst = new Dec(0);
  let at: { peak: D; peakDate: string; trough: number } | null = null;
  values.forEach((p, i) => {
    const v = new Dec(p.value);
    if (v.gt(peak)) {
      peak = v;
      peakDate = p.date;
      return;
    }
    const dd = v.div(peak).minus(1);
    if (dd.lt(worst)) {
      worst = dd;
      at = { peak, peakDate, trough: i };
    }
  });
  const found = at as { peak: D; peakDate: string; trough: number } | null;
  if (found === null) return { value: ratio(new Dec(0)), peak_date: null, trough_date: null, recovery_date: null };
  const recovery = values.slice(found.trough + 1).find((p) => new Dec(p.value).gte(found.peak));
  return { value: ratio(worst), peak_date: found.peakDate, trough_date: (values[found.trough] as SeriesPoint).date, recovery_date: recovery?.date ?? null };
}

export function computeMetrics(start: string, inceptionDate: string, values: SeriesPoint[]): Metrics {
  const n = values.length;
  const last = values[n - 1];
  const days = last === undefined ? 0 : dayNumber(last.date) - dayNumber(inceptionDate);
  const exact = exactReturns(start, values);
  const r = exact.map((x) => x.toNumber());
  const noValue = none('no valuation yet: the first close after the first record has not come');
  if (last === undefined) {
    return { days, daily_returns: 0, cumulative_return: noValue, time_weighted_return: noValue, annualised_return: noValue, volatility: noValue, sharpe: noValue, sortino: noValue, max_drawdown: noValue };
  }
  const cumulative = new Dec(last.value).div(start).minus(1);
  const linked = exact.reduce((acc, x) => acc.times(x.plus(1)), new Dec(1)).minus(1);
  const short = `needs ${MIN_RETURNS_RISK} daily returns, has ${n}`;
  const sd = n >= 2 ? stdev(r) : 0;
  const dd = downsideDeviation(r);
  const scale = Math.sqrt(TRADING_DAYS_PER_YEAR);
  return {
    days,
    daily_returns: n,
    cumulative_return: { value: ratio(cumulative) },
    time_weighted_return: { value: ratio(linked) },
    annualised_return:
      days >= MIN_DAYS_ANNUALISED
        ? { value: fromDouble(Math.pow(1 + cumulative.toNumber(), 365 / days) - 1, 6) }
        : none(`needs ${MIN_DAYS_ANNUALISED} days of history, has ${days}`),
    volatility: n < MIN_RETURNS_RISK ? none(short) : { value: fromDouble(sd * scale, 6) },
    sharpe: n < MIN_RETURNS_RISK ? none(short) : sd === 0 ? none('daily returns do not vary') : { value: fromDouble(((mean(r) - RISK_FREE_RATE) / sd) * scale, 4) },
    sortino: n < MIN_RETURNS_RISK ? none(short) : dd === 0 ? none('no daily return below 0') : { value: fromDouble(((mean(r) - RISK_FREE_RATE) / dd) * scale, 4) },
    max_drawdown: maxDrawdown(start, inceptionDate, values),
  };
}

/** Beta and excess return against a benchmark series on the same dates. */
export function relativeMetrics(start: string, values: SeriesPoint[], benchmark: SeriesPoint[]): RelativeMetrics {
  const n = values.length;
  const last = values[n - 1];
  const lastBench = benchmark[n - 1];
  if (benchmark.length !== n || values.some((p, i) => p.date !== benchmark[i]?.date)) {
    const reason = 'benchmark series does not cover the same dates';
    return { beta: none(reason), excess_return: none(reason) };
  }
  if (last === undefined || lastBench === undefined) return { beta: none('no valuation yet'), excess_return: none('no valuation yet') };
  const excess = new Dec(last.value).div(start).minus(new Dec(lastBench.value).div(start));
  if (n < MIN_RETURNS_RISK) return { beta: none(`needs ${MIN_RETURNS_RISK} daily returns, has ${n}`), excess_return: { value: ratio(excess) } };
  const rp = exactReturns(start, values).map((x) => x.toNumber());
  const rb = exactReturns(start, benchmark).map((x) => x.toNumber());
  const varB = covariance(rb, rb);
  return {
    beta: varB === 0 ? none('benchmark returns do not vary') : { value: fromDouble(covariance(rp, rb) / varB, 4) },
    excess_return: { value: ratio(excess) },
  };
}
