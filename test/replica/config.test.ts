// LEDGER_READ_DATABASE_URL: refused with one clear line for a SQLite ledger (which has no
// replicas) or a URL that is not PostgreSQL, at the configuration, at openReadReplica and at
// `ledger serve`'s start.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { openReadReplica } from '../../src/store/open.ts';

const LEDGER_BIN = fileURLToPath(new URL('../../bin/ledger.js', import.meta.url));

test('a read replica beside a SQLite ledger is refused, naming the setting and why', () => {
  assert.throws(
    () => loadConfig({ LEDGER_DATABASE_URL: 'sqlite:./data/ledger.db', LEDGER_READ_DATABASE_URL: 'postgres://reader@replica:5432/ledger' }),
    (err: Error) => err instanceof ConfigError && /LEDGER_READ_DATABASE_URL/.test(err.message) && /SQLite/.test(err.message),
  );
  // The default database is SQLite too.
  assert.throws(() => loadConfig({ LEDGER_READ_DATABASE_URL: 'postgres://reader@replica:5432/ledger' }), ConfigError);
});

test('a read replica must be a PostgreSQL URL', () => {
  assert.throws(
    () => loadConfig({ LEDGER_DATABASE_URL: 'postgres://root@primary:5432/ledger', LEDGER_READ_DATABASE_URL: 'sqlite:./replica.db' }),
    /LEDGER_READ_DATABASE_URL must be postgres:/,
  );
  assert.throws(() => openReadReplica('sqlite:./replica.db'), /SQLite has no replicas/);
});

test('with PostgreSQL, the read URL is kept; without it, public reads use the primary', () => {
  const config = loadConfig({ LEDGER_DATABASE_URL: 'postgres://root@primary:5432/ledger', LEDGER_READ_DATABASE_URL: 'postgres://reader@replica:5432/ledger' });
  assert.equal(config.readDatabaseUrl, 'postgres://reader@replica:5432/ledger');
  assert.equal(loadConfig({ LEDGER_DATABASE_URL: 'postgres://root@primary:5432/ledger' }).readDatabaseUrl, null);
});

test('`ledger serve` on SQLite with LEDGER_READ_DATABASE_URL stops at once with one line and exit code 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-replica-config-'));
  try {
    const run = spawnSync(process.execPath, [LEDGER_BIN, 'serve'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: process.env.PATH ?? '', LEDGER_DATABASE_URL: `sqlite:${join(dir, 'ledger.db')}`, LEDGER_READ_DATABASE_URL: 'postgres://reader@127.0.0.1:9/ledger', PORT: '0' },
    });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /^ledger: configuration: LEDGER_READ_DATABASE_URL .*SQLite/);
    assert.equal(run.stderr.trim().split('\n').length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
