// The global log wired into the service, on SQLite and PostgreSQL: records are integrated in
// chain order, tiles and entry bundles are the C2SP bytes of one tree, the checkpoint is signed
// by the log key, and every proof the endpoints give verifies with the core. On SQLite, two
// processes on one file both integrate: the one that commits second lost a race, not an error.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { b64Decode } from '../../src/core/base64.ts';
import { verifyRaw } from '../../src/core/ed25519.ts';
import { hashesEqual, leafHash, MemoryTree, treeHead, verifyConsistency, verifyInclusion } from '../../src/core/merkle.ts';
import { openCheckpoint } from '../../src/core/note.ts';
import { parseEntryBundle, parseTile } from '../../src/core/tiles.ts';
import { verifyTlogProof } from '../../src/core/tlog-proof.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, testApp, type TestApp } from '../support/app.ts';
import { assertError } from '../api/record-helpers.ts';
import { getBytes, record, testIntegrator, testLogKey } from './helpers.ts';
import type { LogKey } from '../../src/log/key.ts';
import type { Vkey } from '../../src/core/note.ts';
import { openStore } from '../../src/store/open.ts';
import type { SqliteStore } from '../../src/store/sqlite/store.ts';

const decode = (s: string) => {
  const b = b64Decode(s);
  assert.ok(b);
  return b;
};

