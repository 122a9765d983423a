// The site's routes through the HTTP layer (no browser), on both stores: pages are HTML with
// their canonical URL, JSON twin and security headers; errors are pages on site paths and the
// 2.7 body on the interface's paths or for JSON clients; hostile content is escaped everywhere;
// timelines and feeds page; executions show their link method; assets are cached by version.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { forEachStore } from '../support/stores.ts';
import { siteFixture, type SiteFixture } from './fixture.ts';

const get = (f: SiteFixture, url: string, headers: Record<string, string> = {}) => f.ledger.app.inject({ method: 'GET', url, headers: { accept: 'text/html', ...headers } });

await forEachStore('the public site over HTTP', (kind) => {
  let f: SiteFixture;
  before(async () => {
    f = await siteFixture(await kind.open());
  });
  after(async () => {
    await f?.close();
    await f?.store.close();
    await kind.cleanup();
  });

  describe('pages', () => {
    test('every page is HTML with a canonical URL, its twin, a CSP, and no unescaped hostile string', async () => {
      const pages = ['/', '/agents', `/agents/${f.handle}`, `/agents/${f.hostileHandle}`, `/records/${f.ids.hostile}`, `/records/${f.ids.signed}`, `/records/${f.ids.linked}`, '/transparency', '/docs', '/docs/signing'];
      for (const url of pages) {
        const res = await get(f, url);
        assert.equal(res.statusCode, 200, url);
        assert.match(String(res.headers['content-type']), /^text\/html; charset=utf-8/);
        assert.match(String(res.headers['content-security-policy']), /script-src 'self'/);
        assert.match(res.body, /<link rel="canonical" href="http:\/\/localhost:8080\//, url);
        assert.match(res.body, /<link rel="alternate" type="(application\/json|text\/markdown)" href="\/(v1|docs)\//, url);
        assert.ok(!res.body.includes('<script>window.__pwned'), url);
        assert.ok(!res.body.includes('<img src=x'), url);
        assert.ok(!/<b onmouseover/.test(res.body), url);
      }
      const hostile = await get(f, `/records/${f.ids.hostile}`);
      assert.ok(hostile.body.includes('&lt;script&gt;window.__pwned = 1&lt;/script&gt;'), 'the thesis is shown, escaped');
      const agent = await get(f, `/agents/${f.hostileHandle}`);
      assert.ok(agent.body.includes('&lt;img src=x onerror=window.__pwned=1&gt;Bot &quot;Alpha&quot; &amp; co'), 'the display name is shown, escaped');
    });

    test('the agent page: marks, keys, executions by link token and inferred (visibly different), badges, chart endpoints', async () => {
      const body = (await get(f, `/agents/${f.handle}`)).body;
      assert.match(body, /<li class="link-token"><span class="mark link-token"/);
      assert.match(body, /<li class="inferred"><span class="mark inferred"/);
      assert.match(body, /agent-signed/);
      assert.match(body, /production &lt;signer&gt;/);
      for (const style of ['return', 'verified', 'record']) assert.ok(body.includes(`http://localhost:8080/badge/${f.handle}.svg?style=${style}`));
      assert.match(body, /data-performance="\/v1\/agents\/momentum-bot\/performance\?portfolio=model"/);
      assert.match(body, /data-performance="\/v1\/agents\/momentum-bot\/performance\?portfolio=broker"/);
      assert.match(body, /<p class="outcome" data-outcome-for="dec_/);
      // the script fills each decision's outcome from one page of the outcomes endpoint: exactly the timeline's decisions
      const shown = [...body.matchAll(/data-outcome-for="(dec_[^"]+)"/g)].map((m) => m[1]);
      const outcomesUrl = /data-outcomes="([^"]+)"/.exec(body)![1]!.replaceAll('&amp;', '&');
      const page = (await get(f, outcomesUrl)).json() as { data: Array<{ record_id: string }> };
      assert.deepEqual(page.data.map((r) => r.record_id).sort(), [...shown].sort());
      assert.match(body, /href="\/v1\/agents\/momentum-bot\/performance\/outcomes\?portfolio=model&amp;format=csv"/);
      const demo = (await get(f, `/agents/${f.demoHandle}`)).body;
      assert.match(demo, /mark demo/);
    });

    test('the timeline and the feed page with cursors, newest first, without repeats', async () => {
      const seen = new Set<string>();
      let url: string | null = '/';
      let pages = 0;
      while (url && pages < 20) {
        const body: string = (await get(f, url)).body;
        for (const m of body.matchAll(/href="\/records\/((?:dec|exe)_[0-9A-Z]{26})"/g)) {
          assert.ok(!seen.has(m[1]!) || body.split(m[1]!).length > 2, `${m[1]} repeated across pages`);
          seen.add(m[1]!);
        }
        url = /href="(\/\?cursor=[^"]+)" rel="next"/.exec(body)?.[1]?.replace(/&amp;/g, '&') ?? null;
        pages++;
      }
      const counts = (await f.ledger.app.inject({ url: '/v1/transparency' })).json().counts;
      assert.equal(seen.size, counts.records - 1, 'every record of the non-demo agents, once (the demo decision is hidden)');
      const first = (await get(f, `/agents/${f.handle}`)).body;
      assert.ok(first.includes(f.ids.signed));
    });

    test('the record page: neighbours, proof, inclusion, anchor, the verify button and the offline command', async () => {
      const body = (await get(f, `/records/${f.ids.signed}`)).body;
      assert.match(body, /rel="prev"/);
      assert.match(body, /Signed with Ed25519 key/);
      assert.match(body, /Log index <strong>\d+<\/strong>/);
      assert.match(body, /data-proof="\/v1\/proof\/dec_/);
      assert.match(body, /npx ledger verify http:\/\/localhost:8080\/v1\/proof\/dec_/);
      const exe = (await get(f, `/records/${f.ids.inferred}`)).body;
      assert.match(exe, /inferred link/);
      assert.ok(exe.includes(`href="/records/${JSON.parse((await f.ledger.app.inject({ url: `/v1/proof/${f.ids.inferred}` })).json().record.content).link.decision_id}"`));
    });
  });

  describe('errors', () => {
    test('an unknown agent or record is the 404 page; a JSON client gets the 2.7 body', async () => {
      for (const url of ['/agents/nobody-here', '/records/dec_01HV3K8Q2ZJ9M4W7XAB3CDEF00', '/no/such/page', '/docs/nothing']) {
        const page = await get(f, url);
        assert.equal(page.statusCode, 404, url);
        assert.match(String(page.headers['content-type']), /^text\/html/);
        assert.match(page.body, /<h1>Not found<\/h1>/);
        assert.match(page.body, /Request id: <code>req_/);
        for (const accept of ['application/json', '*/*', '']) {
          const json = await get(f, url, { accept });
          assert.equal(json.statusCode, 404);
          assert.equal(json.json().error.code, 'not_found', `a client that does not ask for HTML (${accept || 'no Accept'}) gets the 2.7 body`);
        }
      }
    });

    test('the interface\'s paths answer the 2.7 body even to a browser', async () => {
      const res = await get(f, '/v1/agents/nobody-here');
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error.code, 'not_found');
      assert.equal((await get(f, '/v1/nothing')).json().error.code, 'not_found');
    });

    test('a bad query value is the error page (400), never a 500', async () => {
      const res = await get(f, '/?include_demo=perhaps');
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /Something went wrong/);
      assert.equal((await get(f, '/transparency?anchors_before=-3')).statusCode, 400);
      assert.equal((await get(f, `/agents/${f.handle}?before=not-an-id`)).statusCode, 200, 'an unreadable cursor is the first page');
      assert.equal((await get(f, `/?cursor=${'x'.repeat(65)}`)).statusCode, 400);
    });
  });

  describe('assets and docs', () => {
    test('assets are cached for a year under their version, and answer 304 on their ETag', async () => {
      const home = (await get(f, '/')).body;
      const css = /href="(\/assets\/site\.css\?v=[0-9a-f]+)"/.exec(home)?.[1];
      assert.ok(css);
      const res = await get(f, css);
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['cache-control']), /max-age=31536000, immutable/);
      assert.equal((await get(f, css, { 'if-none-match': String(res.headers.etag) })).statusCode, 304);
      assert.equal((await get(f, '/assets/nothing.js')).statusCode, 404);
      const verify = await get(f, '/assets/verify.js', { 'accept-encoding': 'br' });
      assert.equal(verify.headers['content-encoding'], 'br');
      assert.match(String(verify.headers['cache-control']), /no-cache/, 'unversioned: revalidated');
    });

    test('a guide\'s Markdown twin, and links between docs rewritten to pages', async () => {
      const md = await get(f, '/docs/signing.md');
      assert.equal(md.statusCode, 200);
      assert.match(String(md.headers['content-type']), /^text\/markdown/);
      const docs = (await get(f, '/docs')).body;
      assert.match(docs, /href="\/docs\/signing"/);
      assert.ok(!/href="[^"]*\.md"/.test(docs.replace(/<link[^>]*>/g, '')), 'no link to a .md file of the repository');
    });

    test('docs/site.md is a page, with the README\'s picture of an agent page served beside it', async () => {
      const page = (await get(f, '/docs/site')).body;
      assert.match(page, /<img src="\/docs\/images\/agent-page\.png"/);
      const image = await get(f, '/docs/images/agent-page.png');
      assert.equal(image.statusCode, 200);
      assert.equal(image.headers['content-type'], 'image/png');
      assert.equal((await get(f, '/docs/images/..%2Fsite.md')).statusCode, 404, 'only PNG names, nothing outside docs/images');
    });

    test('a search naming one agent goes to its page', async () => {
      const res = await get(f, `/agents?q=${f.handle}`);
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `/agents/${f.handle}`);
      assert.match((await get(f, '/agents?q=momentum')).body, /momentum-bot/);
    });
  });
});
