// The one page frame of the public site: head (title, canonical URL, the JSON twin as a
// rel=alternate link, the stylesheet), navigation, main, footer. Pages give their body as Html.
import type { Assets } from './assets.ts';
import { html, type Html } from './browser/html.ts';

export type Twin = { href: string; type?: string; label?: string };

export type Page = {
  title: string;
  /** The canonical path of the page, below the site root (with its query when it names the page). */
  path: string;
  /** Where the same content is as data: the JSON twin (or, for docs, the Markdown source). */
  twin?: Twin;
  description?: string;
  /** Which navigation entry is the current page. */
  section?: 'home' | 'agents' | 'transparency' | 'docs';
  body: Html;
  /** Asset names of scripts (deferred) and extra stylesheets. */
  scripts?: string[];
  styles?: string[];
  /** `noindex` for error pages. */
  robots?: string;
};

/** `siteUrl` and `baseUrl` (the API's, with /v1) are the published addresses; links within the site are relative. */
export type Frame = { siteUrl: string; baseUrl: string; assets: Assets };

const NAV: { section: Page['section']; href: string; label: string }[] = [
  { section: 'home', href: '/', label: 'Ledger' },
  { section: 'agents', href: '/agents', label: 'Agents' },
  { section: 'transparency', href: '/transparency', label: 'Transparency' },
  { section: 'docs', href: '/docs', label: 'Docs' },
];

function assetTags(frame: Frame, page: Page): { styles: Html[]; scripts: Html[] } {
  const styles = ['site.css', ...(page.styles ?? [])].map((n) => frame.assets.url(n)).filter((u): u is string => u !== null)
    .map((u) => html`<link rel="stylesheet" href="${u}">`);
  const scripts = (page.scripts ?? []).map((n) => frame.assets.url(n)).filter((u): u is string => u !== null)
    .map((u) => html`<script src="${u}" defer></script>`);
  return { styles, scripts };
}

export function layout(frame: Frame, page: Page): string {
  const canonical = `${frame.siteUrl}${page.path}`;
  const { styles, scripts } = assetTags(frame, page);
  const twin = page.twin;
  const doc = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · decision ledger</title>
<meta name="description" content="${page.description ?? 'A permanent, public, tamper-evident track record for automated investing agents.'}">
${page.robots ? html`<meta name="robots" content="${page.robots}">` : ''}
<link rel="canonical" href="${canonical}">
${frame.assets.url('favicon.svg') ? html`<link rel="icon" type="image/svg+xml" href="${frame.assets.url('favicon.svg')}">` : ''}
${twin ? html`<link rel="alternate" type="${twin.type ?? 'application/json'}" href="${twin.href}">` : ''}
${styles}
${scripts}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="site">
<a class="brand" href="/">decision ledger</a>
<nav aria-label="Site"><ul>
${NAV.map((n) => html`<li><a href="${n.href}"${n.section === page.section ? html` aria-current="page"` : ''}>${n.label}</a></li>`)}
</ul></nav>
</header>
<main id="main">
${page.body}
</main>
<footer class="site">
${twin ? html`<p>${twin.label ?? 'This page as data'}: <a href="${twin.href}">${twin.href}</a></p>` : ''}
<p>Every record is hashed with canon_v1 (SHA-256) and can be checked without trusting this server: <code>npx ledger verify ${frame.baseUrl}/export?agent=&lt;handle&gt;</code></p>
<p><a href="/transparency">Transparency</a> · <a href="/docs">Docs</a> · <a href="/v1/openapi.json">OpenAPI</a></p>
</footer>
</body>
</html>
`;
  return doc.text;
}
