// Checks src/core against every released canon_v1 vector file in test/vectors/canon_v1/.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  b64urlEncode,
  canonicalJson,
  chainEntry,
  chainHash,
  contentHash,
  decisionContent,
  normaliseDecimal,
  normaliseNumbers,
  readJson,
  sha256Hex,
  verifyChain,
  type ChainRecord,
  type JsonValue,
  type KeyInfo,
} from '../../src/core/index.ts';
import * as ed from '@noble/ed25519';
import { keypair, loadVectors, nodeVerifier, seed } from './helpers.ts';

type DecimalVector = { input: string; output?: string; error?: 'grammar' | 'too_long' };
type CanonicalVector = { name: string; input: string; output?: string; sha256?: string; error?: { stage: string; path: string } };
type DecisionVector = {
  name: string; agent: string; now: string; body: string; nonce?: string;
  payload?: string; content_hash?: string; signature?: string; error?: { stage: 'read' | 'content'; param: string };
};
type ChainVector = { agent: string; keys: KeyInfo[]; records: (ChainRecord & { content_canonical: string; chain_entry_canonical: string })[] };

describe('vectors: keypair.json', () => {
  it('public key derives from the seed', () => {
    assert.equal(Buffer.from(ed.getPublicKey(seed)).toString('hex'), keypair.public_key_hex);
    assert.equal(b64urlEncode(ed.getPublicKey(seed)), keypair.public_key_b64url);
  });
});

describe('vectors: decimals.json', () => {
  const { vectors } = loadVectors<{ vectors: DecimalVector[] }>('decimals.json');
  it('has vectors for every rule', () => assert.ok(vectors.length > 80));
  for (const v of vectors) {
    it(`${JSON.stringify(v.input.length > 40 ? v.input.slice(0, 40) + '…' : v.input)}`, () => {
      const r = normaliseDecimal(v.input);
      if (v.output !== undefined) assert.deepEqual(r, { ok: true, value: v.output });
      else assert.deepEqual(r, { ok: false, reason: v.error });
    });
  }
});

describe('vectors: canonical.json', () => {
  const { vectors } = loadVectors<{ vectors: CanonicalVector[] }>('canonical.json');
  for (const v of vectors) {
    it(v.name, () => {
      const read = readJson(v.input);
      if (v.error?.stage === 'read') {
        assert.equal(read.ok, false);
        if (!read.ok) assert.equal(read.error.path, v.error.path);
        return;
      }
      assert.ok(read.ok, read.ok ? '' : read.error.message);
      const norm = normaliseNumbers(read.value);
      if (v.error?.stage === 'normalise') {
        assert.deepEqual(norm, { ok: false, path: v.error.path, reason: 'too_long' });
        return;
      }
      assert.ok(norm.ok);
      const out = canonicalJson(norm.value);
      assert.equal(out, v.output);
      assert.equal(sha256Hex(out), v.sha256);
      assert.equal(contentHash(norm.value), v.sha256);
      // canon_v1 is a fixed point: reading the output back gives the same bytes.
      const again = readJson(out);
      assert.ok(again.ok);
      const againNorm = normaliseNumbers(again.value);
      assert.ok(againNorm.ok);
      assert.equal(canonicalJson(againNorm.value), out);
    });
  }
});

describe('vectors: decisions.json', () => {
  const { vectors } = loadVectors<{ vectors: DecisionVector[] }>('decisions.json');
  for (const v of vectors) {
    it(v.name, () => {
      const read = readJson(v.body);
      if (v.error?.stage === 'read') {
        assert.equal(read.ok, false);
        if (!read.ok) assert.equal(read.error.path, v.error.param);
        return;
      }
      assert.ok(read.ok);
      const r = decisionContent({ agent: v.agent, fields: read.value as { [k: string]: JsonValue }, nonce: v.nonce, now: new Date(v.now) });
      if (v.error) {
        assert.equal(r.ok, false);
        if (!r.ok) assert.equal(r.error.param, v.error.param);
        return;
      }
      assert.ok(r.ok, r.ok ? '' : r.error.message);
      const payload = canonicalJson(r.document);
      assert.equal(payload, v.payload);
      assert.equal(sha256Hex(payload), v.content_hash);
      if (v.signature !== undefined) {
        assert.ok(nodeVerifier(keypair.public_key_b64url, new TextEncoder().encode(payload), v.signature));
      }
    });
  }
  it('the same decision written differently has one payload', () => {
    const byName = new Map(vectors.map((v) => [v.name, v]));
    assert.equal(byName.get('every field, numbers in every form')?.payload, byName.get('same decision written differently gives the same payload')?.payload);
  });
});

describe('vectors: chains.json', () => {
  const chain = loadVectors<ChainVector>('chains.json');
  it('each record re-serialises to its canonical text and hashes', () => {
    for (const r of chain.records) {
      assert.ok(r.content !== null);
      assert.equal(canonicalJson(r.content), r.content_canonical);
      assert.equal(contentHash(r.content), r.content_hash);
      const input = {
        agent: chain.agent, seq: r.seq, id: r.id, type: r.type, recordedAt: r.recorded_at,
        contentHash: r.content_hash, prevHash: r.prev_hash, signature: r.signature ?? null,
      };
      assert.equal(canonicalJson(chainEntry(input)), r.chain_entry_canonical);
      assert.equal(chainHash(input), r.chain_hash);
    }
  });
  it('verifies with signatures', () => {
    const result = verifyChain({ agent: chain.agent, records: chain.records, keys: chain.keys, verifySignature: nodeVerifier });
    assert.deepEqual(result.failures, []);
    assert.equal(result.ok, true);
    const sig = result.checks.find((c) => c.name === 'signature');
    assert.deepEqual(sig?.counts, { checked: 1, failed: 0, skipped: 0 });
    const last = chain.records[chain.records.length - 1]!;
    assert.deepEqual(result.head, { seq: last.seq, chain_hash: last.chain_hash });
  });
  it('the signed record carries the key id of keypair.json', () => {
    const signed = chain.records.filter((r) => r.signature);
    assert.equal(signed.length, 1);
    assert.equal(signed[0]!.signature!.key_id, keypair.key_id);
  });
});
