// `/transparency`: the chain heads to pin, the global log and its checkpoint, the anchors
// (pending and confirmed, with block heights, paged), the guarantees in plain words, and how to
// pin and verify offline.
import { html, type Html } from '../browser/html.ts';
import type { Page } from '../layout.ts';
import type { AnchorView, Transparency, WitnessedView, WitnessesView } from '../views.ts';
import { agentHref, mark, pager, query, shortHash, statusMark, table, when } from './parts.ts';

export type TransparencyData = {
  transparency: Transparency;
  log: { vkey: string | null; checkpoint: string | null; tree_size: number; checkpoint_at: string | null; witnesses?: WitnessesView };
  anchoring: { anchored_roots: number; pending_roots: number; calendars_unreachable_since: string | null; note: string };
  anchors: { data: AnchorView[]; has_more: boolean; next_cursor: number | null };
  headsShown: number;
  anchorsCursor: number | null;
  baseUrl: string;
};

const GUARANTEE_TITLES: Record<string, string> = {
  hash_chain: 'Every record is chained',
  service_clock: 'The service\'s clock orders records',
  agent_signature: 'Agent signatures',
  execution_links: 'Links from fills to decisions',
  model_portfolios: 'Model portfolios',
  broker_performance: 'Broker performance',
  anchoring: 'Anchoring in Bitcoin',
};

function heads(d: TransparencyData): Html {
  const all = d.transparency.heads;
  const rows = all.slice(0, d.headsShown).map((h) => html`<tr>
<td><a href="${agentHref(h.agent)}">${h.agent}</a> ${h.demo ? mark('demo', 'demo') : ''} ${statusMark(h.status)}</td>
<td class="num">${h.seq}</td><td><code class="hash">${h.chain_hash}</code></td><td>${when(h.recorded_at)}</td></tr>`);
  return html`<h2 id="heads">Chain heads to pin</h2>
<p>Each agent's newest record: its sequence number and chain hash. Keep a copy; later, any change to any earlier record shows as a head that no longer verifies.</p>
${all.length === 0 ? html`<p>No agent yet.</p>` : table('Chain heads', ['Agent', 'Seq', 'Chain hash', 'Recorded'], rows, [1])}
${all.length > d.headsShown ? html`<p class="note">${d.headsShown} of ${all.length} listed; <a href="/v1/transparency">the JSON twin</a> lists every head.</p>` : ''}`;
}

function log(d: TransparencyData): Html {
  return html`<h2 id="log">The global log</h2>
<p>Every record of every agent is a leaf of one Merkle tree (RFC 9162), and the tree's root is signed in checkpoints (C2SP tlog-checkpoint).</p>
<dl class="facts">
<dt>Records in the log</dt><dd>${d.log.tree_size}</dd>
<dt>Latest checkpoint</dt><dd>${when(d.log.checkpoint_at)}</dd>
<dt>Log key (vkey)</dt><dd>${d.log.vkey ? html`<code class="hash">${d.log.vkey}</code>` : html`<span class="muted">not published</span>`}</dd>
</dl>
${d.log.checkpoint ? html`<pre><code>${d.log.checkpoint}</code></pre>` : html`<p class="muted">No checkpoint yet: the log is empty.</p>`}
${d.log.witnesses ? witnesses(d.log.witnesses) : ''}`;
}

/** A checkpoint's witness status in words: which witnesses cosigned, and the quorum. */
export function witnessedLine(w: WitnessedView, quorum?: string): Html {
  return html`${w.quorum_satisfied ? mark('ok', 'quorum met') : mark('pending', 'quorum not met yet')}
Cosigned by ${w.cosigned_by.length === 0 ? 'no witness yet' : w.cosigned_by.join(', ')}${quorum ? html` (quorum: ${quorum})` : ''}.`;
}

function witnesses(w: WitnessesView): Html {
  const rows = w.witnesses.map((s) => html`<tr>
<td>${s.name}</td>
<td class="num">${s.last_cosigned_size ?? '—'}</td>
<td>${s.last_cosigned_at ? when(s.last_cosigned_at) : '—'}</td>
<td>${s.last_error ? html`${mark('bad', `failing (${s.failures})`)} ${s.last_error}${s.next_attempt_at ? html` <span class="muted">(next try ${when(s.next_attempt_at)})</span>` : ''}` : mark('ok', 'ok')}</td>
<td><code class="hash">${s.vkey}</code></td></tr>`);
  return html`<h3 id="witnesses">Witnesses</h3>
<p>Independent witnesses check that each checkpoint extends the one they cosigned before, and cosign it (C2SP tlog-witness): a visitor who requires their cosignatures cannot be shown a forked history. Their signature lines follow the log's on the checkpoint above.</p>
<p>${w.checkpoint ? witnessedLine(w.checkpoint, w.quorum) : html`Quorum: ${w.quorum}.`}</p>
${table('Witnesses', ['Witness', 'Last cosigned size', 'Cosigned at (witness clock)', 'State', 'Witness key (vkey)'], rows, [1])}`;
}

