import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { seed } from '../../bench/seed.ts';
import { openStore } from '../../src/store/open.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { appendExecution, assertError, get, postMany } from './helpers.ts';

type Item = { entry: { id: string; agent: string; type: string; seq: string }; document: { symbol?: string }; proof_url: string };

async function walk(t: TestApp, query: string): Promise<Item[]> {
  const items: Item[] = [];
  let url = `/v1/ledger?${query}`;
  for (;;) {
    const res = await get(t, url);
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json();
    items.push(...page.data);
    if (!page.has_more) return items;
    assert.equal(page.next_cursor, page.data[page.data.length - 1].entry.id);
    url = `/v1/ledger?${query}${query ? '&' : ''}cursor=${page.next_cursor}`;
  }
}

await forEachStore('GET /v1/ledger', (kind) => {
  let t: TestApp;
  let alice: Awaited<ReturnType<TestApp['agent']>>;
  let bob: Awaited<ReturnType<TestApp['agent']>>;
  let demo: Awaited<ReturnType<TestApp['agent']>>;
  let order: string[]; // every non-demo record id, oldest first
  let execution: string;
  before(async () => {
    t = await testApp(await kind.open());
    alice = await t.agent();
    bob = await t.agent();
    demo = await t.agent(undefined, { demo: true });
    order = [];
    for (let i = 0; i < 4; i++) {
      order.push(...await postMany(t, alice.secret, 1, () => ({ symbol: i % 2 ? 'MSFT' : 'AAPL', action: 'BUY' })));
      order.push(...await postMany(t, bob.secret, 1, () => ({ symbol: 'AAPL', action: 'SELL' })));
      await postMany(t, demo.secret, 1, () => ({ symbol: 'AAPL', action: 'HOLD' }));
    }
    execution = await appendExecution(t, alice, 'MSFT');
    order.push(execution);
  });
  after(() => closeTestApp(t, kind));

  test('newest first by id, demo agents hidden by default, each item verifiable and linked to its proof', async () => {
    const res = await get(t, '/v1/ledger');
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json();
    assert.equal(page.object, 'list');
    assert.equal(page.has_more, false);
    assert.equal(page.next_cursor, null);
    assert.deepEqual(page.data.map((i: Item) => i.entry.id), [...order].reverse());
    assert.ok(page.data.every((i: Item) => i.entry.agent !== demo.handle));
    assert.match(page.data[0].proof_url, new RegExp(`/v1/proof/${execution}$`));
  });

  test('include_demo=true shows demo records', async () => {
    const all = await walk(t, 'include_demo=true');
    assert.equal(all.length, order.length + 4);
    assert.equal(all.filter((i) => i.entry.agent === demo.handle).length, 4);
  });

  test('limit and cursor page through everything exactly once', async () => {
    const items = await walk(t, 'limit=3');
    assert.deepEqual(items.map((i) => i.entry.id), [...order].reverse());
    const before = (await get(t, `/v1/ledger?cursor=${order[2]}`)).json();
    assert.deepEqual(before.data.map((i: Item) => i.entry.id), [order[1], order[0]]);
    assert.ok((await get(t, '/v1/ledger?limit=200')).statusCode === 200);
    const next = (await get(t, '/v1/ledger?limit=2&symbol=AAPL')).json().next;
    assert.match(next, /\/v1\/ledger\?limit=2&cursor=dec_[0-9A-Z]{26}&symbol=AAPL$/);
  });

  test('filters: symbol, agent, type, and their combinations', async () => {
    const ids = (items: Item[]) => items.map((i) => i.entry.id);
    const msft = await walk(t, 'symbol=MSFT');
    assert.deepEqual(ids(msft), [execution, order[6], order[2]]);
    assert.ok(msft.every((i) => i.document.symbol === 'MSFT'));
    const bobs = await walk(t, `agent=${bob.handle}`);
    assert.equal(bobs.length, 4);
    assert.ok(bobs.every((i) => i.entry.agent === bob.handle));
    assert.deepEqual(ids(await walk(t, 'type=execution')), [execution]);
    assert.equal((await walk(t, 'type=decision')).length, order.length - 1);
    assert.deepEqual(ids(await walk(t, `type=execution&agent=${bob.handle}`)), []);
    assert.equal((await walk(t, `symbol=AAPL&agent=${alice.handle}&type=decision`)).length, 2);
    assert.equal((await walk(t, `agent=${demo.handle}&include_demo=true`)).length, 4);
    assert.deepEqual(await walk(t, 'symbol=NOPE'), []);
  });

  test('every bad value is a 400 naming its parameter; an unknown agent is a 404', async () => {
    for (const [query, param] of [
      ['limit=201', 'limit'], ['limit=0', 'limit'], ['limit=x', 'limit'],
      ['cursor=nope', 'cursor'], ['cursor=dec_0000', 'cursor'], ['symbol=', 'symbol'], ['symbol=ABCDEFGHIJKLMNOPQRSTU', 'symbol'],
      ['agent=Not%20A%20Handle', 'agent'], ['type=trade', 'type'], ['include_demo=yes', 'include_demo'], ['page=2', 'page'],
      [`agent=${demo.handle}`, 'include_demo'],
    ]) {
      assertError(await get(t, `/v1/ledger?${query}`), 400, 'invalid_request', param);
    }
    assertError(await get(t, '/v1/ledger?agent=nobody-at-all'), 404, 'not_found', 'agent');
  });
});

