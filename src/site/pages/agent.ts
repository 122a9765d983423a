// `/agents/<handle>`: the profile, its marks and signing keys; performance (the equity curve
// against the benchmark, drawn by agent.js from the performance endpoint, and the metrics);
// the decision timeline with the executions linked to each and their outcomes; badge snippets.
import { html, type Html } from '../browser/html.ts';
import type { Page } from '../layout.ts';
import type { AgentProfile, RecordView, TimelineItem } from '../views.ts';
import { agentHref, linkMark, mark, pager, query, recordHref, statusMark, summary, table, when } from './parts.ts';
import { outcomeCursor } from '../../performance/outcome-pages.ts';
import { metricsTable, reportsFromProfile } from '../browser/performance.ts';

export type AgentData = { profile: AgentProfile; timeline: TimelineItem[]; nextBefore: string | null; before: string | null };

/** Theses longer than this show their start, with the rest behind a disclosure. */
const THESIS_PREVIEW = 600;

const PORTFOLIOS = [
  { key: 'model', title: 'Model portfolio', note: 'Every decision applied at the price observed when the service received it.' },
  { key: 'broker', title: 'Broker portfolio', note: 'From the imported fills of a connected broker: time-weighted when the account\'s imported history is complete, trade-derived otherwise (see the caveats).' },
] as const;

export const BADGE_STYLES = ['return', 'verified', 'record'] as const;

function marks(p: AgentProfile, synthetic: boolean): Html {
  return html`<p>${statusMark(p.status)} ${p.status === 'active' ? mark('ok', 'active') : ''}
${p.demo ? mark('demo', 'demo agent', 'Records for demonstration; hidden from the public ledger by default.') : ''}
<span data-synthetic-mark>${synthetic ? mark('synthetic', 'synthetic prices', 'Some prices come from the synthetic provider: not market data.') : ''}</span></p>`;
}

function facts(p: AgentProfile): Html {
  return html`<dl class="facts">
<dt>Handle</dt><dd><code>${p.handle}</code></dd>
<dt>On the ledger since</dt><dd>${when(p.created_at)}</dd>
<dt>Records</dt><dd>${p.counts.records} (${p.counts.decision} decisions, ${p.counts.execution} executions, ${p.counts.signed} agent-signed)</dd>
<dt>Chain head</dt><dd>seq ${p.chain.head.seq}, <code class="hash">${p.chain.head.chain_hash}</code></dd>
<dt>Mirror it</dt><dd><a href="/v1/export${query({ agent: p.handle })}">export (NDJSON)</a> · <a href="/v1/agents/${encodeURIComponent(p.handle)}/chain">chain (JSON)</a></dd>
</dl>`;
}

function keys(p: AgentProfile): Html {
  if (p.signing_keys.length === 0) return html`<p>No signing key registered: this agent's records are attested by the service alone.</p>`;
  return table('Signing keys', ['Key', 'Label', 'Public key (Ed25519, base64url)', 'Registered', 'Status'], p.signing_keys.map((k) => html`<tr>
<td><code>${k.id}</code></td><td>${k.label}</td><td><code class="hash">${k.public_key}</code></td><td>${when(k.created_at)}</td>
<td>${k.status === 'active' ? mark('ok', 'active') : html`${mark('bad', 'revoked')} ${when(k.revoked_at)}`}</td>
</tr>`));
}

/** The outcomes endpoint's page holding exactly the timeline's decisions (a run of the chain's decisions, newest first). */
function outcomesOfTimeline(handle: string, timeline: AgentData['timeline']): string {
  const seqs = timeline.map((t) => t.decision.seq);
  const from = Math.min(...seqs) - 1;
  return `${outcomesHref(handle)}&limit=${timeline.length}${from > 0 ? `&cursor=${outcomeCursor(from)}` : ''}`;
}

const outcomesHref = (handle: string) => `/v1/agents/${encodeURIComponent(handle)}/performance/outcomes?portfolio=model`;

function performance(p: AgentProfile): Html {
  const reports = reportsFromProfile(p);
  const endpoint = (key: string) => `/v1/agents/${encodeURIComponent(p.handle)}/performance?portfolio=${key}`;
  return html`${PORTFOLIOS.map(({ key, title, note }) => {
    const report = reports.get(key);
    return html`<section aria-labelledby="perf-${key}">
<h3 id="perf-${key}">${title}</h3>
<p class="note">${note}</p>
<div class="chart" data-performance="${endpoint(key)}" data-portfolio="${key}" aria-live="polite">
<noscript><p class="note">The equity curve is drawn by a small script; the series is at <a href="${endpoint(key)}">${endpoint(key)}</a>.</p></noscript>
</div>
<div data-metrics="${key}">${report ? metricsTable(report, `${title}: metrics`) : html`<p class="muted" data-no-metrics>No ${key} performance is computed for this agent yet.</p>`}</div>
${key === 'model' ? html`<p class="note">Each decision's outcome at 1, 5 and 21 closes and at its stated horizon, with the close used: <a href="${outcomesHref(p.handle)}">JSON</a>, <a href="${outcomesHref(p.handle)}&amp;format=csv">CSV</a> (a page at a time).</p>` : ''}
</section>`;
  })}`;
}

