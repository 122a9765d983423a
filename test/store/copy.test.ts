// `ledger migrate --to postgres://...` (store/copy.ts): a SQLite ledger with signed and unsigned
// decisions, executions, a revoked key and the global log's leaves, tiles and checkpoints is
// copied into an empty PostgreSQL schema with every id, hash and timestamp unchanged: exports on
// both sides verify to the same heads, and the log's checkpoints are the same notes. A target
// that holds rows is refused; so is a SQLite table the copier does not know.
import pg from 'pg';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { COPIED_TABLES, NOT_COPIED, copySqliteToPostgres, sqliteTables } from '../../src/store/copy.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import Database from '../../src/store/sqlite/driver.ts';
import { openStore } from '../../src/store/open.ts';
import { testApp } from '../support/app.ts';
import { dropPostgresSchema, freshPostgresUrl, skipUnless } from '../support/services.ts';
import { buildFixture, verify, type Fixture } from '../cli/verify-fixture.ts';
import { postMany } from '../public/helpers.ts';
import { testIntegrator, testLogKey } from '../log/helpers.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outputOf } from '../support/child-output.ts';

const BIN = fileURLToPath(new URL('../../bin/ledger.js', import.meta.url));

async function ledger(args: string[]): Promise<{ code: number | null; out: string }> {
  const { code, stdout, stderr } = await outputOf(spawn(process.execPath, [BIN, ...args]));
  return { code, out: stdout + stderr };
}

