// SQLite migrations carry what an older database holds: a database made by the first four
// migrations, with a used nonce in it, keeps that nonce (still refused) after the move of
// nonces to a WITHOUT ROWID table.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from '../../src/store/sqlite/driver.ts';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';

const dir = mkdtempSync(join(tmpdir(), 'ledger-migrations-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('nonces recorded before migration 5 are still used after it', async () => {
  const path = join(dir, 'old.db');
  const old = new Database(path);
  old.pragma('journal_mode = WAL');
  old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  SQLITE_MIGRATIONS.slice(0, 4).forEach((sql, i) => {
    old.exec(sql);
    old.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run(i + 1, '2026-11-01T00:00:00.000Z');
  });
  old.prepare("INSERT INTO agents (id, handle, status, demo, created_at) VALUES ('agt_1', 'old-agent', 'active', 0, '2026-11-01T00:00:00.000Z')").run();
  old.prepare("INSERT INTO nonces (agent_id, nonce, record_id) VALUES ('agt_1', 'n-1', 'dec_01JC0000000000000000000000')").run();
  old.close();

  const store = new SqliteStore(path);
  await store.migrate();
  assert.equal(await store.isNonceUsed('agt_1', 'n-1'), true);
  assert.equal(await store.isNonceUsed('agt_1', 'n-2'), false);
  const sql = store.db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'nonces'").pluck().get() as string;
  assert.match(sql, /WITHOUT ROWID/);
  assert.throws(() => store.db.prepare("INSERT INTO nonces VALUES ('agt_1', 'n-1', 'dec_x')").run(), /UNIQUE/);
  await store.close();
});
