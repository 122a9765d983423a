import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, testApp, type TestApp } from '../support/app.ts';
import { assertError, get, postMany, postSigned, registerSigner } from './helpers.ts';

await forEachStore('GET /v1/agents/{handle}', (kind) => {
  let t: TestApp;
  before(async () => {
    t = await testApp(await kind.open());
  });
  after(() => closeTestApp(t, kind));

  test('an agent with no records: an empty chain, zero counts, empty sections that say why', async () => {
    const a = await t.agent();
    const res = await get(t, `/v1/agents/${a.handle}`);
    assert.equal(res.statusCode, 200, res.body);
    const p = res.json();
    assert.equal(p.object, 'agent_profile');
    assert.equal(p.id, a.handle, 'the public id is the handle');
    assert.ok(!res.body.includes(a.agentId), 'the internal agent id is never exposed');
    assert.equal(p.status, 'active');
    assert.equal(p.demo, false);
    assert.deepEqual(p.chain.head, { seq: 0, chain_hash: '0'.repeat(64), recorded_at: null });
    assert.deepEqual(p.counts, { records: 0, decision: 0, execution: 0, activity: 0, signed: 0 });
    assert.deepEqual(p.portfolios, []);
    assert.equal(p.performance, null);
    const codes = p.caveats.map((c: { code: string }) => c.code);
    assert.ok(codes.includes('portfolio_not_computed') && codes.includes('performance_not_computed'), res.body);
    assert.match(p.chain.url, new RegExp(`/v1/agents/${a.handle}/chain$`));
    assert.match(p.chain.export_url, new RegExp(`/v1/export\\?agent=${a.handle}$`));
  });

  test('head, counts and signing keys (public halves, revocation times) follow the records', async () => {
    const a = await t.agent();
    await postMany(t, a.secret, 2);
    const signer = await registerSigner(t, a.agentId);
    const signed = await postSigned(t, a, signer, { symbol: 'MSFT', action: 'SELL' });
    const revoked = await registerSigner(t, a.agentId);
    const revokedAt = new Date(Date.now() + 1000).toISOString();
    await t.store.revokeSigningKey(a.agentId, revoked.keyId, revokedAt);
    const p = (await get(t, `/v1/agents/${a.handle}`)).json();
    assert.equal(p.chain.head.seq, 3);
    const proof = (await get(t, `/v1/proof/${signed.id}`)).json();
    assert.equal(p.chain.head.chain_hash, proof.record.chain_hash);
    assert.equal(p.chain.head.recorded_at, proof.record.entry.recorded_at);
    assert.deepEqual(p.counts, { records: 3, decision: 3, execution: 0, activity: 0, signed: 1 });
    const keys = Object.fromEntries(p.signing_keys.map((k: { id: string }) => [k.id, k]));
    assert.equal(keys[signer.keyId].public_key, signer.publicKey);
    assert.equal(keys[signer.keyId].status, 'active');
    assert.equal(keys[signer.keyId].revoked_at, null);
    assert.equal(keys[revoked.keyId].status, 'revoked');
    assert.ok(keys[revoked.keyId].revoked_at >= revokedAt);
  });

  test('a demo agent says so in its caveats', async () => {
    const a = await t.agent(undefined, { demo: true });
    const p = (await get(t, `/v1/agents/${a.handle}`)).json();
    assert.equal(p.demo, true);
    assert.equal(p.caveats[0].code, 'demo_agent');
  });

  test('unknown and malformed handles are 404 not_found', async () => {
    assertError(await get(t, '/v1/agents/no-such-agent'), 404, 'not_found', 'handle');
    assertError(await get(t, '/v1/agents/UPPER%20case'), 404, 'not_found', 'handle');
  });
});
