// `/docs` (getting started, from the README, and the list of guides) and `/docs/<name>` (one
// guide of docs/). The API reference, `/docs/api`, is rendered from /v1/openapi.json elsewhere.
import type { Doc } from '../doc-pages.ts';
import { html, trusted } from '../browser/html.ts';
import type { Page } from '../layout.ts';

export function docsIndexPage(start: Doc, guides: Doc[]): Page {
  const body = html`<div class="doc">
<h1>Docs</h1>
<p class="lede">Getting started: record a decision, sign it, connect a broker, and verify the record yourself. The <a href="/docs/api">API reference</a> is generated from the OpenAPI description (<a href="/v1/openapi.json">/v1/openapi.json</a>).</p>
<nav aria-label="Guides"><h2>Guides</h2><ul>
${guides.map((g) => html`<li><a href="/docs/${g.name}">${g.title}</a></li>`)}
<li><a href="/docs/api">API reference</a></li>
</ul></nav>
<h2>Getting started</h2>
${trusted(start.html)}
</div>`;
  return {
    title: 'Docs',
    path: '/docs',
    twin: { href: '/v1/openapi.json', label: 'The interface as OpenAPI (JSON)' },
    section: 'docs',
    body,
  };
}

export function guidePage(doc: Doc): Page {
  return {
    title: doc.title,
    path: `/docs/${doc.name}`,
    twin: { href: `/docs/${doc.name}.md`, type: 'text/markdown', label: 'This page as Markdown' },
    section: 'docs',
    body: html`<div class="doc">${trusted(doc.html)}</div>
<p class="note"><a href="/docs">All docs</a></p>`,
  };
}
