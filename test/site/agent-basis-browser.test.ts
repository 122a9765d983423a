// The agent page says what the benchmark's figures are, as the report says it (issue 39: labels
// follow the numbers): total return, price return, or a partial return naming the days whose
// corporate actions the service did not know. In a real browser, the report's answer given to the
// page's script as the performance endpoint would give it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachStore } from '../support/stores.ts';
import { chromiumSkip, siteInBrowser } from './browser.ts';

const skip = chromiumSkip();

await forEachStore('the agent page names the benchmark\'s basis', (kind) => {
  const site = siteInBrowser(kind, skip);
  test('as the report does: total, price, or a partial return naming what was not known', { skip }, () => basisWords(site));
});

type Site = ReturnType<typeof siteInBrowser>;

/** A computed model report of two days, with the benchmark said as `benchmark`. */
function report(benchmark: Record<string, unknown>) {
  const row = (date: string, value: string, bench: string) => ({ date, value, daily_return: '0', benchmark_value: bench });
  return {
    status: 'computed', portfolio: 'model', method: 'perf_v2', basis: 'decisions_at_receipt_price', start_value: '100000.00', synthetic: false,
    series: [row('2026-03-02', '100000.00', '100000.00'), row('2026-03-03', '101000.00', '100500.00')],
    metrics: {}, caveats: [], corporate_actions: { events: [], not_applied: [] },
    benchmark: { symbol: 'SPY', metrics: null, ...benchmark },
  };
}

async function summary(site: Site, benchmark: Record<string, unknown>): Promise<string> {
  const context = await site.browser.newContext();
  const page = await context.newPage();
  try {
    await page.route('**/v1/agents/*/performance?portfolio=*', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(report(benchmark)) }));
    await page.goto(`${site.f.url}/agents/${site.f.handle}`, { waitUntil: 'load' });
    await page.waitForFunction(() => [...document.querySelectorAll('[data-performance]')].every((e) => e.querySelector('[data-no-performance], .uplot, .note')));
    return await page.innerText('[data-performance]');
  } finally {
    await context.close();
  }
}

async function basisWords(site: Site): Promise<void> {
  assert.match(await summary(site, { basis: 'total_return' }), /SPY \(total return\) \+0\.5/);
  assert.match(await summary(site, { basis: 'price_return' }), /SPY \(price return\) \+0\.5/);
  const never = await summary(site, { basis: 'partial_return', missing: { symbol: 'SPY', known: null, from: '2026-03-03', through: '2026-03-03' } });
  assert.match(never, /SPY \(partial return: none of its dividends and splits known for 2026-03-03 to 2026-03-03\)/);
  assert.doesNotMatch(never, /total return/);
  const part = await summary(site, { basis: 'partial_return', missing: { symbol: 'SPY', known: { from: '2026-01-01', through: '2026-03-02' }, from: '2026-03-02', through: '2026-03-03' } });
  assert.match(part, /SPY \(partial return: its dividends and splits known for 2026-01-01 to 2026-03-02 only, of 2026-03-02 to 2026-03-03\)/);
}
