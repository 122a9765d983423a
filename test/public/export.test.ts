import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { canonicalJson } from '../../src/core/canon.ts';
import { sha256Hex } from '../../src/core/sha256.ts';
import { EXPORT_PAGE } from '../../src/ledger/public/reads.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, testApp, type TestApp } from '../support/app.ts';
import { assertError, get, ndjson, postMany, postSigned, registerSigner } from './helpers.ts';

await forEachStore('GET /v1/export', (kind) => {
  let t: TestApp;
  before(async () => {
    t = await testApp(await kind.open(), { env: { LEDGER_WRITE_LIMIT_PER_MIN: '100000' } });
  });
  after(() => closeTestApp(t, kind));

  test('NDJSON: a header describing the agent, keys and head, then every record in chain order', async () => {
    const a = await t.agent();
    const ids = await postMany(t, a.secret, 3);
    const signer = await registerSigner(t, a.agentId);
    ids.push((await postSigned(t, a, signer, { symbol: 'TSLA', action: 'REDUCE' })).id);
    const res = await get(t, `/v1/export?agent=${a.handle}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^application\/x-ndjson/);
    assert.match(String(res.headers['content-disposition']), new RegExp(`${a.handle}\\.ndjson`));
    assert.ok(res.body.endsWith('\n'));
    const [header, ...records] = ndjson(res.body) as [Record<string, any>, ...Record<string, any>[]];
    assert.equal(header.object, 'export');
    assert.equal(header.format, 'ledger-export-ndjson-v1');
    assert.equal(header.canonicalisation, 'canon_v1');
    assert.deepEqual(header.agent, { handle: a.handle, display_name: null, status: 'active', demo: false, created_at: header.agent.created_at });
    assert.deepEqual(header.keys.map((k: { id: string; public_key: string }) => [k.id, k.public_key]), [[signer.keyId, signer.publicKey]]);
    assert.equal(header.records, 4);
    assert.deepEqual(records.map((r) => r.entry.id), ids);
    let prev = '0'.repeat(64);
    for (const r of records) {
      assert.deepEqual(Object.keys(r), ['entry', 'chain_hash', 'content']);
      assert.equal(sha256Hex(r.content), r.entry.content_hash);
      assert.equal(sha256Hex(canonicalJson(r.entry)), r.chain_hash);
      assert.equal(r.entry.prev_hash, prev);
      prev = r.chain_hash;
    }
    assert.deepEqual(header.head, { seq: 4, chain_hash: prev, recorded_at: records[3]!.entry.recorded_at });
    assert.equal(records[3]!.entry.signature.key_id, signer.keyId);
  });

  test('a chain longer than a store page streams whole, in order', async () => {
    const a = await t.agent();
    const n = EXPORT_PAGE + 7;
    await postMany(t, a.secret, n);
    const records = ndjson((await get(t, `/v1/export?agent=${a.handle}`)).body).slice(1);
    assert.equal(records.length, n);
    assert.deepEqual(records.map((r: any) => Number(r.entry.seq)), Array.from({ length: n }, (_, i) => i + 1));
  });

  test('an empty chain exports its header alone', async () => {
    const a = await t.agent();
    const lines = ndjson((await get(t, `/v1/export?agent=${a.handle}`)).body);
    assert.equal(lines.length, 1);
    assert.deepEqual(lines[0]!.head, { seq: 0, chain_hash: '0'.repeat(64), recorded_at: null });
  });

  test('ETag names the export: 304 while unchanged, a new tag after a new record', async () => {
    const a = await t.agent();
    await postMany(t, a.secret, 1);
    const first = await get(t, `/v1/export?agent=${a.handle}`);
    const tag = String(first.headers.etag);
    assert.match(tag, /^W\/"[0-9a-f]{32}"$/);
    assert.equal(first.headers['cache-control'], 'public, no-cache');
    const again = await get(t, `/v1/export?agent=${a.handle}`, { 'if-none-match': tag });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    await postMany(t, a.secret, 1);
    const changed = await get(t, `/v1/export?agent=${a.handle}`, { 'if-none-match': tag });
    assert.equal(changed.statusCode, 200);
    assert.notEqual(changed.headers.etag, tag);
  });

  test('agent is required and must name an agent', async () => {
    assertError(await get(t, '/v1/export'), 400, 'invalid_request', 'agent');
    assertError(await get(t, '/v1/export?agent=Bad%20Handle'), 400, 'invalid_request', 'agent');
    assertError(await get(t, '/v1/export?agent=ok-agent&format=csv'), 400, 'invalid_request', 'format');
    assertError(await get(t, '/v1/export?agent=nobody-at-all'), 404, 'not_found', 'agent');
  });
});
