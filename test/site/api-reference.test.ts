// GET /docs/api: the API reference page, and every asset it references served by the service
// itself from node_modules (no CDN): each answers 200, the script byte for byte as Redoc ships it in
// every encoding, with a long cache, an ETag per encoding and 304.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { LOCAL_LOGO, REDOC_LOGO, pickEncoding } from '../../src/site/api-reference.ts';
import { openStore } from '../../src/store/open.ts';
import { testApp, type TestApp } from '../support/app.ts';

const SITE = 'https://ledger.example.test';
const PAGE = `${SITE}/docs/api`;
const redocDir = join(dirname(createRequire(import.meta.url).resolve('redoc/package.json')), 'bundles');

let t: TestApp;
let page: string;
before(async () => {
  const store = openStore('sqlite::memory:');
  await store.migrate();
  t = await testApp(store, { env: { LEDGER_SITE_URL: SITE } });
  const res = await t.app.inject({ method: 'GET', url: '/docs/api' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  page = res.body;
});
after(async () => {
  await t?.close();
  await t?.store.close();
});

/** Every URL the page references (src, href, spec-url) but inline data, resolved against the page's address. */
function references(html: string): URL[] {
  return [...html.matchAll(/\b(?:src|href|spec-url)="([^"]+)"/g)]
    .map((m) => new URL(m[1]!.replace(/&#38;/g, '&'), PAGE))
    .filter((u) => u.protocol !== 'data:');
}

test('the page names its canonical address, its JSON twin, and loads Redoc on the service\'s own OpenAPI document', () => {
  assert.match(page, /<link rel="canonical" href="https:\/\/ledger\.example\.test\/docs\/api">/);
  assert.match(page, /<link rel="alternate" type="application\/json" href="\.\.\/v1\/openapi\.json"/);
  assert.match(page, /<redoc spec-url="\.\.\/v1\/openapi\.json"/);
  assert.match(page, /<noscript>/);
  const external = references(page).filter((u) => u.origin !== SITE);
  assert.deepEqual(external, [], 'nothing is loaded from another host');
});

test('every local asset the page references answers 200, and so does the script\'s source map', async () => {
  const refs = references(page);
  assert.ok(refs.some((u) => u.pathname === '/docs/api/redoc.standalone.js'));
  assert.ok(refs.some((u) => u.pathname === '/v1/openapi.json'));
  const script = await t.app.inject({ method: 'GET', url: '/docs/api/redoc.standalone.js' });
  const map = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(script.body)?.[1];
  assert.ok(map, 'the bundle names its source map');
  for (const url of [...refs, new URL(map, `${SITE}/docs/api/redoc.standalone.js`)]) {
    const res = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
    assert.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 200)}`);
  }
});

test('the script is Redoc\'s standalone bundle, its one outside address pointed home, in each encoding, cached for a day, with 304', async () => {
  const shipped = readFileSync(join(redocDir, 'redoc.standalone.js'), 'utf8');
  assert.equal(shipped.split(REDOC_LOGO).length, 2, 'the bundle loads the Redocly logo from its CDN, once');
  assert.equal(LOCAL_LOGO.length, REDOC_LOGO.length, 'same length: the source map stays exact');
  const original = Buffer.from(shipped.replace(REDOC_LOGO, LOCAL_LOGO));
  assert.equal(original.length, Buffer.byteLength(shipped));
  const get = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/docs/api/redoc.standalone.js', headers });
  const plain = await get({ 'accept-encoding': 'identity' });
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.ok(plain.rawPayload.equals(original));
  assert.ok(!plain.body.includes('cdn.redoc.ly'));
  const logo = await t.app.inject({ method: 'GET', url: new URL(LOCAL_LOGO, PAGE).pathname });
  assert.equal(logo.statusCode, 200);
  assert.equal(logo.headers['content-type'], 'image/svg+xml; charset=utf-8');
  assert.equal(plain.headers['content-type'], 'text/javascript; charset=utf-8');
  assert.equal(plain.headers['cache-control'], 'public, max-age=86400');
  assert.equal(plain.headers.vary, 'Accept-Encoding');
  const br = await get({ 'accept-encoding': 'gzip, deflate, br' });
  assert.equal(br.headers['content-encoding'], 'br');
  assert.ok(brotliDecompressSync(br.rawPayload).equals(original));
  assert.ok(br.rawPayload.length < original.length / 2);
  const gz = await get({ 'accept-encoding': 'gzip' });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.ok(gunzipSync(gz.rawPayload).equals(original));
  assert.notEqual(br.headers.etag, gz.headers.etag, 'each encoding has its own ETag');
  const again = await get({ 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag as string });
  assert.equal(again.statusCode, 304);
});

test('nothing else is served under the page: names it does not use are 404 with the error body', async () => {
  for (const url of ['/docs/api/redoc.lib.js', '/docs/api/..%2F..%2Fpackage.json', '/docs/api/package.json']) {
    const res = await t.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 404, url);
    assert.equal(res.json().error.code, 'not_found');
  }
});

test('the encoding is chosen from Accept-Encoding, q=0 refusing one', () => {
  assert.equal(pickEncoding(undefined), 'identity');
  assert.equal(pickEncoding('gzip, br'), 'br');
  assert.equal(pickEncoding('br;q=0, gzip'), 'gzip');
  assert.equal(pickEncoding('*'), 'br');
  assert.equal(pickEncoding('deflate'), 'identity');
  assert.equal(pickEncoding('gzip;q=0, br;q=0'), 'identity');
});
