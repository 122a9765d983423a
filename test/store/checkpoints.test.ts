// WAL checkpoints on the SQLite store run on a worker thread (checkpointer.ts): a migration leaves
// the WAL empty; under steady writes the WAL is copied into the database file and starts over,
// so it stays small; every record survives a reopen; and a checkpointer whose worker fails hands
// checkpoints back to SQLite.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from '../../src/store/sqlite/driver.ts';
import { Checkpointer } from '../../src/store/sqlite/checkpointer.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { postDecision, testApp } from '../support/app.ts';
import { assertChainVerifies, validDecision } from '../api/record-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'ledger-checkpoints-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const walBytes = (path: string) => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;

const WAVES = 40;
const PER_WAVE = 20;

/** Posts WAVES × PER_WAVE decisions, a wave at a time; returns the largest WAL seen after a wave. */
async function writeWaves(path: string, store: SqliteStore): Promise<{ agent: { agentId: string; handle: string }; largestWal: number }> {
  const t = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '100000' } });
  const agent = await t.agent();
  let largestWal = 0;
  for (let wave = 0; wave < WAVES; wave++) {
    const answers = await Promise.all(Array.from({ length: PER_WAVE }, (_, i) =>
      postDecision(t, agent.secret, validDecision({ thesis: `wave ${wave} decision ${i} `.repeat(40) }))));
    for (const res of answers) assert.equal(res.statusCode, 201, res.body);
    largestWal = Math.max(largestWal, walBytes(path));
  }
  await t.close();
  return { agent, largestWal };
}

test('steady appends keep the WAL short, and every record survives a reopen', async () => {
  const path = join(dir, 'steady.db');
  const store = new SqliteStore(path, { every: 8, drainAtFrames: 64 });
  await store.migrate();
  assert.equal(walBytes(path), 0, 'the new schema was copied out of the WAL');
  const { agent, largestWal } = await writeWaves(path, store);
  const { runs } = store.checkpointer!.stats;
  await store.close();

  assert.ok(runs > 10, `checkpoints ran ${runs} times`);
  // 800 records of about 1.5 kB with their index and idempotency pages: some 3,000 pages without checkpoints.
  assert.ok(largestWal < 2 * 1024 * 1024, `the WAL grew to ${largestWal} bytes`);
  const reopened = new SqliteStore(path);
  await reopened.migrate();
  await assertChainVerifies(reopened, agent, WAVES * PER_WAVE);
  await reopened.close();
});

test('a reader that holds old frames makes appends drain the WAL, but never stops them', async () => {
  const path = join(dir, 'reader.db');
  const store = new SqliteStore(path, { every: 8, drainAtFrames: 64 });
  await store.migrate();
  const reader = new Database(path);
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM records').get(); // holds this snapshot until COMMIT
  const { agent } = await writeWaves(path, store);
  reader.exec('COMMIT');
  reader.close();
  const { drains } = store.checkpointer!.stats;
  await assertChainVerifies(store, agent, WAVES * PER_WAVE);
  await store.close();
  assert.ok(drains > 0, 'appends waited for a drain');
});

test('a checkpointer whose worker fails gives the writer SQLite\'s automatic checkpoints back', async () => {
  const restored: number[] = [];
  const checkpointer = new Checkpointer(join(dir, 'no-such-database.db'), (pages) => restored.push(pages), { every: 1, drainAtFrames: 64 });
  checkpointer.afterAppend(1);
  for (let i = 0; i < 200 && checkpointer.active; i++) await new Promise((r) => setTimeout(r, 25));
  assert.equal(checkpointer.active, false);
  assert.deepEqual(restored, [1000]);
  await checkpointer.beforeAppend(); // never waits on a failed worker
  await checkpointer.close();
});
