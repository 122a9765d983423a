// HTTP hygiene of the public reads: CORS, ETag/304, Cache-Control, compression, the read rate
// limit (per IP, one budget across public reads, shared through Redis when configured).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import { forEachStore } from '../support/stores.ts';
import { REDIS_URL, skipUnless } from '../support/services.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { assertError, get, postMany } from './helpers.ts';

const redisSkip = await skipUnless('redis');

await forEachStore('public reads over HTTP', (kind) => {
  let t: TestApp;
  let handle: string;
  let recordId = "";
  before(async () => {
    t = await testApp(await kind.open());
    const a = await t.agent();
    handle = a.handle;
    [recordId = ""] = await postMany(t, a.secret, 40, (i) => ({ symbol: 'AAPL', action: 'BUY', quantity: i + 1, thesis: 'A thesis long enough to be worth compressing. '.repeat(3) }));
  });
  after(() => closeTestApp(t, kind));

  const urls = () => [`/v1/agents/${handle}`, `/v1/agents/${handle}/chain`, `/v1/proof/${recordId}`, '/v1/ledger', `/v1/export?agent=${handle}`, '/v1/transparency'];

  test('CORS is open on every public read, success or error; not on the authenticated endpoints', async () => {
    for (const url of [...urls(), '/v1/agents/nobody-here', '/v1/ledger?limit=0']) {
      const res = await get(t, url, { origin: 'https://example.org' });
      assert.equal(res.headers['access-control-allow-origin'], '*', url);
      assert.match(String(res.headers['access-control-expose-headers']), /ETag.*RateLimit-Remaining.*Retry-After/, url);
    }
    const res = await t.app.inject({ method: 'GET', url: '/v1/decisions', headers: { origin: 'https://example.org' } });
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });

  test('preflight: OPTIONS answers 204 with the allowed methods', async () => {
    for (const url of urls()) {
      const res = await t.app.inject({ method: 'OPTIONS', url, headers: { origin: 'https://example.org', 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match' } });
      assert.equal(res.statusCode, 204, url);
      assert.equal(res.headers['access-control-allow-origin'], '*');
      assert.equal(res.headers['access-control-allow-methods'], 'GET, HEAD, OPTIONS');
      assert.match(String(res.headers['access-control-allow-headers']), /If-None-Match/);
    }
  });

  test('ETag and Cache-Control on every public read; If-None-Match answers 304', async () => {
    // No integrator runs here: the proof waits for the global log, so it is cached briefly (max-age=60 once integrated).
    const expected: Record<string, string> = { export: 'public, no-cache' };
    for (const url of urls()) {
      const res = await get(t, url);
      assert.equal(res.statusCode, 200, url);
      const tag = res.headers.etag;
      assert.match(String(tag), /^W\/".+"$/, url);
      const kindOf = url.includes('/proof/') ? 'proof' : url.includes('/export') ? 'export' : 'short';
      assert.equal(res.headers['cache-control'], expected[kindOf] ?? 'public, max-age=5', url);
      if (url === '/v1/transparency') continue; // carries generated_at: a new body each second
      const again = await get(t, url, { 'if-none-match': String(tag) });
      assert.equal(again.statusCode, 304, url);
      assert.equal(again.body, '');
    }
  });

  test('chain and ledger pages: one ETag per page body, taken without hashing the body (the same page, the same tag; another page or a new record, another tag)', async () => {
    const pages = [
      `/v1/agents/${handle}/chain`, `/v1/agents/${handle}/chain?limit=5`, `/v1/agents/${handle}/chain?limit=5&after_seq=5`,
      `/v1/agents/${handle}/chain?payloads=false`, `/v1/agents/${handle}/chain?after_seq=40`,
      '/v1/ledger', '/v1/ledger?limit=5', `/v1/ledger?limit=5&agent=${handle}`, '/v1/ledger?symbol=MSFT',
    ];
    const tags = async () => {
      const byBody = new Map<string, string>();
      for (const url of pages) {
        const res = await get(t, url);
        assert.equal(res.statusCode, 200, url);
        const tag = String(res.headers.etag);
        assert.match(tag, /^W\/"[0-9a-f]{32}"$/, url);
        assert.notEqual(tag, `W/"${createHash('sha1').update(res.body).digest('base64')}"`, `${url}: the tag is not the body's hash`);
        assert.equal(byBody.get(res.body) ?? tag, tag, `${url}: the same body, the same tag`);
        byBody.set(res.body, tag);
      }
      return new Map([...byBody].map(([body, tag]) => [tag, body]));
    };
    const before = await tags();
    assert.equal(before.size, new Set((await Promise.all(pages.map((u) => get(t, u)))).map((r) => r.body)).size, 'different bodies, different tags');
    const a = await t.agent();
    await postMany(t, a.secret, 1, () => ({ symbol: 'MSFT', action: 'BUY', quantity: 1 }));
    const after = await tags();
    const changed = [...after.keys()].filter((tag) => !before.has(tag));
    assert.ok(changed.length >= 2, 'the ledger pages that show the new record have new tags');
    for (const tag of after.keys()) if (before.has(tag)) assert.equal(after.get(tag), before.get(tag), 'a tag kept names the same body');
  });

  test('responses are compressed when the client accepts it', async () => {
    const url = `/v1/agents/${handle}/chain`;
    const plain = await get(t, url);
    const gz = await get(t, url, { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(gz.rawPayload).toString(), plain.body);
    const br = await get(t, url, { 'accept-encoding': 'br, gzip' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(brotliDecompressSync(br.rawPayload).toString(), plain.body);
    assert.ok(br.rawPayload.length < plain.rawPayload.length / 3);
    const exp = await get(t, `/v1/export?agent=${handle}`, { 'accept-encoding': 'gzip' });
    assert.equal(exp.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(exp.rawPayload).toString(), (await get(t, `/v1/export?agent=${handle}`)).body);
  });

  test('the OpenAPI description documents every public read, with an example', async () => {
    const doc = (await get(t, '/v1/openapi.json')).json();
    for (const path of ['/v1/agents/{handle}', '/v1/agents/{handle}/chain', '/v1/proof/{record_id}', '/v1/ledger', '/v1/transparency']) {
      const ok = doc.paths[path]?.get?.responses?.['200']?.content?.['application/json'];
      assert.ok(ok?.schema && ok.example, `${path} has a documented 200 with an example`);
    }
    const exp = doc.paths['/v1/export']?.get;
    assert.ok(exp?.responses?.['200']?.content?.['application/x-ndjson'], 'the export is documented as NDJSON');
    assert.match(exp.description, /ledger-export-ndjson-v1/);
    assert.deepEqual(doc.paths['/v1/ledger'].get.parameters.map((p: { name: string }) => p.name).sort(), ['agent', 'cursor', 'include_demo', 'limit', 'symbol', 'type']);
  });

  test('HEAD works on public reads', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: '/v1/ledger' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '');
  });
});

describe('the read rate limit', () => {
  test('one budget per client IP across every public read, with RateLimit-* and Retry-After', async () => {
    const store = openStore('sqlite::memory:');
    await store.migrate();
    const t = await testApp(store, { env: { LEDGER_READ_LIMIT_PER_MIN: '4' } });
    try {
      const a = await t.agent();
      const first = await get(t, '/v1/transparency');
      assert.equal(first.headers['ratelimit-limit'], '4');
      assert.equal(first.headers['ratelimit-remaining'], '3');
      await get(t, `/v1/agents/${a.handle}`);
      await get(t, '/v1/ledger');
      await get(t, `/v1/export?agent=${a.handle}`);
      const limited = await get(t, `/v1/agents/${a.handle}/chain`);
      assertError(limited, 429, 'rate_limit_exceeded');
      assert.ok(Number(limited.headers['retry-after']) > 0);
      assert.equal(limited.headers['access-control-allow-origin'], '*');
      const other = await t.app.inject({ method: 'GET', url: '/v1/ledger', remoteAddress: '10.9.8.7' });
      assert.equal(other.statusCode, 200, 'another client has its own budget');
      const write = await postDecision(t, a.secret, { symbol: 'AAPL', action: 'BUY' });
      assert.equal(write.statusCode, 201, 'writes are not charged to the read budget');
    } finally {
      await t.close();
      await store.close();
    }
  });

  test('shared by every service node through Redis', { skip: redisSkip }, async () => {
    const stores = [openStore('sqlite::memory:'), openStore('sqlite::memory:')];
    for (const s of stores) await s.migrate();
    const ip = `10.${process.pid % 250}.${Date.now() % 250}.${Math.floor(Math.random() * 250)}`;
    const env = { LEDGER_READ_LIMIT_PER_MIN: '3', LEDGER_REDIS_URL: REDIS_URL };
    const nodes = [await testApp(stores[0]!, { env }), await testApp(stores[1]!, { env })];
    try {
      const read = (i: number) => nodes[i]!.app.inject({ method: 'GET', url: '/v1/transparency', remoteAddress: ip });
      assert.equal((await read(0)).statusCode, 200);
      assert.equal((await read(1)).statusCode, 200);
      assert.equal((await read(0)).statusCode, 200);
      assertError(await read(1), 429, 'rate_limit_exceeded');
    } finally {
      for (const n of nodes) await n.close();
      for (const s of stores) await s.close();
    }
  });
});
