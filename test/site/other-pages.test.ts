// The transparency page, the docs, the 404 page and the error page in a real browser, on both stores (see browser.ts).
import { pageSuite } from './browser.ts';

await pageSuite('site pages in a browser: transparency, docs, errors', ['transparency', 'docs', 'docs-guide', 'not-found', 'error']);
