// `ledger verify` on the global log, on SQLite and PostgreSQL: the log read from the service
// (URL) or mirrored into a directory verifies; a tampered tile, entry bundle or checkpoint, a
// forged pinned checkpoint and a tampered proof bundle each fail, naming what is at fault.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { signCheckpoint } from '../../src/core/note.ts';
import { tilePath, tilesForSize } from '../../src/core/tiles.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, testApp, type TestApp } from '../support/app.ts';
import { verify } from '../cli/verify-fixture.ts';
import { record, testIntegrator, testLogKey, TEST_ORIGIN } from './helpers.ts';
import type { LogKey } from '../../src/log/key.ts';

await forEachStore('ledger verify on the global log', (kind) => {
  let t: TestApp;
  let key: LogKey;
  let base: string;
  let dir: string;
  let mirror: string;
  let firstRecord: string;
  let pin256: string;

  /** A copy of the mirror with `path` changed by `change`. */
  const tampered = (name: string, path: string, change: (b: Buffer) => Buffer): string => {
    const copy = join(dir, name);
    rmSync(copy, { recursive: true, force: true });
    mkdirSync(copy);
    for (const p of paths) {
      mkdirSync(dirname(join(copy, p)), { recursive: true });
      const bytes = readFileSync(join(mirror, p));
      writeFileSync(join(copy, p), p === path ? change(Buffer.from(bytes)) : bytes);
    }
    return copy;
  };
  let paths: string[] = [];

  before(async () => {
    ({ key } = await testLogKey());
    t = await testApp(await kind.open(), { env: { LEDGER_WRITE_LIMIT_PER_MIN: '100000', LEDGER_READ_LIMIT_PER_MIN: '100000' } });
    const a = await t.agent();
    const b = await t.agent();
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) ids.push(...await record(t, a.secret, 1), ...await record(t, b.secret, 1));
    firstRecord = ids[0]!;
    const integrator = testIntegrator(t.store, key);
    assert.equal(await integrator.integratePending(), 300);
    await integrator.stop();
    base = `${await t.app.listen({ port: 0, host: '127.0.0.1' })}/v1`;

    dir = mkdtempSync(join(tmpdir(), 'ledger-logverify-'));
    mirror = join(dir, 'mirror');
    paths = ['checkpoint', ...tilesForSize(300).map((tile) => {
      const p = tilePath(tile);
      assert.ok(p.ok);
      return p.value;
    })];
    for (const p of paths) {
      const res = await fetch(`${base}/log/${p}`);
      assert.equal(res.status, 200, p);
      mkdirSync(dirname(join(mirror, p)), { recursive: true });
      writeFileSync(join(mirror, p), new Uint8Array(await res.arrayBuffer()));
    }
    pin256 = join(dir, 'pin-256.checkpoint');
    writeFileSync(pin256, (await t.store.log.checkpointAt(256))!.note);
  });
  after(async () => {
    await closeTestApp(t, kind);
    rmSync(dir, { recursive: true, force: true });
  });

  test('the log from the service verifies under its published vkey, with a pinned checkpoint', async () => {
    const r = await verify(`${base}/log`, { pins: [pin256] });
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /ok +checkpoint .*published on/);
    assert.match(r.out, /ok +chain_order/);
    assert.match(r.out, /ok +pinned_checkpoint/);
    assert.match(r.out, /verdict: PASS: 300 entries/);
  });

  test('a mirrored directory verifies with --vkey, and says so when no vkey is given', async () => {
    const r = await verify(mirror, { vkey: key.vkey });
    assert.equal(r.code, 0, r.out);
    const none = await verify(mirror);
    assert.equal(none.code, 0, none.out);
    assert.match(none.out, /note +checkpoint .*not checked: no vkey/);
  });

  test('a tampered hash tile is caught and named', async () => {
    const copy = tampered('tile', 'tile/0/000', (b) => {
      b[5 * 32] = b[5 * 32]! ^ 1;
      return b;
    });
    const r = await verify(copy, { vkey: key.vkey });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /FAIL tiles[^\n]*\n\s+tile\/0\/000 hash 5: is not the leaf hash of log index 5/);
  });

  test('a tampered entry bundle is caught and named', async () => {
    const copy = tampered('entries', 'tile/entries/001.p/44', (b) => Buffer.from(b.toString('latin1').replace(/"symbol"|"recorded_at":"2/, (m) => m.replace('2', '3')), 'latin1'));
    const r = await verify(copy, { vkey: key.vkey });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /FAIL tiles[^\n]*\n\s+tile\/0\/001\.p\/44 hash 0: is not the leaf hash of log index 256/);
    assert.match(r.out, /FAIL root/);
  });

  test('a tampered checkpoint is caught', async () => {
    const copy = tampered('checkpoint', 'checkpoint', (b) => Buffer.from(b.toString('utf8').replace('\n300\n', '\n299\n')));
    const r = await verify(copy, { vkey: key.vkey });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /FAIL checkpoint +the checkpoint does not verify under the log key/);
    const other = await testLogKey();
    const wrongKey = await verify(mirror, { vkey: other.key.vkey });
    assert.equal(wrongKey.code, 1, wrongKey.out);
  });

  test('a pinned checkpoint of another history fails, naming the file', async () => {
    const forged = signCheckpoint({ origin: TEST_ORIGIN, size: 256, root: new Uint8Array(32).fill(7) }, key.publicKey, key.sign);
    assert.ok(forged.ok);
    const path = join(dir, 'forged.checkpoint');
    writeFileSync(path, forged.value);
    const r = await verify(mirror, { vkey: key.vkey, pins: [path] });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /FAIL pinned_checkpoint[^\n]*\n\s+[^\n]*forged\.checkpoint: the log's first 256 entries do not give the pinned root/);
    const viaProof = await verify(`${base}/proof/${firstRecord}`, { pins: [path] });
    assert.equal(viaProof.code, 1, viaProof.out);
    assert.match(viaProof.out, /FAIL pinned_checkpoint[^\n]*\n\s+[^\n]*forged\.checkpoint: no consistent history from size 256 to 300/);
  });

  test('a proof bundle\'s inclusion proof verifies, and a tampered one is named by record and index', async () => {
    const r = await verify(`${base}/proof/${firstRecord}`, { pins: [pin256] });
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /ok +inclusion_proof +the record is log index 0 in the checkpoint of size 300/);
    assert.match(r.out, /ok +pinned_checkpoint/);

    const bundle = await (await fetch(`${base}/proof/${firstRecord}`)).json() as { inclusion_proof: { hashes: string[] } };
    bundle.inclusion_proof.hashes[1] = bundle.inclusion_proof.hashes[0]!;
    const path = join(dir, 'bundle.json');
    writeFileSync(path, JSON.stringify(bundle));
    const bad = await verify(path, { vkey: key.vkey });
    assert.equal(bad.code, 1, bad.out);
    assert.match(bad.out, new RegExp(`FAIL inclusion_proof[^\\n]*\\n\\s+record ${firstRecord} at log index 0: the record's chain entry is not in the checkpoint's tree`));
  });
});
