// What the public sees of a performance report: the document of GET /v1/agents/{handle}/performance
// (JSON or CSV) and the profile's `portfolios`, `performance` and caveats.
// It owns the public field names, the CSV columns and the size bounds of both.
// The JSON document is bounded by the agent's age: one series row (about 70 bytes) per benchmark
// trading day since the first record (about 85 KB for five years), plus at most POSITIONS_SHOWN
// positions, RECENT_NOTES notes and, for a broker, POSITIONS_SHOWN reconciled positions per connection.

import { csvDocument, csvNumber, csvText } from './csv.ts';
import { Dec } from '../method/perf/numbers.ts';
import type { BenchmarkBasis, Caveat, Method, Portfolio, PublishedReport } from '../method/perf/engine.ts';
import type { OutcomePage } from './outcome-pages.ts';
import type { Computed, PortfolioReport } from './types.ts';

/** Positions listed by the performance document (the largest by value); the profile lists PROFILE_POSITIONS. */
export const POSITIONS_SHOWN = 500;
export const PROFILE_POSITIONS = 20;
export const CSV_COLUMNS = ['date', 'value', 'daily_return', 'benchmark_value'] as const;

/** The method named where no report is computed yet: the one the service computes (service.ts). */
export const PUBLISHED_METHOD: Method = 'perf_v2';

export type Links = { self: string; csv: string; profile: string; export: string; outcomes?: string };

/** When a report could not be had at all (the provider failed and nothing was stored). */
export type Failed = { status: 'unavailable'; portfolio: Portfolio; code: 'provider_error'; reason: string };

function largest(positions: PublishedReport['holdings']['positions'], n: number) {
  const value = (p: { quantity: string; mark: string }) => new Dec(p.quantity).times(p.mark).abs();
  return [...positions].sort((a, b) => value(b).cmp(value(a)) || (a.symbol < b.symbol ? -1 : 1)).slice(0, n);
}

function holdingsView(report: PublishedReport, n: number) {
  const receivable = report.holdings.receivable === undefined ? {} : { receivable: report.holdings.receivable };
  return { cash: report.holdings.cash, ...receivable, positions: largest(report.holdings.positions, n), positions_total: report.holdings.positions.length };
}

/** perf_v2: the corporate actions applied (and not) and the restatement, as the report gives them. */
function corporateView(report: PublishedReport) {
  return report.corporate_actions === undefined ? {} : { corporate_actions: report.corporate_actions, restatement: report.restatement ?? null };
}

/** GET /v1/agents/{handle}/performance as JSON. */
export function performanceDocument(handle: string, r: PortfolioReport, links: Links) {
  if (r.status === 'unavailable') {
    return { object: 'performance' as const, agent: handle, portfolio: r.portfolio, status: r.status, code: r.code, reason: r.reason, method: PUBLISHED_METHOD, links };
  }
  const p = r.report;
  return {
    object: 'performance' as const,
    agent: handle,
    portfolio: r.portfolio,
    status: r.status,
    method: p.method,
    basis: p.basis,
    synthetic: p.synthetic,
    price_source: r.price_source,
    as_of: p.as_of,
    computed_at: r.computed_at,
    through_seq: r.through_seq,
    stale: r.stale,
    inception: p.inception,
    start_value: p.start_value,
    caveats: p.caveats,
    metrics: p.metrics,
    benchmark: p.benchmark,
    hit_rate: p.hit_rate,
    holdings: holdingsView(p, POSITIONS_SHOWN),
    records: p.records,
    notes: p.notes,
    ...corporateView(p),
    reconciliation: r.reconciliation === null ? null : r.reconciliation.map((c) => ({
      ...c, positions: Array.isArray(c.positions) ? c.positions.slice(0, POSITIONS_SHOWN) : [],
    })),
    series: p.series,
    links,
  };
}

/** The daily series as CSV (csv.ts: RFC 4180, CRLF): date, value, daily_return, benchmark_value (empty when none). */
export function performanceCsv(r: PortfolioReport): string {
  const series = r.status === 'computed' ? r.report.series : [];
  return csvDocument(CSV_COLUMNS, series.map((s) => [csvText(s.date), csvNumber(s.value), csvNumber(s.daily_return), csvNumber(s.benchmark_value ?? null)]));
}

type Section = { portfolio: Portfolio; report: PortfolioReport | Failed; url: string; csvUrl: string };