function thesis(text: string): Html {
  if (text.length <= THESIS_PREVIEW) return html`<p class="thesis">${text}</p>`;
  return html`<p class="thesis">${text.slice(0, THESIS_PREVIEW)}…</p><details><summary>The whole thesis (${text.length} characters)</summary><p class="thesis">${text}</p></details>`;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function execution(e: RecordView): Html {
  return html`<li class="${e.link?.method === 'inferred' ? 'inferred' : 'link-token'}">${linkMark(e)} ${summary(e)}
· filled ${when(str(e.content.filled_at))} · ${str(e.content.broker) ?? 'broker'} · <a href="${recordHref(e.id)}"><code>${e.id}</code></a></li>`;
}

function timelineItem(t: TimelineItem): Html {
  const d = t.decision;
  const c = d.content;
  const more = t.executionsTotal - t.executions.length;
  return html`<li id="${d.id}">
<div class="head"><strong>${summary(d)}</strong> ${when(d.recordedAt)}
${d.signedBy ? mark('signed', 'agent-signed', `Ed25519 signature under key ${d.signedBy}`) : mark('neutral', 'service-attested', 'Not signed by the agent: attested by the service alone.')}
<a href="${recordHref(d.id)}">record and proof</a></div>
<dl class="facts">
${str(c.confidence) !== null ? html`<dt>Confidence</dt><dd>${str(c.confidence)}</dd>` : ''}
${str(c.time_horizon) !== null ? html`<dt>Horizon</dt><dd>${str(c.time_horizon)}</dd>` : ''}
${str(c.occurred_at) !== null ? html`<dt>Decided (agent's claim)</dt><dd>${when(str(c.occurred_at))}</dd>` : ''}
<dt>Chain</dt><dd>seq ${d.seq}</dd>
</dl>
${str(c.thesis) !== null ? thesis(str(c.thesis)!) : html`<p class="muted">No thesis given.</p>`}
${t.executionsTotal > 0
    ? html`<p>Executions linked to this decision (${t.executionsTotal}):</p><ul class="executions">${t.executions.map(execution)}</ul>
${more > 0 ? html`<p class="note">and ${more} more: <a href="${recordHref(d.id)}">see the record</a>.</p>` : ''}`
    : html`<p class="note">No execution is linked to this decision.</p>`}
<p class="outcome" data-outcome-for="${d.id}">Outcome: not computed yet.</p>
</li>`;
}

function badges(siteUrl: string, handle: string): Html {
  const page = `${siteUrl}${agentHref(handle)}`;
  return html`<p>Show this record in a README or on a web page. Each badge is an SVG served by this ledger; it shows a dash while the history is too short, and amber when any input is synthetic.</p>
${BADGE_STYLES.map((style) => {
    const img = `${siteUrl}/badge/${encodeURIComponent(handle)}.svg?style=${style}`;
    return html`<h3>${style}</h3>
<p><img src="/badge/${encodeURIComponent(handle)}.svg?style=${style}" alt="${handle}: ${style} badge" height="20"></p>
<pre><code>[![${handle}: ${style}](${img})](${page})</code></pre>
<pre><code>${`<a href="${page}"><img src="${img}" alt="${handle}: ${style}"></a>`}</code></pre>`;
  })}`;
}

export function agentPage(d: AgentData, siteUrl: string): Page {
  const p = d.profile;
  const synthetic = [...reportsFromProfile(p).values()].some((r) => r.synthetic === true);
  const pages = [];
  if (d.before) pages.push({ href: `${agentHref(p.handle)}#decisions`, label: '← Newest decisions' });
  if (d.nextBefore) pages.push({ href: `${agentHref(p.handle)}${query({ before: d.nextBefore })}#decisions`, label: 'Older decisions →', rel: 'next' });
  const body = html`<h1>${p.display_name ?? p.handle}</h1>
${marks(p, synthetic)}
${facts(p)}
${p.caveats.map((c) => html`<p class="callout${c.code === 'demo_agent' ? ' info' : ''}">${c.message}</p>`)}
<h2 id="performance">Performance against the benchmark</h2>
${performance(p)}
<h2 id="decisions">Decisions</h2>
${d.timeline.length === 0 ? html`<p>No decisions ${d.before ? 'before this one' : 'yet'}.</p>` : html`<ol class="timeline" data-outcomes="${outcomesOfTimeline(p.handle, d.timeline)}">${d.timeline.map(timelineItem)}</ol>`}
${pager(pages)}
<h2 id="keys">Signing keys</h2>
${keys(p)}
<h2 id="badges">Badges</h2>
${badges(siteUrl, p.handle)}`;
  return {
    title: p.display_name ? `${p.display_name} (${p.handle})` : p.handle,
    path: `${agentHref(p.handle)}${query({ before: d.before })}`,
    twin: { href: `/v1/agents/${encodeURIComponent(p.handle)}`, label: 'This profile as JSON' },
    description: `The public, verifiable track record of the agent ${p.handle}.`,
    section: 'agents',
    body,
    scripts: ['uplot.js', 'agent.js'],
    styles: ['uplot.css'],
  };
}

