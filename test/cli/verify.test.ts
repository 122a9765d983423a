import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { forEachStore } from '../support/stores.ts';
import { buildFixture, verify, writeVariant, type Fixture } from './verify-fixture.ts';

const BIN = fileURLToPath(new URL('../../bin/ledger.js', import.meta.url));

await forEachStore('ledger verify: what the public reads publish verifies', (kind) => {
  let f: Fixture;
  let base: string;
  before(async () => {
    f = await buildFixture(await kind.freshUrl());
    base = await f.t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await f.close();
    rmSync(f.dir, { recursive: true, force: true });
    await kind.cleanup();
  });

  test('an export file: every check passes, signatures included', async () => {
    const { code, out } = await verify(f.exportPath);
    assert.equal(code, 0, out);
    assert.match(out, /ok   signature\s+2 checked, 0 failed/);
    assert.match(out, /ok   chain_hash\s+6 checked, 0 failed/);
    assert.match(out, /ok   head\s+the last record is the export header's head \(seq 6/);
    assert.match(out, new RegExp(`verdict: PASS: 6 records of ${f.handle}`));
  });

  test('an export URL, streamed', async () => {
    const { code, out } = await verify(`${base}/v1/export?agent=${f.handle}`);
    assert.equal(code, 0, out);
    assert.match(out, /verdict: PASS: 6 records/);
  });

  test('a chain URL: its pages are followed to the head', async () => {
    const { code, out } = await verify(`${base}/v1/agents/${f.handle}/chain?limit=2`);
    assert.equal(code, 0, out);
    assert.match(out, /ok   document\s+6 checked/);
    assert.match(out, /verdict: PASS: 6 records/);
    const bare = await verify(`${base}/v1/agents/${f.handle}/chain?payloads=false&limit=4`);
    assert.equal(bare.code, 0, bare.out);
    assert.match(bare.out, /skip content_hash\s+0 checked, 0 failed, 6 not checked/);
  });

  test('a chain URL starting mid-chain says the first link is not checked', async () => {
    const { code, out } = await verify(`${base}/v1/agents/${f.handle}/chain?after_seq=3`);
    assert.equal(code, 0, out);
    assert.match(out, /note start\s+the walk starts after seq 3/);
    assert.match(out, /verdict: PASS: 3 records/);
  });

  test('a proof bundle, by URL and as a file, signed and unsigned', async () => {
    for (const id of [f.ids[0]!, f.ids[2]!, f.ids[3]!]) {
      const url = `${base}/v1/proof/${id}`;
      const byUrl = await verify(url);
      assert.equal(byUrl.code, 0, byUrl.out);
      const file = writeVariant(f.dir, `proof-${id}.json`, await (await fetch(url)).text());
      const byFile = await verify(file);
      assert.equal(byFile.code, 0, byFile.out);
    }
    const signed = await verify(`${base}/v1/proof/${f.ids[2]}`);
    assert.match(signed.out, /ok   signature\s+1 checked, 0 failed/);
    assert.match(signed.out, /note inclusion_proof/);
  });

  test('pinned heads: kept, rewritten, or not reached', async () => {
    const lines = f.exportText.trim().split('\n').map((l) => JSON.parse(l));
    const third = lines[3].chain_hash as string;
    assert.equal((await verify(f.exportPath, { pins: [`3:${third}`] })).code, 0);
    const rewritten = await verify(f.exportPath, { pins: [`3:${'a'.repeat(64)}`] });
    assert.equal(rewritten.code, 1, rewritten.out);
    assert.match(rewritten.out, /FAIL pin .*\n\s+seq 3: pinned chain_hash a{64}, the chain has [0-9a-f]{64}: history was rewritten/);
    const beyond = await verify(f.exportPath, { pins: [`99:${third}`] });
    assert.equal(beyond.code, 1);
    assert.match(beyond.out, /seq 99: the chain.s head \(seq 6\) is behind this pinned record/);
    assert.equal((await verify(f.exportPath, { pins: ['3:nothex'] })).code, 2);
  });

  test('unusable input exits 2', async () => {
    assert.equal((await verify(`${f.dir}/no-such-file`)).code, 2);
    assert.equal((await verify(writeVariant(f.dir, 'garbage.json', 'not json at all'))).code, 2);
    assert.equal((await verify(writeVariant(f.dir, 'other.json', '{"object":"list"}'))).code, 2);
    assert.equal((await verify(writeVariant(f.dir, 'empty.json', ''))).code, 2);
    const missing = await verify(`${base}/v1/export?agent=nobody-at-all`);
    assert.equal(missing.code, 2);
    assert.match(missing.out, /answered 404 \(not_found/);
    assert.equal((await verify('http://127.0.0.1:1/v1/transparency')).code, 2);
  });

  test('the `ledger verify` command: exit 0, 1 and 2', async () => {
    const run = (args: string[]) => spawnSync(process.execPath, [BIN, 'verify', ...args], { encoding: 'utf8' });
    const ok = run([f.exportPath]);
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /verdict: PASS/);
    const bad = run([writeVariant(f.dir, 'bad.ndjson', f.exportText.replace('"seq":"4"', '"seq":"7"'))]);
    assert.equal(bad.status, 1, bad.stdout + bad.stderr);
    assert.match(bad.stdout, /verdict: FAIL/);
    const unusable = run([`${f.dir}/nothing-here`]);
    assert.equal(unusable.status, 2, unusable.stdout + unusable.stderr);
  });
});

describe('ledger verify on worker threads', () => {
  test('a long export is split across workers and joined in order; a break at a chunk boundary is found', async () => {
    const { seed } = await import('../../bench/seed.ts');
    const { openStore } = await import('../../src/store/open.ts');
    const { testApp } = await import('../support/app.ts');
    const f = buildTempDir();
    // A file, not :memory:: the seed writes its rows on a connection of its own.
    const url = `sqlite:${join(f, 'seeded.db')}`;
    const store = openStore(url);
    await store.migrate();
    const t = await testApp(store);
    try {
      const seeded = await seed(store, url, { whale: 4500, smallAgents: 0, perSmall: 0, signedEvery: 500 });
      const text = (await t.app.inject({ url: `/v1/export?agent=${seeded.whale.handle}` })).body;
      const path = writeVariant(f, 'long.ndjson', text);
      const good = await verify(path, { workers: 2 });
      assert.equal(good.code, 0, good.out);
      assert.match(good.out, /4500 records in .* 2 worker threads/);
      assert.match(good.out, /ok   signature\s+9 checked/);
      // Swap records 2000 and 2001 (the seam between the first two chunks).
      const lines = text.split('\n');
      [lines[2000], lines[2001]] = [lines[2001]!, lines[2000]!];
      const swapped = await verify(writeVariant(f, 'swapped.ndjson', lines.join('\n')), { workers: 2 });
      assert.equal(swapped.code, 1, swapped.out);
      assert.match(swapped.out, /FAIL seq[^\n]*\n\s+seq 2000 dec_\w+ line 2002: expected seq 2002, found 2000\n\s+seq 2001 dec_\w+ line 2001: expected seq 2000, found 2001/);
    } finally {
      rmSync(f, { recursive: true, force: true });
      await t.close();
      await store.close();
    }
  });
});

function buildTempDir(): string {
  return mkdtempSync(join(tmpdir(), 'ledger-verify-long-'));
}
