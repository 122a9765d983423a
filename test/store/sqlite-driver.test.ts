// The SQLite driver is chosen by Node version (src/store/sqlite/driver.ts): better-sqlite3 13
// (Node-API) on Node 22 and later, where 12 aborts the process on Node 24; 12 on Node 20.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import Database, { NODE_MAJOR, SQLITE_DRIVER_PACKAGE, sqliteDriverPath } from '../../src/store/sqlite/driver.ts';

function loadedMajor(): number {
  let dir = dirname(sqliteDriverPath());
  while (!dir.endsWith(SQLITE_DRIVER_PACKAGE)) dir = dirname(dir);
  return Number((createRequire(import.meta.url)(join(dir, 'package.json')) as { version: string }).version.split('.')[0]);
}

test(`Node ${process.versions.node} loads better-sqlite3 ${NODE_MAJOR >= 22 ? 13 : 12}`, () => {
  assert.equal(loadedMajor(), NODE_MAJOR >= 22 ? 13 : 12);
});

test('the loaded driver opens a database, runs statements and finalises them on close', () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (x INTEGER)');
  const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
  for (let i = 0; i < 100; i++) insert.run(i);
  assert.equal((db.prepare('SELECT sum(x) AS s FROM t').get() as { s: number }).s, 4950);
  db.close();
});
