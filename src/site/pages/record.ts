// `/records/<id>`: one record, its place in the chain (neighbours, hashes), its proof (signature,
// inclusion in a checkpoint of the global log, anchor), a **Verify in this browser** button
// (verify.js, the same canon_v1 code as the server) and how to verify it offline.
import { html, type Html } from '../browser/html.ts';
import type { Page } from '../layout.ts';
import type { StoredRecord } from '../../domain/types.ts';
import type { ProofBundle, RecordView } from '../views.ts';
import { agentHref, linkMark, mark, recordHref, signedMark, statusMark, summary, when } from './parts.ts';
import { witnessedLine } from './transparency.ts';

export type RecordData = {
  bundle: ProofBundle;
  record: StoredRecord;
  view: RecordView;
  previous: string | null;
  next: string | null;
  executions: RecordView[];
  executionsTotal: number;
};

const DECISION_FIELDS: [string, string][] = [
  ['symbol', 'Symbol'], ['action', 'Action'], ['asset_class', 'Asset class'], ['quantity', 'Quantity'], ['notional', 'Notional'],
  ['currency', 'Currency'], ['target_allocation_pct', 'Target allocation (%)'], ['confidence', 'Confidence'],
  ['time_horizon', 'Horizon'], ['occurred_at', 'Decided at (the agent\'s claim, information only)'], ['nonce', 'Signature nonce'],
];

const EXECUTION_FIELDS: [string, string][] = [
  ['broker', 'Broker'], ['symbol', 'Symbol'], ['side', 'Side'], ['quantity', 'Quantity'], ['price', 'Price'],
  ['filled_at', 'Filled at (as the broker reports it)'], ['broker_order_id', 'Broker order id'], ['broker_fill_id', 'Broker fill id'],
  ['client_order_id', 'Client order id'], ['account_ref', 'Account (broker\'s id)'],
];

const ACTIVITY_FIELDS: [string, string][] = [
  ['broker', 'Broker'], ['activity_type', 'Activity type (the broker\'s code)'], ['activity_sub_type', 'Sub-type'], ['status', 'Status'],
  ['symbol', 'Symbol'], ['quantity', 'Quantity'], ['price', 'Price'], ['per_share_amount', 'Per share'], ['amount', 'Cash amount'],
  ['currency', 'Currency'], ['occurred_at', 'Date (as the broker reports it)'], ['broker_activity_id', 'Broker activity id'],
  ['account_ref', 'Account (broker\'s id)'],
];

const FIELDS_OF: Record<RecordView['type'], [string, string][]> = { decision: DECISION_FIELDS, execution: EXECUTION_FIELDS, activity: ACTIVITY_FIELDS };

const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));

function content(v: RecordView, hashed: string): Html {
  const c = v.content;
  const fields = FIELDS_OF[v.type] ?? DECISION_FIELDS;
  const shown = fields.filter(([k]) => c[k] !== undefined && c[k] !== null);
  return html`<dl class="facts">
${shown.map(([k, label]) => html`<dt>${label}</dt><dd>${text(c[k])}</dd>`)}
${v.type === 'execution' ? html`<dt>Decision</dt><dd>${v.link ? html`${linkMark(v)} <a href="${recordHref(v.link.decision_id)}"><code>${v.link.decision_id}</code></a>` : linkMark(v)}</dd>` : ''}
</dl>
${typeof c.thesis === 'string' ? html`<h3>Thesis</h3><p class="thesis">${c.thesis}</p>` : ''}
${c.metadata !== undefined && c.metadata !== null ? html`<h3>Metadata</h3><pre><code>${text(c.metadata)}</code></pre>` : ''}
<details><summary>The content exactly as hashed (canon_v1)</summary><pre><code>${hashed}</code></pre></details>`;
}

function executions(d: RecordData): Html {
  if (d.view.type !== 'decision') return html``;
  if (d.executionsTotal === 0) return html`<h2>Executions</h2><p>No execution is linked to this decision.</p>`;
  return html`<h2>Executions linked to this decision (${d.executionsTotal})</h2>
<ul class="executions">${d.executions.map((e) => html`<li class="${e.link?.method === 'inferred' ? 'inferred' : 'link-token'}">${linkMark(e)} ${summary(e)} · <a href="${recordHref(e.id)}"><code>${e.id}</code></a></li>`)}</ul>
${d.executionsTotal > d.executions.length ? html`<p class="note">The first ${d.executions.length} are listed; <a href="/v1/ledger?type=execution&amp;agent=${encodeURIComponent(d.view.agent)}">every execution of the agent</a>.</p>` : ''}`;
}

