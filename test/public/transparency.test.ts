import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, testApp, type TestApp } from '../support/app.ts';
import { assertError } from '../api/record-helpers.ts';
import { get, postMany, postSigned, registerSigner } from './helpers.ts';

await forEachStore('GET /v1/transparency', (kind) => {
  let t: TestApp;
  before(async () => {
    t = await testApp(await kind.open());
  });
  after(() => closeTestApp(t, kind));

  test('every chain head to pin, counts, and what each guarantee covers and does not', async () => {
    const a = await t.agent();
    const b = await t.agent(undefined, { demo: true });
    const idle = await t.agent();
    await postMany(t, a.secret, 3);
    await postMany(t, b.secret, 2);
    await postSigned(t, a, await registerSigner(t, a.agentId), { symbol: 'KO', action: 'HOLD' });
    const res = await get(t, '/v1/transparency');
    assert.equal(res.statusCode, 200, res.body);
    const doc = res.json();
    assert.equal(doc.object, 'transparency');
    assert.deepEqual(doc.counts, { agents: 3, demo_agents: 1, records: 6, decision: 6, execution: 0, activity: 0, signed: 1 });
    const heads = Object.fromEntries(doc.heads.map((h: { agent: string }) => [h.agent, h]));
    for (const [agent, seq] of [[a.handle, 4], [b.handle, 2], [idle.handle, 0]] as const) {
      const profile = (await get(t, `/v1/agents/${agent}`)).json();
      assert.equal(heads[agent].seq, seq);
      assert.equal(heads[agent].chain_hash, profile.chain.head.chain_hash);
    }
    assert.equal(heads[b.handle].demo, true);
    assert.equal(heads[idle.handle].chain_hash, '0'.repeat(64));
    const names = doc.guarantees.map((g: { name: string }) => g.name);
    for (const n of ['hash_chain', 'execution_links', 'model_portfolios', 'broker_performance', 'anchoring']) assert.ok(names.includes(n), n);
    for (const g of doc.guarantees) assert.ok(g.covers.length > 20 && g.does_not_cover.length > 20, g.name);
    assert.match(doc.guarantees.find((g: { name: string }) => g.name === 'execution_links').does_not_cover, /inferred/);
    const { note: _note, anchors_url: _url, ...anchoring } = doc.anchoring;
    assert.deepEqual(anchoring, { live: true, anchored_roots: 0, pending_roots: 0, latest_confirmed: null, latest_pending: null, calendars_unreachable_since: null });
  });

  test('an unknown query parameter is a 400 naming it, as on every public read', async () => {
    assertError(await get(t, '/v1/transparency?page=2'), 400, 'invalid_request', 'page');
    assertError(await get(t, '/v1/transparency?limit=5&x=%3Cscript%3E'), 400, 'invalid_request', 'limit');
    assert.equal((await get(t, '/v1/transparency')).statusCode, 200);
  });
});
