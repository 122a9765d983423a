// Every append-only table refuses UPDATE and DELETE, on both stores. The list is not written here:
// it is read from both dialects' migrations (src/store/{sqlite,postgres}/migrations.ts), so a
// table added later is covered as soon as its migration gives it a refusing trigger.
//
// The rules, checked on the migrations' text:
//   1. A table is append-only when a migration of either dialect gives it a BEFORE UPDATE or
//      BEFORE DELETE trigger that refuses with an error (SQLite: RAISE(ABORT, ...); PostgreSQL: a
//      trigger function that RAISEs EXCEPTION).
//   2. Such a table refuses DELETE in both dialects, and UPDATE in both, unconditionally, unless
//      its UPDATE trigger is a guard (a WHEN condition, `UPDATE OF` columns, or an IF in the
//      function): a guard only refuses some updates, so the test of what it refuses is named
//      in GUARDED below, and a new guard without one fails here.
//   3. A table that looks append-only must be: one with a foreign key to records (a fact about a
//      record is as permanent as the record).
// Then, on a fresh, migrated store of each kind, each append-only table gets a row if it has
// none (a probe row: foreign keys and CHECKs set aside, only the triggers are under test) and
// UPDATE and DELETE are tried on it: both fail with the trigger's own message, the row unchanged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.ts';
import type { PostgresStore } from '../../src/store/postgres/store.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { forEachStore, runSql } from '../support/stores.ts';

/** Tables whose UPDATE trigger is a guard, and the test that tries what the guard refuses. */
const GUARDED: Record<string, string> = {
  chain_heads: 'test/store/chain-head-guard.test.ts',
};

type Refusal = 'always' | 'guarded';
type Dialect = 'sqlite' | 'postgres';
/** Per table: how UPDATE and DELETE are refused, and the refusals' messages. */
type Refusals = Map<string, { update?: Refusal; delete?: Refusal; messages: Set<string> }>;

const schemaText = (migrations: readonly string[]) => migrations.join('\n;\n').replace(/--[^\n]*/g, '');

/** The tables the migrations leave: every CREATE TABLE, less those dropped, renames followed. */
function tablesOf(migrations: readonly string[]): Set<string> {
  const tables = new Set<string>();
  const statements = /CREATE TABLE (?:IF NOT EXISTS )?(\w+)|DROP TABLE (?:IF EXISTS )?(\w+)|ALTER TABLE (\w+) RENAME TO (\w+)/gi;
  for (const m of schemaText(migrations).matchAll(statements)) {
    if (m[1]) tables.add(m[1].toLowerCase());
    else if (m[2]) tables.delete(m[2].toLowerCase());
    else if (tables.delete(m[3]!.toLowerCase())) tables.add(m[4]!.toLowerCase());
  }
  return tables;
}

type Trigger = { table: string; events: string[]; refusal: Refusal; message: string };

function sqliteTriggers(text: string): Map<string, Trigger | null> {
  const triggers = new Map<string, Trigger | null>();
  const pattern = /CREATE TRIGGER (?:IF NOT EXISTS )?(\w+)\s+(?:BEFORE|AFTER|INSTEAD OF)\s+(UPDATE|DELETE|INSERT)(\s+OF\s+[\w\s,]+?)?\s+ON\s+(\w+)\s*(?:FOR EACH ROW\s*)?(WHEN[\s\S]*?)?\s*BEGIN([\s\S]*?)END;|DROP TRIGGER (?:IF EXISTS )?(\w+)/gi;
  for (const m of text.matchAll(pattern)) {
    if (m[7]) {
      triggers.delete(m[7]);
      continue;
    }
    const raised = /RAISE\s*\(\s*ABORT\s*,\s*'((?:[^']|'')*)'/i.exec(m[6]!);
    const before = /^CREATE TRIGGER (?:IF NOT EXISTS )?\w+\s+BEFORE/i.test(m[0]);
    triggers.set(m[1]!, raised && before
      ? { table: m[4]!.toLowerCase(), events: [m[2]!.toUpperCase()], refusal: m[3] || m[5] ? 'guarded' : 'always', message: raised[1]! }
      : null);
  }
  return triggers;
}