test('every table of the SQLite schema is copied or named as not copied', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-copy-tables-'));
  const store = new SqliteStore(join(dir, 'schema.db'));
  try {
    await store.migrate();
    const known = new Set([...COPIED_TABLES.map((t) => t.name), ...NOT_COPIED]);
    const missing = sqliteTables(store.db).filter((t) => !known.has(t));
    assert.deepEqual(missing, [], `add these tables to COPIED_TABLES in src/store/copy.ts (parents before children): ${missing.join(', ')}`);
    const gone = COPIED_TABLES.map((t) => t.name).filter((t) => !sqliteTables(store.db).includes(t));
    assert.deepEqual(gone, [], 'COPIED_TABLES names only tables that exist');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const pgSkip = await skipUnless('postgres');

/** Exports `handle` from a store and verifies it; returns the verifier's output. */
async function verifiedExport(databaseUrl: string, handle: string): Promise<string> {
  const store = openStore(databaseUrl);
  await store.migrate();
  const t = await testApp(store);
  try {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { code, out } = await verify(`${base}/v1/export?agent=${handle}`);
    assert.equal(code, 0, out);
    return out;
  } finally {
    await t.close();
    await store.close();
  }
}

/**
 * One row in each broker, anchor and market table, written as those wings would (their own tests
 * cover how): so every table, bytea columns and trigger-kept counts included, is copied with rows.
 */
function addBrokerAndAnchorRows(path: string): void {
  const db = new Database(path);
  try {
    const agent = db.prepare('SELECT id FROM agents ORDER BY id LIMIT 1').pluck().get() as string;
    const record = db.prepare("SELECT id FROM records WHERE type = 'execution' LIMIT 1").pluck().get() as string;
    const checkpoint = db.prepare('SELECT tree_size, hex(root) AS root FROM log_checkpoints ORDER BY tree_size LIMIT 1').get() as { tree_size: number; root: string };
    const at = '2026-11-23T12:00:00.000Z';
    db.prepare(`INSERT INTO broker_connections (id, agent_id, kind, environment, status, credentials, key_version, accounts, external_id, cursor, last_sync, progress, last_error, state_hash, state_expires_at, created_at, updated_at, disconnected_at)
      VALUES ('brk_copytest', ?, 'alpaca', 'paper', 'active', 'sealed:v1:abc', 1, '["PA1"]', NULL, '{"after":"2026-11-01"}', ?, NULL, NULL, NULL, NULL, ?, ?, NULL)`).run(agent, at, at, at);
    db.prepare("INSERT INTO broker_users (agent_id, kind, user_id, secret, key_version, created_at) VALUES (?, 'snaptrade', 'user-1', 'sealed:v1:def', 1, ?)").run(agent, at);
    // The service records version 1's check when it first uses the key; OR IGNORE keeps that one.
    db.prepare("INSERT OR IGNORE INTO master_key_checks (version, check_value, created_at) VALUES (1, 'copytest-check', ?)").run(at);
    db.prepare(`INSERT INTO broker_fills (agent_id, fill_key, connection_id, record_id, order_key, broker_order_id, symbol, side, quantity, cumulative_quantity, decision_id, link_method)
      VALUES (?, 'fill-1', 'brk_copytest', ?, 'order-1', 'o-1', 'MSFT', 'buy', '3', '3', NULL, NULL)`).run(agent, record);
    db.prepare("INSERT INTO broker_snapshots (connection_id, agent_id, taken_at, positions, balances, reconciliation) VALUES ('brk_copytest', ?, ?, '[]', '{}', '{}')").run(agent, at);
    db.prepare(`INSERT INTO log_anchors (tree_size, root, digest, ots, status, calendars, block_height, block_hash, block_merkle_root, block_time, created_at, last_attempt_at, last_error, attempts, next_attempt_at)
      VALUES (?, ?, ?, ?, 'pending', '[]', NULL, NULL, NULL, NULL, ?, NULL, NULL, 0, NULL)`).run(checkpoint.tree_size, checkpoint.root.toLowerCase(), Buffer.from(checkpoint.root, 'hex'), Buffer.from([0x00, 0x4f, 0x70, 0xff, 0x00]), at);
    db.prepare('UPDATE log_anchor_state SET calendars_unreachable_since = ? WHERE id = 1').run(at);
    const decision = db.prepare("SELECT id, agent_id, chain_seq, sort_key, recorded_at FROM records WHERE type = 'decision' ORDER BY sort_key LIMIT 1").get() as { id: string; agent_id: string; chain_seq: number; sort_key: string; recorded_at: string };
    db.prepare(`INSERT INTO price_observations (record_id, agent_id, chain_seq, symbol, asked_at, observed_at, source, feed, synthetic, status, price, provider_time, age_ms, stale, reason)
      VALUES (?, ?, ?, 'AAPL', ?, ?, 'synthetic', NULL, 1, 'priced', '187.25', ?, 1200, 0, NULL)`).run(decision.id, decision.agent_id, decision.chain_seq, decision.recorded_at, decision.recorded_at, decision.recorded_at);
    db.prepare('INSERT INTO price_scan (id, sort_key) VALUES (1, ?)').run(decision.sort_key);
    db.prepare("INSERT INTO market_closes (source, symbol, date, close) VALUES ('synthetic', 'AAPL', '2026-11-20', '186.5')").run();
    db.prepare("INSERT INTO market_raw_closes (source, symbol, date, close, fetched_at) VALUES ('synthetic', 'AAPL', '2026-11-20', '186.5', ?)").run(at);
    // corporate_actions.id is an identity column on PostgreSQL
    db.prepare(`INSERT INTO corporate_actions (id, source, provider_id, revision, type, symbol, ex_date, payable_date, process_date, record_date, old_rate, new_rate, rate, special, raw, seen_at)
      VALUES (5, 'synthetic', 'ca-1', 1, 'cash_dividend', 'AAPL', '2026-11-10', '2026-11-24', '2026-11-24', '2026-11-10', NULL, NULL, '0.26', 0, '{}', ?)`).run(at);
    db.prepare("INSERT INTO performance_reports (agent_id, portfolio, through_seq, as_of, computed_at, report) VALUES (?, 'model', 1, '2026-11-20', ?, '{}')").run(decision.agent_id, at);
    // Webhooks: an endpoint, two messages (seq is an identity column on PostgreSQL), an attempt, the cursor.
    db.prepare(`INSERT INTO webhook_endpoints (id, agent_id, url, events, description, secret, key_version, status, disabled_reason, created_at, disabled_at)
      VALUES ('whe_copytest', ?, 'https://hooks.example.com/in', '["decision.recorded"]', NULL, 'sealed:v1:ghi', 1, 'active', NULL, ?, NULL)`).run(decision.agent_id, at);
    const message = db.prepare(`INSERT INTO webhook_messages (seq, id, endpoint_id, agent_id, event_type, subject, payload, status, attempts, created_at, first_attempt_at, next_attempt_at, delivered_at)
      VALUES (?, ?, 'whe_copytest', ?, 'decision.recorded', ?, '{}', ?, 1, ?, ?, NULL, NULL)`);
    message.run(7, 'msg_copy1', decision.agent_id, decision.id, 'delivered', at, at);
    message.run(9, 'msg_copy2', decision.agent_id, `${decision.id}-2`, 'pending', at, at);
    db.prepare("INSERT INTO webhook_attempts (message_id, attempt, endpoint_id, started_at, duration_ms, status_code, error) VALUES ('msg_copy1', 1, 'whe_copytest', ?, 12, 200, NULL)").run(at);
    db.prepare('INSERT INTO webhook_cursor (id, record_sort_key, checkpoint_size, anchor_floor) VALUES (1, ?, 0, 0)').run(decision.sort_key);
    db.prepare('INSERT INTO webhook_anchors_seen (tree_size) VALUES (?)').run(checkpoint.tree_size);
  } finally {
    db.close();
  }
}

const headLine = (out: string) => /published head: seq \d+, chain_hash [0-9a-f]{64}/.exec(out)?.[0];

describe('SQLite to PostgreSQL', { skip: pgSkip }, () => {
  let f: Fixture;
  let sqliteUrl: string;
  let target: string;
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledger-copy-'));
    sqliteUrl = `sqlite:${join(dir, 'ledger.db')}`;
    f = await buildFixture(sqliteUrl);
    const other = await f.t.agent();
    await postMany(f.t, other.secret, 2100); // more than one batch of 1,000 rows
    const { key } = await testLogKey();
    const integrator = testIntegrator(f.t.store, key);
    assert.equal(await integrator.integratePending(), 2106);
    await integrator.stop();
    await f.close();
    addBrokerAndAnchorRows(sqliteUrl.slice('sqlite:'.length));
    target = freshPostgresUrl();
  });
  after(async () => {
    rmSync(f.dir, { recursive: true, force: true });
    rmSync(sqliteUrl.slice('sqlite:'.length, -'/ledger.db'.length), { recursive: true, force: true });
    await dropPostgresSchema(target);
  });

  test('ledger migrate copies every row unchanged, shows progress, and both sides verify to the same heads', async () => {
    const run = await ledger(['migrate', '--to', target, '--database', sqliteUrl]);
    assert.equal(run.code, 0, run.out);
    assert.match(run.out, /copying records: 2106 of 2106 rows \(100%\)/);
    assert.match(run.out, /copying log_checkpoints: \d+ of \d+ rows \(100%\)/);
    assert.match(run.out, /verified: each table read back in key order on both sides has the same rows/);
    assert.match(run.out, /log_tiles\s+\d+ rows\s+sha256 [0-9a-f]{16}/);
    for (const table of ['broker_connections', 'broker_users', 'broker_fills', 'broker_snapshots', 'master_key_checks', 'log_anchors', 'log_anchor_state',
      'price_observations', 'price_counts', 'price_scan', 'market_closes', 'market_raw_closes', 'corporate_actions', 'performance_reports']) {
      assert.match(run.out, new RegExp(`${table}\\s+1 rows`), `${table} was copied`);
    }
    for (const table of ['webhook_endpoints', 'webhook_cursor', 'webhook_anchors_seen', 'webhook_attempts']) {
      assert.match(run.out, new RegExp(`${table}\\s+1 rows`), `${table} was copied`);
    }
    assert.match(run.out, /webhook_messages\s+2 rows/);
    // The identity sequence moved past the copied seqs: the next message PostgreSQL numbers comes after them.
    const client = new pg.Client({ connectionString: target.replace(/\?schema=.*$/, ''), options: `-c search_path=${new URL(target).searchParams.get('schema')}` });
    await client.connect();
    try {
      const { rows } = await client.query(`INSERT INTO webhook_messages (id, endpoint_id, agent_id, event_type, subject, payload, status, attempts, created_at)
        SELECT 'msg_after', endpoint_id, agent_id, event_type, 'after', '{}', 'pending', 0, created_at FROM webhook_messages WHERE id = 'msg_copy1' RETURNING seq`);
      assert.equal(Number(rows[0].seq), 10);
      await client.query("DELETE FROM webhook_messages WHERE id = 'msg_after'");
    } finally {
      await client.end();
    }

    const fromSqlite = await verifiedExport(sqliteUrl, f.handle);
    const fromPostgres = await verifiedExport(target, f.handle);
    assert.equal(headLine(fromPostgres), headLine(fromSqlite));
    assert.ok(headLine(fromSqlite));
    assert.match(fromPostgres, /ok   signature\s+2 checked, 0 failed/);

    const sqlite = openStore(sqliteUrl);
    const postgres = openStore(target);
    try {
      await sqlite.migrate();
      await postgres.migrate();
      assert.deepEqual(await postgres.listHeads(), await sqlite.listHeads());
      assert.deepEqual(await postgres.log.latestCheckpoint(), await sqlite.log.latestCheckpoint());
      for (const id of f.ids) assert.deepEqual(await postgres.findRecord(id), await sqlite.findRecord(id));
    } finally {
      await sqlite.close();
      await postgres.close();
    }
  });

  test('a target that holds ledger rows is refused, and left as it was', async () => {
    const run = await ledger(['migrate', '--to', target, '--database', sqliteUrl]);
    assert.equal(run.code, 1, run.out);
    assert.match(run.out, /the PostgreSQL target is not empty: agents \(2 rows\), api_keys/);
  });

  test('a SQLite table the copier does not know stops the copy before anything is written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledger-copy-extra-'));
    const path = join(dir, 'extra.db');
    const store = new SqliteStore(path);
    await store.migrate();
    store.db.exec('CREATE TABLE webhooks_of_the_future (id TEXT PRIMARY KEY)');
    await store.close();
    const fresh = freshPostgresUrl();
    try {
      await assert.rejects(copySqliteToPostgres(path, fresh), /tables this copier does not know: webhooks_of_the_future \(add them to COPIED_TABLES/);
    } finally {
      await dropPostgresSchema(fresh);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
