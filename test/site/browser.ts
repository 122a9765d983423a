// The public site in a real browser (playwright-core driving Debian's chromium), for the site's
// browser tests (*-pages.test.ts, verify-browser.test.ts; split in files so each stays well
// inside the test runner's per-file timeout): every page shows its content, its links answer,
// nothing injected runs, no console error, no serious or critical axe-core violation.
// Screenshots of each page at phone and desktop width are written to test-results/site/
// (ignored by git) for review. Skipped, visibly, without chromium (but not under CI=true, where
// .ci/run installs it).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { forEachStore, type StoreKind } from '../support/stores.ts';
import { HOSTILE, siteFixture, type SiteFixture } from './fixture.ts';

export const CHROMIUM = process.env.LEDGER_CHROMIUM ?? '/usr/bin/chromium';
export const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
export const SHOTS = new URL('../../test-results/site/', import.meta.url);
export const WIDTHS = { phone: 390, desktop: 1280 } as const;
/** The agent page, before the chart's data: HTML, stylesheets and scripts, as transferred. */
export const AGENT_PAGE_BUDGET = 150 * 1024;

export function chromiumSkip(): false | string {
  if (existsSync(CHROMIUM)) return false;
  const message = `chromium is not installed at ${CHROMIUM} (apt-get install -y chromium); skipping the browser tests`;
  if (process.env.CI === 'true') throw new Error(`CI=true requires chromium: ${message}`);
  console.warn(`# SKIP ${message}`);
  return message;
}

export type PageCase = { name: string; path: (f: SiteFixture) => string; expect: (f: SiteFixture) => (string | RegExp)[]; status?: number };

export const PAGES: PageCase[] = [
  { name: 'home', path: () => '/', expect: (f) => ['The decision ledger', 'Newest records', f.handle, 'Latest anchored checkpoint', '840000'] },
  { name: 'home-demo', path: () => '/?include_demo=true', expect: () => ["Demo agents' records are shown", 'Hide them'] },
  { name: 'agents', path: () => '/agents?q=bot', expect: (f) => [f.handle, f.demoHandle] },
  { name: 'leaderboard', path: () => '/agents', expect: (f) => ['How this board ranks', 'No rank below 90 days', 'Left out: 1 demo agent', f.handle, f.hostileHandle, 'self-reported', 'no curve yet', 'Excess return'] },
  { name: 'leaderboard-demo', path: () => '/agents?include_demo=true&sort=records', expect: (f) => ['The board, by records', f.demoHandle, 'demo', '3 of 3 agents listed'] },
  { name: 'agent', path: (f) => `/agents/${f.handle}`, expect: () => ['Momentum Bot', 'Decisions', 'linked by link token', 'inferred link', 'agent-signed', 'production <signer>', 'style=return', 'style=verified', 'style=record', 'No performance yet'] },
  { name: 'agent-hostile', path: (f) => `/agents/${f.hostileHandle}`, expect: () => [HOSTILE.displayName, HOSTILE.thesis] },
  { name: 'agent-demo', path: (f) => `/agents/${f.demoHandle}`, expect: () => ['demo agent'] },
  { name: 'record-unsigned', path: (f) => `/records/${f.ids.unsigned}`, expect: () => ['Verify in this browser', 'Services margin expanding', 'Executions linked to this decision', 'confirmed', '840000'] },
  { name: 'record-signed', path: (f) => `/records/${f.ids.signed}`, expect: () => ['agent-signed', 'Signed with Ed25519 key', 'Global log'] },
  { name: 'record-hostile', path: (f) => `/records/${f.ids.hostile}`, expect: () => [HOSTILE.thesis, HOSTILE.metadata.note] },
  { name: 'record-execution', path: (f) => `/records/${f.ids.linked}`, expect: () => ['linked by link token', 'broker synced (alpaca)'] },
  { name: 'record-inferred', path: (f) => `/records/${f.ids.inferred}`, expect: () => ['inferred link'] },
  { name: 'transparency', path: () => '/transparency', expect: (f) => ['Chain heads to pin', f.handle, 'The global log', 'confirmed', 'pending', '840000', 'Does not cover'] },
  { name: 'docs', path: () => '/docs', expect: () => ['Getting started', 'Quick start', 'Sign decisions', 'Connect a broker', 'API reference'] },
  { name: 'docs-guide', path: () => '/docs/signing', expect: () => ['Ed25519'] },
  { name: 'not-found', path: () => '/agents/nobody-here', expect: () => ['Not found', 'no agent with handle nobody-here'], status: 404 },
  { name: 'error', path: () => '/?include_demo=perhaps', expect: () => ['Something went wrong', 'Request id'], status: 400 },
];