function postgresTriggers(text: string): Map<string, Trigger | null> {
  const functions = new Map<string, { refusal: Refusal; message: string } | null>();
  for (const m of text.matchAll(/CREATE (?:OR REPLACE )?FUNCTION (\w+)\(\)\s+RETURNS trigger[\s\S]*?\$\$([\s\S]*?)\$\$/gi)) {
    const raised = /RAISE EXCEPTION\s+'((?:[^']|'')*)'/i.exec(m[2]!);
    functions.set(m[1]!, raised ? { refusal: /\bIF\b|\bCASE\b/i.test(m[2]!) ? 'guarded' : 'always', message: raised[1]! } : null);
  }
  const triggers = new Map<string, Trigger | null>();
  const pattern = /CREATE (?:OR REPLACE )?TRIGGER (\w+)\s+BEFORE\s+((?:UPDATE|DELETE|TRUNCATE|INSERT)(?:\s+OF\s+[\w\s,]+?)?(?:\s+OR\s+(?:UPDATE|DELETE|TRUNCATE|INSERT)(?:\s+OF\s+[\w\s,]+?)?)*)\s+ON\s+(\w+)\s+FOR EACH (?:ROW|STATEMENT)\s*(WHEN\s*\([\s\S]*?\)\s*)?EXECUTE (?:FUNCTION|PROCEDURE) (\w+)\(\)|DROP TRIGGER (?:IF EXISTS )?(\w+)/gi;
  for (const m of text.matchAll(pattern)) {
    if (m[6]) {
      triggers.delete(m[6]);
      continue;
    }
    const fn = functions.get(m[5]!);
    const events = m[2]!.split(/\s+OR\s+/i).map((e) => e.trim().split(/\s+/)[0]!.toUpperCase());
    const guardedBy = /\bOF\b/i.test(m[2]!) || m[4] ? 'guarded' : undefined;
    triggers.set(m[1]!, fn ? { table: m[3]!.toLowerCase(), events, refusal: guardedBy ?? fn.refusal, message: fn.message } : null);
  }
  return triggers;
}

/** The append-only tables of one dialect's migrations (rule 1), with how each event is refused. */
function refusalsOf(dialect: Dialect, migrations: readonly string[]): Refusals {
  const text = schemaText(migrations);
  const triggers = dialect === 'sqlite' ? sqliteTriggers(text) : postgresTriggers(text);
  const refusals: Refusals = new Map();
  const tables = tablesOf(migrations);
  for (const trigger of triggers.values()) {
    if (!trigger || !tables.has(trigger.table)) continue;
    const entry = refusals.get(trigger.table) ?? { messages: new Set<string>() };
    for (const event of trigger.events) {
      const key = event === 'UPDATE' ? 'update' : event === 'DELETE' ? 'delete' : null;
      if (key && entry[key] !== 'always') entry[key] = trigger.refusal;
    }
    entry.messages.add(trigger.message.replace(/''/g, "'"));
    if (entry.update || entry.delete) refusals.set(trigger.table, entry);
  }
  return refusals;
}

/** Rule 3: tables with a foreign key to records. */
function recordFacts(migrations: readonly string[]): Set<string> {
  const facts = new Set<string>();
  for (const m of schemaText(migrations).matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+)\s*\(([\s\S]*?)\n\s*\)/gi)) {
    if (/REFERENCES\s+records\s*\(/i.test(m[2]!)) facts.add(m[1]!.toLowerCase());
  }
  return facts;
}