await forEachStore('the global log', (kind) => {
  let t: TestApp;
  let key: LogKey;
  let vkey: Vkey;
  const ids: { a: string[]; b: string[] } = { a: [], b: [] };

  before(async () => {
    ({ key, vkey } = await testLogKey());
    const store = await kind.open();
    t = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '100000' } });
  });
  after(() => closeTestApp(t, kind));

  test('an empty log publishes no checkpoint; /transparency still names the log key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/log/checkpoint' });
    assertError(res, 404, 'not_found');
    const tr = (await t.app.inject({ method: 'GET', url: '/v1/transparency' })).json();
    assert.equal(tr.log.checkpoint, null);
    assert.equal(tr.log.tree_size, 0);
  });

  test('before integration /proof has inclusion_proof null and says when to look again', async () => {
    const a = await t.agent();
    const b = await t.agent();
    // Two agents interleaved, 300 records: one full tile and a partial one.
    for (let i = 0; i < 150; i++) {
      ids.a.push(...await record(t, a.secret, 1));
      ids.b.push(...await record(t, b.secret, 1));
    }
    const proof = (await t.app.inject({ method: 'GET', url: `/v1/proof/${ids.a[0]}` })).json();
    assert.equal(proof.inclusion_proof, null);
    assert.equal(proof.inclusion_pending.status, 'pending');
    assert.ok(proof.inclusion_pending.retry_after_seconds >= 1);
  });

  test('the integrator appends every record in chain order and signs consistent checkpoints', async () => {
    const integrator = testIntegrator(t.store, key);
    assert.equal(await integrator.integratePending(), 300);
    await integrator.stop();
    for (const list of [ids.a, ids.b]) {
      const indexes = await Promise.all(list.map(async (id) => (await t.store.log.leafOf(id))!.logIndex));
      for (let i = 1; i < indexes.length; i++) assert.ok(indexes[i]! > indexes[i - 1]!, 'seq k+1 is after seq k');
    }
    const first = await t.store.log.checkpointAt(256);
    const latest = await t.store.log.latestCheckpoint();
    assert.ok(first, 'a batch closes at 256 entries');
    assert.equal(latest?.treeSize, 300);
    const c1 = openCheckpoint(first.note, vkey, verifyRaw);
    const c2 = openCheckpoint(latest.note, vkey, verifyRaw);
    assert.ok(c1.ok && c2.ok);
    const res = (await t.app.inject({ method: 'GET', url: '/v1/log/proof/consistency?from=256&to=300' })).json();
    assert.ok(verifyConsistency({ size1: 256, size2: 300, root1: c1.value.checkpoint.root, root2: c2.value.checkpoint.root, proof: res.hashes.map(decode) }).ok);
  });

  test('the checkpoint, tiles and entry bundles are one tree under the log key', async () => {
    const cp = await t.app.inject({ method: 'GET', url: '/v1/log/checkpoint' });
    assert.equal(cp.statusCode, 200);
    assert.equal(cp.headers['content-type'], 'text/plain; charset=utf-8');
    assert.match(String(cp.headers['cache-control']), /max-age=5/);
    const opened = openCheckpoint(cp.body, vkey, verifyRaw);
    assert.ok(opened.ok, opened.ok ? '' : opened.error);
    assert.equal(opened.value.checkpoint.size, 300);

    const full = await getBytes(t, '/v1/log/tile/0/000');
    assert.equal(full.status, 200);
    assert.equal(full.headers['content-type'], 'application/octet-stream');
    assert.match(String(full.headers['cache-control']), /immutable/);
    const partial = await getBytes(t, '/v1/log/tile/0/001.p/44');
    const level1 = await getBytes(t, '/v1/log/tile/1/000.p/1');
    const bundle0 = await getBytes(t, '/v1/log/tile/entries/000');
    const bundle1 = await getBytes(t, '/v1/log/tile/entries/001.p/44');
    for (const r of [partial, level1, bundle0, bundle1]) assert.equal(r.status, 200);

    const tile0 = parseTile(full.bytes, 256);
    const tile1 = parseTile(partial.bytes, 44);
    const entries0 = parseEntryBundle(bundle0.bytes, 256);
    const entries1 = parseEntryBundle(bundle1.bytes, 44);
    assert.ok(tile0.ok && tile1.ok && entries0.ok && entries1.ok);
    const entries = [...entries0.value, ...entries1.value];
    const hashes = [...tile0.value, ...tile1.value];
    entries.forEach((e, i) => assert.ok(hashesEqual(leafHash(e), hashes[i]!), `tile hash ${i} is the leaf hash of entry ${i}`));
    const top = parseTile(level1.bytes, 1);
    assert.ok(top.ok && hashesEqual(top.value[0]!, treeHead(tile0.value)));
    const tree = new MemoryTree();
    tree.appendData(entries);
    const root = tree.root();
    assert.ok(root.ok && hashesEqual(root.value, opened.value.checkpoint.root), 'the entries hash to the checkpoint root');
    // the first entry is the first record's canon_v1 chain entry
    assert.equal(JSON.parse(new TextDecoder().decode(entries[0]!)).id, ids.a[0]);

    // tiles the log has not reached, and malformed paths
    assert.equal((await getBytes(t, '/v1/log/tile/0/001')).status, 404);
    assert.equal((await getBytes(t, '/v1/log/tile/0/001.p/45')).status, 404);
    assert.equal((await getBytes(t, '/v1/log/tile/entries/002.p/1')).status, 404);
    assertError(await t.app.inject({ method: 'GET', url: '/v1/log/tile/0/1' }), 404, 'not_found', 'path');
  });

  test('inclusion proofs from /v1/log/proof/inclusion and /v1/proof verify with the core', async () => {
    const latest = await t.store.log.latestCheckpoint();
    const opened = openCheckpoint(latest!.note, vkey, verifyRaw);
    assert.ok(opened.ok);
    for (const id of [ids.a[0]!, ids.b[149]!, ids.a[130]!]) {
      const res = await t.app.inject({ method: 'GET', url: `/v1/log/proof/inclusion?record_id=${id}` });
      assert.equal(res.statusCode, 200);
      const p = res.json();
      assert.equal(p.tree_size, 300);
      assert.ok(verifyInclusion({ index: p.log_index, size: 300, leafHash: decode(p.leaf_hash), proof: p.hashes.map(decode), root: opened.value.checkpoint.root }).ok);

      const bundle = (await t.app.inject({ method: 'GET', url: `/v1/proof/${id}` })).json();
      const ip = bundle.inclusion_proof;
      assert.equal(ip.log_index, p.log_index);
      assert.equal(bundle.inclusion_pending, null);
      const leaf = leafHash(new TextEncoder().encode(JSON.stringify(bundle.record.entry)));
      assert.ok(hashesEqual(leaf, decode(p.leaf_hash)), 'the leaf is the bundle\'s canon_v1 chain entry');
      const v = verifyTlogProof(ip.tlog_proof, leaf, vkey, verifyRaw);
      assert.ok(v.ok, v.ok ? '' : v.error);
      assert.equal(ip.checkpoint, latest!.note);
    }
    // at an older tree size
    const old = (await t.app.inject({ method: 'GET', url: `/v1/log/proof/inclusion?record_id=${ids.a[0]}&tree_size=256` })).json();
    assert.equal(old.tree_size, 256);
    assert.equal(old.checkpoint, (await t.store.log.checkpointAt(256))!.note);
  });

  test('proof errors name their parameter', async () => {
    assertError(await t.app.inject({ method: 'GET', url: '/v1/log/proof/inclusion?record_id=dec_01JX0Z6Q4M8T2V7B3N5C9D1F0G' }), 404, 'not_found', 'record_id');
    assertError(await t.app.inject({ method: 'GET', url: `/v1/log/proof/inclusion?record_id=${ids.a[0]}&tree_size=301` }), 400, 'invalid_request', 'tree_size');
    assertError(await t.app.inject({ method: 'GET', url: '/v1/log/proof/inclusion?record_id=nope' }), 400, 'invalid_request', 'record_id');
    assertError(await t.app.inject({ method: 'GET', url: '/v1/log/proof/consistency?from=0&to=3' }), 400, 'invalid_request', 'from');
    assertError(await t.app.inject({ method: 'GET', url: '/v1/log/proof/consistency?from=3&to=301' }), 400, 'invalid_request', 'to');
    assertError(await t.app.inject({ method: 'GET', url: '/v1/log/proof/consistency?from=5&to=3' }), 400, 'invalid_request', 'from');
  });

  test('running in the background, it integrates new records within a second, without the writer waiting', async () => {
    const integrator = testIntegrator(t.store, key);
    integrator.start();
    try {
      const a = await t.agent();
      const started = Date.now();
      const [id] = await record(t, a.secret, 1);
      const writeMs = Date.now() - started;
      for (;;) {
        const leaf = await t.store.log.leafOf(id!);
        const latest = await t.store.log.latestCheckpoint();
        if (leaf && latest && latest.treeSize > leaf.logIndex) break;
        assert.ok(Date.now() - started < 3000, 'integrated within 3 s');
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(writeMs < Date.now() - started);
      const tr = (await t.app.inject({ method: 'GET', url: '/v1/transparency' })).json();
      assert.equal(tr.log.tree_size, 301);
      assert.equal(tr.log.vkey, key.vkey);
    } finally {
      await integrator.stop();
    }
  });

  if (kind.name === 'sqlite') {
    test('two processes on one file: the integrator that commits second lost a race, says so at info, and resumes from the stored log', async () => {
      const other = openStore(`sqlite:${(t.store as SqliteStore).path}`);
      await other.migrate();
      const errors: string[] = [];
      const notices: string[] = [];
      const late = testIntegrator(t.store, key, { onError: (m) => errors.push(m), onNotice: (m) => notices.push(m) });
      const early = testIntegrator(other, key);
      try {
        await late.integratePending(); // it holds the log as it stands now
        const size = (await t.store.log.latestCheckpoint())?.treeSize ?? 0;
        const a = await t.agent();
        await record(t, a.secret, 3);
        assert.equal(await early.integratePending(), 3, 'the other process integrates them first');
        late.start(); // its first batch is built on the size it holds: the commit is refused
        await record(t, a.secret, 2);
        for (const started = Date.now(); (await t.store.log.latestCheckpoint())?.treeSize !== size + 5; await new Promise((r) => setTimeout(r, 20))) {
          assert.ok(Date.now() - started < 5000, `integrated the last two within 5 s; errors: ${errors.join('; ')}`);
        }
        assert.deepEqual(errors, []);
        assert.equal(notices.length, 1, notices.join('\n'));
        assert.match(notices[0]!, new RegExp(`^log integrator: another process integrated first \\(the stored log has ${size + 3} leaves, this batch was built on ${size}\\); resuming from the stored log$`));
      } finally {
        await late.stop();
        await early.stop();
        await other.close();
      }
    });
  }
});
