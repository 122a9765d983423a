// perf_v1 written again from docs/perf_v1.md alone, for the reproduction test: it
// imports nothing of src/performance. Inputs are what anyone can get: the decisions of an export,
// the price observations published with them, daily closes from any market-data source, and a
// published series. Decimals through decimal.js at the doc's 40 significant digits, half-even.
import { Decimal } from 'decimal.js';

const D = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -100, toExpPos: 100 });
type D = InstanceType<typeof D>;

export type Decision = {
  id: string; recorded_at: string; symbol: string; action: string; time_horizon: string | null;
  target_allocation_pct: string | null; quantity: string | null; notional: string | null; price: string | null;
};
export type Close = { date: string; close: string };

const cut = (x: D) => x.toDecimalPlaces(8, Decimal.ROUND_DOWN);
const cents = (x: D) => x.toFixed(2, Decimal.ROUND_HALF_EVEN);
const six = (x: D) => x.toFixed(6, Decimal.ROUND_HALF_EVEN);
const fromDouble = (x: number, places: number) => new D(String(x)).toFixed(places, Decimal.ROUND_HALF_EVEN);
const dateOf = (instant: string) => new Date(Date.parse(instant)).toISOString().slice(0, 10);
const days = (a: string, b: string) => Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);

/** §2: the model portfolio, valued (§4) at each benchmark close from the first decision's date through `asOf`. */
export function modelSeries(decisions: Decision[], closes: Record<string, Close[]>, benchmark: Close[], asOf: string) {
  let cash = new D(100000);
  const held = new Map<string, D>();
  const last = new Map<string, D>();
  const value = () => [...held].reduce((v, [s, q]) => v.plus(q.times(last.get(s) as D)), cash);
  const apply = (d: Decision) => {
    if (d.price === null || new D(d.price).lte(0)) return;
    const p = new D(d.price);
    last.set(d.symbol, p);
    const q = held.get(d.symbol) ?? new D(0);
    if (d.action === 'HOLD') return;
    const trade = (qty: D) => {
      const n = q.plus(qty);
      if (n.isZero()) held.delete(d.symbol);
      else held.set(d.symbol, n);
      cash = cash.minus(qty.times(p));
    };
    if (d.action === 'CLOSE') {
      if (q.gt(0)) trade(q.neg());
      return;
    }
    const sizing = (['target_allocation_pct', 'quantity', 'notional'] as const).find((f) => d[f] !== null);
    const buying = d.action === 'BUY' || d.action === 'INCREASE';
    let want: D;
    if (sizing === undefined) want = buying ? cut(value().times(10).div(100).div(p)) : d.action === 'SELL' ? q : cut(q.div(2));
    else {
      const n = new D(d[sizing] as string);
      if (n.lt(0) || (sizing === 'target_allocation_pct' && n.gt(100))) return;
      if (sizing === 'quantity') want = n;
      else if (sizing === 'notional') want = cut(n.div(p));
      else {
        const target = cut(value().times(n).div(100).div(p));
        want = buying ? target.minus(q) : q.minus(target);
        if (want.lte(0)) return;
      }
    }
    if (buying) {
      if (cash.lte(0)) return;
      if (want.times(p).gt(cash)) want = cut(cash.div(p));
      if (want.gt(0)) trade(want);
    } else {
      if (q.lte(0)) return;
      if (want.gt(q)) want = q;
      if (want.gt(0)) trade(want.neg());
    }
  };
  const ordered = [...decisions].sort((a, b) => (a.recorded_at < b.recorded_at ? -1 : a.recorded_at > b.recorded_at ? 1 : a.id < b.id ? -1 : 1));
  const byDate = new Map(Object.entries(closes).map(([s, list]) => [s, new Map(list.map((c) => [c.date, c.close]))]));
  const first = ordered[0] ? dateOf(ordered[0].recorded_at) : null;
  const out: Array<{ date: string; value: string }> = [];
  let i = 0;
  for (const { date } of benchmark) {
    if (first === null || date < first || date > asOf) continue;
    while (i < ordered.length && dateOf(ordered[i]!.recorded_at) <= date) apply(ordered[i++]!);
    for (const s of held.keys()) {
      const c = byDate.get(s)?.get(date);
      if (c !== undefined) last.set(s, new D(c));
    }
    out.push({ date, value: cents(value()) });
  }
  while (i < ordered.length) apply(ordered[i++]!);
  return { series: out, cash: cash.toFixed(), held: [...held].sort(([a], [b]) => (a < b ? -1 : 1)).map(([symbol, q]) => ({ symbol, quantity: q.toFixed() })) };
}

