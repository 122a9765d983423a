// Issue 16, finding 2: public reads are bounded in size as well as in records. Records whose
// metadata doubles when escaped make a page stop early with its cursor; following the cursors
// still reaches every record exactly once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PAGE_CHAR_BUDGET } from '../../src/ledger/public/reads.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { idempotencyKey, postDecision, testApp, type TestApp } from '../support/app.ts';
import { validDecision } from '../api/record-helpers.ts';

const RECORDS = 40;
/** About 120 KB of request body, twice that once escaped again in a page. */
const heavy = () => validDecision({ metadata: { quotes: '"'.repeat(60_000) } });
const MAX_PAGE = PAGE_CHAR_BUDGET + 512 * 1024; // the budget plus at most one record's text

await forEachStore('public reads bounded in size', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  let handle: string;
  const ids: string[] = [];

  before(async () => {
    store = await kind.open();
    t = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '100000' } });
    const agent = await t.agent();
    handle = agent.handle;
    for (let i = 0; i < RECORDS; i++) {
      const res = await postDecision(t, agent.secret, heavy(), idempotencyKey());
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json().id);
    }
  });
  after(async () => {
    await t.close();
    await store.close();
    await kind.cleanup();
  });

  test('chain pages stop at the budget and their next links reach every record once', async () => {
    const seen: string[] = [];
    let url: string | null = `/v1/agents/${handle}/chain?limit=2000`;
    let pages = 0;
    while (url) {
      const res: { statusCode: number; body: string; json: () => unknown } = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200);
      assert.ok(res.body.length < MAX_PAGE, `a page of ${res.body.length} characters`);
      const page = res.json() as { records: { entry: { id: string } }[]; has_more: boolean; next_after_seq: number | null };
      seen.push(...page.records.map((r) => r.entry.id));
      url = page.has_more ? `/v1/agents/${handle}/chain?limit=2000&after_seq=${page.next_after_seq}` : null;
      pages++;
    }
    assert.ok(pages > 1, 'the budget split the chain');
    assert.deepEqual(seen, ids);
  });

  test('ledger pages stop at the budget and their cursors reach every record once', async () => {
    const seen: string[] = [];
    let url: string | null = '/v1/ledger?limit=200';
    let pages = 0;
    while (url) {
      const res: { statusCode: number; body: string; json: () => unknown } = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200);
      assert.ok(res.body.length < MAX_PAGE, `a page of ${res.body.length} characters`);
      const page = res.json() as { data: { entry: { id: string } }[]; has_more: boolean; next_cursor: string | null };
      seen.push(...page.data.map((r) => r.entry.id));
      url = page.has_more ? `/v1/ledger?limit=200&cursor=${page.next_cursor}` : null;
      pages++;
    }
    assert.ok(pages > 1, 'the budget split the ledger');
    assert.deepEqual(seen, [...ids].reverse());
  });
});
