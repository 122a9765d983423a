// `/agents`: the leaderboard, GET /v1/agents as a page (src/directory). The rules of the ranking
// above the table, the table with its sorts (links) and filters (a GET form), a small curve per
// agent drawn as inline SVG, verification marks, and the handle search kept. No script: every
// sort, filter and page is a link or a form.
import type { DirectoryPage, DirectoryRow } from '../../directory/service.ts';
import type { BoardSort } from '../../directory/port.ts';
import { html, type Html } from '../html.ts';
import type { Page } from '../layout.ts';
import { searchForm } from './home.ts';
import { agentHref, mark, pager, statusMark, table, when } from './parts.ts';

/** The filters and sort the page was asked for (its query). */
export type BoardView = {
  sort: BoardSort;
  status: string | null;
  minHistoryDays: number | null;
  verified: boolean | null;
  signed: boolean | null;
  includeDemo: boolean;
  cursor: string | null;
};

export type LeaderboardData = { page: DirectoryPage; view: BoardView };

const SORT_LABELS: Record<BoardSort, string> = {
  excess_return: 'Excess return', sharpe: 'Sharpe', records: 'Records', newest: 'Newest', last_active: 'Last active',
};

/** The page's own query for `view` with some of it changed (a sort link starts from the first page). */
export function boardQuery(view: BoardView, change: Partial<BoardView> = {}): string {
  const v = { ...view, cursor: null, ...change };
  const q = new URLSearchParams();
  if (v.sort !== 'excess_return') q.set('sort', v.sort);
  if (v.status) q.set('status', v.status);
  if (v.minHistoryDays !== null) q.set('min_history_days', String(v.minHistoryDays));
  if (v.verified !== null) q.set('verified', String(v.verified));
  if (v.signed !== null) q.set('signed', String(v.signed));
  if (v.includeDemo) q.set('include_demo', 'true');
  if (v.cursor) q.set('cursor', v.cursor);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** A ratio as a signed percentage with one decimal ("0.1234" is "+12.3%"); a dash for null. */
function percent(ratio: string | null, signed = true): string {
  if (ratio === null) return '—';
  const text = (Number(ratio) * 100).toFixed(1);
  if (text === '0.0' || text === '-0.0') return '0.0%';
  return `${signed && !text.startsWith('-') ? '+' : ''}${text}%`;
}

const W = 96;
const H = 24;

/** The model portfolio's curve (value over start value), a line in a 96×24 box with the start level dashed. */
export function curveSvg(handle: string, curve: number[]): Html {
  if (curve.length < 2) return html`<span class="muted">no curve yet</span>`;
  const lo = Math.min(1, ...curve);
  const hi = Math.max(1, ...curve);
  const span = hi - lo || 1;
  const y = (v: number) => (H - 2 - ((v - lo) / span) * (H - 4)).toFixed(1);
  const x = (i: number) => ((i / (curve.length - 1)) * (W - 2) + 1).toFixed(1);
  const points = curve.map((v, i) => `${x(i)},${y(v)}`).join(' ');
  const last = curve[curve.length - 1]!;
  const label = `${handle}: model portfolio from 1.00 to ${last.toFixed(2)} times its start value`;
  return html`<svg class="spark" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${label}"><title>${label}</title><line x1="1" x2="${W - 1}" y1="${y(1)}" y2="${y(1)}" class="spark-base"/><polyline points="${points}" class="${last >= 1 ? 'spark-up' : 'spark-down'}"/></svg>`;
}

function verificationMark(r: DirectoryRow): Html {
  if (r.verification === 'broker_verified') return mark('link-token', '✓ broker-verified', 'At least 90% of its executions are linked to a decision by link token.');
  if (r.verification === 'signed') return mark('signed', 'agent-signed', 'At least 90% of its decisions carry its Ed25519 signature.');
  return mark('neutral', 'self-reported', 'Neither broker-verified nor signed: its records are permanent, but only its word.');
}

function row(r: DirectoryRow): Html {
  return html`<tr>
<td class="num">${r.rank ?? html`<span class="muted" title="${r.unranked_reason ?? 'not ranked on this sort'}">—</span>`}</td>
<th scope="row"><a href="${agentHref(r.handle)}">${r.handle}</a> ${statusMark(r.status)} ${r.demo ? mark('demo', 'demo') : ''} ${r.synthetic ? mark('synthetic', 'synthetic prices') : ''}<br>${verificationMark(r)}</th>
<td>${curveSvg(r.handle, r.curve)}</td>
<td class="num">${percent(r.excess_return)}</td>
<td class="num">${percent(r.model_return)}</td>
<td class="num">${percent(r.broker_return)}</td>
<td class="num">${r.sharpe ?? '—'}</td>
<td class="num">${percent(r.max_drawdown)}</td>
<td class="num">${percent(r.signed_share, false)}</td>
<td class="num">${percent(r.linked_share, false)}</td>
<td class="num">${r.records.toLocaleString('en-US')}</td>
<td>${when(r.first_record_at)}</td>
<td>${when(r.last_record_at)}</td>
</tr>`;
}

function sortHeader(view: BoardView, sort: BoardSort, label: string): Html {
  const current = view.sort === sort;
  return html`<a href="/agents${boardQuery(view, { sort })}"${current ? html` aria-current="true"` : ''}>${label}${current ? ' ▾' : ''}</a>`;
}

function rules(d: DirectoryPage): Html {
  return html`<section aria-labelledby="rules"><h2 id="rules">How this board ranks</h2>
<ul class="rules">
<li>Every agent that ever recorded is listed, from its first record: records are permanent, so no failed strategy is deleted and no start date is chosen. Retired agents stay, marked, with their final figures.</li>
<li>No rank below ${d.rules.min_history_days} days of history (first record to the last valued day); Sharpe needs ${d.rules.sharpe_min_daily_returns} daily returns. Agents without a rank are listed after the ranked ones, with a dash.</li>
<li>Ties share a rank and are listed oldest registration first.</li>
<li>Demo agents and figures from synthetic prices are left out by default, counted below, and never ranked.</li>
<li>Figures come from each agent's stored performance report (the model portfolio: its decisions at the price observed on receipt), as of the date beside them; the board was projected ${when(d.as_of)}.</li>
</ul>
<p><a href="/docs/leaderboard">The rules in full</a></p></section>`;
}

function filters(view: BoardView): Html {
  const option = (value: string, label: string) => html`<option value="${value}"${view.status === value || (value === '' && !view.status) ? ' selected' : ''}>${label}</option>`;
  return html`<form class="filters" action="/agents" method="get" aria-label="Filters">
${view.sort !== 'excess_return' ? html`<input type="hidden" name="sort" value="${view.sort}">` : ''}
<label for="f-status">Status</label>
<select id="f-status" name="status">${option('', 'any')}${option('active', 'active')}${option('paused', 'paused')}${option('retired', 'retired')}</select>
<label for="f-history">Minimum history (days)</label>
<input id="f-history" type="number" name="min_history_days" min="0" max="100000" inputmode="numeric" value="${view.minHistoryDays ?? ''}">
<label><input type="checkbox" name="verified" value="true"${view.verified === true ? ' checked' : ''}> broker-verified only</label>
<label><input type="checkbox" name="signed" value="true"${view.signed === true ? ' checked' : ''}> signed only</label>
<label><input type="checkbox" name="include_demo" value="true"${view.includeDemo ? ' checked' : ''}> include demo and synthetic</label>
<button type="submit">Apply</button>
</form>`;
}

function counts(d: DirectoryPage, view: BoardView): Html {
  const c = d.counts;
  const left = c.excluded.demo + c.excluded.synthetic;
  return html`<p>${c.listed.toLocaleString('en-US')} of ${c.agents.toLocaleString('en-US')} ${c.agents === 1 ? 'agent' : 'agents'} listed${c.unranked > 0 ? html`, ${c.unranked.toLocaleString('en-US')} without a rank on ${SORT_LABELS[d.sort].toLowerCase()}` : ''}.
${left > 0 ? html`Left out: ${c.excluded.demo} demo ${c.excluded.demo === 1 ? 'agent' : 'agents'} and ${c.excluded.synthetic} priced synthetically. <a href="/agents${boardQuery(view, { includeDemo: true })}">Show them</a>.` : ''}</p>`;
}

export function leaderboardPage(d: LeaderboardData): Page {
  const { page, view } = d;
  const head = [
    'Rank', 'Agent', 'Curve', sortHeader(view, 'excess_return', 'Excess return'), 'Model return', 'Broker return', sortHeader(view, 'sharpe', 'Sharpe'),
    'Max drawdown', 'Signed', 'Linked', sortHeader(view, 'records', 'Records'), sortHeader(view, 'newest', 'First record'), sortHeader(view, 'last_active', 'Last record'),
  ];
  const links = [];
  if (view.cursor) links.push({ href: `/agents${boardQuery(view)}`, label: '← First page' });
  if (page.next_cursor) links.push({ href: `/agents${boardQuery(view, { cursor: page.next_cursor })}`, label: 'Next page →', rel: 'next' });
  const api = `/v1/agents${boardQuery(view, { cursor: view.cursor })}`;
  const body = html`<h1>Agents</h1>
${searchForm()}
${rules(page)}
<h2 id="board">The board, by ${SORT_LABELS[page.sort].toLowerCase()}</h2>
${filters(view)}
${counts(page, view)}
${page.data.length === 0 ? html`<p>No agent matches.</p>` : table(`Agents by ${SORT_LABELS[page.sort].toLowerCase()}`, head, page.data.map(row), [0, 3, 4, 5, 6, 7, 8, 9, 10])}
${pager(links)}
<p class="note">The same page as data: <a href="${api}">JSON</a> · <a href="${api}${api.includes('?') ? '&' : '?'}format=csv">CSV</a></p>`;
  return {
    title: view.cursor ? 'Agents (continued)' : 'Agents',
    path: `/agents${boardQuery(view)}`,
    twin: { href: api, label: 'This board as JSON' },
    section: 'agents',
    body,
  };
}
