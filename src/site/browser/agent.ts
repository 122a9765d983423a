/// <reference lib="dom" />
// The agent page's script (bundled into dist/site/assets/agent.js): for each portfolio, fetches
// the performance report (GET /v1/agents/<handle>/performance?portfolio=...) and draws the equity
// curve against the benchmark and the drawdown with uPlot (served by the service, global
// `uPlot`); fills the metrics table when the profile had none and the synthetic mark; fills each
// decision's outcome from GET /v1/agents/<handle>/performance/outcomes (the timeline's page).
// Without a report it says "no performance yet" and why.
import { html } from './html.ts';
import { basisText, corporateEventsList, formatRatio, metricsTable, outcomeText, type OutcomeLike, type ReportLike } from './performance.ts';

type UPlotCtor = new (opts: object, data: (number | null)[][], target: HTMLElement) => { setSize(s: { width: number; height: number }): void };
declare const uPlot: UPlotCtor | undefined;

const css = (name: string, fallback: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
const day = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;

async function fetchReport(url: string): Promise<{ report: ReportLike } | { reason: string }> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' } });
  } catch (e) {
    return { reason: `the report could not be fetched (${(e as Error).message})` };
  }
  const body = (await res.json().catch(() => null)) as (ReportLike & { status?: string; reason?: string; error?: { message?: string } }) | null;
  if (!res.ok) return { reason: body?.error?.message ?? `the service answered ${res.status}` };
  if (body?.status === 'unavailable' && body.reason) return { reason: body.reason };
  if (!body || !Array.isArray(body.series) || body.series.length === 0) return { reason: 'the report has no daily values yet' };
  return { report: body };
}

function drawdowns(values: number[]): number[] {
  let peak = -Infinity;
  return values.map((v) => {
    peak = Math.max(peak, v);
    return peak > 0 ? (v / peak - 1) * 100 : 0;
  });
}

function summaryText(r: ReportLike): string {
  const s = r.series!;
  const first = s[0]!;
  const last = s[s.length - 1]!;
  // From the start value (what the curve starts at, before the first close), as the metrics count it.
  const start = r.start_value ?? first.value;
  const change = (a: string | null, b: string | null) => (a && b && Number(a) !== 0 ? formatRatio(String(Number(b) / Number(a) - 1), 'pct') : 'n/a');
  const bench = `${r.benchmark?.symbol ?? 'the benchmark'}${basisText(r)}`;
  return `From ${first.date} to ${last.date}: the portfolio went from ${start} to ${last.value} (${change(start, last.value)}); ${bench} ${change(start, last.benchmark_value)} over the same days.`;
}

function draw(box: HTMLElement, r: ReportLike): void {
  const s = r.series!;
  const xs = s.map((p) => day(p.date));
  const values = s.map((p) => Number(p.value));
  const bench = s.map((p) => (p.benchmark_value === null ? null : Number(p.benchmark_value)));
  // perf_v2: a point on the curve at each day a corporate action changed the holdings or the cash.
  const eventDays = new Set((r.corporate_actions?.events ?? []).map((e) => e.date));
  const marks = s.map((p, i) => (eventDays.has(p.date) ? values[i]! : null));
  box.innerHTML = html`<p class="note">${summaryText(r)}</p><div data-equity role="img" aria-label="Equity curve against the benchmark"></div>${corporateEventsList(r, r.portfolio ?? 'portfolio')}<div data-drawdown role="img" aria-label="Drawdown from the running peak, in percent"></div>`.text;
  if (typeof uPlot === 'undefined') return;
  const fg = css('--fg', '#1b1d21');
  const grid = { stroke: css('--line', '#d5d9de'), width: 1 };
  const axes = (unit: string) => [{ stroke: fg, grid }, { stroke: fg, grid, size: 70, values: (_u: unknown, v: number[]) => v.map((n) => `${n.toLocaleString('en-US')}${unit}`) }];
  const width = () => Math.max(280, box.clientWidth);
  const equity = new uPlot({
    width: width(), height: 260, scales: { x: { time: true } }, axes: axes(''),
    series: [{}, { label: r.portfolio ?? 'portfolio', stroke: css('--chart-a', '#0b57d0'), width: 2 },
      { label: r.benchmark?.symbol ?? 'benchmark', stroke: css('--chart-b', '#8a5a00'), width: 2, dash: [6, 4] },
      { label: 'corporate actions', stroke: css('--chart-dd', '#b3261e'), width: 0, paths: () => null, points: { show: true, size: 9 } }],
  }, [xs, values, bench, marks], box.querySelector<HTMLElement>('[data-equity]')!);
  const dd = new uPlot({
    width: width(), height: 140, scales: { x: { time: true } }, axes: axes(' %'),
    series: [{}, { label: 'drawdown', stroke: css('--chart-dd', '#b3261e'), width: 1.5 }],
  }, [xs, drawdowns(values)], box.querySelector<HTMLElement>('[data-drawdown]')!);
  addEventListener('resize', () => {
    equity.setSize({ width: width(), height: 260 });
    dd.setSize({ width: width(), height: 140 });
  });
}

function fill(key: string, r: ReportLike): void {
  const metrics = document.querySelector<HTMLElement>(`[data-metrics="${key}"]`);
  if (metrics?.querySelector('[data-no-metrics]') && r.metrics) metrics.innerHTML = metricsTable(r, `${key} portfolio: metrics`).text;
  const mark = document.querySelector<HTMLElement>('[data-synthetic-mark]');
  if (r.synthetic && mark && mark.childElementCount === 0) {
    mark.innerHTML = html`<span class="mark synthetic" title="Some prices come from the synthetic provider: not market data.">synthetic prices</span>`.text;
  }
}

/** Each decision's outcome on the page, from the outcomes endpoint's page of the timeline's decisions. */
async function outcomes(list: HTMLElement): Promise<void> {
  const res = await fetch(list.dataset.outcomes!, { headers: { accept: 'application/json' } }).catch(() => null);
  const body = res?.ok ? ((await res.json().catch(() => null)) as { data?: OutcomeLike[] } | null) : null;
  for (const o of body?.data ?? []) {
    const el = list.querySelector<HTMLElement>(`[data-outcome-for="${CSS.escape(o.record_id)}"]`);
    if (el) el.innerHTML = outcomeText(o).text;
  }
}

async function load(box: HTMLElement): Promise<void> {
  const key = box.dataset.portfolio ?? 'model';
  box.textContent = 'Loading the equity curve…';
  const got = await fetchReport(box.dataset.performance!);
  if ('reason' in got) {
    box.innerHTML = html`<p class="muted" data-no-performance>No performance yet: ${got.reason}</p>`.text;
    return;
  }
  draw(box, got.report);
  fill(key, got.report);
}

for (const box of document.querySelectorAll<HTMLElement>('[data-performance]')) void load(box);
for (const list of document.querySelectorAll<HTMLElement>('[data-outcomes]')) void outcomes(list);
