// The PostgreSQL bounds can be set in the database URL (docs/operations.md, "The bounds the
// service sets"); they are taken off the URL node-postgres gets, and a bad value is one clear error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePostgresUrl } from '../../src/store/postgres/store.ts';

test('the schema and the bounds come off the URL, in milliseconds (connect_timeout in seconds)', () => {
  const parsed = parsePostgresUrl('postgres://ledger@db:5432/ledger?schema=books&connect_timeout=2&query_timeout=3000'
    + '&statement_timeout=2500&idle_in_transaction_session_timeout=4000&append_lock_timeout=1000&application_name=node-1');
  assert.equal(parsed.schema, 'books');
  assert.deepEqual(parsed.timeouts, { connectMs: 2_000, queryMs: 3_000, statementMs: 2_500, idleInTransactionMs: 4_000, appendLockMs: 1_000 });
  assert.equal(parsed.connectionString, 'postgres://ledger@db:5432/ledger?application_name=node-1');
});

test('without them, nothing is overridden', () => {
  assert.deepEqual(parsePostgresUrl('postgres://ledger@db:5432/ledger').timeouts, {});
});

test('a bound that is not a positive integer is refused, naming it', () => {
  for (const bad of ['0', '-5', '1.5', '1e3', 'soon', '']) {
    assert.throws(() => parsePostgresUrl(`postgres://ledger@db/ledger?query_timeout=${bad}`), /query_timeout must be a positive integer/);
  }
});
