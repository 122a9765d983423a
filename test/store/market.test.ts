// The market storage port (market/port.ts) on both stores: pending decisions and the scan cursor,
// observations (insert-if-absent, append-only by trigger), raw closes (the same), stored reports
// (replaceable), and the pricing job's hold.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { MarketStore, PendingPrice, PriceObservation } from '../../src/market/port.ts';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { PostgresStore } from '../../src/store/postgres/store.ts';
import { forEachStore, runSql as sql } from '../support/stores.ts';
import { testApp, type TestApp } from '../support/app.ts';
import { appendExecution, postMany } from '../public/helpers.ts';

const OBSERVED_AT = '2026-01-05T15:00:01.000Z';

function priced(p: PendingPrice, price = '101.5'): PriceObservation {
  return {
    recordId: p.recordId, agentId: p.agentId, chainSeq: p.chainSeq, symbol: p.symbol, askedAt: p.recordedAt, observedAt: OBSERVED_AT,
    source: 'alpaca', feed: 'iex', synthetic: false, status: 'priced', price, providerTime: '2026-01-05T14:59:58.123456Z', ageMs: 1877, stale: false,
  };
}

function unpriced(p: PendingPrice): PriceObservation {
  return {
    recordId: p.recordId, agentId: p.agentId, chainSeq: p.chainSeq, symbol: p.symbol, askedAt: p.recordedAt, observedAt: OBSERVED_AT,
    source: 'synthetic', feed: null, synthetic: true, status: 'unpriced', reason: 'unknown_symbol: no trade known for ZZZZ',
  };
}

