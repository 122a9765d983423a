// The signing flow of interface section 4 end to end, signed with @noble/ed25519 and checked on
// the verifier thread as the service does: assertion, caller-built payloads, signed records,
// every refusal (each records nothing and consumes no nonce), idempotent replays, and
// revocation (new signatures stop, old records keep verifying).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { decisionPayload } from '../../examples/canon-payload.mjs';
import { VerifierThread } from '../../src/ledger/verifier-thread.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, idempotencyKey, postDecision, testApp, type TestApp } from '../support/app.ts';
import {
  assertError, assertion, authenticationCases, call, chainLength, newKeypair, postSigned, recordSigned, registerKey, sign,
  verifyStoredChain, type Agent, type Keypair,
} from './helpers.ts';

let nonces = 0;
const freshNonce = () => `nonce-${process.pid}-${Date.now()}-${++nonces}`;
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

const DECISIONS: object[] = [
  { symbol: 'AAPL', action: 'BUY' },
  { symbol: 'MSFT', action: 'SELL', quantity: '10.50', notional: 1234.5, confidence: '0.90', target_allocation_pct: 1e1 },
  {
    symbol: 'BTC/USD', action: 'INCREASE', asset_class: 'CRYPTO', currency: 'EUR', time_horizon: '2 weeks',
    thesis: 'Line one\nline "two" \\ tab\there — café 😀 \u2028 end',
    metadata: { z: 1, a: [0.5, '0.50', -0, true, null, { é: 'x', Z: 2.50 }], 'key with spaces': { nested: 1e-3 } },
  },
];