/** §4: B_d = 100000 × close_d / base, 2 decimals. */
export function benchmarkValues(bench: Close[], base: string): Map<string, string> {
  return new Map(bench.map((c) => [c.date, cents(new D(100000).times(c.close).div(base))]));
}

type Figure = { value: string | null };

/** §5: every metric from a published series (dates and 2-decimal values) and its start value. */
export function metricsOf(values: Array<{ date: string; value: string }>, inceptionDate: string, bench: Array<{ date: string; value: string }> | null) {
  const n = values.length;
  const exact = (xs: Array<{ value: string }>) => xs.map((x, k) => new D(x.value).div(k === 0 ? 100000 : (xs[k - 1] as { value: string }).value).minus(1));
  const r = exact(values);
  const rd = r.map((x) => x.toNumber());
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = (xs: number[]) => {
    const m = mean(xs);
    return Math.sqrt(xs.reduce((a, x) => a + (x - m) * (x - m), 0) / (xs.length - 1));
  };
  const lastValue = new D((values[n - 1] as { value: string }).value);
  const cumulative = lastValue.div(100000).minus(1);
  const span = days(inceptionDate, (values[n - 1] as { date: string }).date);
  const risky = n >= 252;
  const down = Math.sqrt(rd.reduce((a, x) => a + (x < 0 ? x * x : 0), 0) / n);
  let peak = new D(100000);
  let peakDate = inceptionDate;
  let worst = new D(0);
  let at: { peak: D; peakDate: string; i: number } | null = null;
  values.forEach((p, k) => {
    const v = new D(p.value);
    if (v.gt(peak)) {
      peak = v;
      peakDate = p.date;
    } else if (v.div(peak).minus(1).lt(worst)) {
      worst = v.div(peak).minus(1);
      at = { peak, peakDate, i: k };
    }
  });
  const found = at as { peak: D; peakDate: string; i: number } | null;
  const figures: Record<string, Figure | Record<string, string | null>> = {
    cumulative_return: { value: six(cumulative) },
    time_weighted_return: { value: six(r.reduce((a, x) => a.times(x.plus(1)), new D(1)).minus(1)) },
    annualised_return: { value: span >= 365 ? fromDouble(Math.pow(1 + cumulative.toNumber(), 365 / span) - 1, 6) : null },
    volatility: { value: risky ? fromDouble(sd(rd) * Math.sqrt(252), 6) : null },
    sharpe: { value: risky ? fromDouble((mean(rd) / sd(rd)) * Math.sqrt(252), 4) : null },
    sortino: { value: risky && down > 0 ? fromDouble((mean(rd) / down) * Math.sqrt(252), 4) : null },
    max_drawdown: found === null
      ? { value: six(new D(0)), peak_date: null, trough_date: null, recovery_date: null }
      : {
        value: six(worst), peak_date: found.peakDate, trough_date: values[found.i]!.date,
        recovery_date: values.slice(found.i + 1).find((p) => new D(p.value).gte(found.peak))?.date ?? null,
      },
  };
  if (bench !== null) {
    const rb = exact(bench).map((x) => x.toNumber());
    const cov = (xs: number[], ys: number[]) => {
      const mx = mean(xs);
      const my = mean(ys);
      return xs.reduce((a, x, k) => a + (x - mx) * ((ys[k] as number) - my), 0) / (xs.length - 1);
    };
    figures.beta = { value: risky ? fromDouble(cov(rd, rb) / cov(rb, rb), 4) : null };
    figures.excess_return = { value: six(lastValue.div(100000).minus(new D((bench[n - 1] as { value: string }).value).div(100000))) };
  }
  return figures;
}

/** The parts of a published metric that a figure is: its value, and a drawdown's dates. */
export function published(metrics: Record<string, { value: string | null; peak_date?: string | null; trough_date?: string | null; recovery_date?: string | null }>, names: string[]) {
  return Object.fromEntries(names.map((k) => {
    const m = metrics[k] as { value: string | null; peak_date?: string | null; trough_date?: string | null; recovery_date?: string | null };
    return [k, k === 'max_drawdown' && m.value !== null ? { value: m.value, peak_date: m.peak_date, trough_date: m.trough_date, recovery_date: m.recovery_date } : { value: m.value }];
  }));
}