const MIGRATIONS: Record<Dialect, readonly string[]> = { sqlite: SQLITE_MIGRATIONS, postgres: POSTGRES_MIGRATIONS };
const REFUSALS: Record<Dialect, Refusals> = { sqlite: refusalsOf('sqlite', SQLITE_MIGRATIONS), postgres: refusalsOf('postgres', POSTGRES_MIGRATIONS) };
/** Every table either dialect makes append-only: what the stores are tried on. */
const APPEND_ONLY = [...new Set([...REFUSALS.sqlite.keys(), ...REFUSALS.postgres.keys()])].sort();

describe('the append-only tables, as the migrations make them', () => {
  test('the list is read from the migrations, and holds the tables the service promises never change', (t) => {
    t.diagnostic(`append-only: ${APPEND_ONLY.join(', ')}; the rest: ${[...tablesOf(SQLITE_MIGRATIONS)].filter((x) => !APPEND_ONLY.includes(x)).sort().join(', ')}`);
    for (const table of ['records', 'log_leaves', 'log_checkpoints', 'price_observations', 'priced_decisions', 'chain_heads']) {
      assert.ok(APPEND_ONLY.includes(table), `${table} is append-only`);
    }
  });

  test('both dialects make the same tables append-only, each refusing DELETE and (unless guarded) UPDATE, unconditionally', () => {
    for (const table of APPEND_ONLY) {
      for (const dialect of ['sqlite', 'postgres'] as const) {
        const refusal = REFUSALS[dialect].get(table);
        assert.ok(refusal, `${table} has refusing triggers in the ${dialect} migrations too`);
        assert.ok(refusal.delete, `${table} refuses DELETE in the ${dialect} migrations`);
        assert.ok(refusal.update, `${table} refuses UPDATE in the ${dialect} migrations`);
        if (refusal.update === 'guarded') {
          assert.ok(GUARDED[table], `${table}'s UPDATE trigger in the ${dialect} migrations is conditional: name the test of its guard in GUARDED, or refuse every UPDATE`);
        }
      }
      if (!GUARDED[table]) {
        for (const dialect of ['sqlite', 'postgres'] as const) assert.equal(REFUSALS[dialect].get(table)!.update, 'always', `${table} refuses every UPDATE in the ${dialect} migrations`);
      }
    }
  });

  test('every table with a foreign key to records is append-only', () => {
    for (const dialect of ['sqlite', 'postgres'] as const) {
      const facts = recordFacts(MIGRATIONS[dialect]);
      assert.ok(facts.size > 0, `the ${dialect} migrations have tables referencing records`);
      for (const table of facts) assert.ok(REFUSALS[dialect].has(table), `${table} references records, so it must refuse UPDATE and DELETE (${dialect})`);
    }
  });

  test('the rules catch what they are for', () => {
    const noOp = SQLITE_MIGRATIONS.map((m) => m.replace("BEFORE UPDATE ON records\n    BEGIN SELECT RAISE(ABORT, 'record_is_immutable'); END;", 'BEFORE UPDATE ON records\n    BEGIN SELECT 1; END;'));
    assert.notDeepEqual(noOp, SQLITE_MIGRATIONS, 'the records UPDATE trigger is where this test expects it');
    assert.equal(refusalsOf('sqlite', noOp).get('records')?.update, undefined, 'a trigger that does not RAISE refuses nothing');
    const forgotten = [...SQLITE_MIGRATIONS, 'CREATE TABLE record_notes (\n  record_id TEXT NOT NULL REFERENCES records(id),\n  note TEXT\n);'];
    assert.ok(recordFacts(forgotten).has('record_notes') && !refusalsOf('sqlite', forgotten).has('record_notes'));
    const dropped = [...SQLITE_MIGRATIONS, 'DROP TRIGGER records_no_delete;'];
    assert.equal(refusalsOf('sqlite', dropped).get('records')?.delete, undefined, 'a dropped trigger refuses nothing');
  });
});

/** One column's value for a probe row, by the column's declared type. */
function probeValue(type: string): unknown {
  const t = type.toLowerCase();
  if (/int|serial|numeric|decimal|real|double|float/.test(t)) return 1;
  if (/bool/.test(t)) return true;
  if (/blob|bytea/.test(t)) return Buffer.from([0]);
  if (/json/.test(t)) return '{}';
  if (/timestamp|date/.test(t)) return '2026-01-01T00:00:00Z';
  if (/^_|\[\]|array/.test(t)) return '{}';
  return 'append-only-probe';
}

