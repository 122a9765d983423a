// On PostgreSQL, the service's two pools name their connections (docs/operations.md, the read
// pool's row): an operator tells the writes' connections from the public reads' in pg_stat_activity.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { parsePostgresUrl, PostgresStore } from '../../src/store/postgres/store.ts';
import { runAsPublicRead } from '../../src/runtime/read-scope.ts';
import { dropPostgresSchema, freshPostgresUrl, POSTGRES_URL, skipUnless } from '../support/services.ts';

const skip = await skipUnless('postgres');
const url = freshPostgresUrl();
let store: PostgresStore;

before(async () => {
  if (skip) return;
  store = new PostgresStore(parsePostgresUrl(url));
  await store.migrate();
});
after(async () => {
  if (skip) return;
  await store.close();
  await dropPostgresSchema(url);
});

test('the writes\' pool and the public reads\' pool name their connections apart', { skip }, async () => {
  await store.newestSortKey();
  await runAsPublicRead(() => store.newestSortKey());
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query("SELECT DISTINCT application_name FROM pg_stat_activity WHERE application_name LIKE 'decision-ledger%' ORDER BY 1");
    assert.deepEqual(rows.map((r) => r.application_name), ['decision-ledger', 'decision-ledger reads']);
  } finally {
    await admin.end();
  }
});
