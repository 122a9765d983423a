// /v1/transparency's witnesses part never contradicts itself while cosignatures arrive: the
// witnesses' states are read before the checkpoint, so a witness shown as having cosigned the
// published size is among the checkpoint's cosigners. Read the other way round, a cosignature
// stored between the two reads showed the witness at that size beside a checkpoint cosigned by
// nobody (a CI run of test/faults/witness-faults.test.ts saw it).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseWitnessPolicy } from '../../src/core/witness-policy.ts';
import { LogReads } from '../../src/log/reads.ts';
import type { CosignatureReader, LogReader, StoredCheckpoint, StoredCosignature } from '../../src/log/port.ts';
import { seededWitnessKey, value } from '../witness/helpers.ts';

const GOOD = seededWitnessKey('good.test/witness', 0x31);
const CHECKPOINT: StoredCheckpoint = { treeSize: 4, note: 'log.test\n4\nAAAA\n\n— log.test sig\n', vkey: 'log.test+00000000+AAAA', createdAt: '2026-12-06T00:00:00.000Z' };
const COSIGNATURE: StoredCosignature = { treeSize: 4, witness: GOOD.vkey, line: '— good.test/witness cosig\n', cosignedAt: 1_796_000_000, receivedAt: '2026-12-06T00:00:01.000Z' };

test('a cosignature stored while /v1/transparency is read never shows on the witness without the checkpoint', async () => {
  const stored: StoredCosignature[] = [];
  // Every read of the witnesses' cosignatures is followed at once by the good witness's cosignature arriving.
  const arrives = <T>(answer: T): T => {
    if (stored.length === 0) stored.push(COSIGNATURE);
    return answer;
  };
  const cosignatures: CosignatureReader = {
    at: async (size) => arrives(stored.filter((c) => c.treeSize === size)),
    latestByWitness: async () => arrives([...stored]),
    attempts: async () => [],
  };
  const log = { latestCheckpoint: async () => CHECKPOINT } as unknown as LogReader;
  const policy = value(parseWitnessPolicy([`witness good ${GOOD.vkey} http://127.0.0.1:9`, 'quorum good'].join('\n')));
  const reads = new LogReads(log, CHECKPOINT.vkey, 'http://127.0.0.1/v1', { policy, cosignatures });

  const doc = await reads.transparency();
  const good = doc.witnesses!.witnesses.find((w) => w.name === 'good')!;
  const onCheckpoint = doc.witnesses!.checkpoint!.cosigned_by.includes('good');
  assert.ok(good.last_cosigned_size !== doc.tree_size || onCheckpoint, `good shown at size ${good.last_cosigned_size}, the checkpoint of size ${doc.tree_size} cosigned by ${JSON.stringify(doc.witnesses!.checkpoint!.cosigned_by)}`);
  const again = await reads.transparency();
  assert.deepEqual([again.witnesses!.witnesses[0]!.last_cosigned_size, again.witnesses!.checkpoint], [4, { quorum_satisfied: true, cosigned_by: ['good'] }], 'read again, both show it');
});