function anchors(d: TransparencyData): Html {
  const rows = d.anchors.data.map((a) => html`<tr>
<td class="num">${a.tree_size}</td>
<td>${a.status === 'confirmed' ? mark('ok', 'confirmed') : mark('pending', 'pending')}</td>
<td class="num">${a.block_height ?? '—'}</td>
<td>${a.block_time ? when(a.block_time) : when(a.created_at)}</td>
<td>${shortHash(a.root)}</td>
<td><a href="/v1/anchors/${a.tree_size}.ots">.ots</a></td></tr>`);
  const links = [];
  if (d.anchorsCursor !== null) links.push({ href: '/transparency#anchors', label: '← Newest anchors' });
  if (d.anchors.has_more && d.anchors.next_cursor !== null) links.push({ href: `/transparency${query({ anchors_before: String(d.anchors.next_cursor) })}#anchors`, label: 'Older anchors →', rel: 'next' });
  return html`<h2 id="anchors">Anchors in Bitcoin</h2>
<p>${d.anchoring.anchored_roots} confirmed, ${d.anchoring.pending_roots} pending. ${d.anchoring.note}</p>
${d.anchors.data.length === 0 ? html`<p class="muted">No anchor yet.</p>` : table('Anchors, newest first', ['Checkpoint (records)', 'Status', 'Block height', 'Block time (or timestamped)', 'Root', 'Proof'], rows, [0, 2])}
${pager(links)}`;
}

function guarantees(d: TransparencyData): Html {
  return html`<h2 id="guarantees">What is guaranteed, and what is not</h2>
${d.transparency.guarantees.map((g) => html`<h3>${GUARANTEE_TITLES[g.name] ?? g.name}</h3>
<p><strong>Covers:</strong> ${g.covers}</p>
<p><strong>Does not cover:</strong> ${g.does_not_cover}</p>`)}`;
}

function howTo(d: TransparencyData): Html {
  return html`<h2 id="verify">Pin and verify offline</h2>
<ol>
<li>Save the heads you care about (above, or <code>curl ${d.baseUrl}/transparency</code>), and the log's checkpoint: <code>curl -o checkpoint ${d.baseUrl}/log/checkpoint</code>.</li>
<li>Later, with nothing but Node.js: <code>npx ledger verify ${d.baseUrl}/export?agent=&lt;handle&gt; --pin &lt;seq&gt;:&lt;chain_hash&gt;</code>. It recomputes every content hash, chain hash and signature with canon_v1 and checks the pinned head is still in the chain.</li>
<li>The whole log, against the checkpoint you saved: <code>npx ledger verify ${d.baseUrl}/log --pin checkpoint</code>.</li>
<li>An anchor, against Bitcoin block headers: <code>npx ledger verify &lt;tree size&gt;.ots --headers-url &lt;Esplora API&gt;</code>.</li>
</ol>
<p class="note">${d.transparency.how_to_verify}</p>`;
}

export function transparencyPage(d: TransparencyData): Page {
  const c = d.transparency.counts;
  const body = html`<h1>Transparency</h1>
<p class="lede">What you need to hold this ledger to its word: the heads of every chain, the signed checkpoints of the global log, their anchors in Bitcoin, and what each of them guarantees.</p>
<ul class="cards" aria-label="Counts">
<li><span class="value">${c.agents}</span> agents (${c.demo_agents} demo)</li>
<li><span class="value">${c.records}</span> records</li>
<li><span class="value">${c.signed}</span> agent-signed</li>
<li><span class="value">${d.log.tree_size}</span> in the global log</li>
<li><span class="value">${d.anchoring.anchored_roots}</span> anchored checkpoints</li>
</ul>
${d.anchoring.calendars_unreachable_since ? html`<p class="callout">The OpenTimestamps calendars are unreachable since ${when(d.anchoring.calendars_unreachable_since)}; anchoring retries.</p>` : ''}
${heads(d)}
${log(d)}
${anchors(d)}
${guarantees(d)}
${howTo(d)}`;
  return {
    title: 'Transparency',
    path: `/transparency${query({ anchors_before: d.anchorsCursor === null ? null : String(d.anchorsCursor) })}`,
    twin: { href: '/v1/transparency', label: 'This page as JSON' },
    section: 'transparency',
    body,
  };
}
