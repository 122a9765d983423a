// Performance as the agent page shows it: the metrics table (with a dash and its reason where
// the history is too short) and a decision's outcome in words. Pure and free of Node, so the
// server renders it from the profile and the page's script from the performance endpoint.
// The report is perf_v1's or perf_v2's (src/method/perf/engine.ts); only the members read here are
// typed. perf_v2's corporate-action events are listed under the chart (and marked on it by the script).
import { html, type Html } from './html.ts';

export type MetricValue = { value: string | null; reason?: string } & Record<string, unknown>;

export type ReportLike = {
  portfolio?: string;
  synthetic?: boolean;
  /** perf_v1 reports carry `{code, message}` caveats; plain text is shown as it is. */
  caveats?: Array<string | { code: string; message: string }>;
  basis?: string;
  start_value?: string;
  series?: { date: string; value: string; daily_return: string; benchmark_value: string | null }[];
  metrics?: Record<string, MetricValue | number>;
  benchmark?: { symbol?: string; basis?: string; metrics?: Record<string, MetricValue | number> | null; missing?: { from: string; through: string; known: { from: string; through: string } | null } | null };
  /** perf_v2: the corporate actions applied to the holdings. */
  corporate_actions?: { events?: CorporateEventLike[] };
};

/** The benchmark's basis in words: " (total return)", " (price return)", or what a partial return lacks. */
export function basisText(report: ReportLike): string {
  const b = report.benchmark;
  if (b?.basis === 'total_return') return ' (total return)';
  if (b?.basis === 'price_return') return ' (price return)';
  if (b?.basis !== 'partial_return') return '';
  const m = b.missing;
  if (!m) return ' (partial return: not all its dividends and splits were known)';
  if (!m.known) return ` (partial return: none of its dividends and splits known for ${m.from} to ${m.through})`;
  return ` (partial return: its dividends and splits known for ${m.known.from} to ${m.known.through} only, of ${m.from} to ${m.through})`;
}

/** An event of a perf_v2 report's `corporate_actions.events`, as far as it is shown. */
export type CorporateEventLike = {
  date: string; phase: string; symbol: string; type: string; provider_id: string;
  ratio: string | null; rate: string | null; amount: string | null;
  quantity_before: string; quantity_after: string; cash_before: string; cash_after: string;
};

const EVENT_WORDS: Record<string, string> = {
  forward_split: 'split', reverse_split: 'reverse split', cash_dividend: 'cash dividend', stock_dividend: 'stock dividend',
};

function eventText(e: CorporateEventLike): string {
  const what = EVENT_WORDS[e.type] ?? e.type.replaceAll('_', ' ');
  const terms = e.ratio !== null ? ` ${e.ratio}` : e.rate !== null ? ` ${e.rate} a share` : '';
  const phase = e.phase === 'payable' ? ', paid' : e.phase === 'in_lieu' ? ', fraction paid in cash' : '';
  const quantity = e.quantity_before === e.quantity_after ? '' : `; quantity ${e.quantity_before} → ${e.quantity_after}`;
  const cash = e.cash_before === e.cash_after ? (e.amount !== null ? `; ${e.amount} accrued` : '') : `; cash ${e.cash_before} → ${e.cash_after}`;
  return `${e.symbol} ${what}${terms}${phase}${quantity}${cash}`;
}

/** The corporate actions a perf_v2 report applied, one line each (date, symbol, type, terms, quantity and cash before and after); empty when none. */
export function corporateEventsList(report: ReportLike, label: string): Html | '' {
  const events = report.corporate_actions?.events ?? [];
  if (events.length === 0) return '';
  return html`<details class="note" data-corporate-events><summary>${label}: ${events.length} corporate action event${events.length === 1 ? '' : 's'} applied (marked on the curve)</summary>
<ul>${events.map((e) => html`<li><time datetime="${e.date}">${e.date}</time> ${eventText(e)} <span class="muted">(${e.provider_id})</span></li>`)}</ul></details>`;
}

/** A row of GET /v1/agents/<handle>/performance/outcomes (src/performance/outcome-pages.ts), as far as it is shown. */
export type OutcomeValue = { date: string | null; return?: string | null; hit?: boolean | null; reason?: string | null };
export type OutcomeLike = { record_id: string; outcomes?: Record<string, OutcomeValue>; stated?: { horizon: string | null; outcome: OutcomeValue } };

const ROWS: [key: string, label: string, kind: 'pct' | 'num'][] = [
  ['cumulative_return', 'Cumulative return', 'pct'],
  ['time_weighted_return', 'Time-weighted return', 'pct'],
  ['annualised_return', 'Annualised return', 'pct'],
  ['volatility', 'Volatility (annualised)', 'pct'],
  ['sharpe', 'Sharpe ratio', 'num'],
  ['sortino', 'Sortino ratio', 'num'],
  ['max_drawdown', 'Maximum drawdown', 'pct'],
  ['beta', 'Beta to the benchmark', 'num'],
  ['excess_return', 'Excess return over the benchmark', 'pct'],
];

