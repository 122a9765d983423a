// The 201 body of POST /v1/decisions is interface 2.3 exactly, and its hashes recompute from the
// stored record with the canon_v1 core (sha256Hex, chainHash).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { canonicalJson } from '../../src/core/canon.ts';
import { GENESIS_PREV_HASH, chainHash } from '../../src/core/chain.ts';
import { sha256Hex } from '../../src/core/sha256.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { assertChainVerifies } from './record-helpers.ts';

const BASE_URL = 'https://ledger.example.test/v1';
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const RECORDED_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HEX64 = /^[0-9a-f]{64}$/;

await forEachStore('the decision response', (kind) => {
  let store: LedgerStore;
  let t: TestApp;

  before(async () => {
    store = await kind.open();
    t = await testApp(store, { env: { LEDGER_BASE_URL: BASE_URL } });
  });
  after(() => closeTestApp(t, kind));

  test('the 201 body has exactly the fields of 2.3, with the right types', async () => {
    const agent = await t.agent();
    const started = Date.now();
    const res = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', quantity: 10, thesis: 'cheap' });
    assert.equal(res.statusCode, 201, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.headers['idempotent-replayed'], undefined, 'a first answer is not marked as a replay');
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['id', 'immutable', 'link_token', 'object', 'proof_url', 'provenance', 'recorded_at', 'verification']);
    assert.deepEqual(Object.keys(body.verification).sort(), ['agent_signed', 'algorithm', 'canonicalisation', 'chain_hash', 'chain_seq', 'content_hash']);

    assert.ok(body.id.startsWith('dec_'));
    assert.match(body.id.slice(4), ULID);
    assert.equal(body.object, 'decision');
    assert.equal(body.immutable, true);
    assert.match(body.recorded_at, RECORDED_AT);
    const recordedMs = Date.parse(body.recorded_at);
    assert.ok(recordedMs >= started - 1 && recordedMs <= Date.now() + 1, 'recorded_at is the service clock now');
    assert.equal(body.provenance, 'SERVICE_RECORDED');
    assert.equal(body.verification.algorithm, 'sha256');
    assert.equal(body.verification.canonicalisation, 'canon_v1');
    assert.match(body.verification.content_hash, HEX64);
    assert.match(body.verification.chain_hash, HEX64);
    assert.equal(body.verification.chain_seq, 1);
    assert.equal(body.verification.agent_signed, false);
    assert.equal(typeof body.link_token, 'string');
    assert.ok(body.link_token.length > 0 && body.link_token.length <= 32, `link_token ${body.link_token} fits a client_order_id`);
    assert.match(body.link_token, /^[0-9A-Za-z_]+$/, 'link_token is safe in a client_order_id');
    assert.equal(body.proof_url, `${BASE_URL}/proof/${body.id}`);
    // The id's ULID time is the recorded_at instant.
    const ulidTime = [...body.id.slice(4, 14)].reduce((n: number, c: string) => n * 32 + '0123456789ABCDEFGHJKMNPQRSTVWXYZ'.indexOf(c), 0);
    assert.equal(ulidTime, recordedMs);
  });

  test('content_hash and chain_hash recompute from the stored record with the core', async () => {
    const agent = await t.agent();
    const first = (await postDecision(t, agent.secret, '{"symbol":"BTC/USD","action":"SELL","asset_class":"CRYPTO","quantity":1.50,"metadata":{"z":1,"a":[2e1]}}')).json();
    const second = (await postDecision(t, agent.secret, { symbol: 'MSFT', action: 'HOLD' })).json();

    const expectedContent = canonicalJson({
      canon: 'canon_v1', type: 'decision', agent: agent.handle, symbol: 'BTC/USD', action: 'SELL',
      asset_class: 'CRYPTO', currency: 'USD', quantity: '1.5', metadata: { z: '1', a: ['20'] },
    });
    const stored = await store.findRecord(first.id);
    assert.ok(stored);
    assert.equal(stored.content, expectedContent, 'the stored content is the canon_v1 document');
    assert.equal(first.verification.content_hash, sha256Hex(expectedContent));
    assert.equal(stored.contentHash, first.verification.content_hash);
    assert.equal(stored.prevHash, GENESIS_PREV_HASH);
    assert.equal(first.verification.chain_hash, chainHash({
      agent: agent.handle, seq: 1, id: first.id, type: 'decision', recordedAt: first.recorded_at,
      contentHash: first.verification.content_hash, prevHash: GENESIS_PREV_HASH, signature: null,
    }));
    assert.equal(second.verification.chain_seq, 2);
    assert.equal(second.verification.chain_hash, chainHash({
      agent: agent.handle, seq: 2, id: second.id, type: 'decision', recordedAt: second.recorded_at,
      contentHash: second.verification.content_hash, prevHash: first.verification.chain_hash, signature: null,
    }));
    assert.ok(second.id > first.id, 'ids sort by time');
    assert.ok(second.recorded_at >= first.recorded_at);
    await assertChainVerifies(store, agent, 2);
  });

  test('link tokens are unique and ids increase', async () => {
    const agent = await t.agent();
    const bodies = [];
    for (let i = 0; i < 25; i++) bodies.push((await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', quantity: i })).json());
    assert.equal(new Set(bodies.map((b) => b.link_token)).size, 25);
    assert.ok(bodies.every((b) => b.link_token.length <= 32));
    const ids = bodies.map((b) => b.id);
    assert.deepEqual([...ids].sort(), ids);
    assert.deepEqual(bodies.map((b) => b.verification.chain_seq), bodies.map((_, i) => i + 1));
    const stored = await store.findRecord(ids[3]);
    assert.equal(stored?.linkToken, bodies[3].link_token, 'the link token is stored with the record');
  });

  test('GET /v1/decisions/{id} returns the recorded decision with its content', async () => {
    const agent = await t.agent();
    const created = (await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', confidence: '0.70' })).json();
    const res = await t.app.inject({ method: 'GET', url: `/v1/decisions/${created.id}`, headers: { authorization: `Bearer ${agent.secret}` } });
    assert.equal(res.statusCode, 200, res.body);
    const { content, ...rest } = res.json();
    assert.deepEqual(rest, created);
    assert.equal(content.confidence, '0.7');
    assert.equal(sha256Hex(canonicalJson(content)), created.verification.content_hash);

    const other = await t.agent();
    const foreign = await t.app.inject({ method: 'GET', url: `/v1/decisions/${created.id}`, headers: { authorization: `Bearer ${other.secret}` } });
    assert.equal(foreign.statusCode, 404, 'another agent cannot read it');
    assert.equal(foreign.json().error.code, 'not_found');
  });
});
