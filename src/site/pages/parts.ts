// Small pieces every page uses: times, hashes, marks, links to agents and records, one-line
// summaries of records, and pagers. All built with `html`, so every value is escaped.
import { html, type Html } from '../browser/html.ts';
import type { RecordView } from '../views.ts';

export const agentHref = (handle: string) => `/agents/${encodeURIComponent(handle)}`;
export const recordHref = (id: string) => `/records/${encodeURIComponent(id)}`;

/** `2026-03-13 14:31:05 UTC`, in a <time> element carrying the exact instant. */
export function when(iso: string | null | undefined): Html {
  if (!iso) return html`<span class="muted">never</span>`;
  const shown = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(iso) ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : iso;
  return html`<time datetime="${iso}">${shown}</time>`;
}

/** A hash shortened for tables, whole in its title. */
export function shortHash(hex: string): Html {
  return html`<code class="hash" title="${hex}">${hex.slice(0, 12)}…</code>`;
}

export function mark(kind: string, text: string, title?: string): Html {
  return html`<span class="mark ${kind}"${title ? html` title="${title}"` : ''}>${text}</span>`;
}

export function statusMark(status: string | null): Html {
  if (status === null || status === 'active') return html``;
  return mark(status, status);
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** `BUY 10 AAPL` / `sell 4 TSLA @ 185` as plain text. */
export function summary(r: RecordView): string {
  const c = r.content;
  if (r.type === 'execution') {
    return [str(c.side), str(c.quantity), str(c.symbol), str(c.price) ? `@ ${str(c.price)}` : null].filter(Boolean).join(' ');
  }
  if (r.type === 'activity') {
    return [str(c.activity_type), str(c.symbol), str(c.quantity), str(c.amount) ? `cash ${str(c.amount)}` : null].filter(Boolean).join(' ');
  }
  const size = str(c.quantity) ?? (str(c.notional) ? `${str(c.notional)} ${str(c.currency) ?? ''}`.trim() : null)
    ?? (str(c.target_allocation_pct) ? `to ${str(c.target_allocation_pct)} %` : null);
  return [str(c.action), size, str(c.symbol)].filter(Boolean).join(' ');
}

/** The link mark of an execution: verified by link token, or inferred (never verification). */
export function linkMark(r: RecordView): Html {
  if (!r.link) return mark('neutral', 'not linked', 'This fill links to no decision.');
  return r.link.method === 'link_token'
    ? mark('link-token', '✓ linked by link token', 'The order carried the decision\'s link token: a verified link.')
    : mark('inferred', '≈ inferred link', 'Matched by symbol, side and timing: not verification.');
}

export function signedMark(r: RecordView): Html {
  return r.signedBy ? mark('signed', 'agent-signed', `Ed25519 signature under key ${r.signedBy}`) : html``;
}

export function pager(links: { href: string; label: string; rel?: string }[]): Html {
  if (links.length === 0) return html``;
  return html`<nav class="pager" aria-label="Pages">${links.map((l) => html`<a href="${l.href}"${l.rel ? html` rel="${l.rel}"` : ''}>${l.label}</a>`)}</nav>`;
}

/** A table wrapped so it scrolls sideways on a phone instead of widening the page. */
export function table(caption: string, head: (string | Html)[], rows: Html[], numeric: number[] = []): Html {
  return html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0"><table>
<caption class="visually-hidden">${caption}</caption>
<thead><tr>${head.map((h, i) => html`<th scope="col"${numeric.includes(i) ? html` class="num"` : ''}>${h}</th>`)}</tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}

/** A query string from the parameters that are set. */
export function query(params: Record<string, string | null | undefined | false>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}
