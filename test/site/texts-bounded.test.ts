// The large texts (/v1/openapi.json, /llms-full.txt) are built once and compressed once: each is
// served as br or gzip as the client accepts (identity otherwise), with an ETag per variant and
// 304 on If-None-Match, and both count against the read rate limit (docs/operations.md, "Bounds
// on public reads"). No store is involved beyond the app's own: SQLite only.
import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import { testApp, type TestApp } from '../support/app.ts';

const TEXTS = ['/v1/openapi.json', '/llms-full.txt'];

describe('the OpenAPI document and llms-full.txt', () => {
  let t: TestApp;
  before(async () => {
    const store = openStore('sqlite::memory:');
    await store.migrate();
    t = await testApp(store, { env: { LEDGER_READ_LIMIT_PER_MIN: '1000' } });
  });
  after(async () => {
    await t.close();
    await t.store.close();
  });

  const fetchText = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

  test('sent compressed as the client accepts (br, then gzip), identical to the identity body, with an ETag per variant', async () => {
    for (const url of TEXTS) {
      const plain = await fetchText(url);
      assert.equal(plain.statusCode, 200, url);
      assert.equal(plain.headers['content-encoding'], undefined, url);
      assert.equal(plain.headers.vary, 'Accept-Encoding');
      const br = await fetchText(url, { 'accept-encoding': 'gzip, deflate, br' });
      assert.equal(br.headers['content-encoding'], 'br', url);
      assert.ok(br.rawPayload.length < plain.rawPayload.length / 2, `${url}: ${br.rawPayload.length} of ${plain.rawPayload.length} bytes`);
      assert.deepEqual(brotliDecompressSync(br.rawPayload), plain.rawPayload, url);
      const gz = await fetchText(url, { 'accept-encoding': 'gzip' });
      assert.equal(gz.headers['content-encoding'], 'gzip', url);
      assert.deepEqual(gunzipSync(gz.rawPayload), plain.rawPayload, url);
      const tags = new Set([plain.headers.etag, br.headers.etag, gz.headers.etag]);
      assert.equal(tags.size, 3, `${url}: one ETag per variant`);
      assert.match(String(plain.headers['cache-control']), /^public, max-age=\d+$/, url);
    }
    assert.deepEqual(JSON.parse((await fetchText('/v1/openapi.json')).body), t.app.swagger(), 'the document is the live OpenAPI document');
  });

  test('If-None-Match with the variant\'s ETag answers 304 without a body', async () => {
    for (const url of TEXTS) {
      for (const encoding of ['br', 'gzip', 'identity']) {
        const first = await fetchText(url, { 'accept-encoding': encoding });
        const again = await fetchText(url, { 'accept-encoding': encoding, 'if-none-match': String(first.headers.etag) });
        assert.equal(again.statusCode, 304, `${url} ${encoding}`);
        assert.equal(again.rawPayload.length, 0);
        assert.equal(again.headers.etag, first.headers.etag);
      }
    }
  });
});

describe('the texts under the read rate limit', () => {
  let t: TestApp;
  before(async () => {
    const store = openStore('sqlite::memory:');
    await store.migrate();
    t = await testApp(store, { env: { LEDGER_READ_LIMIT_PER_MIN: '3' } });
  });
  after(async () => {
    await t.close();
    await t.store.close();
  });

  test('past the per-minute budget: 429 rate_limit_exceeded with Retry-After and the RateLimit headers', async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await t.app.inject({ method: 'GET', url: TEXTS[i % 2]!, headers: { 'accept-encoding': 'br' } }));
    assert.deepEqual(answers.map((a) => a.statusCode), [200, 200, 200, 429]);
    const limited = answers[3]!;
    assert.equal(JSON.parse(limited.body).error.code, 'rate_limit_exceeded');
    assert.ok(Number(limited.headers['retry-after']) >= 1, `Retry-After ${limited.headers['retry-after']}`);
    assert.equal(limited.headers['ratelimit-limit'], '3');
  });
});
