// The priced_decisions projection on both stores: filled by trigger with each observation (an
// observed decision's terms as the accounting reads them from its content, beside its observation),
// never for an execution, append-only, backfilled by its migration; and the observed prefix the
// pricing scan's cursor vouches for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { termsOf } from '../../src/method/perf/inputs.ts';
import type { PendingPrice, PriceObservation } from '../../src/market/port.ts';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.ts';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { forEachStore, marketFixture, runSql } from '../support/stores.ts';
import { appendExecution, appendRecord, postMany } from '../public/helpers.ts';

const priced = (p: PendingPrice, price: string): PriceObservation => ({
  recordId: p.recordId, agentId: p.agentId, chainSeq: p.chainSeq, symbol: p.symbol, askedAt: p.recordedAt, observedAt: '2026-01-05T15:00:01.000Z',
  source: 'alpaca', feed: 'iex', synthetic: false, status: 'priced', price, providerTime: '2026-01-05T14:59:58Z', ageMs: 3000, stale: false,
});

const unpriced = (p: PendingPrice): PriceObservation => ({
  recordId: p.recordId, agentId: p.agentId, chainSeq: p.chainSeq, symbol: p.symbol, askedAt: p.recordedAt, observedAt: '2026-01-05T15:00:01.000Z',
  source: 'synthetic', feed: null, synthetic: true, status: 'unpriced', reason: 'unknown_symbol: no trade known for ZZZZ',
});

const DECISIONS = [
  { symbol: 'AAPL', action: 'BUY', quantity: '2', time_horizon: '5 days' },
  { symbol: 'MSFT', action: 'SELL', notional: '1000.50' },
  { symbol: 'KO', action: 'INCREASE', target_allocation_pct: '12.5' },
];

