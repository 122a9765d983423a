import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { canonicalJson } from '../../src/core/canon.ts';
import { sha256Hex } from '../../src/core/sha256.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { assertError, get, postMany } from './helpers.ts';

await forEachStore('GET /v1/agents/{handle}/chain', (kind) => {
  let t: TestApp;
  let agent: { handle: string; secret: string };
  let ids: string[];
  before(async () => {
    t = await testApp(await kind.open());
    agent = await t.agent();
    ids = await postMany(t, agent.secret, 7);
  });
  after(() => closeTestApp(t, kind));

  test('each record carries exactly what recomputing its hashes needs', async () => {
    const res = await get(t, `/v1/agents/${agent.handle}/chain`);
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json();
    assert.equal(page.object, 'chain');
    assert.equal(page.canonicalisation, 'canon_v1');
    assert.equal(page.agent, agent.handle);
    assert.equal(page.limit, 500);
    assert.equal(page.payloads, true);
    assert.deepEqual(page.records.map((r: { entry: { id: string } }) => r.entry.id), ids);
    let prev = '0'.repeat(64);
    page.records.forEach((r: { entry: Record<string, unknown>; chain_hash: string; content: string; document: unknown }, i: number) => {
      assert.deepEqual(Object.keys(r.entry).sort(), ['agent', 'canon', 'content_hash', 'id', 'prev_hash', 'recorded_at', 'seq', 'type']);
      assert.equal(r.entry.seq, String(i + 1));
      assert.equal(r.entry.prev_hash, prev);
      assert.equal(sha256Hex(r.content), r.entry.content_hash, 'content is the hashed canonical string');
      assert.equal(canonicalJson(r.document as never), r.content);
      assert.equal(sha256Hex(canonicalJson(r.entry as never)), r.chain_hash);
      assert.ok(res.body.includes(`"entry":${canonicalJson(r.entry as never)}`), 'the entry is written in canon_v1 form');
      prev = r.chain_hash;
    });
    assert.deepEqual(page.head, { seq: 7, chain_hash: prev, recorded_at: page.records[6].entry.recorded_at });
    assert.equal(page.has_more, false);
    assert.equal(page.next_after_seq, null);
    assert.equal(page.next, null);
  });

  test('pages forward with after_seq until the head', async () => {
    const seen: string[] = [];
    let url = `/v1/agents/${agent.handle}/chain?limit=3`;
    let pages = 0;
    for (;;) {
      const page = (await get(t, url)).json();
      pages++;
      seen.push(...page.records.map((r: { entry: { id: string } }) => r.entry.id));
      if (!page.has_more) break;
      assert.equal(page.next_after_seq, page.records[page.records.length - 1].entry.seq * 1);
      assert.ok(page.next.endsWith(`/v1/agents/${agent.handle}/chain?after_seq=${page.next_after_seq}&limit=3`), page.next);
      url = `/v1/agents/${agent.handle}/chain?limit=3&after_seq=${page.next_after_seq}`;
    }
    assert.equal(pages, 3);
    assert.deepEqual(seen, ids);
    const past = (await get(t, `/v1/agents/${agent.handle}/chain?after_seq=99`)).json();
    assert.deepEqual(past.records, []);
    assert.equal(past.has_more, false);
  });

  test('a page never passes the head it reports, even while the agent records', async () => {
    const a = await t.agent();
    await postMany(t, a.secret, 3);
    const [page] = await Promise.all([
      get(t, `/v1/agents/${a.handle}/chain`),
      postDecision(t, a.secret, { symbol: 'X', action: 'HOLD' }),
      postDecision(t, a.secret, { symbol: 'Y', action: 'HOLD' }),
    ]);
    const body = page.json();
    assert.equal(body.records.length, body.head.seq);
    assert.equal(body.records[body.records.length - 1].chain_hash, body.head.chain_hash);
  });

  test('payloads=false omits the content', async () => {
    const page = (await get(t, `/v1/agents/${agent.handle}/chain?payloads=false&limit=2`)).json();
    assert.equal(page.payloads, false);
    assert.equal(page.records.length, 2);
    for (const r of page.records) assert.deepEqual(Object.keys(r), ['entry', 'chain_hash']);
    assert.ok(page.next.includes('payloads=false'));
  });

  test('limit: at most 2000, default 500; every bad value is a 400 naming its parameter', async () => {
    assert.equal((await get(t, `/v1/agents/${agent.handle}/chain?limit=2000`)).statusCode, 200);
    for (const [query, param] of [
      ['limit=2001', 'limit'], ['limit=0', 'limit'], ['limit=abc', 'limit'], ['limit=1.5', 'limit'], ['limit=1&limit=2', 'limit'],
      ['payloads=maybe', 'payloads'], ['after_seq=-1', 'after_seq'], ['after_seq=x', 'after_seq'], ['cursor=1', 'cursor'],
    ]) {
      assertError(await get(t, `/v1/agents/${agent.handle}/chain?${query}`), 400, 'invalid_request', param);
    }
  });

  test('unknown agent: 404 not_found', async () => {
    assertError(await get(t, '/v1/agents/nobody-here/chain'), 404, 'not_found', 'handle');
  });
});