/** §5, decision outcomes: hits and resolved outcomes at 1, 5 and 21 closes and at the stated horizon. */
export function hitRates(decisions: Decision[], closes: Record<string, Close[]>) {
  const tally: Record<string, [number, number]> = { '1d': [0, 0], '5d': [0, 0], '21d': [0, 0], stated: [0, 0] };
  for (const d of decisions) {
    const dir = d.action === 'BUY' || d.action === 'INCREASE' ? 1 : d.action === 'HOLD' ? 0 : -1;
    if (dir === 0 || d.price === null) continue;
    const date = dateOf(d.recorded_at);
    const after = (closes[d.symbol] ?? []).filter((c) => c.date > date);
    const count = (c: Close | undefined, key: string) => {
      if (c === undefined) return;
      const t = tally[key] as [number, number];
      t[1]++;
      if (new D(c.close).div(d.price as string).minus(1).times(dir).gt(0)) t[0]++;
    };
    count(after[0], '1d');
    count(after[4], '5d');
    count(after[20], '21d');
    const end = statedEnd(date, d.time_horizon);
    if (typeof end === 'number') count(after[end - 1], 'stated');
    else if (end !== null) count(after.find((c) => c.date >= end), 'stated');
  }
  return Object.fromEntries(Object.entries(tally).map(([k, [hits, counted]]) => [k, { value: counted >= 20 ? six(new D(hits).div(counted)) : null, hits, counted }]));
}

export type Outcome = { date: string | null; close: string | null; return: string | null; hit: boolean | null };

/**
 * §5 and §8, each decision's outcomes: the close resolving each horizon among `closes` (every close
 * of the symbol through the report's as_of), its return from the receipt price and whether it went
 * the decision's way (null for HOLD); all null when there is no price or no such close yet.
 */
export function outcomesOf(decisions: Decision[], closes: Record<string, Close[]>) {
  return decisions.map((d) => {
    const dir = d.action === 'BUY' || d.action === 'INCREASE' ? 1 : d.action === 'HOLD' ? 0 : -1;
    const date = dateOf(d.recorded_at);
    const after = (closes[d.symbol] ?? []).filter((c) => c.date > date);
    const at = (c: Close | undefined): Outcome => {
      if (c === undefined || d.price === null || new D(d.price).lte(0)) return { date: null, close: null, return: null, hit: null };
      const r = new D(c.close).div(d.price).minus(1);
      return { date: c.date, close: c.close, return: six(r), hit: dir === 0 ? null : r.times(dir).gt(0) };
    };
    const end = statedEnd(date, d.time_horizon);
    const stated = typeof end === 'number' ? at(after[end - 1]) : end === null ? at(undefined) : at(after.find((c) => c.date >= end));
    return { record_id: d.id, symbol: d.symbol, action: d.action, price: d.price, direction: dir, '1d': at(after[0]), '5d': at(after[4]), '21d': at(after[20]), stated };
  });
}

/** The horizon grammar of §5: trading days as a count, calendar units as the date they end on. */
function statedEnd(date: string, horizon: string | null): number | string | null {
  if (horizon === null) return null;
  const t = horizon.trim().toLowerCase();
  const iso = /^p([1-9][0-9]{0,3})([dwmy])$/.exec(t);
  const plain = /^([1-9][0-9]{0,3})\s*([a-z][a-z -]*[a-z]|[a-z])$/.exec(t);
  const [n, unit] = iso ? [Number(iso[1]), iso[2] as string] : plain ? [Number(plain[1]), plain[2] as string] : [0, ''];
  if (/^(trading[ -]?days?|td)$/.test(unit)) return n;
  const [y, m, dd] = date.split('-').map(Number) as [number, number, number];
  const addDays = (k: number) => new Date(Date.UTC(y, m - 1, dd + k)).toISOString().slice(0, 10);
  const addMonths = (k: number) => {
    const total = y * 12 + (m - 1) + k;
    const last = new Date(Date.UTC(Math.floor(total / 12), (total % 12) + 1, 0)).getUTCDate();
    return new Date(Date.UTC(Math.floor(total / 12), total % 12, Math.min(dd, last))).toISOString().slice(0, 10);
  };
  if (/^(d|days?)$/.test(unit)) return addDays(n);
  if (/^(w|wk|wks|weeks?)$/.test(unit)) return addDays(7 * n);
  if (/^(m|mo|mos|months?)$/.test(unit)) return addMonths(n);
  if (/^(y|yr|yrs|years?)$/.test(unit)) return addMonths(12 * n);
  return null;
}
