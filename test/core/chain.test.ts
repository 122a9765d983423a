// Chain entries, hashes and recorded_at formatting.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CANON, GENESIS_PREV_HASH, canonicalJson, chainEntry, chainHash, contentHash, formatRecordedAt, sha256Hex, type ChainEntryInput } from '../../src/core/index.ts';

const base: ChainEntryInput = {
  agent: 'bot', seq: 12, id: 'dec_01J', type: 'decision', recordedAt: '2025-06-02T12:00:00.123Z',
  contentHash: 'a'.repeat(64), prevHash: GENESIS_PREV_HASH,
};

describe('chainEntry', () => {
  it('has exactly the §4 members, seq as a decimal string', () => {
    assert.equal(CANON, 'canon_v1');
    assert.equal(GENESIS_PREV_HASH, '0'.repeat(64));
    assert.deepEqual(chainEntry(base), {
      canon: 'canon_v1', agent: 'bot', seq: '12', id: 'dec_01J', type: 'decision', recorded_at: '2025-06-02T12:00:00.123Z',
      content_hash: 'a'.repeat(64), prev_hash: '0'.repeat(64),
    });
  });
  it('adds signature only when present', () => {
    assert.ok(!('signature' in (chainEntry({ ...base, signature: null }) as object)));
    assert.ok(!('signature' in (chainEntry({ ...base, signature: undefined }) as object)));
    const sig = { key_id: 'aid_1', nonce: 'n1', signature: 'c2ln' };
    assert.deepEqual((chainEntry({ ...base, signature: sig }) as { signature: unknown }).signature, sig);
  });
  it('chainHash is sha256 of canon_v1(entry)', () => {
    assert.equal(chainHash(base), sha256Hex(canonicalJson(chainEntry(base))));
    assert.equal(
      canonicalJson(chainEntry(base)),
      '{"agent":"bot","canon":"canon_v1","content_hash":"' + 'a'.repeat(64) + '","id":"dec_01J","prev_hash":"' + '0'.repeat(64) + '","recorded_at":"2025-06-02T12:00:00.123Z","seq":"12","type":"decision"}',
    );
    assert.notEqual(chainHash(base), chainHash({ ...base, seq: 13 }));
  });
  it('refuses a seq that is not a positive integer', () => {
    for (const seq of [0, -1, 1.5, NaN, 2 ** 53]) assert.throws(() => chainEntry({ ...base, seq }), TypeError);
  });
  it('contentHash is sha256 of canon_v1(content)', () => {
    assert.equal(contentHash({ b: '1', a: null }), sha256Hex('{"a":null,"b":"1"}'));
  });
});

describe('formatRecordedAt', () => {
  it('UTC with milliseconds', () => {
    assert.equal(formatRecordedAt(new Date(Date.UTC(2025, 5, 2, 12, 0, 0, 7))), '2025-06-02T12:00:00.007Z');
    assert.equal(formatRecordedAt(new Date(0)), '1970-01-01T00:00:00.000Z');
  });
  it('refuses invalid dates and years outside 0000-9999', () => {
    assert.throws(() => formatRecordedAt(new Date(NaN)), RangeError);
    assert.throws(() => formatRecordedAt(new Date(Date.UTC(10000, 0, 1))), RangeError);
    assert.throws(() => formatRecordedAt(new Date(Date.UTC(-1, 0, 1))), RangeError);
  });
});
