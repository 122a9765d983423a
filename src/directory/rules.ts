// The directory wing (src/directory/): every agent that ever recorded, listed with headline figures
// taken from its stored performance reports, and ranked only on what can be checked.
// This file owns the rules of the board (docs/leaderboard.md states them for users): what an agent's
// projected row holds, when a figure ranks (the minimum history; demo and synthetic never rank),
// the sort keys (ties by agent id, the unranked after the ranked), the verification level, and the
// small curve. Pure: the job (job.ts) gathers the facts and writes the row.
import type { Agent } from '../domain/types.ts';
import { LEVEL_SHARE_PERCENT, UNRANKED_KEY, type BoardSort, type Headline } from './port.ts';
import { MIN_RETURNS_RISK } from '../method/perf/metrics.ts';
import type { PublishedReport } from '../method/perf/engine.ts';

/** No figure ranks before this many days of history (first record to the report's last valued day). */
export const MIN_RANK_DAYS = 90;
/** Points of the small curve drawn per agent (the model portfolio's value, sampled evenly, the last always kept). */
export const CURVE_POINTS = 32;
/** How long a listing's first page pins the board: later pages of it are served for this long. */
export const CURSOR_TTL_MS = 15 * 60_000;

/** The figures sorts that rank; the others only order. */
export const RANKED_SORTS: ReadonlySet<BoardSort> = new Set(['excess_return', 'sharpe']);

export type Verification = 'broker_verified' | 'signed' | 'self_reported';

/** What the projection keeps of the stored reports (JSON in the row's `figures`). */
export type Figures = {
  /** The model portfolio: return since the first record, excess over the benchmark, Sharpe, maximum drawdown. */
  model_return: string | null;
  excess_return: string | null;
  sharpe: string | null;
  max_drawdown: string | null;
  benchmark: string | null;
  benchmark_return: string | null;
  /** The broker portfolio's return (trade-derived). */
  broker_return: string | null;
  /** The last valued day of the model report (else the broker's), and when it was computed. */
  as_of: string | null;
  computed_at: string | null;
  /** The model portfolio's value over its start value, CURVE_POINTS at most, oldest first. */
  curve: number[];
};

/** A stored report's text, as far as the directory reads it (performance/service.ts writes it). */
export type StoredReportText = { published: Pick<PublishedReport, 'metrics' | 'benchmark' | 'synthetic' | 'as_of' | 'series' | 'start_value' | 'inception'> };

/** A stored report: when it was computed, its last valued day, and its text (null when of a shape this cannot read). */
export type ReportFacts = { computedAt: string; asOf: string; text: StoredReportText | null };

/** Everything a row is made from, gathered by the job. */
export type HeadlineFacts = {
  agent: Agent;
  records: number;
  decisions: number;
  executions: number;
  signed: number;
  linkToken: number;
  firstRecordAt: string | null;
  lastRecordAt: string | null;
  model: ReportFacts | null;
  broker: ReportFacts | null;
};

const DAY_MS = 86_400_000;

function sampled(report: StoredReportText['published'] | null): number[] {
  if (report === null || report.series.length === 0) return [];
  const start = Number(report.start_value);
  const series = report.series;
  const step = Math.max(1, Math.ceil(series.length / CURVE_POINTS));
  const picked = series.filter((_, i) => i % step === 0 || i === series.length - 1).slice(-CURVE_POINTS);
  return picked.map((s) => Math.round((Number(s.value) / start) * 10_000) / 10_000);
}

export function figuresOf(model: StoredReportText['published'] | null, broker: StoredReportText['published'] | null, computedAt: string | null): Figures {
  return {
    model_return: model?.metrics.cumulative_return.value ?? null,
    excess_return: model?.metrics.excess_return.value ?? null,
    sharpe: model?.metrics.sharpe.value ?? null,
    max_drawdown: model?.metrics.max_drawdown.value ?? null,
    benchmark: model?.benchmark.symbol ?? broker?.benchmark.symbol ?? null,
    benchmark_return: model?.benchmark.metrics?.cumulative_return.value ?? null,
    broker_return: broker?.metrics.cumulative_return.value ?? null,
    as_of: model?.as_of ?? broker?.as_of ?? null,
    computed_at: computedAt,
    curve: sampled(model),
  };
}

