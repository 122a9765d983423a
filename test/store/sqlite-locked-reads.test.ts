// Issue 24, finding 6, on SQLite: another process holding the database's write lock past
// busy_timeout makes writes answer 503 with Retry-After (SQLITE_BUSY), while the log, anchor and
// performance reads go on: in WAL mode a reader takes no lock a writer holds, so no read waits
// for one, and none can answer 500 or 503 for it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Database from '../../src/store/sqlite/driver.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { postDecision, testApp, type TestApp } from '../support/app.ts';
import { validDecision } from '../api/record-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'ledger-sqlite-locked-'));
const path = join(dir, 'ledger.db');
let store: SqliteStore;
let t: TestApp;

before(async () => {
  store = new SqliteStore(path);
  await store.migrate();
  t = await testApp(store);
});
after(async () => {
  await t?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a write lock held by another connection: writes answer 503 with Retry-After, the log, anchor and performance reads answer', async () => {
  const agent = await t.agent();
  assert.equal((await postDecision(t, agent.secret, validDecision())).statusCode, 201);
  store.db.pragma('busy_timeout = 200');
  const other = new Database(path);
  other.exec('BEGIN EXCLUSIVE');
  try {
    const write = await postDecision(t, agent.secret, validDecision());
    assert.equal(write.statusCode, 503, write.body);
    assert.equal(write.headers['retry-after'], '2');
    for (const url of ['/v1/log/checkpoint', '/v1/log/tile/0/000', '/v1/anchors', '/v1/transparency',
      `/v1/agents/${agent.handle}/performance`, `/v1/agents/${agent.handle}/chain`]) {
      const res = await t.app.inject({ url });
      assert.ok(res.statusCode === 200 || res.statusCode === 404, `${url}: ${res.statusCode} ${res.body}`);
    }
  } finally {
    other.exec('ROLLBACK');
    other.close();
  }
});
