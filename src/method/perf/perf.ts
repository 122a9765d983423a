// perf_v1: a portfolio's daily series, its metrics and the benchmark's, in one report.
// It owns the assembly of a performance report from plain inputs (decisions or fills, their prices,
// daily closes, the benchmark's closes). Pure: no I/O; the caller fetches and stores.
// The method is written out, with a worked example, in docs/perf_v1.md.

import { historyVerdict, reconstructTimeWeighted, type ActivityInput } from './broker-history.ts';
import { computeMetrics, relativeMetrics, type Metrics, type RelativeMetrics } from './metrics.ts';
import { Dec, money, ratio } from './numbers.ts';
import { OUTCOME_HORIZONS, decisionOutcomes, hitRate, type DecisionOutcome, type HitRate } from './outcomes.ts';
import { reconstructBroker, reconstructModel, type Close, type DecisionInput, type FillInput, type Note, type Reconstruction, type SeriesPoint } from './portfolio.ts';

export const METHOD = 'perf_v1';

export type BenchmarkInput = {
  symbol: string;
  /** The benchmark's daily closes (price return: split-adjusted, dividends not reinvested), in date order. */
  closes: Close[];
  /** The benchmark's price at the portfolio's first record, observed at receipt like a decision's. */
  inception_price?: string | null;
};

export type SeriesRow = { date: string; value: string; daily_return: string; benchmark_value: string | null };

export type PerformanceReport = {
  method: typeof METHOD;
  portfolio: 'model' | 'broker';
  basis: 'decisions_at_receipt_price' | 'trade_derived' | 'time_weighted';
  synthetic: boolean;
  caveats: string[];
  inception: string | null;
  start_value: string;
  series: SeriesRow[];
  metrics: Metrics & RelativeMetrics;
  benchmark: {
    symbol: string;
    basis: 'price_return';
    base_price: string | null;
    base_from: 'inception_price' | 'previous_close' | 'first_close' | null;
    metrics: Metrics | null;
  };
  outcomes?: { decisions: DecisionOutcome[]; hit_rate: { [h: string]: HitRate } };
  reconstruction: Pick<Reconstruction, 'applied' | 'cash' | 'positions'>;
  notes: Note[];
};

/** The valuation calendar: the benchmark's close dates, from the inception date on, up to `asOf`. */
export function calendarOf(benchmark: BenchmarkInput, asOf?: string): string[] {
  return benchmark.closes.map((c) => c.date).filter((d) => asOf === undefined || d <= asOf);
}

/** `date`: the date of the base price (perf_v2 applies the benchmark's actions dated after it). */
export type Base = { price: string | null; from: PerformanceReport['benchmark']['base_from']; date: string | null };

/** The benchmark's base price: observed at the first record, else the last close before its date, else the first close. */
export function benchmarkBase(benchmark: BenchmarkInput, inceptionDate: string): Base {
  if (benchmark.inception_price) return { price: benchmark.inception_price, from: 'inception_price', date: inceptionDate };
  const before = benchmark.closes.filter((c) => c.date < inceptionDate).at(-1);
  if (before) return { price: before.close, from: 'previous_close', date: before.date };
  const first = benchmark.closes.find((c) => c.date >= inceptionDate);
  return first ? { price: first.close, from: 'first_close', date: first.date } : { price: null, from: null, date: null };
}

function assemble(
  portfolio: 'model' | 'broker',
  rec: Reconstruction,
  benchmark: BenchmarkInput,
  synthetic: boolean,
  caveats: string[],
): PerformanceReport {
  const inceptionDate = rec.inception === null ? null : new Date(Date.parse(rec.inception)).toISOString().slice(0, 10);
  const base: Base = inceptionDate === null ? { price: null, from: null, date: null } : benchmarkBase(benchmark, inceptionDate);
  const benchClose = new Map(benchmark.closes.map((c) => [c.date, c.close]));
  const benchValues = base.price === null ? null : rec.values.map((p) => ({ date: p.date, value: benchmarkValue(rec.start_value, benchClose.get(p.date) as string, base.price as string) }));
  const { series, metrics, benchmarkMetrics } = summarise(rec.start_value, inceptionDate, rec.values, benchValues);
  return {
    method: METHOD,
    portfolio,
    basis: portfolio === 'model' ? 'decisions_at_receipt_price' : 'trade_derived',
    synthetic,
    caveats,
    inception: rec.inception,
    start_value: rec.start_value,
    series,
    metrics,
    benchmark: {
      symbol: benchmark.symbol,
      basis: 'price_return',
      base_price: base.price,
      base_from: base.from,
      metrics: benchmarkMetrics,
    },
    reconstruction: { applied: rec.applied, cash: rec.cash, positions: rec.positions },
    notes: rec.notes,
  };
}

/** B_d = start × close_d / base, 2 decimals. */
export function benchmarkValue(start: string, close: string, base: string): string {
  return money(new Dec(start).times(close).div(base));
}

