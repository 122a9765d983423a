// /llms.txt, /llms-full.txt and the docs as Markdown, on the real app: the llmstxt.org layout (H1
// first, a blockquote, plain blocks, then H2 lists of links), every link answering 200 on this app,
// the configured site_url in the links, the example request recorded as written, the signing steps
// working at the addresses given, every OpenAPI operation and decision field listed, and every docs/
// file served as it is and inlined in llms-full.txt.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DOCS_DIR, outline, readDocs } from '../../src/site/docs.ts';
import { LlmsText, type OpenApi } from '../../src/site/llms.ts';
import { openStore } from '../../src/store/open.ts';
import { testApp, type TestApp } from '../support/app.ts';
import { assertion, newKeypair, sign } from '../signing/helpers.ts';

const SITE = 'https://ledger.example.test';
const BASE = `${SITE}/v1`;

let t: TestApp;
let llms: string;
before(async () => {
  const store = openStore('sqlite::memory:');
  await store.migrate();
  t = await testApp(store, { env: { LEDGER_SITE_URL: SITE, LEDGER_BASE_URL: BASE } });
  const res = await t.app.inject({ method: 'GET', url: '/llms.txt' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
  llms = res.body;
});
after(async () => {
  await t?.close();
  await t?.store.close();
});

/** The app's path for an absolute URL of this site; null for another host. */
function localPath(url: string): string | null {
  if (!url.startsWith(SITE)) return null;
  return url.slice(SITE.length) || '/';
}

const links = (text: string) => [...text.matchAll(/\[([^\]]+)\]\(([^)\s]+)\)/g)].map((m) => ({ name: m[1]!, url: m[2]! }));

describe('llms.txt', () => {
  test('follows the llmstxt.org layout: H1 first, a blockquote, no heading before the H2 sections, which list links', () => {
    const lines = llms.split('\n');
    assert.match(lines[0]!, /^# \S/, 'the first line is the H1');
    assert.equal(lines.filter((l) => /^# /.test(l)).length, 1, 'one H1');
    const firstBlock = lines.slice(1).find((l) => l.trim() !== '');
    assert.match(firstBlock!, /^> \S/, 'the summary blockquote comes right after the H1');
    const firstH2 = lines.findIndex((l) => /^## /.test(l));
    assert.ok(firstH2 > 0);
    assert.ok(lines.slice(1, firstH2).every((l) => !/^#{1,6} /.test(l)), 'only plain blocks between the blockquote and the first H2');
    const sections = lines.slice(firstH2).join('\n').split(/^## /m).filter(Boolean);
    assert.deepEqual(sections.map((s) => s.split('\n')[0]), ['Docs', 'API', 'Optional']);
    for (const section of sections) {
      const items = section.split('\n').slice(1).filter((l) => l.trim() !== '');
      assert.ok(items.length > 0);
      for (const item of items) assert.match(item, /^- \[[^\]]+\]\([^)\s]+\)(: .+)?$/, `a file-list item: ${item}`);
    }
  });

  test('every link is on the configured site and answers 200 on this app', async () => {
    const found = links(llms);
    assert.ok(found.length >= 10, `${found.length} links`);
    for (const { url } of found) {
      const path = localPath(url);
      assert.ok(path, `${url} is under the configured site_url`);
      const res = await t.app.inject({ method: 'GET', url: path });
      assert.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 200)}`);
    }
    for (const name of readdirSync(DOCS_DIR).filter((n) => n.endsWith('.md'))) {
      assert.ok(found.some((l) => l.url === `${SITE}/docs/${name}`), `docs/${name} is linked`);
    }
    assert.ok(found.some((l) => l.url === `${BASE}/openapi.json`), 'the OpenAPI document is linked');
    assert.ok(found.some((l) => l.url === `${SITE}/llms-full.txt`));
  });

  test('the example request, sent as written, records a decision', async () => {
    const block = /```sh\n(curl[\s\S]*?)\n```/.exec(llms)?.[1];
    assert.ok(block, 'a curl example');
    const url = /curl -X POST (\S+)/.exec(block)![1]!;
    const headers = Object.fromEntries([...block.matchAll(/-H "([^:]+): ([^"]+)"/g)].map((m) => [m[1]!.toLowerCase(), m[2]!]));
    const body = /-d '([^']+)'/.exec(block)![1]!;
    assert.deepEqual(Object.keys(headers).sort(), ['authorization', 'content-type', 'idempotency-key']);
    const agent = await t.agent();
    const res = await t.app.inject({
      method: 'POST', url: localPath(url)!, payload: body,
      headers: { ...headers, authorization: headers.authorization!.replace('<API_KEY>', agent.secret), 'idempotency-key': `llms-${agent.handle}` },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().object, 'decision');
  });

  test('the signing steps work at the addresses they give', async () => {
    const address = (step: string) => localPath(new RegExp(`^${step}\\. .*?\`POST (\\S+)\``, 'm').exec(llms)![1]!)!;
    const agent = await t.agent();
    const key = newKeypair();
    const registered = await t.app.inject({
      method: 'POST', url: address('2'), headers: { authorization: `Bearer ${agent.secret}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ public_key: key.publicKey, label: 'llms.txt' }),
    });
    assert.equal(registered.statusCode, 201, registered.body);
    assert.equal(address('3'), '/v1/decisions/assertion');
    const fields = { symbol: 'AAPL', action: 'BUY', occurred_at: new Date().toISOString() };
    const { payload } = await assertion(t, agent.secret, { ...fields, nonce: 'llms-nonce-1' });
    const recorded = await t.app.inject({
      method: 'POST', url: address('5'),
      headers: { authorization: `Bearer ${agent.secret}`, 'content-type': 'application/json', 'idempotency-key': `llms-signed-${agent.handle}` },
      payload: JSON.stringify({ ...fields, signature: { key_id: registered.json().id, nonce: 'llms-nonce-1', signature: sign(payload, key) } }),
    });
    assert.equal(recorded.statusCode, 201, recorded.body);
    assert.equal(recorded.json().verification.agent_signed, true);
  });

  test('lists every operation of the OpenAPI document and every field of the decision request', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as Required<OpenApi>;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item).filter((m) => m === 'get' || m === 'post')) {
        const url = path.startsWith('/v1/') ? `${BASE}${path.slice(3)}` : `${SITE}${path}`;
        assert.ok(llms.includes(`\`${method.toUpperCase()} ${url}\``), `${method} ${path} is listed`);
      }
    }
    const schema = (doc.paths['/v1/decisions']!.post as { requestBody: { content: Record<string, { schema: { properties: object; required: string[] } }> } })
      .requestBody.content['application/json']!.schema;
    for (const name of Object.keys(schema.properties)) {
      assert.match(llms, new RegExp(`^- \`${name}\`${schema.required.includes(name) ? ' \\(required\\)' : ','}`, 'm'), `field ${name}`);
    }
  });

  test('answers 304 to its ETag', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/llms.txt' });
    const again = await t.app.inject({ method: 'GET', url: '/llms.txt', headers: { 'if-none-match': first.headers.etag as string } });
    assert.equal(again.statusCode, 304);
  });
});

