// The integrator dies with SIGKILL at random points while records keep coming (child processes
// on a shared database, small batches so many kills land inside a transaction): afterwards the
// log holds every record exactly once, in chain order, every stored checkpoint is a prefix of the
// one tree (so all are consistent), and `ledger verify` passes. On PostgreSQL, of two integrators
// only one holds the log; when it is killed the other takes over.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { verifyRaw } from '../../src/core/ed25519.ts';
import { hashesEqual, MemoryTree } from '../../src/core/merkle.ts';
import { openCheckpoint, parseVkey } from '../../src/core/note.ts';
import { leafData } from '../../src/log/integrator.ts';
import { loadLogKey } from '../../src/log/key.ts';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import type { SqliteStore } from '../../src/store/sqlite/store.ts';
import type { PostgresStore } from '../../src/store/postgres/store.ts';
import { forEachStore, type StoreKind } from '../support/stores.ts';
import { testApp, type TestApp } from '../support/app.ts';
import { verify } from '../cli/verify-fixture.ts';
import { record, testIntegrator, TEST_ORIGIN } from './helpers.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

type Child = { child: ChildProcess; output: () => string; holding: Promise<void>; exited: Promise<void> };

/** A log key generated in `keyDir` and saved as `<dir>/<name>`, and an app on a fresh database. */
async function fixture(kind: StoreKind, dir: string, name: string, keyDir: string) {
  const generated = await loadLogKey({ keyFile: null, dataDir: keyDir, origin: TEST_ORIGIN });
  assert.ok(generated.ok);
  const keyFile = join(dir, name);
  renameSync(generated.value.source.path, keyFile);
  const databaseUrl = await kind.freshUrl();
  const store = openStore(databaseUrl);
  await store.migrate();
  const t = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '1000000', LEDGER_READ_LIMIT_PER_MIN: '1000000' } });
  return { keyFile, databaseUrl, store, t };
}

function integratorProcess(databaseUrl: string, keyFile: string): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/log/integrator-child.ts', databaseUrl, keyFile], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_ORIGIN: TEST_ORIGIN },
  });
  let output = '';
  const holding = new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/holding \d+/.test(output)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { child, output: () => output, holding, exited };
}

async function kill(c: Child): Promise<void> {
  c.child.kill('SIGKILL');
  await c.exited;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function storedCheckpoints(store: LedgerStore): Promise<string[]> {
  if ('db' in store) return ((store as SqliteStore).db.prepare('SELECT note FROM log_checkpoints ORDER BY tree_size').all() as { note: string }[]).map((r) => r.note);
  return ((await (store as PostgresStore).pool.query('SELECT note FROM log_checkpoints ORDER BY tree_size')).rows as { note: string }[]).map((r) => r.note);
}

/** Every record once, each agent in chain order, every checkpoint signed and a prefix of one tree, and ledger verify passes. */
async function assertLogIntact(t: TestApp, keyFile: string, ids: string[]): Promise<void> {
  const key = await loadLogKey({ keyFile, dataDir: '.', origin: TEST_ORIGIN });
  assert.ok(key.ok);
  const integrator = testIntegrator(t.store, key.value.key);
  await integrator.integratePending(); // takes the hold: checks the stored tiles against the latest checkpoint
  await integrator.stop();
  const entries = await t.store.log.entries(0, ids.length + 10);
  assert.equal(entries.length, ids.length, 'every record is in the log');
  assert.deepEqual(new Set(entries.map((r) => r.id)), new Set(ids), 'each exactly once');
  const tree = new MemoryTree();
  tree.appendData(entries.map(leafData));
  const notes = await storedCheckpoints(t.store);
  assert.ok(notes.length > 1);
  const vkey = parseVkey(key.value.key.vkey);
  assert.ok(vkey.ok);
  for (const note of notes) {
    const opened = openCheckpoint(note, vkey.value, verifyRaw);
    assert.ok(opened.ok, 'signed by the log key');
    const root = tree.root(opened.value.checkpoint.size);
    assert.ok(root.ok && hashesEqual(root.value, opened.value.checkpoint.root), `checkpoint ${opened.value.checkpoint.size} is a prefix of the log`);
  }
  const base = `${await t.app.listen({ port: 0, host: '127.0.0.1' })}/v1`;
  const r = await verify(`${base}/log`);
  assert.equal(r.code, 0, r.out);
}

await forEachStore('the integrator killed mid-integration', (kind) => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-crash-'));
  after(async () => {
    await kind.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  test('SIGKILL at random points while records arrive: nothing lost, no inconsistent checkpoint', async () => {
    const { keyFile, databaseUrl, store, t } = await fixture(kind, dir, `key-${kind.name}.pem`, dir);
    try {
      const agents = [await t.agent(), await t.agent(), await t.agent()];
      const ids: string[] = [];
      let writing = true;
      const writer = (async () => {
        for (let i = 0; writing; i++) ids.push(...await record(t, agents[i % 3]!.secret, 1));
      })();
      let kills = 0;
      for (let round = 0; round < 6; round++) {
        const c = integratorProcess(databaseUrl, keyFile);
        await c.holding;
        await sleep(100 + Math.floor(Math.random() * 400));
        await kill(c);
        kills++;
      }
      writing = false;
      await writer;
      assert.equal(kills, 6);
      const integrated = (await t.store.log.latestCheckpoint())?.treeSize ?? 0;
      assert.ok(integrated > 0, 'the killed integrators did integrate');
      await assertLogIntact(t, keyFile, ids);
    } finally {
      await t.close();
      await store.close();
    }
  });

  if (kind.name === 'postgres') {
    test('two integrators: only one holds the log; the other takes over when it is killed', async () => {
      const { keyFile, databaseUrl, store, t } = await fixture(kind, dir, 'key-takeover.pem', join(dir, 'takeover'));
      const a = integratorProcess(databaseUrl, keyFile);
      const b = integratorProcess(databaseUrl, keyFile);
      try {
        const agent = await t.agent();
        const first = await Promise.race([a.holding.then(() => a), b.holding.then(() => b)]);
        const second = first === a ? b : a;
        const ids = await record(t, agent.secret, 40);
        await sleep(600);
        assert.doesNotMatch(second.output(), /holding/, 'the second integrator waits');
        assert.equal((await t.store.log.latestCheckpoint())?.treeSize, 40, 'the holder integrated');
        await kill(first);
        await second.holding; // PostgreSQL frees the dead session's lock
        ids.push(...await record(t, agent.secret, 40));
        for (let i = 0; (await t.store.log.latestCheckpoint())?.treeSize !== 80; i++) {
          assert.ok(i < 200, 'the new holder integrates');
          await sleep(25);
        }
        await kill(second);
        await assertLogIntact(t, keyFile, ids);
      } finally {
        for (const c of [a, b]) if (c.child.exitCode === null) await kill(c);
        await t.close();
        await store.close();
      }
    });
  }
});
