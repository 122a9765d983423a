// `ledger backup`: SQLite's online backup taken while a writer runs holds every record
// acknowledged before it began and verifies; PostgreSQL's is pg_dump of the schema, restorable
// with pg_restore; without pg_dump on PATH the command says what to run and makes nothing.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { openStore } from '../../src/store/open.ts';
import { postDecision, testApp } from '../support/app.ts';
import { verify } from '../cli/verify-fixture.ts';
import { POSTGRES_URL, dropPostgresSchema, freshPostgresUrl, skipUnless } from '../support/services.ts';
import { outputOf } from '../support/child-output.ts';

const BIN = fileURLToPath(new URL('../../bin/ledger.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ledger-backup-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function ledger(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  const { code, stdout, stderr } = await outputOf(spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } }));
  return { code, out: stdout + stderr };
}

/** Exports `handle` from a store opened on `databaseUrl` and runs `ledger verify` on it. */
async function verifyCopy(databaseUrl: string, handle: string): Promise<{ code: number; out: string; store: ReturnType<typeof openStore> }> {
  const store = openStore(databaseUrl);
  await store.migrate();
  const t = await testApp(store);
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  try {
    return { ...await verify(`${base}/v1/export?agent=${handle}`), store };
  } finally {
    await t.close();
  }
}

test('SQLite: a backup taken while a writer runs has every record acknowledged before it began, and verifies', async () => {
  const path = join(dir, 'live.db');
  const store = new SqliteStore(path);
  await store.migrate();
  const t = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '1000000' } });
  const agent = await t.agent();
  const acknowledged: string[] = [];
  let writing = true;
  const writer = async (n: number) => {
    for (let i = 0; writing; i++) {
      const res = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', quantity: i + 1, thesis: `writer ${n} `.repeat(50) });
      assert.equal(res.statusCode, 201, res.body);
      acknowledged.push(JSON.parse(res.body).id);
    }
  };
  const writers = [1, 2, 3, 4].map(writer);
  while (acknowledged.length < 1500) await new Promise((r) => setTimeout(r, 20));
  const before = [...acknowledged];
  const backupPath = join(dir, 'copy.db');
  const backup = await ledger(['backup', backupPath, '--database', `sqlite:${path}`]);
  const during = acknowledged.length - before.length;
  writing = false;
  await Promise.all(writers);
  await t.close();
  await store.close();
  assert.equal(backup.code, 0, backup.out);
  assert.match(backup.out, /backed up .* with SQLite's online backup: \d+ pages .* \d+ records, in [0-9.]+ s; quick_check ok/);
  assert.ok(during > 0, 'writes went on while the backup ran');

  const copy = await verifyCopy(`sqlite:${backupPath}`, agent.handle);
  try {
    assert.equal(copy.code, 0, copy.out);
    for (const id of before) assert.ok(await copy.store.findRecord(id), `${id}, acknowledged before the backup began, is in it`);
  } finally {
    await copy.store.close();
  }
  const again = await ledger(['backup', backupPath, '--database', `sqlite:${path}`]);
  assert.equal(again.code, 1);
  assert.match(again.out, /exists; a backup never overwrites a file/);
});

const pgSkip = await skipUnless('postgres');

describe('PostgreSQL', { skip: pgSkip }, () => {
  test('pg_dump of the schema, restored with pg_restore, holds the same chain', async () => {
    const url = freshPostgresUrl();
    const schema = new URL(url).searchParams.get('schema')!;
    const restoredDb = `restore_${schema}`;
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    const store = openStore(url);
    try {
      await store.migrate();
      const t = await testApp(store);
      const agent = await t.agent();
      for (let i = 0; i < 5; i++) assert.equal((await postDecision(t, agent.secret, { symbol: 'MSFT', action: 'SELL', quantity: i + 1 })).statusCode, 201);
      await t.close();
      const file = join(dir, 'pg.dump');
      const backup = await ledger(['backup', file, '--database', url]);
      assert.equal(backup.code, 0, backup.out);
      assert.match(backup.out, /with pg_dump \(custom format\)[\s\S]*ran: pg_dump --format=custom --schema=/);
      assert.ok(existsSync(file));

      await admin.query(`CREATE DATABASE ${restoredDb}`);
      const restoredUrl = new URL(POSTGRES_URL);
      restoredUrl.pathname = `/${restoredDb}`;
      const restore = spawnSync('pg_restore', ['--no-owner', `--dbname=${restoredUrl}`, file], { encoding: 'utf8' });
      assert.equal(restore.status, 0, restore.stderr);
      const copy = await verifyCopy(`${restoredUrl}?schema=${schema}`, agent.handle);
      try {
        assert.equal(copy.code, 0, copy.out);
        assert.deepEqual(await copy.store.chainHead(agent.agentId), await store.chainHead(agent.agentId));
      } finally {
        await copy.store.close();
      }
    } finally {
      await store.close();
      await dropPostgresSchema(url);
      await admin.query(`DROP DATABASE IF EXISTS ${restoredDb} WITH (FORCE)`);
      await admin.end();
    }
  });

  test('without pg_dump on PATH: no backup, and the command to run', async () => {
    const url = `${POSTGRES_URL}?schema=ledger_backup_probe`;
    const res = await ledger(['backup', join(dir, 'none.dump'), '--database', url], { PATH: '/nonexistent' });
    assert.equal(res.code, 1, res.out);
    assert.match(res.out, /pg_dump is not on PATH, so no backup was made; with PostgreSQL's client tools installed, run:\n\s+pg_dump --format=custom --schema=ledger_backup_probe --file=\S+none\.dump --dbname=postgres:\/\/root@127\.0\.0\.1:5432\/test/);
    assert.equal(existsSync(join(dir, 'none.dump')), false);
  });
});
