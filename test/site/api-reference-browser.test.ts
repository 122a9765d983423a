// /docs/api in a real browser (Debian's chromium, driven by playwright-core): Redoc draws the
// service's own OpenAPI document, with no console error, no failed request and no request to any
// other host. Skipped with a message without chromium; under CI=true its absence fails the run.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { openStore } from '../../src/store/open.ts';
import { testApp, type TestApp } from '../support/app.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

function chromiumSkip(): false | string {
  if (existsSync(CHROMIUM)) return false;
  const message = `chromium is not installed at ${CHROMIUM} (apt-get install -y chromium); skipping the browser test of /docs/api`;
  if (process.env.CI === 'true') throw new Error(`CI=true requires chromium: ${message}`);
  console.warn(`# SKIP ${message}`);
  return message;
}

const skip = chromiumSkip();
let t: TestApp;
let browser: Browser;
let origin: string;

before(async () => {
  if (skip) return;
  const store = openStore('sqlite::memory:');
  await store.migrate();
  t = await testApp(store);
  origin = await t.app.listen({ host: '127.0.0.1', port: 0 });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
});
after(async () => {
  await browser?.close();
  await t?.close();
  await t?.store.close();
});

test('Redoc draws the API reference from the service alone, with no console error', { skip, timeout: 120_000 }, async () => {
  const page = await browser.newPage();
  const problems: string[] = [];
  const elsewhere: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()}: ${r.url()}`);
  });
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (!['data:', 'blob:'].includes(url.protocol) && url.origin !== origin) elsewhere.push(r.url());
  });

  const res = await page.goto(`${origin}/docs/api`, { waitUntil: 'load' });
  assert.equal(res?.status(), 200);
  // Redoc draws each operation's summary as a heading, and the document's title at the top.
  await page.getByRole('heading', { name: 'Record a decision' }).first().waitFor({ timeout: 60_000 });
  await page.getByRole('heading', { name: /^Decision ledger/ }).first().waitFor({ timeout: 10_000 });
  assert.equal(await page.title(), 'API reference · Decision ledger');
  const operations = await page.getByRole('heading', { level: 2 }).count();
  assert.ok(operations >= 20, `${operations} operations drawn`);
  assert.deepEqual(problems, []);
  assert.deepEqual(elsewhere, [], 'no request leaves the service');
  await page.close();
});
