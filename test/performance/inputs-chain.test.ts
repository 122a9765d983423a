// The binding of an inputs bundle's record lines to the agent's chain (src/verify/inputs-chain.ts),
// as pure data: a broker report's lines are exactly the chain's executions and activities through
// through_seq (its decisions are not inputs), and each way a line can differ from the chain's
// record is named with its seq and id.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sha256Hex } from '../../src/core/sha256.ts';
import type { RecordLine } from '../../src/method/perf/bundle.ts';
import { bindingOfRecords, type ChainSummary } from '../../src/verify/inputs-chain.ts';

const TYPES = ['decision', 'execution', 'activity', 'execution', 'decision', 'activity'] as const;
const contentOf = (seq: number) => `{"canon":"canon_v1","n":"${seq}"}`;
const chain = new Map<number, ChainSummary>(TYPES.map((type, i) => {
  const seq = i + 1;
  return [seq, { seq, id: `rec_${seq}`, type, recorded_at: `2026-01-0${seq}T00:00:00.000Z`, content_hash: sha256Hex(contentOf(seq)), chain_hash: 'c'.repeat(64) }];
}));
const lineOf = (seq: number): RecordLine => {
  const c = chain.get(seq)!;
  return { kind: 'record', type: c.type as RecordLine['type'], chain_seq: seq, id: c.id, recorded_at: c.recorded_at, symbol: null, content: contentOf(seq), observation: null };
};
const broker = () => [2, 3, 4, 6].map(lineOf);

describe('bindingOfRecords', () => {
  it('passes a broker report\'s executions and activities, the decisions between them left aside; and a model report\'s decisions', () => {
    assert.equal(bindingOfRecords(broker(), chain, 'broker', 6), null);
    assert.equal(bindingOfRecords([2, 3].map(lineOf), chain, 'broker', 3), null);
    assert.equal(bindingOfRecords([1, 5].map(lineOf), chain, 'model', 6), null);
  });

  it('names the record left out, and the one of a kind the report does not apply', () => {
    assert.equal(bindingOfRecords([2, 4, 6].map(lineOf), chain, 'broker', 6), 'record seq 3 (rec_3), the chain\'s activity, is not in the inputs: left out');
    assert.equal(bindingOfRecords([2, 3, 4].map(lineOf), chain, 'broker', 6), 'record seq 6 (rec_6), the chain\'s activity, is not in the inputs: left out');
    assert.equal(bindingOfRecords([1, 2, 3, 4, 6].map(lineOf), chain, 'broker', 6), 'record seq 1 (rec_1) of the inputs is of type "decision": the broker report applies only execution and activity records');
  });

  it('names the record whose id, type, recorded_at or content is not the chain\'s', () => {
    const at = (change: Partial<RecordLine>) => bindingOfRecords(broker().map((l) => (l.chain_seq === 3 ? { ...l, ...change } : l)), chain, 'broker', 6);
    assert.equal(at({ id: 'rec_99' }), 'record seq 3 (rec_99) of the inputs: the chain\'s record at seq 3 is rec_3');
    assert.equal(at({ type: 'execution' }), 'record seq 3 (rec_3) of the inputs is of type "execution", the chain\'s of type "activity"');
    assert.equal(at({ recorded_at: '2026-02-01T00:00:00.000Z' }), 'record seq 3 (rec_3) of the inputs says recorded_at 2026-02-01T00:00:00.000Z, the chain 2026-01-03T00:00:00.000Z');
    assert.equal(at({ chain_seq: 4, id: 'rec_4', type: 'execution', recorded_at: '2026-01-04T00:00:00.000Z' }), 'record seq 3 (rec_3), the chain\'s activity, is not in the inputs: left out');
    assert.match(at({ content: contentOf(3).replace('"3"', '"33"') }) ?? '', /^record seq 3 \(rec_3\) of the inputs: its content hashes to [0-9a-f]{64}, the chain's content_hash is [0-9a-f]{64}$/);
    assert.equal(at({ chain_seq: 7 }), 'record seq 7 (rec_3) of the inputs is past the report\'s through_seq 6');
  });

  it('names a record repeated or out of chain order, and one the chain does not hold', () => {
    assert.equal(bindingOfRecords([2, 3, 3, 4, 6].map(lineOf), chain, 'broker', 6), 'record seq 3 (rec_3) of the inputs comes after seq 3: a record added, repeated or out of chain order');
    assert.equal(bindingOfRecords([2, 4, 3, 6].map(lineOf), chain, 'broker', 6), 'record seq 3 (rec_3), the chain\'s activity, is not in the inputs: left out');
    const short = new Map([...chain].filter(([seq]) => seq < 6));
    assert.equal(bindingOfRecords(broker(), short, 'broker', 6), 'record seq 6 (rec_6) of the inputs is not in the agent\'s chain');
  });
});