await forEachStore('signed decisions', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  let agent: Agent;
  let key: Keypair;
  let keyId: string;

  // The service's own set-up: signatures checked on the verifier thread.
  const verifier = new VerifierThread().warmUp();

  before(async () => {
    store = await kind.open();
    await verifier.whenReady;
    t = await testApp(store, { verify: verifier.verify });
    agent = await t.agent();
    key = newKeypair();
    keyId = await registerKey(t, agent.secret, key.publicKey, 'flow');
  });
  after(async () => {
    await closeTestApp(t, kind);
    await verifier.close();
  });

  /** The decision fields (with occurred_at) and a fresh nonce; the payload comes from the service. */
  const decision = (fields: object = DECISIONS[0]!) => ({ fields: { ...fields, occurred_at: minutesAgo(1) }, nonce: freshNonce() });

  describe('the flow', () => {
    test('register, assert, sign, record: agent_signed with the signature in the chain entry', async () => {
      const { fields, nonce } = decision(DECISIONS[1]);
      const asserted = await assertion(t, agent.secret, { ...fields, nonce });
      const signature = sign(asserted.payload, key);
      const before = await chainLength(store, agent.agentId);
      const res = await postSigned(t, agent.secret, fields, { key_id: keyId, nonce, signature });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.equal(body.verification.agent_signed, true);
      assert.equal(body.verification.content_hash, asserted.content_hash);
      assert.equal(body.verification.chain_seq, before + 1);
      const record = await store.findRecord(body.id);
      assert.deepEqual(record?.signature, { key_id: keyId, nonce, signature });
      assert.equal(record?.content, asserted.payload);
      assert.equal(await store.isNonceUsed(agent.agentId, nonce), true);
      const read = await call(t, 'GET', `/v1/decisions/${body.id}`, agent.secret);
      assert.equal(read.json().verification.agent_signed, true);
      assert.equal((await verifyStoredChain(store, agent)).ok, true);
    });

    test('the assertion answers the payload, its hash and what it is', async () => {
      const { fields, nonce } = decision();
      const res = await call(t, 'POST', '/v1/decisions/assertion', agent.secret, { ...fields, nonce });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.object, 'assertion');
      assert.equal(body.agent, agent.handle);
      assert.equal(body.nonce, nonce);
      assert.equal(body.canonicalisation, 'canon_v1');
      assert.equal(body.algorithm, 'sha256');
      assert.equal(body.signature_algorithm, 'Ed25519');
      const document = JSON.parse(body.payload);
      assert.equal(document.agent, agent.handle);
      assert.equal(document.nonce, nonce);
      assert.equal(document.canon, 'canon_v1');
      assert.match(body.content_hash, /^[0-9a-f]{64}$/);
    });

    for (const [i, fields] of DECISIONS.entries()) {
      test(`the caller-built payload equals the assertion payload byte for byte (decision ${i + 1})`, async () => {
        const d = decision(fields);
        const asserted = await assertion(t, agent.secret, { ...d.fields, nonce: d.nonce });
        const local = decisionPayload({ agent: agent.handle, fields: d.fields as Record<string, unknown>, nonce: d.nonce });
        assert.equal(Buffer.compare(Buffer.from(local, 'utf8'), Buffer.from(asserted.payload, 'utf8')), 0, `${local}\n${asserted.payload}`);
        // And a signature over the locally built bytes records.
        const res = await postSigned(t, agent.secret, d.fields, { key_id: keyId, nonce: d.nonce, signature: sign(local, key) });
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.json().verification.agent_signed, true);
      });
    }

    test('the assertion records nothing and consumes no nonce', async () => {
      const { fields, nonce } = decision();
      const before = await chainLength(store, agent.agentId);
      await assertion(t, agent.secret, { ...fields, nonce });
      await assertion(t, agent.secret, { ...fields, nonce });
      assert.equal(await chainLength(store, agent.agentId), before);
      assert.equal(await store.isNonceUsed(agent.agentId, nonce), false);
    });

    test('an unsigned decision is recorded with agent_signed false', async () => {
      const res = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'HOLD' });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().verification.agent_signed, false);
    });
  });

  describe('refusals: each is a 4xx with param in signature, records nothing, consumes no nonce', () => {
    /** Sends a signed request that must be refused, then shows that nothing was recorded and the nonce still works. */
    async function refused(send: (d: { fields: object; nonce: string; payload: string }) => Promise<Awaited<ReturnType<typeof postSigned>>>, param: string, sender: Agent = agent) {
      const d = decision();
      const asserted = await assertion(t, sender.secret, { ...d.fields, nonce: d.nonce });
      const before = await chainLength(store, sender.agentId);
      const error = assertError(await send({ ...d, payload: asserted.payload }), 400, 'invalid_request', param);
      assert.equal(await chainLength(store, sender.agentId), before);
      assert.equal(await store.isNonceUsed(sender.agentId, d.nonce), false);
      return { error, d, payload: asserted.payload };
    }

    test('a signature by another key is signature.signature, and the nonce stays usable', async () => {
      const other = newKeypair();
      const { d, payload } = await refused((d) => postSigned(t, agent.secret, d.fields, { key_id: keyId, nonce: d.nonce, signature: sign(d.payload, other) }), 'signature.signature');
      const ok = await postSigned(t, agent.secret, d.fields, { key_id: keyId, nonce: d.nonce, signature: sign(payload, key) });
      assert.equal(ok.statusCode, 201, ok.body);
    });

    test('a signature that is not 64 bytes of base64url is signature.signature', async () => {
      await refused((d) => postSigned(t, agent.secret, d.fields, { key_id: keyId, nonce: d.nonce, signature: 'not base64url!' }), 'signature.signature');
      await refused((d) => postSigned(t, agent.secret, d.fields, { key_id: keyId, nonce: d.nonce, signature: sign(d.payload, key).slice(0, 80) }), 'signature.signature');
      await refused((d) => postSigned(t, agent.secret, d.fields, { key_id: keyId, nonce: d.nonce, signature: `${sign(d.payload, key)}==` }), 'signature.signature');
    });

    test('a field changed after assertion fails the signature', async () => {
      for (const change of [{ quantity: '2' }, { symbol: 'MSFT' }, { action: 'SELL' }, { occurred_at: minutesAgo(2) }, { thesis: 'added' }, { currency: 'EUR' }, { metadata: {} }]) {
        await refused((d) => postSigned(t, agent.secret, { ...d.fields, ...change }, { key_id: keyId, nonce: d.nonce, signature: sign(d.payload, key) }), 'signature.signature');
      }
    });

    test('a nonce changed after assertion fails the signature', async () => {
      await refused((d) => postSigned(t, agent.secret, d.fields, { key_id: keyId, nonce: `${d.nonce}-x`, signature: sign(d.payload, key) }), 'signature.signature');
    });

    test('a signature over the unsigned payload (no nonce) fails', async () => {
      await refused((d) => {
        const withoutNonce = decisionPayload({ agent: agent.handle, fields: d.fields as Record<string, unknown> });
        return postSigned(t, agent.secret, d.fields, { key_id: keyId, nonce: d.nonce, signature: sign(withoutNonce, key) });
      }, 'signature.signature');
    });

    test('an unknown key id is signature.key_id', async () => {
      await refused((d) => postSigned(t, agent.secret, d.fields, { key_id: 'aid_01J00000000000000000000000', nonce: d.nonce, signature: sign(d.payload, key) }), 'signature.key_id');
    });

    test('a key id that is not an aid_ id is signature.key_id', async () => {
      await refused((d) => postSigned(t, agent.secret, d.fields, { key_id: 'key_123', nonce: d.nonce, signature: sign(d.payload, key) }), 'signature.key_id');
    });

    test('another agent\'s key, signing correctly, is refused exactly like an unknown key', async () => {
      const owner = await t.agent();
      const theirs = newKeypair();
      const theirId = await registerKey(t, owner.secret, theirs.publicKey);
      const unknownId = 'aid_01J00000000000000000000000';
      const foreign = await refused((d) => postSigned(t, agent.secret, d.fields, { key_id: theirId, nonce: d.nonce, signature: sign(d.payload, theirs) }), 'signature.key_id');
      const unknown = await refused((d) => postSigned(t, agent.secret, d.fields, { key_id: unknownId, nonce: d.nonce, signature: sign(d.payload, theirs) }), 'signature.key_id');
      assert.equal(foreign.error.message.replace(theirId, 'X'), unknown.error.message.replace(unknownId, 'X'));
    });

    test('a nonce this agent already used is signature.nonce, also with a valid signature', async () => {
      const d = decision();
      const first = await recordSigned(t, agent, key, keyId, d.fields, d.nonce);
      assert.equal(first.statusCode, 201, first.body);
      const before = await chainLength(store, agent.agentId);
      // The same decision and a correct signature, under a new Idempotency-Key.
      const payload = (await store.findRecord(first.json().id))!.content;
      const again = await postSigned(t, agent.secret, d.fields, { key_id: keyId, nonce: d.nonce, signature: sign(payload, key) });
      assertError(again, 400, 'invalid_request', 'signature.nonce');
      // Another decision under the used nonce: signed correctly, still refused.
      const other = { ...d.fields, symbol: 'NVDA' };
      const otherPayload = decisionPayload({ agent: agent.handle, fields: other, nonce: d.nonce });
      assertError(await postSigned(t, agent.secret, other, { key_id: keyId, nonce: d.nonce, signature: sign(otherPayload, key) }), 400, 'invalid_request', 'signature.nonce');
      assert.equal(await chainLength(store, agent.agentId), before);
    });

    test('a nonce another agent used is free for this one', async () => {
      const d = decision();
      const other = await t.agent();
      const otherKey = newKeypair();
      const otherId = await registerKey(t, other.secret, otherKey.publicKey);
      assert.equal((await recordSigned(t, other, otherKey, otherId, d.fields, d.nonce)).statusCode, 201);
      assert.equal((await recordSigned(t, agent, key, keyId, d.fields, d.nonce)).statusCode, 201);
    });

    test('two signed requests racing for one nonce: exactly one records', async () => {
      const d = decision();
      const payload = (await assertion(t, agent.secret, { ...d.fields, nonce: d.nonce })).payload;
      const signature = { key_id: keyId, nonce: d.nonce, signature: sign(payload, key) };
      const results = await Promise.all([0, 1, 2].map(() => postSigned(t, agent.secret, d.fields, signature)));
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 400, 400]);
      for (const r of results.filter((r) => r.statusCode === 400)) assertError(r, 400, 'invalid_request', 'signature.nonce');
    });

    test('the signature object is validated: members required, nothing else allowed, nonce top-level refused', async () => {
      const d = decision();
      const payload = (await assertion(t, agent.secret, { ...d.fields, nonce: d.nonce })).payload;
      const good = { key_id: keyId, nonce: d.nonce, signature: sign(payload, key) };
      assertError(await postSigned(t, agent.secret, d.fields, { ...good, key_id: undefined }), 400, 'invalid_request', 'signature.key_id');
      assertError(await postSigned(t, agent.secret, d.fields, { ...good, nonce: undefined }), 400, 'invalid_request', 'signature.nonce');
      assertError(await postSigned(t, agent.secret, d.fields, { ...good, signature: undefined }), 400, 'invalid_request', 'signature.signature');
      assertError(await postSigned(t, agent.secret, d.fields, { ...good, public_key: key.publicKey }), 400, 'invalid_request', 'signature.public_key');
      assertError(await postSigned(t, agent.secret, d.fields, { ...good, nonce: 'tab\there' }), 400, 'invalid_request', 'signature.nonce');
      assertError(await postSigned(t, agent.secret, d.fields, { ...good, nonce: 'nul\u0000' }), 400, 'invalid_request', 'signature.nonce');
      assertError(await call(t, 'POST', '/v1/decisions', agent.secret, { ...d.fields, nonce: d.nonce, signature: good }, { 'idempotency-key': idempotencyKey() }), 400, 'invalid_request', 'nonce');
      assert.equal(await store.isNonceUsed(agent.agentId, d.nonce), false);
    });
  });

  describe('idempotency', () => {
    test('a signed request replays under its Idempotency-Key, even after its key is revoked', async () => {
      const k = newKeypair();
      const kid = await registerKey(t, agent.secret, k.publicKey);
      const d = decision();
      const payload = (await assertion(t, agent.secret, { ...d.fields, nonce: d.nonce })).payload;
      const signature = { key_id: kid, nonce: d.nonce, signature: sign(payload, k) };
      const idem = idempotencyKey();
      const first = await postSigned(t, agent.secret, d.fields, signature, idem);
      assert.equal(first.statusCode, 201, first.body);
      const replay = await postSigned(t, agent.secret, d.fields, signature, idem);
      assert.equal(replay.statusCode, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, first.body);
      await call(t, 'POST', `/v1/keys/${kid}/revoke`, agent.secret);
      const afterRevoke = await postSigned(t, agent.secret, d.fields, signature, idem);
      assert.equal(afterRevoke.statusCode, 201);
      assert.equal(afterRevoke.body, first.body);
      // The same key with another signature object is a different request.
      const other = await postSigned(t, agent.secret, d.fields, { ...signature, signature: sign(`${payload} `, k) }, idem);
      assertError(other, 409, 'idempotency_key_reused', 'Idempotency-Key');
    });

    test('a refused signed request leaves its Idempotency-Key free', async () => {
      const d = decision();
      const payload = (await assertion(t, agent.secret, { ...d.fields, nonce: d.nonce })).payload;
      const idem = idempotencyKey();
      assertError(await postSigned(t, agent.secret, d.fields, { key_id: keyId, nonce: d.nonce, signature: sign(payload, newKeypair()) }, idem), 400, 'invalid_request', 'signature.signature');
      const ok = await postSigned(t, agent.secret, d.fields, { key_id: keyId, nonce: d.nonce, signature: sign(payload, key) }, idem);
      assert.equal(ok.statusCode, 201, ok.body);
    });
  });

  describe('revocation', () => {
    test('a revoked key signs nothing new; what it signed stays signed and verifiable', async () => {
      const k = newKeypair();
      const kid = await registerKey(t, agent.secret, k.publicKey);
      const old = await recordSigned(t, agent, k, kid, decision().fields, freshNonce());
      assert.equal(old.statusCode, 201, old.body);
      const revoked = (await call(t, 'POST', `/v1/keys/${kid}/revoke`, agent.secret)).json();
      assert.ok(Date.parse(revoked.revoked_at) >= Date.parse(old.json().recorded_at));

      const before = await chainLength(store, agent.agentId);
      const d = decision();
      const refused = await recordSigned(t, agent, k, kid, d.fields, d.nonce);
      assertError(refused, 400, 'invalid_request', 'signature.key_id');
      assert.equal(await chainLength(store, agent.agentId), before);
      assert.equal(await store.isNonceUsed(agent.agentId, d.nonce), false);

      const read = await call(t, 'GET', `/v1/decisions/${old.json().id}`, agent.secret);
      assert.equal(read.json().verification.agent_signed, true);
      const proof = await call(t, 'GET', `/v1/proof/${old.json().id}`, null);
      assert.equal(proof.statusCode, 200, proof.body);
      assert.equal(proof.json().key.id, kid);
      assert.equal(proof.json().key.revoked_at, revoked.revoked_at);
      assert.equal(proof.json().key.valid_for_record, true, 'the proof says the key was valid when the record was recorded');
      const verified = await verifyStoredChain(store, agent);
      assert.deepEqual(verified.failures, []);
      assert.equal(verified.ok, true);
    });

    test('revoked_at is never before a record the key signed, even from a clock behind the chain', async () => {
      let now = Date.now();
      const clock = { now: () => new Date(now) };
      const skewed = await testApp(store, { clock });
      try {
        const a = await skewed.agent();
        const k = newKeypair();
        const kid = await registerKey(skewed, a.secret, k.publicKey);
        const signed = await recordSigned(skewed, a, k, kid, { symbol: 'AAPL', action: 'BUY', occurred_at: new Date(now - 1000).toISOString() }, freshNonce());
        assert.equal(signed.statusCode, 201, signed.body);
        now -= 60_000; // this node's clock is a minute behind the record
        const revoked = (await call(skewed, 'POST', `/v1/keys/${kid}/revoke`, a.secret)).json();
        assert.equal(revoked.revoked_at, signed.json().recorded_at);
        assert.equal((await call(skewed, 'GET', `/v1/proof/${signed.json().id}`, null)).json().key.valid_for_record, true);
        const verified = await verifyStoredChain(store, a);
        assert.deepEqual(verified.failures, []);
      } finally {
        await skewed.close();
      }
    });

    test('another key of the agent keeps signing after one is revoked', async () => {
      const [k1, k2] = [newKeypair(), newKeypair()];
      const id1 = await registerKey(t, agent.secret, k1.publicKey);
      const id2 = await registerKey(t, agent.secret, k2.publicKey);
      await call(t, 'POST', `/v1/keys/${id1}/revoke`, agent.secret);
      const d = decision();
      assert.equal((await recordSigned(t, agent, k2, id2, d.fields, d.nonce)).statusCode, 201);
    });
  });

  describe('the assertion validates exactly as a decision', () => {
    const invalid: [string, object][] = [
      ['symbol too long', { symbol: 'X'.repeat(21), action: 'BUY' }],
      ['unknown action', { symbol: 'AAPL', action: 'YOLO' }],
      ['missing symbol', { action: 'BUY' }],
      ['confidence above 1', { symbol: 'AAPL', action: 'BUY', confidence: '1.01' }],
      ['target_allocation_pct above 100', { symbol: 'AAPL', action: 'BUY', target_allocation_pct: 100.5 }],
      ['decimal with leading zeros', { symbol: 'AAPL', action: 'BUY', quantity: '007' }],
      ['decimal too long', { symbol: 'AAPL', action: 'BUY', quantity: '1e999999999' }],
      ['currency of 2 letters', { symbol: 'AAPL', action: 'BUY', currency: 'US' }],
      ['unknown asset class', { symbol: 'AAPL', action: 'BUY', asset_class: 'BONDS' }],
      ['time_horizon too long', { symbol: 'AAPL', action: 'BUY', time_horizon: 'x'.repeat(121) }],
      ['thesis too long', { symbol: 'AAPL', action: 'BUY', thesis: 'x'.repeat(8001) }],
      ['metadata not an object', { symbol: 'AAPL', action: 'BUY', metadata: [1] }],
      ['unknown field', { symbol: 'AAPL', action: 'BUY', colour: 'red' }],
      ['occurred_at in the future', { symbol: 'AAPL', action: 'BUY', occurred_at: new Date(Date.now() + 3_600_000).toISOString() }],
      ['occurred_at eight days old', { symbol: 'AAPL', action: 'BUY', occurred_at: new Date(Date.now() - 8 * 86_400_000).toISOString() }],
      ['occurred_at without an offset', { symbol: 'AAPL', action: 'BUY', occurred_at: '2025-01-01T00:00:00' }],
    ];
    for (const [name, body] of invalid) {
      test(name, async () => {
        const withTime = { occurred_at: minutesAgo(1), ...body };
        const asDecision = await postDecision(t, agent.secret, withTime);
        const asAssertion = await call(t, 'POST', '/v1/decisions/assertion', agent.secret, { ...withTime, nonce: freshNonce() });
        const d = assertError(asDecision, 400, 'invalid_request');
        const a = assertError(asAssertion, 400, 'invalid_request');
        assert.equal(a.param, d.param);
      });
    }

    test('occurred_at and nonce are required; nonce is 1 to 255 characters without control characters; no signature', async () => {
      const fields = { symbol: 'AAPL', action: 'BUY', occurred_at: minutesAgo(1) };
      const post = (body: object) => call(t, 'POST', '/v1/decisions/assertion', agent.secret, body);
      assertError(await post({ symbol: 'AAPL', action: 'BUY', nonce: freshNonce() }), 400, 'invalid_request', 'occurred_at');
      assertError(await post(fields), 400, 'invalid_request', 'nonce');
      assertError(await post({ ...fields, nonce: '' }), 400, 'invalid_request', 'nonce');
      assertError(await post({ ...fields, nonce: 'n'.repeat(256) }), 400, 'invalid_request', 'nonce');
      assertError(await post({ ...fields, nonce: 12 }), 400, 'invalid_request', 'nonce');
      assertError(await post({ ...fields, nonce: 'line\nbreak' }), 400, 'invalid_request', 'nonce');
      assertError(await post({ ...fields, nonce: freshNonce(), signature: { key_id: keyId, nonce: 'x', signature: 'y' } }), 400, 'invalid_request', 'signature');
      assert.equal((await post({ ...fields, nonce: 'n'.repeat(255) })).statusCode, 200);
    });

    test('a nonce already used by a recorded decision is refused at assertion (param nonce)', async () => {
      const d = decision();
      assert.equal((await recordSigned(t, agent, key, keyId, d.fields, d.nonce)).statusCode, 201);
      assertError(await call(t, 'POST', '/v1/decisions/assertion', agent.secret, { ...d.fields, nonce: d.nonce }), 400, 'invalid_request', 'nonce');
    });
  });

  describe('authentication of the assertion endpoint', () => {
    authenticationCases('POST /v1/decisions/assertion', 'decisions:write', () => t, (t, secret) =>
      call(t, 'POST', '/v1/decisions/assertion', secret, { symbol: 'AAPL', action: 'BUY', occurred_at: minutesAgo(1), nonce: freshNonce() }));
  });

  describe('examples/sign-and-post.mjs', () => {
    test('runs against a listening service and records an agent-signed decision', async () => {
      const served = await testApp(store, { env: { PORT: '0' } });
      try {
        const address = await served.app.listen({ port: 0, host: '127.0.0.1' });
        const runner = await served.agent();
        const { code, out } = await runExample({ LEDGER_BASE_URL: `${address}/v1`, LEDGER_API_KEY: runner.secret });
        assert.equal(code, 0, out);
        assert.match(out, /2\. registered it as aid_/);
        assert.match(out, /4\. the locally built payload matches/);
        assert.match(out, /agent_signed=true, chain_seq=1, content_hash matches=true/);
        assert.equal((await verifyStoredChain(store, runner)).ok, true);
      } finally {
        await served.close();
      }
    });
  });
});

function runExample(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['examples/sign-and-post.mjs'], { env: { PATH: process.env.PATH ?? '', ...env } });
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => (out += b));
    const timer = setTimeout(() => child.kill(), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}
