import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { canonicalJson } from '../../src/core/canon.ts';
import { sha256Hex } from '../../src/core/sha256.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, testApp, type TestApp } from '../support/app.ts';
import { assertError, get, postMany, postSigned, registerSigner } from './helpers.ts';

await forEachStore('GET /v1/proof/{record_id}', (kind) => {
  let t: TestApp;
  before(async () => {
    t = await testApp(await kind.open());
  });
  after(() => closeTestApp(t, kind));

  test('an unsigned record: content, chain entry, hashes, previous hash, head, and places for the log proofs', async () => {
    const a = await t.agent();
    const [first, second] = await postMany(t, a.secret, 3);
    const res = await get(t, `/v1/proof/${second}`);
    assert.equal(res.statusCode, 200, res.body);
    const p = res.json();
    assert.equal(p.object, 'proof');
    assert.equal(p.id, second);
    assert.equal(p.record.entry.id, second);
    assert.equal(p.record.entry.seq, '2');
    assert.equal(sha256Hex(p.record.content), p.record.entry.content_hash);
    assert.equal(sha256Hex(canonicalJson(p.record.entry)), p.record.chain_hash);
    const previous = (await get(t, `/v1/proof/${first}`)).json();
    assert.equal(p.record.entry.prev_hash, previous.record.chain_hash);
    assert.equal(p.agent.handle, a.handle);
    assert.equal(p.agent.head.seq, 3);
    assert.equal(p.key, null);
    assert.equal(p.inclusion_proof, null);
    assert.equal(p.inclusion_pending.status, 'pending');
    assert.equal(p.anchor_proof, null);
    assert.match(p.links.chain_from_here, /\/chain\?after_seq=1$/);
    // not in the global log yet (no integrator runs here): cached briefly, so the proof shows up soon
    assert.equal(res.headers['cache-control'], 'public, max-age=5');
  });

  test('a signed record carries its signature, the public key and the key status', async () => {
    const a = await t.agent();
    const signer = await registerSigner(t, a.agentId);
    const signed = await postSigned(t, a, signer, { symbol: 'NVDA', action: 'BUY', quantity: '2' });
    await t.store.revokeSigningKey(a.agentId, signer.keyId, new Date(Date.now() + 5).toISOString());
    const p = (await get(t, `/v1/proof/${signed.id}`)).json();
    assert.equal(p.record.entry.signature.key_id, signer.keyId);
    assert.equal(p.record.entry.signature.nonce, p.record.document.nonce);
    assert.equal(p.key.id, signer.keyId);
    assert.equal(p.key.public_key, signer.publicKey);
    assert.equal(p.key.status, 'revoked');
    assert.equal(p.key.valid_for_record, true, 'revoked after the record was signed');
  });

  test('unknown record: 404 not_found', async () => {
    assertError(await get(t, '/v1/proof/dec_01JX0Z6Q4M8T2V7B3N5C9D1F0G'), 404, 'not_found', 'record_id');
    assertError(await get(t, '/v1/proof/anything'), 404, 'not_found', 'record_id');
  });
});
