// Corporate actions as facts (issue 25) in the market sub-port, on both stores: append-only (the
// database refuses UPDATE, DELETE and TRUNCATE), a re-fetch writes nothing, a provider's correction
// is a new revision that supersedes the earlier one (kept in the history), current reads by symbol;
// and the priced symbols the pricing job keeps facts for; the days whose actions were asked about.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CorporateActionFacts, MarketStore } from '../../src/market/port.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore, runSql as sql } from '../support/stores.ts';
import { testApp, type TestApp } from '../support/app.ts';
import { postMany } from '../public/helpers.ts';

const SEEN = '2026-03-02T00:10:00.000Z';
const LATER = '2026-03-09T00:10:00.000Z';

function split(id: string, symbol: string, exDate: string, over: Partial<CorporateActionFacts> = {}): CorporateActionFacts {
  const base = {
    provider_id: id, source: 'alpaca' as const, type: 'forward_split', symbol, ex_date: exDate, payable_date: '2026-02-27', process_date: exDate,
    record_date: '2026-02-20', old_rate: '1', new_rate: '10', rate: null, special: null,
  };
  const a = { ...base, ...over };
  return { ...a, raw: JSON.stringify({ id, symbol: a.symbol, ex_date: a.ex_date, new_rate: a.new_rate, old_rate: a.old_rate }), ...(over.raw ? { raw: over.raw } : {}) };
}

function dividend(id: string, symbol: string, exDate: string, rate: string, special = false): CorporateActionFacts {
  return {
    provider_id: id, source: 'alpaca', type: 'cash_dividend', symbol, ex_date: exDate, payable_date: '2026-03-20', process_date: '2026-03-20',
    record_date: exDate, old_rate: null, new_rate: null, rate, special, raw: JSON.stringify({ id, symbol, rate, special }),
  };
}

await forEachStore('corporate actions in the market store', (kind) => {
  let store: LedgerStore;
  let market: MarketStore;
  before(async () => {
    store = await kind.open();
    market = store.market;
  });
  after(async () => {
    await store.close();
    await kind.cleanup();
  });

  test('stored with their provider id and when they were seen; current by symbol in ex-date order', async () => {
    const saved = await market.saveCorporateActions([
      dividend('d-1', 'NVDA', '2026-03-05', '0.01'),
      split('s-1', 'NVDA', '2026-03-02'),
      dividend('d-2', 'MSFT', '2026-03-04', '0.83', true),
    ], SEEN);
    assert.deepEqual(saved, { added: 3, revised: 0 });
    const nvda = await market.corporateActions('alpaca', 'NVDA');
    assert.deepEqual(nvda.map((a) => [a.provider_id, a.type, a.ex_date, a.revision, a.seen_at, a.superseded_by]),
      [['s-1', 'forward_split', '2026-03-02', 1, SEEN, null], ['d-1', 'cash_dividend', '2026-03-05', 1, SEEN, null]]);
    const { id, revision, seen_at, superseded_by, ...facts } = nvda[0]!;
    assert.deepEqual(facts, split('s-1', 'NVDA', '2026-03-02'), 'every member read back as written');
    assert.ok(id > 0 && revision === 1 && seen_at === SEEN && superseded_by === null);
    const [msft] = await market.corporateActions('alpaca', 'MSFT');
    assert.equal(msft!.special, true);
    assert.equal(msft!.rate, '0.83');
    assert.deepEqual(await market.corporateActions('synthetic', 'NVDA'), [], 'kept by source');
  });

  test('a re-fetch of the same actions writes nothing', async () => {
    const before = await sql(store, 'SELECT COUNT(*) AS n FROM corporate_actions');
    const saved = await market.saveCorporateActions([split('s-1', 'NVDA', '2026-03-02'), dividend('d-1', 'NVDA', '2026-03-05', '0.01')], LATER);
    assert.deepEqual(saved, { added: 0, revised: 0 });
    assert.deepEqual(await sql(store, 'SELECT COUNT(*) AS n FROM corporate_actions'), before);
    assert.ok((await market.corporateActions('alpaca', 'NVDA')).every((a) => a.seen_at === SEEN));
  });

  test('a correction under the same provider id is a new revision that supersedes; the history keeps both, and a move to another symbol leaves the first', async () => {
    const corrected = dividend('d-1', 'NVDA', '2026-03-05', '0.1');
    assert.deepEqual(await market.saveCorporateActions([corrected], LATER), { added: 0, revised: 1 });
    assert.deepEqual(await market.saveCorporateActions([corrected], LATER), { added: 0, revised: 0 }, 'the correction re-fetched writes nothing');
    const current = await market.corporateActions('alpaca', 'NVDA');
    assert.deepEqual(current.map((a) => [a.provider_id, a.rate, a.revision, a.seen_at]), [['s-1', null, 1, SEEN], ['d-1', '0.1', 2, LATER]]);
    const history = await market.corporateActionHistory('alpaca', 'NVDA');
    assert.deepEqual(history.map((a) => [a.provider_id, a.revision, a.rate, a.seen_at]),
      [['d-1', 1, '0.01', SEEN], ['s-1', 1, null, SEEN], ['d-1', 2, '0.1', LATER]]);
    const first = history[0]!;
    assert.equal(first.superseded_by, history[2]!.id, 'the first revision names the one that superseded it');
    assert.equal(history[2]!.superseded_by, null);
    assert.ok(history[2]!.id > history[1]!.id, 'ids grow with every row written');

    // The provider recorded the split under the wrong symbol: its correction moves it.
    await market.saveCorporateActions([split('s-1', 'NVDL', '2026-03-02')], LATER);
    assert.deepEqual((await market.corporateActions('alpaca', 'NVDA')).map((a) => a.provider_id), ['d-1']);
    assert.deepEqual((await market.corporateActions('alpaca', 'NVDL')).map((a) => [a.provider_id, a.revision]), [['s-1', 2]]);
    assert.deepEqual((await market.corporateActionHistory('alpaca', 'NVDA')).filter((a) => a.provider_id === 's-1').map((a) => [a.symbol, a.revision]),
      [['NVDA', 1], ['NVDL', 2]], 'the history of a symbol shows where its action went');
  });

  test('append-only: the database refuses UPDATE, DELETE and TRUNCATE; a duplicate revision is refused', async () => {
    await assert.rejects(sql(store, "UPDATE corporate_actions SET rate = '9' WHERE provider_id = 'd-1'"), /corporate_actions_are_append_only/);
    await assert.rejects(sql(store, "DELETE FROM corporate_actions WHERE provider_id = 'd-1'"), /corporate_actions_are_append_only/);
    if (kind.name === 'postgres') await assert.rejects(sql(store, 'TRUNCATE corporate_actions'), /corporate_actions_are_append_only/);
    await assert.rejects(sql(store, `INSERT INTO corporate_actions (source, provider_id, revision, type, symbol, raw, seen_at)
      VALUES ('alpaca', 'd-1', 1, 'cash_dividend', 'NVDA', '{}', 'x')`), /UNIQUE|unique|duplicate/);
    assert.equal((await market.corporateActions('alpaca', 'NVDA')).find((a) => a.provider_id === 'd-1')!.rate, '0.1');
  });

  test('many actions in one save, each once', async () => {
    const many = Array.from({ length: 300 }, (_, i) => dividend(`bulk-${i}`, 'KO', `2026-${String(1 + (i % 12)).padStart(2, '0')}-10`, '0.51'));
    assert.deepEqual(await market.saveCorporateActions([...many, ...many], SEEN), { added: 300, revised: 0 });
    assert.equal((await market.corporateActions('alpaca', 'KO')).length, 300);
  });

  test('the days asked about, by source and symbol: kept as given (the caller widens), read for the symbols asked for', async () => {
    assert.deepEqual(await market.actionsKnown('alpaca', []), {});
    assert.deepEqual(await market.actionsKnown('alpaca', ['KNWN']), {}, 'never asked about');
    await market.saveActionsKnown('alpaca', { KNWN: { from: '2026-01-05', through: '2026-03-02' }, 'BRK.B': { from: '2026-02-01', through: '2026-03-02' } });
    await market.saveActionsKnown('synthetic', { KNWN: { from: '2025-01-01', through: '2025-01-02' } });
    assert.deepEqual(await market.actionsKnown('alpaca', ['KNWN', 'BRK.B', 'NONE']), {
      KNWN: { from: '2026-01-05', through: '2026-03-02' }, 'BRK.B': { from: '2026-02-01', through: '2026-03-02' },
    });
    await market.saveActionsKnown('alpaca', { KNWN: { from: '2026-01-01', through: '2026-03-09' } });
    assert.deepEqual(await market.actionsKnown('alpaca', ['KNWN']), { KNWN: { from: '2026-01-01', through: '2026-03-09' } });
    assert.deepEqual(await market.actionsKnown('synthetic', ['KNWN']), { KNWN: { from: '2025-01-01', through: '2025-01-02' } }, 'by source');
  });
});

