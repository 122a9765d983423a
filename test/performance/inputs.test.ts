// readDecisions on both stores: the observed prefix read from the priced_decisions projection and
// the rest record by record give the same decisions, sources, through_seq and awaiting decision as
// reading every record with its content and observation, whatever the chain holds (executions
// between decisions, unpriced decisions, a decision still pending, any start seq).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { readDecisions } from '../../src/performance/inputs.ts';
import { termsOf } from '../../src/method/perf/inputs.ts';
import type { ChainTerms, MarketStore } from '../../src/market/port.ts';
import { observeDecisions } from '../support/observe.ts';
import { forEachStore, marketFixture } from '../support/stores.ts';
import { appendExecution, postMany } from '../public/helpers.ts';
import { counting, overriding } from './fixtures.ts';

const SIZES = [{ quantity: '2' }, { notional: '1500.25' }, { target_allocation_pct: '7.5' }, {}];
const ACTIONS = ['BUY', 'INCREASE', 'HOLD', 'REDUCE', 'SELL', 'CLOSE'];
const SYMBOLS = ['AAPL', 'MSFT', 'KO', 'BTC/USD'];

/**
 * chainTerms as its contract reads, from each record's content parsed here (termsOf) and its
 * observation: the projection's SQL is not in it.
 */
async function termsByRecord(market: MarketStore, agentId: string, afterSeq: number, limit: number, maxBytes: number): Promise<ChainTerms[]> {
  const out: ChainTerms[] = [];
  let bytes = 0;
  for (const r of await market.chainInputs(agentId, afterSeq, limit)) {
    if (bytes >= maxBytes) break;
    const contentBytes = r.type === 'decision' && r.observation === null ? Buffer.byteLength(r.content) : 0;
    out.push({ chainSeq: r.chainSeq, id: r.id, type: r.type, recordedAt: r.recordedAt, terms: r.type === 'decision' ? termsOf(r) : null, observation: r.observation, contentBytes });
    bytes += contentBytes;
  }
  return out;
}

/** The market sub-port as it was before the projection: no observed prefix, every record read with its content. */
const recordByRecord = (market: MarketStore): MarketStore => overriding(market, {
  observedPrefix: async () => 0,
  chainTerms: (agentId, afterSeq, limit, maxBytes) => termsByRecord(market, agentId, afterSeq, limit, maxBytes),
});

await forEachStore('decisions read for the accounting', (kind) => {
  const f = marketFixture(kind);
  const provider = new SyntheticMarketData('inputs-test');

  test('the projection and the records agree, through executions, unpriced decisions and a pending one', async () => {
    const a = await f.t.agent();
    await postMany(f.t, a.secret, 18, (i) => ({ symbol: SYMBOLS[i % 4], action: ACTIONS[i % 6], time_horizon: i % 5 === 0 ? '3 weeks' : '10 trading days', ...SIZES[i % 4] }));
    for (const symbol of ['AAPL', 'MSFT']) await appendExecution(f.t, a, symbol);
    await postMany(f.t, a.secret, 10, (i) => ({ symbol: SYMBOLS[i % 2], action: ACTIONS[i % 6], ...SIZES[(i + 1) % 4] }));
    const head = 30;
    const pendingSeq = 24;
    const unpricedSeqs = new Set([3, 11, 26]);
    await observeDecisions(f.store, f.market, provider, a.agentId, (seq) => seq === pendingSeq || unpricedSeqs.has(seq));
    const chain = await f.store.listChain(a.agentId, 0, head);
    await f.market.saveObservations(chain.filter((r) => unpricedSeqs.has(r.chainSeq)).map((r) => ({
      recordId: r.id, agentId: a.agentId, chainSeq: r.chainSeq, symbol: r.symbol ?? '', askedAt: r.recordedAt, observedAt: r.recordedAt,
      source: 'synthetic', feed: null, synthetic: true, status: 'unpriced', reason: 'no_price: none known',
    })));
    await f.market.pendingPrices('synthetic', 1);

    const counted = counting(f.market);
    const compare = async (afterSeq: number, headSeq: number) => {
      const fast = await readDecisions(counted, a.agentId, afterSeq, headSeq);
      const slow = await readDecisions(recordByRecord(f.market), a.agentId, afterSeq, headSeq);
      assert.deepEqual(fast, slow, `after ${afterSeq} through ${headSeq}`);
      return fast;
    };
    // chainTerms itself: the projection's terms, and content read only within the budget
    for (const [afterSeq, maxBytes] of [[0, 1], [0, 2_000], [0, 1e9], [pendingSeq - 1, 1], [pendingSeq, 1e9]] as const) {
      assert.deepEqual(await f.market.chainTerms(a.agentId, afterSeq, head, maxBytes), await termsByRecord(f.market, a.agentId, afterSeq, head, maxBytes), `after ${afterSeq}, ${maxBytes} bytes`);
    }
    const waiting = await compare(0, head);
    assert.equal(waiting.awaiting?.id, chain[pendingSeq - 1]!.id);
    assert.equal(waiting.throughSeq, pendingSeq - 1);
    assert.equal(waiting.decisions.length, pendingSeq - 1 - 2, 'the executions are not decisions');
    assert.ok(waiting.decisions.some((d) => d.price === null), 'unpriced decisions are in');
    assert.ok((counted.calls.pricedDecisions ?? 0) > 0, 'the observed prefix came from the projection');

    await observeDecisions(f.store, f.market, provider, a.agentId);
    for (const [afterSeq, headSeq] of [[0, head], [0, 18], [5, head], [19, 20], [head - 1, head], [head, head]] as const) await compare(afterSeq, headSeq);
    const all = await compare(0, head);
    assert.equal(all.awaiting, null);
    assert.equal(all.throughSeq, head);
    assert.equal(all.decisions.length, head - 2);
  });
});