/** Console errors the page is allowed: the HTTP status of an error page itself, and a performance report not computed (404 by design). */
function allowed(text: string, location: string, pageUrl: string, status: number): boolean {
  if (!text.startsWith('Failed to load resource')) return false;
  if (status >= 400 && location === pageUrl) return true;
  return /\/performance\?portfolio=/.test(location) && /404/.test(text);
}

export async function open(browser: Browser, url: string, width: number, status = 200) {
  const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: width < 500 ? 'dark' : 'light' });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !allowed(m.text(), m.location().url, url, status)) errors.push(`${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  const res = await page.goto(url, { waitUntil: 'load' });
  // The agent page's script is done when every chart says something (a curve, or why there is none).
  await page.waitForFunction(() => [...document.querySelectorAll('[data-performance]')].every((e) => e.querySelector('[data-no-performance], .uplot')));
  return { page, context, errors, status: res?.status() ?? 0 };
}

/** The page's links to this site, other than to itself. */
async function links(page: Page, origin: string): Promise<string[]> {
  const hrefs = await page.$$eval('a[href]', (as) => as.map((a) => (a as HTMLAnchorElement).href));
  const self = page.url().split('#')[0];
  return [...new Set(hrefs.filter((h) => h.startsWith(origin)).map((h) => h.split('#')[0]!))].filter((h) => h !== self);
}

export async function verdict(page: Page): Promise<{ verdict: string; checks: Record<string, string> }> {
  await page.click('[data-verify]');
  await page.waitForSelector('[data-verdict]');
  return page.evaluate(() => ({
    verdict: document.querySelector('[data-verdict]')!.getAttribute('data-verdict')!,
    checks: Object.fromEntries([...document.querySelectorAll('[data-check]')].map((e) => [e.getAttribute('data-check'), e.getAttribute('data-ok')])),
  }));
}

/** Each named page, on both stores: content, links, no injection, no console error, axe, screenshots. */
export async function pageSuite(title: string, names: string[]): Promise<void> {
  const skip = chromiumSkip();
  const cases = PAGES.filter((p) => names.includes(p.name));
  assert.equal(cases.length, names.length, 'every named page is known');
  await forEachStore(title, (kind) => {
    const site = siteInBrowser(kind, skip);
    const checked = new Map<string, number>();
    describe('pages', { skip, concurrency: 3 }, () => {
      for (const c of cases) test(`${c.name}: content, links, no injection, no console error, accessible, screenshots`, () => checkPage(site.browser, site.f, kind.name, c, checked));
    });
  });
}

/** The site fixture on the store of `kind` and a browser, made before the suite's tests and closed after them (nothing when skipped). */
export function siteInBrowser(kind: StoreKind, skip: false | string): { f: SiteFixture; browser: Browser } {
  const site = {} as { f: SiteFixture; browser: Browser };
  before(async () => {
    if (skip) return;
    site.f = await siteFixture(await kind.open());
    site.browser = await launch();
  });
  after(async () => {
    await site.browser?.close();
    await site.f?.close();
    await site.f?.store.close();
    await kind.cleanup();
  });
  return site;
}

export async function launch(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

async function checkPage(browser: Browser, f: SiteFixture, store: string, c: PageCase, checked: Map<string, number>): Promise<void> {
  const status = c.status ?? 200;
  for (const [label, width] of Object.entries(WIDTHS)) {
    const url = `${f.url}${c.path(f)}`;
    const { page, context, errors, status: got } = await open(browser, url, width, status);
    try {
      assert.equal(got, status, url);
      const text = await page.innerText('body');
      for (const e of c.expect(f)) {
        if (typeof e === 'string') assert.ok(text.includes(e), `${c.name}: expected ${JSON.stringify(e)} on ${url}`);
        else assert.match(text, e);
      }
      assert.equal(await page.evaluate(() => (window as { __pwned?: number }).__pwned), undefined, 'injected markup ran');
      assert.deepEqual(errors, [], `console errors on ${url}`);
      await page.screenshot({ path: new URL(`${store}-${c.name}-${label}.png`, SHOTS).pathname, fullPage: true });
      // The README's picture of an agent page (docs/images/agent-page.png is copied from it).
      if (c.name === 'agent' && label === 'desktop') await page.screenshot({ path: new URL(`${store}-readme-agent-page.png`, SHOTS).pathname, fullPage: true, clip: { x: 0, y: 0, width: 1280, height: 1600 } });
      if (label !== 'desktop') continue;
      const axe = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
      const bad = axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')})`), [], `axe on ${url}`);
      for (const link of await links(page, f.url)) {
        if (checked.has(link)) continue;
        if (new URL(link).pathname === '/docs/api' && !f.ledger.app.hasRoute({ method: 'GET', url: '/docs/api' })) continue; // the API reference, served when built
        const res = await fetch(link, { redirect: 'manual' });
        checked.set(link, res.status);
        assert.ok(res.status < 400, `${link} (linked from ${url}) answered ${res.status}`);
      }
    } finally {
      await context.close();
    }
  }
}