/** The profile's portfolios, performance and caveats from the model and broker reports. */
export function profileSections(sections: Section[]) {
  const computed = sections.filter((s): s is Section & { report: Computed } => s.report.status === 'computed');
  const portfolios = computed.map(({ portfolio, report: r, url }) => ({
    portfolio,
    basis: r.report.basis,
    synthetic: r.report.synthetic,
    as_of: r.report.as_of,
    inception: r.report.inception,
    start_value: r.report.start_value,
    value: r.report.series.at(-1)?.value ?? r.report.start_value,
    ...holdingsView(r.report, PROFILE_POSITIONS),
    performance_url: url,
  }));
  const summary = (s: Section) => {
    if (s.report.status !== 'computed') return { status: 'unavailable' as const, code: s.report.code, reason: s.report.reason };
    const r = s.report;
    return {
      status: 'computed' as const,
      basis: r.report.basis,
      synthetic: r.report.synthetic,
      as_of: r.report.as_of,
      computed_at: r.computed_at,
      stale: r.stale,
      inception: r.report.inception,
      metrics: r.report.metrics,
      benchmark: { symbol: r.report.benchmark.symbol, basis: r.report.benchmark.basis, metrics: r.report.benchmark.metrics },
      hit_rate: r.report.hit_rate,
      url: s.url,
      csv_url: s.csvUrl,
    };
  };
  const bySection = Object.fromEntries(sections.map((s) => [s.portfolio, summary(s)]));
  const performance = computed.length === 0 ? null : { method: (computed[0] as Section & { report: Computed }).report.report.method, model: bySection.model ?? null, broker: bySection.broker ?? null };
  const caveats: Caveat[] = [];
  const add = (c: Caveat) => {
    if (!caveats.some((x) => x.code === c.code)) caveats.push(c);
  };
  if (computed.length === 0) {
    add({ code: 'portfolio_not_computed', message: 'No model portfolio or broker portfolio is computed for this agent: portfolios is empty because nothing could be built from its records yet (the caveats below say why), not because it holds nothing.' });
    add({ code: 'performance_not_computed', message: 'No performance is computed for this agent: performance is null. Nothing on this profile states a return.' });
  }
  for (const s of sections) {
    if (s.report.status === 'computed') for (const c of s.report.report.caveats) add(c);
    else add({ code: `${s.portfolio}_performance_unavailable`, message: `No ${s.portfolio} performance: ${s.report.reason}.` });
  }
  return { portfolios, performance, caveats };
}

export type OutcomeLinks = { performance: string; csv: string; export: string };

/** GET /v1/agents/{handle}/performance/outcomes as JSON: a page of decision outcomes and what they were computed against. */
export function outcomesDocument(handle: string, page: OutcomePage & { report: PortfolioReport }, paging: { url: string; nextCursor: string | null; next: string | null }, links: OutcomeLinks) {
  const r = page.report;
  return {
    object: 'list' as const,
    url: paging.url,
    agent: handle,
    portfolio: 'model' as const,
    method: r.status === 'computed' ? r.report.method : PUBLISHED_METHOD,
    status: r.status,
    reason: r.status === 'computed' ? null : r.reason,
    as_of: r.status === 'computed' ? r.report.as_of : null,
    through_seq: r.status === 'computed' ? r.through_seq : null,
    synthetic: r.status === 'computed' ? r.report.synthetic : false,
    price_source: r.status === 'computed' ? r.price_source : null,
    data: page.rows,
    has_more: page.hasMore,
    next_cursor: paging.nextCursor,
    next: paging.next,
    links,
  };
}

/** A report's headline (the `return` badge): its return since inception and the benchmark's over the same days. */
export type ReportHeadline = {
  cumulative_return: string | null; benchmark_return: string | null; benchmark: string | null;
  /** The benchmark's basis: its total return (perf_v2's default), its price return, or partial (some of its corporate actions unknown). */
  benchmark_basis: BenchmarkBasis;
  synthetic: boolean; reason: string | null;
};

export function headlineOf(report: Pick<PublishedReport, 'metrics' | 'benchmark' | 'synthetic'>): ReportHeadline {
  const own = report.metrics.cumulative_return;
  return {
    cumulative_return: own.value,
    benchmark_return: report.benchmark.metrics?.cumulative_return.value ?? null,
    benchmark: report.benchmark.symbol,
    benchmark_basis: report.benchmark.basis ?? 'price_return',
    synthetic: report.synthetic,
    reason: own.value === null ? own.reason : null,
  };
}
