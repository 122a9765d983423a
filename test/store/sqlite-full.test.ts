// A SQLite database that cannot grow (SQLITE_FULL; here capped with PRAGMA max_page_count, as a
// full disk does on a real one: test/faults/disk-full.test.ts) refuses writes with 503
// service_unavailable and Retry-After, all of a batch at once and nothing half-written; reads go
// on; once it can grow again, writes are recorded again.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { idempotencyKey, postDecision, testApp, type TestApp } from '../support/app.ts';
import { assertChainVerifies, assertError, headOf } from '../api/record-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'ledger-sqlite-full-'));
let store: SqliteStore;
let t: TestApp;

before(async () => {
  store = new SqliteStore(join(dir, 'ledger.db'));
  await store.migrate();
  t = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '100000' } });
});
after(async () => {
  await t?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const large = (i: number) => ({ symbol: 'AAPL', action: 'BUY', quantity: String(i + 1), metadata: { notes: 'x'.repeat(50_000) } });

test('a database that cannot grow answers 503 with Retry-After, then records again once it can', async () => {
  const agent = await t.agent();
  assert.equal((await postDecision(t, agent.secret, large(0))).statusCode, 201);
  const pages = Number(store.db.pragma('page_count', { simple: true }));
  store.db.pragma(`max_page_count = ${pages + 2}`);
  const head = await headOf(store, agent.agentId);

  const refused = await Promise.all([1, 2, 3].map((i) => postDecision(t, agent.secret, large(i), idempotencyKey())));
  for (const res of refused) {
    assertError(res, 503, 'service_unavailable', null);
    assert.equal(res.headers['retry-after'], '2');
  }
  assert.equal(await headOf(store, agent.agentId), head, 'nothing was recorded');
  assert.equal((await t.app.inject({ url: `/v1/agents/${agent.handle}` })).statusCode, 200, 'reads go on');

  store.db.pragma('max_page_count = 1073741823');
  assert.equal((await postDecision(t, agent.secret, large(4))).statusCode, 201);
  await assertChainVerifies(store, agent, 2);
});
