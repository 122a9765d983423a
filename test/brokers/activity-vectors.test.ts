// test/vectors/canon_v1/activities.json (docs/canon_v1.md §3.2): each broker row normalises to the
// vector's content document, which serialises to its canonical text and hashes; the chain entries
// hash as stated; the chain verifies; a changed amount or a changed type fails.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { activityContent, alpacaActivities, snapTradeActivities } from '../../src/brokers/activity.ts';
import type { AlpacaNonTradeActivity } from '../../src/brokers/alpaca.ts';
import type { SnapTradeActivity } from '../../src/brokers/snaptrade.ts';
import { canonicalJson, chainEntry, chainHash, contentHash, verifyChain, type CanonValue, type ChainRecord } from '../../src/core/index.ts';
import { loadVectors } from '../core/helpers.ts';

type ActivityVector = ChainRecord & { broker_row: Record<string, unknown>; content_canonical: string; chain_entry_canonical: string };
const vectors = loadVectors<{ agent: string; records: ActivityVector[] }>('activities.json');

describe('vectors: activities.json', () => {
  it('each broker row makes the vector\'s content document, its canonical text and hash', () => {
    for (const r of vectors.records) {
      const content = r.content as { broker: string; account_ref: string };
      const made = content.broker === 'alpaca'
        ? alpacaActivities({ accountRef: content.account_ref, currency: 'USD', rows: [r.broker_row as AlpacaNonTradeActivity] }).activities
        : snapTradeActivities({ accountRef: content.account_ref, rows: [r.broker_row as SnapTradeActivity] }).activities;
      assert.equal(made.length, 1);
      const doc = activityContent({ agent: vectors.agent, activity: made[0]! });
      assert.ok(doc.ok);
      assert.deepEqual(doc.document, r.content);
      assert.equal(canonicalJson(r.content as CanonValue), r.content_canonical);
      assert.equal(contentHash(r.content as CanonValue), r.content_hash);
      const input = { agent: vectors.agent, seq: r.seq, id: r.id, type: r.type, recordedAt: r.recorded_at, contentHash: r.content_hash, prevHash: r.prev_hash };
      assert.equal(canonicalJson(chainEntry(input)), r.chain_entry_canonical);
      assert.equal(chainHash(input), r.chain_hash);
    }
  });

  it('the chain verifies; a changed amount or record type fails', () => {
    assert.equal(verifyChain({ agent: vectors.agent, records: vectors.records }).ok, true);
    const amount = vectors.records.map((r, i) => (i === 3 ? { ...r, content: { ...(r.content as object), amount: '2500' } as CanonValue } : r));
    assert.deepEqual(verifyChain({ agent: vectors.agent, records: amount }).failures.map((f) => f.name), ['content_hash']);
    const retyped = vectors.records.map((r, i) => (i === 0 ? { ...r, type: 'execution' as const } : r));
    assert.equal(verifyChain({ agent: vectors.agent, records: retyped }).ok, false);
  });
});
