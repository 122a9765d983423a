// Verify in this browser, in a real browser on both stores: it passes on good records (unsigned,
// signed, an execution) and fails, naming the check, on a record whose content or chain entry
// was altered in the response (intercepted with page.route). And the agent page's weight
// budget: under 150 KB transferred before the chart's data.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { forEachStore } from '../support/stores.ts';
import { AGENT_PAGE_BUDGET, chromiumSkip, open, siteInBrowser, verdict, WIDTHS } from './browser.ts';

const skip = chromiumSkip();

await forEachStore('the public site in a browser', (kind) => {
  const site = siteInBrowser(kind, skip);

  describe('Verify in this browser', { skip }, () => {
    for (const which of ['unsigned', 'signed', 'linked'] as const) {
      test(`passes on a good record (${which})`, async () => {
        const { page, context, errors } = await open(site.browser, `${site.f.url}/records/${site.f.ids[which]}`, WIDTHS.desktop);
        try {
          const v = await verdict(page);
          assert.equal(v.verdict, 'pass', JSON.stringify(v));
          for (const name of ['content_hash', 'chain_hash', 'head', 'checkpoint', 'inclusion']) assert.equal(v.checks[name], 'true', `${name}: ${JSON.stringify(v)}`);
          assert.equal(v.checks.signature, which === 'signed' ? 'true' : 'null');
          assert.deepEqual(errors, []);
        } finally {
          await context.close();
        }
      });
    }

    test('fails on a record whose content was altered in the response, and says which check', async () => {
      for (const which of ['unsigned', 'signed'] as const) {
        const { page, context } = await open(site.browser, `${site.f.url}/records/${site.f.ids[which]}`, WIDTHS.desktop);
        try {
          await page.route('**/v1/proof/**', async (route) => {
            const res = await route.fetch();
            const body = JSON.parse(await res.text());
            body.record.content = body.record.content.replace(/"quantity":"(\d+)"/, '"quantity":"9$1"');
            body.record.document = JSON.parse(body.record.content);
            await route.fulfill({ response: res, body: JSON.stringify(body) });
          });
          const v = await verdict(page);
          assert.equal(v.verdict, 'fail', JSON.stringify(v));
          assert.equal(v.checks.content_hash, 'false');
          if (which === 'signed') assert.equal(v.checks.signature, 'false');
        } finally {
          await context.close();
        }
      }
    });

    test('fails when the chain entry was altered (the checkpoint no longer includes it)', async () => {
      const { page, context } = await open(site.browser, `${site.f.url}/records/${site.f.ids.unsigned}`, WIDTHS.desktop);
      try {
        await page.route('**/v1/proof/**', async (route) => {
          const res = await route.fetch();
          const body = JSON.parse(await res.text());
          body.record.entry.recorded_at = body.record.entry.recorded_at.replace(/^\d{4}/, '2020');
          await route.fulfill({ response: res, body: JSON.stringify(body) });
        });
        const v = await verdict(page);
        assert.equal(v.verdict, 'fail');
        assert.equal(v.checks.chain_hash, 'false');
        assert.equal(v.checks.inclusion, 'false');
      } finally {
        await context.close();
      }
    });
  });

  describe('page weight', { skip }, () => {
    test(`the agent page is under ${AGENT_PAGE_BUDGET / 1024} KB transferred before the chart data`, async () => {
      const context = await site.browser.newContext({ viewport: { width: WIDTHS.desktop, height: 900 } });
      const page = await context.newPage();
      const sizes: Promise<{ url: string; bytes: number }>[] = [];
      page.on('requestfinished', (r) => {
        if (/\/performance\?/.test(r.url())) return;
        sizes.push(r.sizes().then((s) => ({ url: r.url(), bytes: s.responseBodySize + s.responseHeadersSize })));
      });
      await page.goto(`${site.f.url}/agents/${site.f.handle}`, { waitUntil: 'networkidle' });
      const all = await Promise.all(sizes);
      const total = all.reduce((n, s) => n + s.bytes, 0);
      console.log(`# agent page: ${all.length} requests, ${total} bytes transferred before the chart data`);
      assert.ok(all.length >= 4, 'the page, its stylesheets and scripts were loaded');
      assert.ok(total < AGENT_PAGE_BUDGET, `${total} bytes: ${JSON.stringify(all)}`);
      await context.close();
    });
  });
});
