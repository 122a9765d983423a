// Verify in this browser, without a browser: the browser bundle's seams give the core's answers,
// the bundle reaches no Node module, and checkProof (the code the button runs) passes on real
// proof bundles and fails on altered ones, with Node's WebCrypto standing in for the browser's.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { webcrypto } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import * as ed from '@noble/ed25519';
import { sha256 as nodeSha256, sha256Hex as nodeSha256Hex } from '../../src/core/sha256.ts';
import { verifyRaw as nodeVerifyRaw } from '../../src/core/ed25519.ts';
import { sha256 as browserSha256, sha256Hex as browserSha256Hex } from '../../src/client/browser/sha256.ts';
import { verifyRaw as browserVerifyRaw } from '../../src/client/browser/ed25519.ts';
import { checkProof } from '../../src/site/browser/proof-check.ts';
import { encodeVkey } from '../../src/core/note.ts';
import { forEachStore } from '../support/stores.ts';
import { siteFixture, type SiteFixture } from './fixture.ts';

const subtle = webcrypto.subtle as unknown as SubtleCrypto;

test('the browser seams answer as the core\'s node:crypto seams', () => {
  for (const input of ['', 'abc', 'é€𝄞', 'x'.repeat(10_000)]) {
    assert.equal(browserSha256Hex(input), nodeSha256Hex(input));
    assert.deepEqual(browserSha256(input, new Uint8Array([1, 2, 3])), nodeSha256(input, new Uint8Array([1, 2, 3])));
  }
  const secret = ed.utils.randomSecretKey();
  const pub = ed.getPublicKey(secret);
  const message = new TextEncoder().encode('canon_v1 payload');
  const sig = ed.sign(message, secret);
  assert.equal(browserVerifyRaw(pub, message, sig), true);
  assert.equal(nodeVerifyRaw(pub, message, sig), true);
  const bad = Uint8Array.from(sig);
  bad[0]! ^= 1;
  assert.equal(browserVerifyRaw(pub, message, bad), nodeVerifyRaw(pub, message, bad));
  assert.equal(browserVerifyRaw(pub.slice(1), message, sig), false);
});

test('the browser bundle holds no Node module (built by npm run build)', () => {
  const bundle = readFileSync(new URL('../../dist/site/assets/verify.js', import.meta.url), 'utf8');
  assert.ok(!/\bnode:/.test(bundle), 'no node: import');
  assert.ok(!bundle.includes('createHash'), 'the node:crypto seam is swapped out');
});

await forEachStore('checkProof on real proof bundles', (kind) => {
  let f: SiteFixture;
  let vkey: string;
  const proof = async (id: string) => (await f.ledger.app.inject({ url: `/v1/proof/${id}` })).body;
  before(async () => {
    f = await siteFixture(await kind.open());
    vkey = (await f.ledger.app.inject({ url: '/v1/transparency' })).json().log.vkey;
  });
  after(async () => {
    await f?.close();
    await f?.store.close();
    await kind.cleanup();
  });

  describe('checks', () => {
    test('every good record passes, with and without WebCrypto', async () => {
      for (const id of Object.values(f.ids)) {
        for (const s of [subtle, null]) {
          const v = await checkProof(await proof(id), vkey, s);
          assert.equal(v.ok, true, JSON.stringify(v));
          assert.equal(v.checks.find((c) => c.name === 'inclusion')?.ok, true);
          assert.equal(v.checks.find((c) => c.name === 'checkpoint')?.ok, true);
        }
      }
      const signed = await checkProof(await proof(f.ids.signed), vkey, subtle);
      assert.equal(signed.checks.find((c) => c.name === 'signature')?.ok, true);
      assert.match(signed.engines.ed25519, /WebCrypto/);
    });

    test('altered content, an altered signature, a forged checkpoint or another log key fail, naming the check', async () => {
      const good = JSON.parse(await proof(f.ids.signed));
      const alter = (fn: (b: typeof good) => void) => {
        const b = structuredClone(good);
        fn(b);
        return JSON.stringify(b);
      };
      const content = await checkProof(alter((b) => { b.record.content = b.record.content.replace('taking profits', 'taking losses'); b.record.document = JSON.parse(b.record.content); }), vkey, subtle);
      assert.equal(content.ok, false);
      assert.equal(content.checks.find((c) => c.name === 'content_hash')?.ok, false);
      assert.equal(content.checks.find((c) => c.name === 'signature')?.ok, false);
      const sig = await checkProof(alter((b) => { b.record.entry.signature.signature = b.record.entry.signature.signature.replace(/^./, (c: string) => (c === 'A' ? 'B' : 'A')); }), vkey, subtle);
      assert.equal(sig.ok, false);
      assert.equal(sig.checks.find((c) => c.name === 'chain_hash')?.ok, false, 'the signature is in the chain entry');
      const checkpoint = await checkProof(alter((b) => { b.inclusion_proof.checkpoint = b.inclusion_proof.checkpoint.replace(/\n\d+\n/, '\n999999\n'); }), vkey, subtle);
      assert.equal(checkpoint.ok, false);
      assert.equal(checkpoint.checks.find((c) => c.name === 'checkpoint')?.ok, false);
      const origin = vkey.split('+')[0]!;
      const other = encodeVkey(origin, ed.getPublicKey(ed.utils.randomSecretKey()));
      assert.ok(other.ok);
      const otherKey = await checkProof(await proof(f.ids.signed), other.value, subtle);
      assert.equal(otherKey.ok, false);
      assert.equal(otherKey.checks.find((c) => c.name === 'checkpoint')?.ok, false, 'signed by another key than the one published');
      const unreadable = await checkProof(await proof(f.ids.signed), vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+'), subtle);
      assert.equal(unreadable.checks.find((c) => c.name === 'checkpoint')?.ok, false);
      const noKey = await checkProof(await proof(f.ids.signed), null, subtle);
      assert.equal(noKey.checks.find((c) => c.name === 'checkpoint')?.ok, null, 'without a log key the signature is not checked, and says so');
      const garbage = await checkProof('not json', vkey, subtle);
      assert.equal(garbage.ok, false);
    });
  });
});
