// The byte-bounded ledger and chain pages on SQLite: the page's few ids come first, then each of
// their records is looked up by id. Joined plainly, SQLite's planner walked every record in
// sort-key order to spare itself a sort of the page's rows, so a ledger page cost 21 ms of CPU at
// 20,000 records instead of 0.7 (the write benchmark's --against reads found it). The plan is the
// adapter's own choice, so this is SQLite's test; PostgreSQL plans the same SQL by its costs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { boundedChainSql, ledgerSql } from '../../src/store/public-rows.ts';

function plan(store: SqliteStore, sql: string, params: unknown[]): string[] {
  return (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);
}

/** After the page's ids are read, the records are searched by id, and no step scans the records table again. */
function assertLooksUpByPage(steps: string[]): void {
  const page = steps.indexOf('SCAN p');
  assert.ok(page >= 0, `the page is the outer loop: ${steps.join(' | ')}`);
  assert.match(steps[page + 1] ?? '', /^SEARCH r USING INDEX \S+ \(id=\?\)$/, `each record of the page is looked up by id: ${steps.join(' | ')}`);
  assert.deepEqual(steps.slice(page).filter((s) => s.startsWith('SCAN r')), [], 'no scan of the records after the page is known');
}

test('the byte-bounded ledger page and chain page look up only the records of the page', async () => {
  const store = new SqliteStore(':memory:');
  await store.migrate();
  try {
    const ledger = ledgerSql({ limit: 51, includeDemo: false, maxBytes: 1 << 20 }, '?', 'a.demo = 0');
    assertLooksUpByPage(plan(store, ledger.sql, ledger.params));
    const filtered = ledgerSql({ limit: 51, includeDemo: true, maxBytes: 1 << 20, symbol: 'AAPL', beforeSortKey: '01M' }, '?', 'a.demo = 0');
    assertLooksUpByPage(plan(store, filtered.sql, filtered.params));
    assertLooksUpByPage(plan(store, boundedChainSql(() => '?'), ['agt_x', 0, 100, 1 << 20]));
  } finally {
    await store.close();
  }
});