/** Whole days from the first record's day to the latest day its reports valued; null without a report. */
export function historyDays(firstRecordAt: string | null, asOf: string | null): number | null {
  if (firstRecordAt === null || asOf === null) return null;
  const first = Date.parse(firstRecordAt.slice(0, 10));
  return Math.max(0, Math.floor((Date.parse(asOf) - first) / DAY_MS));
}

export function verificationOf(h: Pick<Headline, 'executions' | 'linked' | 'decisions' | 'signed'>): Verification {
  if (h.executions > 0 && h.linked * 100 >= h.executions * LEVEL_SHARE_PERCENT) return 'broker_verified';
  if (h.decisions > 0 && h.signed * 100 >= h.decisions * LEVEL_SHARE_PERCENT) return 'signed';
  return 'self_reported';
}

/** Why a figure of this row does not rank, or null when it does. */
export function unrankedReason(h: Pick<Headline, 'demo' | 'synthetic' | 'historyDays'>, value: string | null, figure: 'excess_return' | 'sharpe'): string | null {
  if (h.demo) return 'demo agents are never ranked';
  if (h.synthetic) return 'figures from synthetic prices are never ranked';
  if (h.historyDays === null || value === null) return figure === 'sharpe' ? `no Sharpe yet (it needs ${MIN_RETURNS_RISK} daily returns)` : 'no stored report with a value yet';
  if (h.historyDays < MIN_RANK_DAYS) return `below the minimum history (${MIN_RANK_DAYS} days; has ${h.historyDays})`;
  return null;
}

const descending = (value: string | null, ranks: boolean) => (ranks && value !== null ? -Number(value) : UNRANKED_KEY);
const newestFirst = (instant: string | null) => (instant === null ? UNRANKED_KEY : -Date.parse(instant));

/** The row of one agent, projected at `now`. */
export function headlineOf(f: HeadlineFacts, now: Date): Headline {
  const model = f.model?.text?.published ?? null;
  const broker = f.broker?.text?.published ?? null;
  const figures = figuresOf(model, broker, f.model?.computedAt ?? f.broker?.computedAt ?? null);
  const latestAsOf = [model && f.model?.asOf, broker && f.broker?.asOf].filter((d): d is string => typeof d === 'string').sort().at(-1) ?? null;
  const base = {
    demo: f.agent.demo,
    synthetic: (model?.synthetic ?? false) || (broker?.synthetic ?? false),
    historyDays: historyDays(f.firstRecordAt, latestAsOf),
  };
  return {
    agentId: f.agent.id,
    handle: f.agent.handle,
    displayName: f.agent.displayName,
    status: f.agent.status,
    createdAt: f.agent.createdAt,
    records: f.records,
    decisions: f.decisions,
    executions: f.executions,
    signed: f.signed,
    linked: f.linkToken,
    firstRecordAt: f.firstRecordAt,
    lastRecordAt: f.lastRecordAt,
    figures: JSON.stringify(figures),
    modelComputedAt: f.model?.computedAt ?? null,
    brokerComputedAt: f.broker?.computedAt ?? null,
    ...base,
    keys: {
      excess_return: descending(figures.excess_return, unrankedReason(base, figures.excess_return, 'excess_return') === null),
      sharpe: descending(figures.sharpe, unrankedReason(base, figures.sharpe, 'sharpe') === null),
      records: -f.records,
      newest: newestFirst(f.agent.createdAt),
      last_active: newestFirst(f.lastRecordAt),
    },
    projectedAt: now.toISOString(),
  };
}

/** n of total as a ratio with four decimals, rounded down (1.0000 means every one); null when total is 0. */
export function shareOf(n: number, total: number): string | null {
  if (total <= 0) return null;
  return (Math.floor((10_000 * Math.min(n, total)) / total) / 10_000).toFixed(4);
}
