// The record pages (unsigned, signed, hostile content, executions by link token and inferred) in a real browser, on both stores (see browser.ts).
import { pageSuite } from './browser.ts';

await pageSuite('site pages in a browser: records', ['record-unsigned', 'record-signed', 'record-hostile', 'record-execution', 'record-inferred']);
