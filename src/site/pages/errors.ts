// The 404 page and the error page, in the site's frame. They say what happened, quote the
// request id, and point somewhere useful.
import { html } from '../browser/html.ts';
import type { Page } from '../layout.ts';
import { searchForm } from './home.ts';

export function notFoundPage(path: string, message: string, requestId: string): Page {
  return {
    title: 'Not found',
    path,
    robots: 'noindex',
    body: html`<div class="error-page">
<p class="code" aria-hidden="true">404</p>
<h1>Not found</h1>
<p>${message}</p>
<p>Records and agents are never deleted: if you followed a link to one, check the address. Or find an agent:</p>
${searchForm()}
<p><a href="/">The newest records</a> · <a href="/transparency">Transparency</a> · <a href="/docs">Docs</a></p>
<p class="note">Request id: <code>${requestId}</code></p>
</div>`,
  };
}

export function errorPage(status: number, message: string, requestId: string, path: string): Page {
  const retry = status === 503 || status === 429;
  return {
    title: retry ? 'Try again shortly' : 'Something went wrong',
    path,
    robots: 'noindex',
    body: html`<div class="error-page">
<p class="code" aria-hidden="true">${status}</p>
<h1>${retry ? 'Try again shortly' : 'Something went wrong'}</h1>
<p>${message}</p>
<p>${retry ? 'The ledger is busy or restarting; nothing is lost. Reload in a few seconds.' : 'Nothing was changed: pages only read. If it happens again, quote the request id below.'}</p>
<p><a href="/">The newest records</a> · <a href="/transparency">Transparency</a></p>
<p class="note">Request id: <code>${requestId}</code></p>
</div>`,
  };
}
