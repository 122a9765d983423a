// The client's Ed25519 signing: WebCrypto where the platform has it, @noble/ed25519 otherwise.
// Both must give RFC 8032's bytes (TEST 1 of section 7.1) and each other's, since a retried signed
// decision is replayed only when its signature is the same.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import * as ed from '@noble/ed25519';
import { publicKeyOf, signBytes } from '../../src/client/signing.ts';

const hex = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'));
const pair = JSON.parse(readFileSync(new URL('../vectors/canon_v1/keypair.json', import.meta.url), 'utf8')) as { seed_hex: string; public_key_b64url: string };
// RFC 8032 section 7.1 TEST 1: the empty message.
const RFC8032_TEST1_SIGNATURE = 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b';

test('signBytes gives RFC 8032\'s signature, and noble\'s, for the same key and message', async () => {
  const seed = hex(pair.seed_hex);
  assert.equal(await publicKeyOf(seed), pair.public_key_b64url);
  assert.equal(Buffer.from(await signBytes(new Uint8Array(0), seed)).toString('hex'), RFC8032_TEST1_SIGNATURE);
  for (const message of ['', 'a canon_v1 payload', '{"agent":"é😀"}']) {
    const bytes = new TextEncoder().encode(message);
    assert.deepEqual(await signBytes(bytes, seed), await ed.signAsync(bytes, seed), message);
  }
});