/** A row in `table` if it has none: foreign keys and CHECKs are set aside (in this throwaway database) so that any table can take one. */
async function ensureRow(store: LedgerStore, table: string): Promise<void> {
  const [{ n }] = await runSql(store, `SELECT count(*) AS n FROM ${table}`) as [{ n: unknown }];
  if (Number(n) > 0) return;
  if (store instanceof SqliteStore) {
    const columns = store.db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string; type: string }>;
    store.db.pragma('foreign_keys = OFF');
    store.db.pragma('ignore_check_constraints = ON');
    try {
      store.db.prepare(`INSERT INTO ${table} (${columns.map((c) => c.name).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`)
        .run(...columns.map((c) => probeValue(c.type)));
    } finally {
      store.db.pragma('ignore_check_constraints = OFF');
      store.db.pragma('foreign_keys = ON');
    }
    return;
  }
  const client: pg.PoolClient = await (store as PostgresStore).pool.connect();
  try {
    const constraints = await client.query(`SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass AND contype IN ('f', 'c')`, [table]);
    for (const c of constraints.rows as Array<{ conname: string }>) await client.query(`ALTER TABLE ${table} DROP CONSTRAINT "${c.conname}"`);
    const columns = (await client.query(`SELECT column_name, udt_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, [table])).rows as Array<{ column_name: string; udt_name: string }>;
    // OVERRIDING SYSTEM VALUE: an identity column (GENERATED ALWAYS) takes the probe's value too.
    await client.query(`INSERT INTO ${table} (${columns.map((c) => c.column_name).join(', ')}) OVERRIDING SYSTEM VALUE VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
      columns.map((c) => probeValue(c.udt_name)));
  } finally {
    client.release();
  }
}

/** The live schema's triggers on `table` (what the migrations left, as the database holds them). */
async function liveTriggers(store: LedgerStore, table: string): Promise<string[]> {
  const rows = store instanceof SqliteStore
    ? await runSql(store, "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = $1", [table])
    : await runSql(store, 'SELECT tgname AS name FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal', [table]);
  return (rows as Array<{ name: string }>).map((r) => r.name);
}

const snapshot = async (store: LedgerStore, table: string) => JSON.stringify(await runSql(store, `SELECT * FROM ${table}`), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));

await forEachStore('the append-only tables refuse UPDATE and DELETE', (kind) => {
  let store: LedgerStore;
  before(async () => {
    store = await kind.open();
  });
  after(async () => {
    await store.close();
    await kind.cleanup();
  });

  for (const table of APPEND_ONLY) {
    test(`${table}: UPDATE and DELETE are refused by its trigger; the row stays as it was`, async () => {
      const refusal = REFUSALS[kind.name].get(table)!;
      assert.ok((await liveTriggers(store, table)).length > 0, `the migrated ${kind.name} database has triggers on ${table}`);
      await ensureRow(store, table);
      const before = await snapshot(store, table);
      const message = new RegExp([...refusal.messages].map((m) => m.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'));
      const [column] = (store instanceof SqliteStore
        ? store.db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>
        // An identity column (GENERATED ALWAYS) refuses any SET before a trigger runs: update another one.
        : await runSql(store, "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND is_identity = 'NO' ORDER BY ordinal_position", [table]) as Array<{ name: string }>);
      if (!GUARDED[table]) await assert.rejects(runSql(store, `UPDATE ${table} SET ${column!.name} = ${column!.name}`), message, `UPDATE ${table}`);
      await assert.rejects(runSql(store, `DELETE FROM ${table}`), message, `DELETE FROM ${table}`);
      assert.equal(await snapshot(store, table), before, `${table} is unchanged`);
    });
  }
});
