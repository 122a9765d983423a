// `ledger verify` flags a chain whose head is behind records published elsewhere (issue 16,
// finding 5): an export cut back so that what is left still verifies on its own, checked against a
// pinned head, a proof bundle or a /v1/ledger page seen before (--seen), and, for an export or chain
// read from a service, against that service's own /v1/ledger feed.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { forEachStore } from '../support/stores.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { PostgresStore } from '../../src/store/postgres/store.ts';
import { buildFixture, verify, writeVariant, type Fixture } from './verify-fixture.ts';

type Line = { entry?: { seq: string }; chain_hash: string; head?: { seq: number; chain_hash: string; recorded_at: string | null }; records?: number };

/** The fixture's export cut back to `seq` records, its header saying so: it verifies on its own. */
function cutBack(f: Fixture, seq: number): string {
  const lines = f.exportText.trim().split('\n').map((l) => JSON.parse(l) as Line);
  const header = lines[0]!;
  const kept = lines.slice(1, seq + 1);
  const last = kept[kept.length - 1]!;
  header.head = { seq, chain_hash: last.chain_hash, recorded_at: header.head!.recorded_at };
  header.records = seq;
  return writeVariant(f.dir, `cut-${seq}.ndjson`, `${[header, ...kept].map((l) => JSON.stringify(l)).join('\n')}\n`);
}

/** As an operator with SQL access would: drop the guard trigger, move the head back to `seq`. */
async function moveHeadBack(f: Fixture, seq: number): Promise<void> {
  const { store } = f.t;
  const agent = await store.findAgentByHandle(f.handle);
  const record = await store.findRecord(f.ids[seq - 1]!);
  if (store instanceof SqliteStore) {
    store.db.exec('DROP TRIGGER chain_heads_only_advance');
    store.db.prepare('UPDATE chain_heads SET seq = ?, hash = ? WHERE agent_id = ?').run(seq, record!.chainHash, agent!.id);
  } else {
    const pool = (store as PostgresStore).pool as pg.Pool;
    await pool.query('DROP TRIGGER chain_heads_only_advance ON chain_heads');
    await pool.query('UPDATE chain_heads SET seq = $1, hash = $2 WHERE agent_id = $3', [seq, record!.chainHash, agent!.id]);
  }
}

await forEachStore('ledger verify: a head behind records seen elsewhere', (kind) => {
  let f: Fixture;
  let base: string;
  let sixth: string;
  before(async () => {
    f = await buildFixture(await kind.freshUrl());
    base = await f.t.app.listen({ port: 0, host: '127.0.0.1' });
    sixth = (JSON.parse(f.exportText.trim().split('\n')[6]!) as Line).chain_hash;
  });
  after(async () => {
    await f.close();
    rmSync(f.dir, { recursive: true, force: true });
    await kind.cleanup();
  });

  test('an export cut back verifies on its own, and fails against a head pinned beyond it', async () => {
    const cut = cutBack(f, 4);
    assert.equal((await verify(cut)).code, 0, 'what is left is a valid chain: only outside evidence can tell');
    const pinned = await verify(cut, { pins: [`6:${sixth}`] });
    assert.equal(pinned.code, 1, pinned.out);
    assert.match(pinned.out, /FAIL pin[^\n]*\n\s+seq 6: the chain's head \(seq 4\) is behind this pinned record: records published before are missing \(the head was moved back or the chain cut\)/);
  });

  test('--seen: a proof bundle or a /v1/ledger page of a later record', async () => {
    const cut = cutBack(f, 4);
    const proofFile = writeVariant(f.dir, 'proof-6.json', await (await fetch(`${base}/v1/proof/${f.ids[5]}`)).text());
    const byProof = await verify(cut, { seen: [proofFile] });
    assert.equal(byProof.code, 1, byProof.out);
    assert.match(byProof.out, new RegExp(`FAIL head_behind[^\\n]*\\n\\s+seq 6 \\(proof bundle ${proofFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\): seen with chain_hash ${sixth}, but the chain ends at seq 4`));
    const byLedger = await verify(cut, { seen: [`${base}/v1/ledger?agent=${f.handle}`] });
    assert.equal(byLedger.code, 1, byLedger.out);
    assert.match(byLedger.out, /FAIL head_behind[^\n]*\n\s+seq 5 \(\/v1\/ledger page [^)]+\): seen with chain_hash [0-9a-f]{64}, but the chain ends at seq 4/);
    const whole = await verify(f.exportPath, { seen: [proofFile, `${base}/v1/ledger?agent=${f.handle}`] });
    assert.equal(whole.code, 0, whole.out);
    assert.match(whole.out, /ok   head_behind\s+7 record\(s\) seen elsewhere are in the chain, unchanged/);
    const rewritten = await verify(f.exportPath, { seen: [writeVariant(f.dir, 'proof-6-bad.json', (await (await fetch(`${base}/v1/proof/${f.ids[5]}`)).text()).replaceAll(sixth, 'b'.repeat(64)))] });
    assert.equal(rewritten.code, 1, rewritten.out);
    assert.match(rewritten.out, /seq 6 \(proof bundle [^)]+\): seen with chain_hash b{64}, the chain has [0-9a-f]{64}: history was rewritten/);
    assert.equal((await verify(f.exportPath, { seen: [writeVariant(f.dir, 'not-seen.json', '{"object":"agent"}')] })).code, 2);
  });

  test('a service whose head was moved back: its export and chain fail against its own /v1/ledger', async () => {
    const healthy = await verify(`${base}/v1/export?agent=${f.handle}`);
    assert.equal(healthy.code, 0, healthy.out);
    assert.match(healthy.out, /ok   head_behind\s+1 record\(s\) seen elsewhere are in the chain, unchanged/);
    await moveHeadBack(f, 4);
    for (const url of [`${base}/v1/export?agent=${f.handle}`, `${base}/v1/agents/${f.handle}/chain`]) {
      const { code, out } = await verify(url);
      assert.equal(code, 1, out);
      assert.match(out, /FAIL head_behind[^\n]*\n\s+seq 6 \(the service's \/v1\/ledger\): seen with chain_hash [0-9a-f]{64}, but the chain ends at seq 4/);
    }
  });
});
