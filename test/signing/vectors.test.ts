// The signing vectors (test/vectors/signing/signed-decisions.json) against the real service:
// the fixed keypair, the assertion payloads byte for byte, the signatures (Ed25519 is
// deterministic, so @noble/ed25519 must reproduce them) and the recorded content hashes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import * as ed from '@noble/ed25519';
import fc from 'fast-check';
import { decisionPayload, normaliseDecimal as callerNormalise } from '../../examples/canon-payload.mjs';
import { canonicalJson, decisionContent, normaliseDecimal, readJson, type JsonValue } from '../../src/core/index.ts';
import { verifyEd25519 } from '../../src/core/ed25519.ts';
import { decisionPayload as clientPayload, LedgerValidationError, type DecisionFields } from '../../src/client/index.ts';
import { forEachStore } from '../support/stores.ts';
import { idempotencyKey, testApp } from '../support/app.ts';
import { call, keypairFromSeed, registerKey, sign } from './helpers.ts';

type SignedVectors = {
  agent: string;
  now: string;
  vectors: { name: string; nonce: string; assertion_request: string; payload: string; content_hash: string; signature: string; decision_request: string }[];
};
const read = <T>(path: string) => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as T;
const signed = read<SignedVectors>('../vectors/signing/signed-decisions.json');
const keypair = read<{ seed_hex: string; public_key_hex: string; public_key_b64url: string }>('../vectors/canon_v1/keypair.json');

test('the fixed keypair is RFC 8032 TEST 1 and its public key encodings agree', () => {
  const key = keypairFromSeed(keypair.seed_hex);
  assert.equal(key.publicKey, keypair.public_key_b64url);
  assert.equal(Buffer.from(keypair.public_key_b64url, 'base64url').toString('hex'), keypair.public_key_hex);
  // RFC 8032 section 7.1 TEST 1: the empty message.
  const rfcSignature = 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b';
  assert.equal(Buffer.from(ed.sign(new Uint8Array(0), key.secretKey)).toString('hex'), rfcSignature);
});

for (const v of signed.vectors) {
  test(`vector "${v.name}": @noble/ed25519 reproduces the signature, the service's verifier accepts it, the caller-side builder reproduces the payload`, () => {
    const key = keypairFromSeed(keypair.seed_hex);
    assert.equal(sign(v.payload, key), v.signature);
    assert.equal(verifyEd25519(keypair.public_key_b64url, new TextEncoder().encode(v.payload), v.signature), true);
    const tampered = v.payload.replace('"canon_v1"', '"canon_v2"');
    assert.equal(verifyEd25519(keypair.public_key_b64url, new TextEncoder().encode(tampered), v.signature), false);
    const { nonce, ...fields } = JSON.parse(v.assertion_request) as Record<string, unknown>;
    assert.equal(decisionPayload({ agent: signed.agent, fields, nonce: nonce as string }), v.payload);
  });
}

await forEachStore('signing vectors through the service', (kind) => {
  test('each vector: assertion payload and hash byte for byte, then recorded agent-signed with its content hash', async () => {
    const store = await kind.open();
    const t = await testApp(store, { clock: { now: () => new Date(signed.now) } });
    try {
      const agent = await t.agent(signed.agent);
      const keyId = await registerKey(t, agent.secret, keypair.public_key_b64url, 'RFC 8032 TEST 1');
      for (const v of signed.vectors) {
        const asserted = await call(t, 'POST', '/v1/decisions/assertion', agent.secret, v.assertion_request);
        assert.equal(asserted.statusCode, 200, asserted.body);
        assert.equal(asserted.json().payload, v.payload, v.name);
        assert.equal(asserted.json().content_hash, v.content_hash, v.name);
        const recorded = await call(t, 'POST', '/v1/decisions', agent.secret, v.decision_request.replace('KEY_ID', keyId), { 'idempotency-key': idempotencyKey() });
        assert.equal(recorded.statusCode, 201, recorded.body);
        assert.equal(recorded.json().verification.agent_signed, true);
        assert.equal(recorded.json().verification.content_hash, v.content_hash);
        const record = await store.findRecord(recorded.json().id);
        assert.equal(record?.content, v.payload);
        assert.deepEqual(record?.signature, { key_id: keyId, nonce: v.nonce, signature: v.signature });
      }
      // A signature from the vectors under another agent's registration of the same key does not carry over.
      const other = await t.agent();
      await registerKey(t, other.secret, keypair.public_key_b64url);
      const v = signed.vectors[0]!;
      const res = await call(t, 'POST', '/v1/decisions', other.secret, v.decision_request.replace('KEY_ID', keyId), { 'idempotency-key': idempotencyKey() });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().error.param, 'signature.key_id');
    } finally {
      await t.close();
      await store.close();
      await kind.cleanup();
    }
  });
});

test('property: the caller-side builders and the service core agree on decimals and on whole payloads; the client refuses what the core refuses', () => {
  const decimalText = fc.tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.option(fc.stringMatching(/^[0-9]{1,12}$/)), fc.option(fc.integer({ min: -40, max: 40 })))
    .map(([neg, int, frac, exp]) => `${neg ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : `e${exp}`}`);
  fc.assert(fc.property(decimalText, (text) => {
    const core = normaliseDecimal(text);
    if (!core.ok) {
      assert.throws(() => callerNormalise(text));
      return;
    }
    assert.equal(callerNormalise(text), core.value);
  }), { numRuns: 500 });

  const leaf = fc.oneof(fc.string({ unit: 'grapheme' }), fc.boolean(), fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer());
  const metadata = fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 6 }), fc.oneof(leaf, fc.array(leaf, { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 4 }), leaf)), { maxKeys: 6 });
  const fields = fc.record({
    symbol: fc.string({ minLength: 1, maxLength: 20, unit: 'grapheme-ascii' }),
    action: fc.constantFrom('BUY', 'SELL', 'HOLD'),
    quantity: fc.option(decimalText.filter((t) => normaliseDecimal(t).ok && !t.startsWith('-')), { nil: undefined }),
    thesis: fc.option(fc.string({ unit: 'grapheme', maxLength: 40 }), { nil: undefined }),
    metadata: fc.option(metadata, { nil: undefined }),
  }, { requiredKeys: ['symbol', 'action'] });
  let refused = 0;
  let accepted = 0;
  fc.assert(fc.property(fields, fc.string({ minLength: 1, maxLength: 20, unit: 'grapheme' }), (f, nonce) => {
    const plain = JSON.parse(JSON.stringify(f)) as Record<string, unknown>;
    const text = JSON.stringify(plain);
    const read = readJson(text);
    assert.ok(read.ok);
    const core = decisionContent({ agent: 'prop-agent', fields: read.value as { [k: string]: JsonValue }, nonce, now: new Date() });
    if (!core.ok) {
      // Refused by the service: the client library refuses it too, before signing, naming the same field.
      refused++;
      assert.throws(() => clientPayload('prop-agent', plain as DecisionFields, nonce), (err: unknown) =>
        err instanceof LedgerValidationError && err.param === (core.error.param || undefined));
      return;
    }
    accepted++;
    assert.equal(decisionPayload({ agent: 'prop-agent', fields: plain, nonce }), canonicalJson(core.document));
    assert.equal(clientPayload('prop-agent', plain as DecisionFields, nonce).payload, canonicalJson(core.document));
  }), { numRuns: 300 });
  assert.ok(refused > 0 && accepted > 0, `both sides of the property ran: ${accepted} accepted, ${refused} refused`);
});
