// `/`: what the ledger is, the newest records of every agent (paged), agent search, counts and
// the latest anchored checkpoint. `/agents`: the agents, searched by handle.
import { html, type Html } from '../browser/html.ts';
import type { Page } from '../layout.ts';
import type { StoredRecord } from '../../domain/types.ts';
import type { HeadRow, Transparency } from '../views.ts';
import { recordView } from '../views.ts';
import { agentHref, mark, pager, query, recordHref, shortHash, signedMark, statusMark, summary, table, when } from './parts.ts';

type AnchorSummary = { tree_size: number; status: string; block_height: number | null; block_time: string | null } | null;

export type HomeData = {
  feed: { records: StoredRecord[]; hasMore: boolean; nextCursor: string | null };
  counts: Transparency['counts'];
  log: { tree_size: number; checkpoint_at: string | null };
  anchoring: { anchored_roots: number; pending_roots: number; latest_confirmed: AnchorSummary; latest_pending: AnchorSummary; note: string };
  cursor: string | null;
  includeDemo: boolean;
};

export function searchForm(q = ''): Html {
  return html`<form class="search" action="/agents" method="get" role="search">
<label for="agent-search">Find an agent by handle</label>
<input id="agent-search" type="search" name="q" value="${q}" placeholder="e.g. momentum-bot" autocomplete="off" spellcheck="false" maxlength="32">
<button type="submit">Search</button>
</form>`;
}

function cards(d: HomeData): Html {
  const items: [string, number][] = [
    ['agents', d.counts.agents], ['records', d.counts.records], ['decisions', d.counts.decision],
    ['executions', d.counts.execution], ['agent-signed', d.counts.signed], ['records in the global log', d.log.tree_size],
  ];
  return html`<ul class="cards" aria-label="Counts">${items.map(([label, n]) => html`<li><span class="value">${n.toLocaleString('en-US')}</span> ${label}</li>`)}</ul>`;
}

function latestAnchor(d: HomeData): Html {
  const c = d.anchoring.latest_confirmed;
  if (c) {
    return html`<p>Latest anchored checkpoint: the global log at <strong>${c.tree_size.toLocaleString('en-US')}</strong> records,
confirmed in Bitcoin block <strong>${c.block_height ?? '?'}</strong> (${when(c.block_time)}).
${d.anchoring.pending_roots > 0 ? html`${d.anchoring.pending_roots} newer ${d.anchoring.pending_roots === 1 ? 'checkpoint is' : 'checkpoints are'} pending.` : ''}
<a href="/transparency">Transparency</a></p>`;
  }
  return html`<p>No checkpoint is anchored in Bitcoin yet${d.anchoring.latest_pending ? html` (the checkpoint at ${d.anchoring.latest_pending.tree_size} records is pending)` : ''}. ${d.anchoring.note} <a href="/transparency">Transparency</a></p>`;
}

function feedRow(record: StoredRecord): Html {
  const r = recordView(record);
  return html`<tr>
<td>${when(r.recordedAt)}</td>
<td><a href="${agentHref(r.agent)}">${r.agent}</a></td>
<td>${r.type}${r.provenance ? html` ${mark('neutral', r.provenance.broker ?? 'broker')}` : ''} ${signedMark(r)}</td>
<td>${summary(r)}</td>
<td><a href="${recordHref(r.id)}"><code>${r.id}</code></a></td>
</tr>`;
}

export function homePage(d: HomeData): Page {
  const demo = d.includeDemo ? 'true' : null;
  const links = [];
  if (d.cursor) links.push({ href: `/${query({ include_demo: demo })}`, label: '← Newest' });
  if (d.feed.hasMore && d.feed.nextCursor) links.push({ href: `/${query({ cursor: d.feed.nextCursor, include_demo: demo })}`, label: 'Older records →', rel: 'next' });
  const body = html`<h1>The decision ledger</h1>
<p class="lede">A permanent, public, tamper-evident track record for automated investing agents: each agent records what it decided and why, before it trades, and every record is hashed into the agent's chain the moment it arrives.
Anyone can check any record, in this browser or offline, without trusting this server.</p>
${searchForm()}
${cards(d)}
${latestAnchor(d)}
<h2 id="newest">Newest records</h2>
<p class="note">${d.includeDemo
    ? html`Demo agents' records are shown. <a href="/">Hide them</a>.`
    : html`Demo agents' records are hidden. <a href="/?include_demo=true">Show them</a>.`}</p>
<p class="note" data-feed-notice aria-live="polite"></p>
${d.feed.records.length === 0
    ? html`<p>No records yet.</p>`
    : html`<div${d.cursor ? '' : html` data-feed="/v1/ledger${query({ limit: '1', include_demo: demo })}" data-newest="${d.feed.records[0]!.id}"`}>
${table('Newest records, newest first', ['Recorded', 'Agent', 'Type', 'What', 'Record'], d.feed.records.map(feedRow))}</div>`}
${pager(links)}`;
  return {
    title: d.cursor ? 'Older records' : 'Newest records',
    path: `/${query({ cursor: d.cursor, include_demo: demo })}`,
    twin: { href: `/v1/ledger${query({ limit: '20', cursor: d.cursor, include_demo: demo })}`, label: 'These records as JSON' },
    section: 'home',
    body,
    scripts: ['home.js'],
  };
}

export type AgentsData = { q: string; total: number; heads: HeadRow[] };

export function agentsPage(d: AgentsData): Page {
  const rows = d.heads.map((h) => html`<tr>
<td><a href="${agentHref(h.agent)}">${h.agent}</a> ${h.demo ? mark('demo', 'demo') : ''} ${statusMark(h.status)}</td>
<td class="num">${h.seq}</td>
<td>${when(h.recorded_at)}</td>
<td>${shortHash(h.chain_hash)}</td>
</tr>`);
  const body = html`<h1>Agents</h1>
${searchForm(d.q)}
<p>${d.q ? html`${d.total} ${d.total === 1 ? 'agent has' : 'agents have'} a handle containing <code>${d.q}</code>.` : html`${d.total} ${d.total === 1 ? 'agent' : 'agents'}.`}
${d.total > d.heads.length ? html` The first ${d.heads.length} are listed; the JSON twin lists every one.` : ''}</p>
${d.heads.length > 0 ? table('Agents', ['Agent', 'Records', 'Last record', 'Chain head'], rows, [1]) : ''}`;
  return {
    title: d.q ? `Agents matching ${d.q}` : 'Agents',
    path: `/agents${query({ q: d.q })}`,
    twin: { href: '/v1/transparency', label: 'Every agent\'s chain head as JSON' },
    section: 'agents',
    body,
  };
}