await forEachStore('GET /v1/ledger at 10,000 records while writes continue', (kind) => {
  let t: TestApp;
  let url: string;
  before(async () => {
    url = await kind.freshUrl();
    const store = openStore(url);
    await store.migrate();
    t = await testApp(store, { env: { LEDGER_READ_LIMIT_PER_MIN: '100000', LEDGER_WRITE_LIMIT_PER_MIN: '100000' } });
  });
  after(() => closeTestApp(t, kind));

  describe('paging', () => {
    test('loses and duplicates nothing', async () => {
      const seeded = await seed(t.store, url, { whale: 9_000, smallAgents: 4, perSmall: 250, handlePrefix: `page${process.pid}` });
      const existing = (await t.store.listLedger({ limit: 1_000_000, includeDemo: false })).map((r) => r.id);
      assert.ok(existing.length >= 9_750, `${existing.length} records`);
      // Writers keep recording (through the real record path) on every seeded agent while we page.
      let stop = false;
      const written: string[] = [];
      const writers = [seeded.whale, ...seeded.small].map(async (a, w) => {
        for (let i = 0; !stop; i++) {
          const res = await postDecision(t, a.secret, { symbol: 'AAPL', action: 'BUY', quantity: String(w * 1000 + i + 1) });
          assert.equal(res.statusCode, 201, res.body);
          written.push(res.json().id);
        }
      });
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await get(t, `/v1/ledger?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(res.statusCode, 200, res.body);
        const page = res.json();
        seen.push(...page.data.map((i: Item) => i.entry.id));
        cursor = page.next_cursor;
        pages++;
        await new Promise((r) => setImmediate(r)); // let the writers in between pages
      } while (cursor);
      stop = true;
      await Promise.all(writers);
      assert.ok(written.length > 0, 'writes happened during the walk');
      assert.equal(new Set(seen).size, seen.length, 'no record twice');
      const seenSet = new Set(seen);
      const missing = existing.filter((id) => !seenSet.has(id));
      assert.deepEqual(missing, [], 'every record that existed when the walk began was seen');
      const known = new Set([...existing, ...written]);
      assert.ok(seen.every((id) => known.has(id)), 'nothing but real records');
      const keys = seen.map((id) => id.slice(4));
      assert.ok(keys.every((k, i) => i === 0 || k < keys[i - 1]!), 'strictly newest first');
      assert.ok(pages >= 49, `${pages} pages`);
    });
  });
});
