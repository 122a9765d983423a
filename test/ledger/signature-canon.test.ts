// The signature part of a signed request's idempotency fingerprint is written out by hand for
// speed; it must be byte for byte what canon_v1 gives, or replays of requests recorded before
// would stop matching.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { canonicalJson } from '../../src/core/canon.ts';
import { signatureCanon } from '../../src/ledger/decisions.ts';

test('signatureCanon equals canonicalJson of the signature object, for any strings', () => {
  fc.assert(fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.string(), (keyId, nonce, signature) => {
    const object = { signature, nonce, key_id: keyId };
    assert.equal(signatureCanon(object), canonicalJson(object));
  }), { numRuns: 2000 });
});
