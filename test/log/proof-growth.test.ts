// Proofs served by one running service while its log grows, on SQLite and PostgreSQL: the
// service keeps tiles it has read (src/log/tree.ts), so after the tree grows across a tile
// boundary its proofs at the new size and at every older checkpoint must still verify, and a
// partial tile it read before must still be served with the bytes of its width.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { b64Decode } from '../../src/core/base64.ts';
import { verifyRaw } from '../../src/core/ed25519.ts';
import { hashesEqual, verifyConsistency, verifyInclusion, type Hash } from '../../src/core/merkle.ts';
import { openCheckpoint, type Vkey } from '../../src/core/note.ts';
import type { LogKey } from '../../src/log/key.ts';
import { closeTestApp, testApp, type TestApp } from '../support/app.ts';
import { forEachStore } from '../support/stores.ts';
import { getBytes, record, testIntegrator, testLogKey } from './helpers.ts';

const decode = (s: string): Hash => {
  const b = b64Decode(s);
  assert.ok(b);
  return b;
};

await forEachStore('proofs while the log grows', (kind) => {
  let t: TestApp;
  let key: LogKey;
  let vkey: Vkey;
  let secret: string;
  const ids: string[] = [];

  before(async () => {
    ({ key, vkey } = await testLogKey());
    t = await testApp(await kind.open(), { env: { LEDGER_WRITE_LIMIT_PER_MIN: '100000' } });
    secret = (await t.agent()).secret;
  });
  after(() => closeTestApp(t, kind));

  const grow = async (n: number) => {
    ids.push(...await record(t, secret, n));
    const integrator = testIntegrator(t.store, key);
    await integrator.integratePending();
    await integrator.stop();
  };

  const rootAt = async (size: number): Promise<Hash> => {
    const checkpoint = await t.store.log.checkpointAt(size);
    assert.ok(checkpoint, `a checkpoint of size ${size}`);
    const opened = openCheckpoint(checkpoint.note, vkey, verifyRaw);
    assert.ok(opened.ok);
    return opened.value.checkpoint.root;
  };

  const assertProof = async (index: number, size: number | null, expectedSize: number) => {
    const query = size === null ? '' : `&tree_size=${size}`;
    const res = await t.app.inject({ method: 'GET', url: `/v1/log/proof/inclusion?record_id=${ids[index]}${query}` });
    assert.equal(res.statusCode, 200, res.body);
    const p = res.json();
    assert.equal(p.log_index, index);
    assert.equal(p.tree_size, expectedSize);
    const root = await rootAt(expectedSize);
    const verdict = verifyInclusion({ index, size: expectedSize, leafHash: decode(p.leaf_hash), proof: p.hashes.map(decode), root });
    assert.ok(verdict.ok, `leaf ${index} in ${expectedSize}: ${verdict.ok ? '' : verdict.error}`);
    assert.equal(p.checkpoint, (await t.store.log.checkpointAt(expectedSize))!.note);
  };

  test('proofs read before the tree grows across a tile boundary, and after it at every size', async () => {
    await grow(200); // one partial tile, 0/000.p/200
    for (const index of [0, 130, 199]) await assertProof(index, null, 200);
    const partial = await getBytes(t, '/v1/log/tile/0/000.p/200');
    assert.equal(partial.status, 200);

    await grow(400); // checkpoints at 456 and 600: tiles 0/000 and 0/001 full, 0/002.p/88, 1/000.p/2
    for (const index of [0, 130, 199, 255, 256, 300, 511, 512, 599]) await assertProof(index, null, 600);
    for (const index of [0, 199]) await assertProof(index, 200, 200);
    for (const index of [0, 199, 455]) await assertProof(index, 456, 456);
    const bundle = (await t.app.inject({ method: 'GET', url: `/v1/proof/${ids[199]}` })).json();
    assert.equal(bundle.inclusion_proof.tree_size, 600);
    const proof = bundle.inclusion_proof.hashes.map(decode);
    const direct = (await t.app.inject({ method: 'GET', url: `/v1/log/proof/inclusion?record_id=${ids[199]}` })).json();
    assert.ok(verifyInclusion({ index: 199, size: 600, leafHash: decode(direct.leaf_hash), proof, root: await rootAt(600) }).ok);

    for (const [from, to] of [[200, 600], [200, 456], [456, 600]] as const) {
      const res = (await t.app.inject({ method: 'GET', url: `/v1/log/proof/consistency?from=${from}&to=${to}` })).json();
      assert.ok(verifyConsistency({ size1: from, size2: to, root1: await rootAt(from), root2: await rootAt(to), proof: res.hashes.map(decode) }).ok, `${from} -> ${to}`);
    }

    const full = await getBytes(t, '/v1/log/tile/0/000');
    const again = await getBytes(t, '/v1/log/tile/0/000.p/200');
    assert.equal(full.status, 200);
    assert.ok(hashesEqual(again.bytes, partial.bytes) && hashesEqual(again.bytes, full.bytes.subarray(0, 200 * 32)), 'a partial tile is a prefix of its full tile');
    assert.equal((await getBytes(t, '/v1/log/tile/0/002.p/88')).status, 200);
    assert.equal((await getBytes(t, '/v1/log/tile/0/002.p/89')).status, 404);
    assert.equal((await getBytes(t, '/v1/log/tile/1/000.p/2')).status, 200);
    assert.equal((await getBytes(t, '/v1/log/tile/1/000.p/3')).status, 404);
  });
});