export function formatRatio(value: string, kind: 'pct' | 'num'): string {
  const n = Number(value);
  if (!Number.isFinite(n)) return value;
  if (kind === 'num') return n.toFixed(2);
  const pct = n * 100;
  return `${pct > 0 ? '+' : pct < 0 ? '−' : ''}${Math.abs(pct).toFixed(2)} %`;
}

function cell(m: MetricValue | number | undefined, kind: 'pct' | 'num'): Html {
  if (m === undefined || typeof m === 'number') return html`<td class="num"><span class="muted">n/a</span></td>`;
  if (m.value === null) {
    return html`<td class="num"><span aria-hidden="true">—</span><span class="visually-hidden">no value</span><br><span class="note">${m.reason ?? 'not enough history'}</span></td>`;
  }
  return html`<td class="num">${formatRatio(m.value, kind)}</td>`;
}

/** The metrics of a report beside its benchmark's; a dash and the reason where a metric has no value. */
export function metricsTable(report: ReportLike, label: string): Html {
  const m = report.metrics ?? {};
  const b = report.benchmark?.metrics ?? null;
  const bench = report.benchmark?.symbol ?? 'benchmark';
  const days = typeof m.days === 'number' ? m.days : null;
  const rows = ROWS.map(([key, name, kind]) => html`<tr><th scope="row">${name}</th>${cell(m[key], kind)}${b ? cell(b[key], kind) : html`<td class="num"><span class="muted">n/a</span></td>`}</tr>`);
  return html`<div class="table-wrap" role="region" aria-label="${label}" tabindex="0"><table>
<caption class="visually-hidden">${label}</caption>
<thead><tr><th scope="col">Metric</th><th scope="col" class="num">${report.portfolio ?? 'portfolio'}</th><th scope="col" class="num">${bench}</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>
${days !== null ? html`<p class="note">${days} calendar days of history. A dash means the history is too short for that figure (annualised figures need 365 days, risk figures 252 daily returns).</p>` : ''}
${(report.caveats ?? []).length > 0 ? html`<ul class="note">${(report.caveats ?? []).map((c) => html`<li>${typeof c === 'string' ? c : c.message}</li>`)}</ul>` : ''}`;
}

function outcomePart(label: string, o: OutcomeValue | undefined): Html | null {
  if (!o) return null;
  if (o.date === null || o.return === undefined || o.return === null) return html`${label}: <span class="muted">${o.reason ?? 'pending'}</span>`;
  const verdict = o.hit === true ? ' (right)' : o.hit === false ? ' (wrong)' : '';
  return html`${label}: ${formatRatio(o.return, 'pct')}${verdict}`;
}

/** `Outcome: 1 day +0.40 % (right) · 5 days … · stated horizon (3 months): pending`. */
export function outcomeText(o: OutcomeLike): Html {
  const parts = [
    outcomePart('1 day', o.outcomes?.['1d']),
    outcomePart('5 days', o.outcomes?.['5d']),
    outcomePart('21 days', o.outcomes?.['21d']),
    o.stated ? outcomePart(`stated horizon${o.stated.horizon ? ` (${o.stated.horizon})` : ''}`, o.stated.outcome) : null,
  ].filter((p): p is Html => p !== null);
  return html`Outcome, from the price at receipt: ${parts.map((p, i) => html`${i > 0 ? ' · ' : ''}${p}`)}`;
}

/**
 * The reports a profile carries, by portfolio, read tolerantly: `performance` may be one report,
 * or reports keyed by portfolio; `portfolios` may list reports. Empty when nothing is computed.
 */
export function reportsFromProfile(profile: { performance?: unknown; portfolios?: unknown }): Map<string, ReportLike> {
  const out = new Map<string, ReportLike>();
  const isReport = (v: unknown): v is ReportLike => typeof v === 'object' && v !== null && typeof (v as ReportLike).metrics === 'object';
  const add = (key: string, v: unknown) => {
    if (isReport(v) && !out.has(key)) out.set(key, v);
  };
  const perf = profile.performance;
  if (isReport(perf)) add(perf.portfolio ?? 'model', perf);
  else if (typeof perf === 'object' && perf !== null) for (const [k, v] of Object.entries(perf)) add(k, v);
  if (Array.isArray(profile.portfolios)) {
    for (const p of profile.portfolios) if (isReport(p)) add(p.portfolio ?? 'model', p);
  }
  return out;
}