describe('llms-full.txt and the docs as Markdown', () => {
  test('llms-full.txt is llms.txt followed by every doc, each with its address', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/llms-full.txt' });
    assert.equal(res.statusCode, 200);
    assert.ok(res.body.startsWith(llms.trimEnd()), 'it begins with llms.txt');
    for (const name of readdirSync(DOCS_DIR).filter((n) => n.endsWith('.md'))) {
      const text = readFileSync(join(DOCS_DIR, name), 'utf8').trim();
      assert.ok(res.body.includes(`Source: ${SITE}/docs/${name}\n\n${text}`), `docs/${name} inline`);
    }
  });

  test('every docs/ file is served as it is, as text/markdown; other names are 404', async () => {
    for (const name of readdirSync(DOCS_DIR).filter((n) => n.endsWith('.md'))) {
      const res = await t.app.inject({ method: 'GET', url: `/docs/${name}` });
      assert.equal(res.statusCode, 200, name);
      assert.equal(res.headers['content-type'], 'text/markdown; charset=utf-8');
      assert.equal(res.body, readFileSync(join(DOCS_DIR, name), 'utf8'));
    }
    for (const url of ['/docs/nope.md', '/docs/..%2Fpackage.json.md', '/docs/.env.md', '/docs/README.md']) {
      const res = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json().error.code, 'not_found');
    }
  });

  test('outline: the H1 and the first sentence of the first paragraph, as plain text', () => {
    assert.deepEqual(outline('# Title\n\nSee [the log](log.md) for **more**. Then the rest.\nNext line.\n', 'x.md'), { title: 'Title', summary: 'See the log for more.' });
    assert.deepEqual(outline('no heading\n', 'x.md'), { title: 'x.md', summary: 'no heading' });
  });

  test('an install without docs/ still has a valid llms.txt', async () => {
    assert.deepEqual(await readDocs('/nonexistent-docs-dir'), []);
    const openapi = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as OpenApi;
    const text = new LlmsText({ siteUrl: SITE, baseUrl: BASE, openapi, docs: [] }).text();
    assert.match(text, /^# .+\n\n> /);
    assert.match(text, /## Docs\n\n- \[API reference\]\(https:\/\/ledger\.example\.test\/docs\/api\)/);
  });
});