await forEachStore('priced decisions', (kind) => {
  const f = marketFixture(kind);

  /** Observes every decision still pending, so that the scan cursor passes them all. */
  const observeAll = async () => f.market.saveObservations((await f.market.pendingPrices('alpaca', 1000)).map((p) => priced(p, '10')));

  /** An agent with decisions 1-3, an execution (4) and an odd decision (5): 1, 2 and 5 observed, 3 left pending. */
  async function agentWithGap() {
    const a = await f.t.agent();
    const ids = await postMany(f.t, a.secret, 3, (i) => DECISIONS[i]!);
    const execution = await appendExecution(f.t, a, 'AAPL');
    // Past the API: terms that are not text read as absent, an unknown action as it stands.
    ids.push(await appendRecord(f.t, a, 'decision', { symbol: 'SPY', action: 'JUMP', quantity: true, notional: { usd: '1' }, time_horizon: null }));
    const pending = (await f.market.pendingPrices('alpaca', 1000)).filter((p) => p.agentId === a.agentId);
    await f.market.saveObservations([priced(pending[0]!, '189.91'), unpriced(pending[1]!), priced(pending[3]!, '500')]);
    await f.market.saveObservations([priced(pending[0]!, '1')]);
    return { a, ids, execution, pending };
  }

  test('each observed decision, by trigger: its terms as read from its content, its observation; no execution, no unobserved decision', async () => {
    const { a, ids } = await agentWithGap();
    const rows = await f.market.pricedDecisions(a.agentId, 0, 10, 10);
    assert.deepEqual(rows.map((r) => r.chainSeq), [1, 2, 5]);
    const [chain1] = await f.store.listChain(a.agentId, 0, 1);
    assert.deepEqual(rows[0], {
      chainSeq: 1, id: ids[0], recordedAt: chain1!.recordedAt,
      terms: { symbol: 'AAPL', action: 'BUY', targetAllocationPct: null, quantity: '2', notional: null, timeHorizon: '5 days' },
      observation: { status: 'priced', price: '189.91', source: 'alpaca', feed: 'iex', synthetic: false },
    }, 'the first observation only: a second one for the same decision adds no row');
    assert.deepEqual(rows[1]!.observation, { status: 'unpriced', reason: 'unknown_symbol: no trade known for ZZZZ', source: 'synthetic', feed: null, synthetic: true });
    assert.deepEqual(rows[2]!.terms, { symbol: 'SPY', action: 'JUMP', targetAllocationPct: null, quantity: null, notional: null, timeHorizon: null }, 'true, an object or null where text is expected reads as absent');
    const inputs = await f.market.chainInputs(a.agentId, 0, 10);
    for (const r of rows) assert.deepEqual(r.terms, termsOf(inputs.find((i) => i.id === r.id)!), `record ${r.chainSeq}: the same terms as the content document`);

    assert.deepEqual((await f.market.pricedDecisions(a.agentId, 1, 10, 10)).map((r) => r.chainSeq), [2, 5], 'after a seq');
    assert.deepEqual((await f.market.pricedDecisions(a.agentId, 0, 4, 10)).map((r) => r.chainSeq), [1, 2], 'through a seq');
    assert.deepEqual((await f.market.pricedDecisions(a.agentId, 0, 10, 1)).map((r) => r.chainSeq), [1], 'at most the limit');
    await observeAll();
  });

  test('append-only: the database refuses UPDATE and DELETE', async () => {
    const { ids } = await agentWithGap();
    await assert.rejects(runSql(f.store, "UPDATE priced_decisions SET price = '1' WHERE record_id = $1", [ids[0]]), /priced_decisions_are_append_only/);
    await assert.rejects(runSql(f.store, 'DELETE FROM priced_decisions WHERE record_id = $1', [ids[0]]), /priced_decisions_are_append_only/);
    if (kind.name === 'postgres') await assert.rejects(runSql(f.store, 'TRUNCATE priced_decisions'), /priced_decisions_are_append_only/);
    await observeAll();
  });

  test('the observed prefix: up to the record before the scan cursor, never past a pending decision, at most the head', async () => {
    await observeAll();
    const { a, pending } = await agentWithGap();
    assert.equal(await f.market.observedPrefix(a.agentId, 5), 0, 'the cursor has not passed the first decision yet');
    await f.market.pendingPrices('alpaca', 1000);
    assert.equal(await f.market.observedPrefix(a.agentId, 5), 2, 'the cursor stops at decision 3, pending');
    assert.equal(await f.market.observedPrefix(a.agentId, 1), 1, 'at most the head asked for');
    await f.market.saveObservations([priced(pending[2]!, '60')]);
    await f.market.pendingPrices('alpaca', 1000);
    assert.equal(await f.market.observedPrefix(a.agentId, 5), 4, 'nothing pending: the cursor is the newest decision, the prefix the record before it');
    const b = await f.t.agent();
    assert.equal(await f.market.observedPrefix(b.agentId, 0), 0, 'an agent with no records');
  });

  test('the migration backfills the observations made before it', async () => {
    const { a } = await agentWithGap();
    await observeAll();
    const before = await f.market.pricedDecisions(a.agentId, 0, 10, 10);
    assert.equal(before.length, 4);
    // The projection's migration by its content: later migrations come after it.
    const version = (kind.name === 'postgres' ? POSTGRES_MIGRATIONS : SQLITE_MIGRATIONS).findIndex((m) => m.includes('CREATE TABLE priced_decisions')) + 1;
    assert.ok(version > 0);
    // Back to the schema before the projection's migration, the observations kept.
    const drop = kind.name === 'postgres'
      ? ['DROP TABLE priced_decisions', 'DROP TRIGGER price_observations_project ON price_observations', 'DROP FUNCTION price_observations_project()', 'DROP FUNCTION priced_decisions_are_append_only()']
      : ['DROP TRIGGER price_observations_project', 'DROP TABLE priced_decisions'];
    for (const statement of [...drop, `DELETE FROM schema_migrations WHERE version = ${version}`]) await runSql(f.store, statement);
    await f.store.migrate();
    assert.deepEqual(await f.market.pricedDecisions(a.agentId, 0, 10, 10), before);
    const [counts] = await runSql(f.store, "SELECT (SELECT count(*) FROM priced_decisions) AS projected, (SELECT count(*) FROM price_observations o JOIN records r ON r.id = o.record_id WHERE r.type = 'decision') AS observed") as Array<{ projected: unknown; observed: unknown }>;
    assert.equal(Number(counts!.projected), Number(counts!.observed), 'every observed decision, of every agent');
  });
});