await forEachStore('the market store', (kind) => {
  let store: LedgerStore;
  let market: MarketStore;
  let t: TestApp;
  before(async () => {
    store = openStore(await kind.freshUrl());
    await store.migrate();
    market = store.market;
    t = await testApp(store);
  });
  after(async () => {
    await t.close();
    await store.close();
    await kind.cleanup();
  });

  test('pending: decisions without an observation, oldest first, executions left out; observed ones leave it', async () => {
    const a = await t.agent();
    const ids = await postMany(t, a.secret, 3, (i) => ({ symbol: ['AAPL', 'BTC/USD', 'MSFT'][i], action: 'BUY', ...(i === 1 ? { asset_class: 'CRYPTO' } : {}) }));
    await appendExecution(t, a, 'AAPL');
    const more = await postMany(t, a.secret, 1, () => ({ symbol: 'SPY', action: 'SELL', asset_class: 'ETF' }));
    const pending = await market.pendingPrices('alpaca', 10);
    assert.deepEqual(pending.map((p) => p.recordId), [...ids, ...more]);
    assert.deepEqual(pending.map((p) => [p.symbol, p.assetClass, p.chainSeq]), [['AAPL', 'US_EQUITY', 1], ['BTC/USD', 'CRYPTO', 2], ['MSFT', 'US_EQUITY', 3], ['SPY', 'ETF', 5]]);
    const record = await store.findRecord(ids[0]!);
    assert.equal(pending[0]!.recordedAt, record!.recordedAt);
    assert.equal(pending[0]!.agentId, a.agentId);
    assert.equal(await market.countPendingPrices(100), 4);
    assert.equal(await market.countPendingPrices(2), 2, 'the count stops at its cap');
    assert.deepEqual((await market.pendingPrices('alpaca', 2)).map((p) => p.recordId), ids.slice(0, 2));

    await market.saveObservations([priced(pending[0]!), unpriced(pending[2]!)]);
    assert.deepEqual((await market.pendingPrices('alpaca', 10)).map((p) => p.recordId), [ids[1], more[0]]);
    assert.deepEqual((await market.pendingPrices('synthetic', 10)).map((p) => p.recordId), [ids[1], more[0]], 'one observation per decision, whatever the source');
    await market.saveObservations([priced(pending[1]!), priced(pending[3]!)]);
    assert.deepEqual(await market.pendingPrices('alpaca', 10), []);
    assert.equal(await market.countPendingPrices(100), 0);
  });

  test('the scan cursor: moves past observed decisions only, never past a pending one, and finds new decisions', async () => {
    const a = await t.agent();
    const ids = await postMany(t, a.secret, 4);
    const first = await market.pendingPrices('alpaca', 10);
    assert.deepEqual(first.map((p) => p.recordId), ids);
    // The second stays pending (a provider outage): the others are observed.
    await market.saveObservations([first[0]!, first[2]!, first[3]!].map((p) => priced(p)));
    assert.deepEqual((await market.pendingPrices('alpaca', 10)).map((p) => p.recordId), [ids[1]]);
    const [cursor] = await sql(store, 'SELECT sort_key FROM price_scan WHERE id = 1') as { sort_key: string }[];
    assert.equal(cursor!.sort_key, ids[1]!.slice(4), 'the cursor stops at the oldest pending decision');
    const later = await postMany(t, a.secret, 2);
    assert.deepEqual((await market.pendingPrices('alpaca', 10)).map((p) => p.recordId), [ids[1], ...later]);
    await market.saveObservations([first[1]!].map((p) => priced(p)));
    assert.deepEqual((await market.pendingPrices('alpaca', 10)).map((p) => p.recordId), later);
    const pend = await market.pendingPrices('alpaca', 10);
    await market.saveObservations(pend.map((p) => priced(p)));
    assert.deepEqual(await market.pendingPrices('alpaca', 10), []);
    const [moved] = await sql(store, 'SELECT sort_key FROM price_scan WHERE id = 1') as { sort_key: string }[];
    assert.equal(moved!.sort_key, later[1]!.slice(4), 'with nothing pending, the cursor is the newest decision');
    const newest = await postMany(t, a.secret, 1);
    assert.deepEqual((await market.pendingPrices('alpaca', 10)).map((p) => p.recordId), newest);
    await market.saveObservations((await market.pendingPrices('alpaca', 10)).map((p) => priced(p)));
  });

  test('observations: insert-if-absent, read back exactly, in chain order, counted', async () => {
    const a = await t.agent();
    const ids = await postMany(t, a.secret, 3);
    const pending = (await market.pendingPrices('alpaca', 10)).filter((p) => p.agentId === a.agentId);
    const first = priced(pending[0]!, '189.91');
    await market.saveObservations([first, unpriced(pending[2]!)]);
    await market.saveObservations([priced(pending[0]!, '1'), unpriced(pending[0]!)]);
    assert.deepEqual(await market.observationOf(ids[0]!), first, 'the first observation stays');
    assert.deepEqual(await market.observationOf(ids[2]!), unpriced(pending[2]!));
    assert.equal(await market.observationOf(ids[1]!), null);
    assert.deepEqual((await market.observationsOf(a.agentId, 0, 10)).map((o) => o.chainSeq), [1, 3]);
    assert.deepEqual((await market.observationsOf(a.agentId, 1, 10)).map((o) => o.chainSeq), [3]);
    assert.deepEqual((await market.observationsOf(a.agentId, 0, 1)).map((o) => o.chainSeq), [1]);
    assert.equal(await market.countObservations(a.agentId, 3), 2);
    assert.equal(await market.countObservations(a.agentId, 2), 1);
    await market.saveObservations([priced(pending[1]!), priced(pending[1]!, '2'), priced(pending[0]!, '3')]);
    assert.equal(await market.countObservations(a.agentId, 3), 3, 'counted once each, duplicates in one call included');
    assert.equal((await market.observationOf(ids[1]!))?.status === 'priced' && (await market.observationOf(ids[1]!) as { price: string }).price, '101.5');
  });

  test('chain inputs: each record in chain order with its own fields and its observation (none for an execution or a decision not observed)', async () => {
    const a = await t.agent();
    const ids = await postMany(t, a.secret, 3, (i) => ({ symbol: ['AAPL', 'MSFT', 'KO'][i], action: 'BUY', quantity: String(i + 1) }));
    const execution = await appendExecution(t, a, 'AAPL');
    const pending = (await market.pendingPrices('alpaca', 100)).filter((p) => p.agentId === a.agentId);
    await market.saveObservations([priced(pending[0]!, '189.91'), unpriced(pending[2]!)]);
    const all = await market.chainInputs(a.agentId, 0, 10);
    const chain = await store.listChain(a.agentId, 0, 10);
    assert.deepEqual(all.map((r) => r.chainSeq), [1, 2, 3, 4]);
    assert.deepEqual(all.map((r) => r.id), [...ids, execution]);
    for (const [i, r] of all.entries()) {
      const full = chain[i]!;
      assert.deepEqual([r.type, r.recordedAt, r.symbol, r.content], [full.type, full.recordedAt, full.symbol, full.content]);
    }
    assert.deepEqual(all.map((r) => r.observation), [
      { status: 'priced', price: '189.91', source: 'alpaca', feed: 'iex', synthetic: false },
      null,
      { status: 'unpriced', reason: 'unknown_symbol: no trade known for ZZZZ', source: 'synthetic', feed: null, synthetic: true },
      null,
    ]);
    assert.deepEqual((await market.chainInputs(a.agentId, 2, 10)).map((r) => r.chainSeq), [3, 4], 'after a seq');
    assert.deepEqual((await market.chainInputs(a.agentId, 0, 2)).map((r) => r.chainSeq), [1, 2], 'at most the limit');
    assert.deepEqual(await market.chainInputs(a.agentId, 4, 10), []);
  });

  test('observations are append-only: the database refuses UPDATE and DELETE, and a priced row without its price', async () => {
    const a = await t.agent();
    const [id] = await postMany(t, a.secret, 1);
    const [p] = (await market.pendingPrices('alpaca', 10)).filter((x) => x.recordId === id);
    await market.saveObservations([priced(p!)]);
    await assert.rejects(sql(store, "UPDATE price_observations SET price = '1' WHERE record_id = $1", [id]), /price_observations_are_append_only/);
    await assert.rejects(sql(store, 'DELETE FROM price_observations WHERE record_id = $1', [id]), /price_observations_are_append_only/);
    if (kind.name === 'postgres') await assert.rejects(sql(store, 'TRUNCATE price_observations'), /price_observations_are_append_only/);
    assert.deepEqual(await market.observationOf(id!), priced(p!));
    const [q] = await postMany(t, a.secret, 1);
    await assert.rejects(sql(store, `INSERT INTO price_observations (record_id, agent_id, chain_seq, symbol, asked_at, observed_at, source, synthetic, status)
      VALUES ($1, $2, 2, 'AAPL', 'x', 'y', 'alpaca', ${kind.name === 'postgres' ? 'false' : '0'}, 'priced')`, [q, a.agentId]), /CHECK|check/);
  });

  test('raw closes: kept by source, symbol and date, the first answer stands, append-only; the old split-adjusted cache is never read', async () => {
    const at = '2026-01-07T00:05:00.000Z';
    // A row of the split-adjusted cache of before issue 25: never read as a raw close.
    await sql(store, "INSERT INTO market_closes (source, symbol, date, close) VALUES ('alpaca', 'SPY', '2026-01-02', '10')");
    await market.saveCloses('alpaca', 'SPY', [{ date: '2026-01-02', close: '100' }, { date: '2026-01-05', close: '101.25' }, { date: '2026-01-06', close: '99' }], at);
    await market.saveCloses('synthetic', 'SPY', [{ date: '2026-01-05', close: '7' }], at);
    await market.saveCloses('alpaca', 'SPY', [{ date: '2026-01-06', close: '99.5' }, { date: '2026-01-07', close: '98' }], '2026-01-08T00:05:00.000Z');
    await market.saveCloses('alpaca', 'SPY', [], at);
    assert.deepEqual(await market.closes('alpaca', 'SPY', '2026-01-03', '2026-01-07'),
      [{ date: '2026-01-05', close: '101.25' }, { date: '2026-01-06', close: '99' }, { date: '2026-01-07', close: '98' }], 'a stored close is never replaced');
    assert.deepEqual(await market.closes('alpaca', 'SPY', '2026-01-01', '2026-01-02'), [{ date: '2026-01-02', close: '100' }]);
    assert.deepEqual(await market.closes('synthetic', 'SPY', '2026-01-01', '2026-12-31'), [{ date: '2026-01-05', close: '7' }]);
    assert.deepEqual(await market.closes('alpaca', 'AAPL', '2026-01-01', '2026-12-31'), []);
    const [row] = (await sql(store, "SELECT fetched_at FROM market_raw_closes WHERE source = 'alpaca' AND symbol = 'SPY' AND date = '2026-01-07'")) as Array<{ fetched_at: string }>;
    assert.equal(row!.fetched_at, '2026-01-08T00:05:00.000Z');
    await assert.rejects(sql(store, "UPDATE market_raw_closes SET close = '1' WHERE symbol = 'SPY'"), /market_raw_closes_are_append_only/);
    await assert.rejects(sql(store, "DELETE FROM market_raw_closes WHERE symbol = 'SPY'"), /market_raw_closes_are_append_only/);
    if (kind.name === 'postgres') await assert.rejects(sql(store, 'TRUNCATE market_raw_closes'), /market_raw_closes_are_append_only/);
  });

  test('reports: one per agent and portfolio, replaced as they grow', async () => {
    const a = await t.agent();
    assert.equal(await store.performance.report(a.agentId, 'model'), null);
    const model = { agentId: a.agentId, portfolio: 'model' as const, throughSeq: 3, asOf: '2026-01-05', computedAt: OBSERVED_AT, report: '{"v":1}' };
    await store.performance.saveReport(model);
    await store.performance.saveReport({ ...model, portfolio: 'broker', report: '{"b":1}' });
    assert.deepEqual(await store.performance.report(a.agentId, 'model'), model);
    const grown = { ...model, throughSeq: 9, asOf: '2026-01-06', computedAt: '2026-01-06T21:00:00.000Z', report: '{"v":2}' };
    await store.performance.saveReport(grown);
    assert.deepEqual(await store.performance.report(a.agentId, 'model'), grown);
    assert.equal((await store.performance.report(a.agentId, 'broker'))!.report, '{"b":1}');
  });

  test('the pricing hold: one at a time; released, it can be taken again', async () => {
    const hold = await market.tryPricingHold();
    assert.ok(hold, 'the first asks gets it');
    assert.equal(hold.lost, false);
    assert.equal(await market.tryPricingHold(), null, 'a second job in this process waits');
    if (kind.name === 'postgres') {
      // Another node: its own pool on the same schema.
      const other = new PostgresStore({ connectionString: (store as PostgresStore).pool.options.connectionString!, schema: (store as PostgresStore).schema });
      try {
        assert.equal(await other.market.tryPricingHold(), null, 'another node waits too');
        await hold.release();
        const taken = await other.market.tryPricingHold();
        assert.ok(taken, 'released, another node takes it');
        assert.equal(await market.tryPricingHold(), null);
        await taken.release();
      } finally {
        await other.close();
      }
    } else {
      await hold.release();
    }
    const again = await market.tryPricingHold();
    assert.ok(again);
    await again.release();
  });
});
