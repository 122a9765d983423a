// On PostgreSQL, appends from every process serialise on one advisory lock per schema, held to
// commit, so record ids follow commit order across API nodes: an append waits while another
// connection (standing in for another process's batch) holds that lock, and goes through once
// it is released.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { appendLockKey, parsePostgresUrl, PostgresStore } from '../../src/store/postgres/store.ts';
import { dropPostgresSchema, freshPostgresUrl, POSTGRES_URL, skipUnless } from '../support/services.ts';
import { postDecision, testApp, type TestApp } from '../support/app.ts';
import { validDecision } from '../api/record-helpers.ts';

const skip = await skipUnless('postgres');
const url = freshPostgresUrl();
let store: PostgresStore;
let t: TestApp;

before(async () => {
  if (skip) return;
  store = new PostgresStore(parsePostgresUrl(url));
  await store.migrate();
  t = await testApp(store);
});
after(async () => {
  if (skip) return;
  await t.close();
  await store.close();
  await dropPostgresSchema(url);
});

test('an append waits for the append lock another process holds, then commits', { skip }, async () => {
  const agent = await t.agent();
  const other = new pg.Client({ connectionString: POSTGRES_URL });
  await other.connect();
  try {
    await other.query('BEGIN');
    await other.query('SELECT pg_advisory_xact_lock(hashtext($1))', [appendLockKey(store.schema)]);
    let answered = false;
    const posting = postDecision(t, agent.secret, validDecision()).then((res) => {
      answered = true;
      return res;
    });
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(answered, false, 'the append waited for the lock');
    await other.query('COMMIT');
    const res = await posting;
    assert.equal(res.statusCode, 201, res.body);
  } finally {
    await other.end();
  }
});