function chain(d: RecordData): Html {
  return html`<h2>In the agent's chain</h2>
<nav class="pager" aria-label="Chain neighbours">
${d.previous ? html`<a href="${recordHref(d.previous)}" rel="prev">← seq ${d.view.seq - 1}</a>` : html`<span class="muted">${d.view.seq === 1 ? 'the first record of the chain' : ''}</span>`}
${d.next ? html`<a href="${recordHref(d.next)}" rel="next">seq ${d.view.seq + 1} →</a>` : html`<span class="muted">the newest record of the chain</span>`}
</nav>
<dl class="facts">
<dt>content_hash</dt><dd><code class="hash">${d.record.contentHash}</code></dd>
<dt>prev_hash</dt><dd><code class="hash">${d.record.prevHash}</code></dd>
<dt>chain_hash</dt><dd><code class="hash">${d.record.chainHash}</code></dd>
<dt>Agent's head now</dt><dd>seq ${d.bundle.agent.head.seq}, <code class="hash">${d.bundle.agent.head.chain_hash}</code></dd>
</dl>`;
}

function proof(d: RecordData): Html {
  const b = d.bundle;
  const inc = b.inclusion_proof;
  const anchor = b.anchor_proof;
  return html`<h2>Proof</h2>
<h3>Signature</h3>
${b.key
    ? html`<p>Signed with Ed25519 key <code>${b.key.id}</code> (${b.key.label}), ${b.key.valid_for_record ? 'valid for this record' : html`${mark('bad', 'revoked before this record')}`}.</p><p>Public key: <code class="hash">${b.key.public_key}</code></p>`
    : html`<p>Not signed by the agent: this record is attested by the service (its hashes and the log) alone.</p>`}
<h3>Global log</h3>
${inc
    ? html`<p>Log index <strong>${inc.log_index}</strong> in the signed checkpoint of <strong>${inc.tree_size}</strong> records (an inclusion proof of ${inc.hashes.length} hashes).</p>
${inc.witnessed ? html`<p>${witnessedLine(inc.witnessed)}</p>` : ''}
<details><summary>The checkpoint</summary><pre><code>${inc.checkpoint}</code></pre></details>`
    : html`<p>${mark('pending', 'pending')} ${b.inclusion_pending?.message ?? 'Not in a checkpoint of the global log yet.'}</p>`}
<h3>Bitcoin anchor</h3>
${anchor
    ? html`<p>${anchor.status === 'confirmed' ? mark('ok', 'confirmed') : mark('pending', 'pending')}
The checkpoint of ${anchor.tree_size} records ${anchor.status === 'confirmed' ? html`is in Bitcoin block <strong>${anchor.block_height}</strong> (${when(anchor.block_time)})` : 'is timestamped on OpenTimestamps calendars and waits for a Bitcoin block'}.
<a href="/v1/anchors/${anchor.tree_size}.ots">The .ots proof</a></p>`
    : html`<p>Not anchored yet: checkpoints are timestamped on OpenTimestamps and confirmed in Bitcoin within hours.</p>`}`;
}

function verify(d: RecordData, baseUrl: string): Html {
  const proofPath = `/v1/proof/${encodeURIComponent(d.view.id)}`;
  return html`<h2 id="verify">Verify in this browser</h2>
<p>Fetches this record's proof and recomputes, here in your browser with the same canon_v1 code the server uses, its content hash, its chain hash, its signature and its inclusion in a signed checkpoint of the global log.</p>
<div class="verifier" data-proof="${proofPath}" data-transparency="/v1/transparency">
<button type="button" data-verify disabled>Verify in this browser</button>
<noscript><p class="note">Verifying in the browser needs JavaScript. Verify offline instead (below).</p></noscript>
<div data-verify-result aria-live="polite"></div>
</div>
<h2>Verify offline</h2>
<pre><code>npx ledger verify ${baseUrl}/proof/${d.view.id}
npx ledger verify ${baseUrl}/agents/${d.view.agent}/chain</code></pre>
<p class="note">The first checks this record alone; the second the whole chain it belongs to. <a href="/docs/public-reads">How a record is published</a>.</p>`;
}

export function recordPage(d: RecordData, baseUrl: string): Page {
  const v = d.view;
  const kind = v.type === 'decision' ? 'Decision' : 'Execution';
  const body = html`<h1>${kind} <code class="wrap">${v.id}</code></h1>
<p>${mark('neutral', v.type)} ${signedMark(v)} ${v.provenance ? mark('neutral', `${v.provenance.provenance.toLowerCase().replace('_', ' ')} (${v.provenance.broker ?? 'broker'})`) : ''}
${d.bundle.agent.demo ? mark('demo', 'demo agent') : ''} ${statusMark(d.bundle.agent.status)}</p>
<dl class="facts">
<dt>Agent</dt><dd><a href="${agentHref(v.agent)}">${v.agent}</a></dd>
<dt>What</dt><dd>${summary(v)}</dd>
<dt>Recorded (service clock)</dt><dd>${when(v.recordedAt)}</dd>
<dt>Chain position</dt><dd>seq ${v.seq}</dd>
</dl>
${verify(d, baseUrl)}
<h2>Content</h2>
${content(v, d.record.content)}
${executions(d)}
${chain(d)}
${proof(d)}`;
  return {
    title: `${kind} ${v.id}`,
    path: recordHref(v.id),
    twin: { href: `/v1/proof/${encodeURIComponent(v.id)}`, label: 'This record\'s proof bundle as JSON' },
    description: `${kind} ${v.id} of the agent ${v.agent}, with its proof.`,
    section: 'agents',
    body,
    scripts: ['verify.js'],
  };
}
