// The SQLite WAL is bounded in bytes under bursts of large records (issue 16, finding 8: it grew
// to 1.6 GB): a burst leaves it under 16 MiB once quiet, and two processes writing one file keep
// it near the truncation bound (checkpointer.ts; the bounds are in docs/operations.md).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import Database from '../../src/store/sqlite/driver.ts';
import { postDecision, testApp } from '../support/app.ts';
import { assertChainVerifies } from '../api/record-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'ledger-wal-bound-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const MiB = 1024 * 1024;
const walBytes = (path: string) => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
const quotes = '"'.repeat(60_000); // about 120 kB of content once escaped: the finding's records
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('after a burst of large records the WAL file returns under 16 MiB', async (t0) => {
  const path = join(dir, 'burst.db');
  const store = new SqliteStore(path); // the default policy: the documented bounds
  await store.migrate();
  const t = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '1000000' } });
  const agent = await t.agent();
  let largest = 0;
  const watch = setInterval(() => (largest = Math.max(largest, walBytes(path))), 5);
  let next = 0;
  const writer = async () => {
    while (next < 500) {
      const i = next++;
      const res = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', metadata: { quotes, i } });
      assert.equal(res.statusCode, 201, res.body);
    }
  };
  await Promise.all(Array.from({ length: 64 }, writer));
  clearInterval(watch);
  assert.ok(largest > 16 * MiB, `the burst filled the WAL (${largest} bytes), or this test proves nothing`);
  assert.ok(largest <= 64 * MiB + 8 * MiB, `during the burst the WAL stayed near 64 MiB: ${largest} bytes`);
  let quiet = walBytes(path);
  for (let waited = 0; waited < 10_000 && quiet > 16 * MiB; waited += 100) {
    await sleep(100);
    quiet = walBytes(path);
  }
  assert.ok(quiet <= 16 * MiB, `once quiet the WAL is back under 16 MiB: ${quiet} bytes`);
  t0.diagnostic(`largest WAL during the burst ${(largest / MiB).toFixed(1)} MiB; once quiet ${(quiet / MiB).toFixed(1)} MiB`);
  await assertChainVerifies(store, agent, 500);
  await t.close();
  await store.close();
});

function child(path: string, count: number, policy: object): { proc: ChildProcess; ready: Promise<void>; done: Promise<void> } {
  const script = fileURLToPath(new URL('./wal-writer-child.ts', import.meta.url));
  const proc = spawn(process.execPath, ['--import', 'tsx', script, path, String(count), '32', JSON.stringify(policy)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout! });
  const saw = (word: string) => new Promise<void>((resolve, reject) => {
    lines.on('line', (l) => l === word && resolve());
    proc.on('exit', (code) => reject(new Error(`the writer exited (${code}) before "${word}"`)));
  });
  return { proc, ready: saw('ready'), done: saw('done') };
}

test('two processes bursting into one file: the WAL stays near the truncation bound', async (t0) => {
  const path = join(dir, 'two.db');
  const first = new SqliteStore(path);
  await first.migrate();
  await first.close();
  // A small bound, so that a short burst crosses it many times.
  const policy = { everyBytes: 2 * MiB, truncateAtBytes: 8 * MiB };
  const writers = [child(path, 250, policy), child(path, 250, policy)];
  await Promise.all(writers.map((w) => w.ready));
  let largest = 0;
  const watch = setInterval(() => (largest = Math.max(largest, walBytes(path))), 5);
  for (const w of writers) w.proc.stdin!.end('go\n');
  await Promise.all(writers.map((w) => w.done));
  clearInterval(watch);
  t0.diagnostic(`largest WAL ${(largest / MiB).toFixed(1)} MiB`);
  assert.ok(largest <= 3 * 8 * MiB, `the WAL stayed within 3× its 8 MiB bound: ${largest} bytes (60 MB were written)`);
});

test('a reader holding an old snapshot delays truncation but never holds appends long', async (t0) => {
  const path = join(dir, 'reader.db');
  const store = new SqliteStore(path, { everyBytes: 1 * MiB, truncateAtBytes: 2 * MiB, idleMs: 200 });
  await store.migrate();
  const t = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '1000000' } });
  const agent = await t.agent();
  const reader = new Database(path);
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM records').get(); // holds this snapshot until COMMIT
  let slowest = 0;
  for (let i = 0; i < 120; i++) {
    const started = performance.now();
    const res = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', metadata: { quotes, i } });
    slowest = Math.max(slowest, performance.now() - started);
    assert.equal(res.statusCode, 201, res.body);
  }
  t0.diagnostic(`slowest write beside the reader ${slowest.toFixed(0)} ms; WAL ${(walBytes(path) / MiB).toFixed(1)} MiB`);
  assert.ok(slowest < 2_000, `no write waited long on the reader: ${slowest} ms`);
  reader.exec('COMMIT');
  reader.close();
  let quiet = walBytes(path);
  for (let waited = 0; waited < 10_000 && quiet > 1 * MiB; waited += 100) {
    await sleep(100);
    quiet = walBytes(path);
  }
  assert.ok(quiet <= 1 * MiB, `once the reader is gone and writes are quiet, the WAL is emptied: ${quiet} bytes`);
  await t.close();
  await store.close();
});