await forEachStore('priced symbols', (kind) => {
  let store: LedgerStore;
  let market: MarketStore;
  let t: TestApp;
  before(async () => {
    store = await kind.open();
    market = store.market;
    t = await testApp(store);
  });
  after(async () => {
    await t.close();
    await store.close();
    await kind.cleanup();
  });

  test('each symbol of a priced observation, by source, with the date of the first; unpriced ones left out', async () => {
    const a = await t.agent();
    await postMany(t, a.secret, 4, (i) => ({ symbol: ['AAPL', 'AAPL', 'ZZZZ', 'MSFT'][i], action: 'BUY' }));
    const pending = await market.pendingPrices('alpaca', 10);
    await market.saveObservations(pending.map((p, i) => {
      const common = { recordId: p.recordId, agentId: p.agentId, chainSeq: p.chainSeq, symbol: p.symbol, observedAt: SEEN, feed: null };
      const askedAt = ['2026-01-05T15:00:00.000Z', '2025-12-31T15:00:00.000Z', '2026-01-06T15:00:00.000Z', '2026-01-07T15:00:00.000Z'][i]!;
      if (p.symbol === 'ZZZZ') return { ...common, askedAt, source: 'alpaca', synthetic: false, status: 'unpriced', reason: 'unknown_symbol: x' } as const;
      const source = p.symbol === 'MSFT' ? 'synthetic' : 'alpaca';
      return { ...common, askedAt, source, synthetic: source === 'synthetic', status: 'priced', price: '10', providerTime: askedAt, ageMs: 0, stale: false } as const;
    }));
    assert.deepEqual(await market.pricedSymbols(), [
      { source: 'alpaca', symbol: 'AAPL', firstDate: '2025-12-31' },
      { source: 'synthetic', symbol: 'MSFT', firstDate: '2026-01-07' },
    ]);
  });
});