/**
 * The published series (with daily returns) and every metric of a valued series and of its
 * benchmark (null when there is no benchmark base): the part of a report that depends only on
 * the published values.
 */
export function summarise(start: string, inceptionDate: string | null, values: SeriesPoint[], benchValues: SeriesPoint[] | null) {
  let previous = new Dec(start);
  const series: SeriesRow[] = values.map((p, i) => {
    const v = new Dec(p.value);
    const daily = previous.isZero() ? new Dec(0) : v.div(previous).minus(1);
    previous = v;
    return { date: p.date, value: p.value, daily_return: ratio(daily), benchmark_value: benchValues === null ? null : (benchValues[i] as SeriesPoint).value };
  });
  const metrics = computeMetrics(start, inceptionDate ?? '1970-01-01', values);
  const relative: RelativeMetrics =
    benchValues === null
      ? { beta: { value: null, reason: 'no benchmark price' }, excess_return: { value: null, reason: 'no benchmark price' } }
      : relativeMetrics(start, values, benchValues);
  const benchmarkMetrics = benchValues === null || inceptionDate === null ? null : computeMetrics(start, inceptionDate, benchValues);
  return { series, metrics: { ...metrics, ...relative }, benchmarkMetrics };
}

export type ModelInput = {
  decisions: DecisionInput[];
  /** Daily closes of every symbol decided on, in date order. */
  closes: Record<string, Close[]>;
  benchmark: BenchmarkInput;
  /** Last date valued (default: the benchmark's last close). */
  as_of?: string;
  /** True when any price came from the synthetic provider. */
  synthetic?: boolean;
};

export function modelPerformance(input: ModelInput): PerformanceReport {
  const rec = reconstructModel(input.decisions, calendarOf(input.benchmark, input.as_of), input.closes);
  const caveats = [
    `model portfolio: decisions applied at the price observed when the service received them, from ${money(new Dec(rec.start_value))} USD in cash; no fees, no slippage, no short sales, no leverage`,
    `benchmark ${input.benchmark.symbol}: price return (split-adjusted, dividends not reinvested)`,
  ];
  if (input.synthetic) caveats.push('synthetic prices: not market data');
  const report = assemble('model', rec, input.benchmark, input.synthetic === true, caveats);
  const decisions = decisionOutcomes(input.decisions, input.closes);
  const hit_rate: { [h: string]: HitRate } = {};
  for (const h of OUTCOME_HORIZONS) hit_rate[`${h}d`] = hitRate(decisions.map((o) => o.at[h]));
  hit_rate.stated = hitRate(decisions.map((o) => o.stated.outcome));
  report.outcomes = { decisions, hit_rate };
  return report;
}

export type BrokerInput = {
  fills: FillInput[];
  /**
   * The account's imported activity records (dividends, splits, deposits, withdrawals, fees...).
   * When they make the history complete from a zero balance (broker-history.ts), the curve is
   * time-weighted; otherwise it stays trade-derived and the caveat says what is missing.
   */
  activities?: ActivityInput[];
  closes: Record<string, Close[]>;
  benchmark: BenchmarkInput;
  opening_value?: string;
  as_of?: string;
  synthetic?: boolean;
};

export function brokerPerformance(input: BrokerInput): PerformanceReport {
  const calendar = calendarOf(input.benchmark, input.as_of);
  const verdict = input.activities === undefined ? null : historyVerdict(input.fills, input.activities);
  if (verdict?.complete) {
    const rec = reconstructTimeWeighted(input.fills, input.activities ?? [], calendar, input.closes);
    const caveats = [
      `time-weighted: the account rebuilt from a zero balance before its first deposit (${verdict.opening}) with its imported fills, dividends, splits, fees, deposits and withdrawals; deposits and withdrawals neutralised; published as the growth of ${money(new Dec(rec.start_value))} USD`,
      `benchmark ${input.benchmark.symbol}: price return (split-adjusted, dividends not reinvested)`,
    ];
    if (input.synthetic) caveats.push('synthetic prices: not market data');
    return { ...assemble('broker', rec, input.benchmark, input.synthetic === true, caveats), basis: 'time_weighted' };
  }
  const rec = reconstructBroker(input.fills, calendar, input.closes, input.opening_value);
  const caveats = [
    verdict === null
      ? `trade-derived: imported fills applied from ${money(new Dec(rec.start_value))} USD; deposits, withdrawals and dividends are not imported (rule 7)`
      : `trade-derived: imported fills applied from ${money(new Dec(rec.start_value))} USD; the account's history is not complete from a known starting balance, missing ${verdict.missing.join('; ')}`,
    `benchmark ${input.benchmark.symbol}: price return (split-adjusted, dividends not reinvested)`,
  ];
  if (input.synthetic) caveats.push('synthetic prices: not market data');
  return assemble('broker', rec, input.benchmark, input.synthetic === true, caveats);
}

