// Issue 24, finding 1, on both stores: a page of decision outcomes reads no record content. For
// records of 120 KB, the market sub-port's reads during a page (and the report brought up to date
// before it) return a few KB: the observed decisions come from the priced_decisions projection,
// and past it the terms of a decision not observed yet are read out of its content in SQL, at most
// TAIL_CONTENT_BYTES of it per page (the page ends early, with its cursor, and the cursors still
// reach every decision once, in chain order).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Operators } from '../../src/ledger/operators.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { TAIL_CONTENT_BYTES } from '../../src/performance/outcome-pages.ts';
import type { MarketStore } from '../../src/market/port.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { idempotencyKey, postDecision } from '../support/app.ts';
import { observeDecisions } from '../support/observe.ts';
import { forEachStore } from '../support/stores.ts';
import { DAY, performanceApp, type PerformanceApp } from './fixtures.ts';

/** A decision of about 120 KB of content (the request body limit is 128 KiB). */
const RECORD_BYTES = 120_000;
const heavy = (i: number) => ({ symbol: ['AAPL', 'MSFT'][i % 2], action: 'BUY', quantity: '1', time_horizon: '5 trading days', metadata: { notes: 'x'.repeat(RECORD_BYTES) } });
/** What a page's reads may return at most: rows of terms and observations, never a record's content. */
const FEW_BYTES = 64 * 1024;

/** The market sub-port, adding up the JSON size of what each of its reads returns. */
function metered(market: MarketStore): MarketStore & { bytes: Record<string, number> } {
  const bytes: Record<string, number> = {};
  return new Proxy(market, {
    get: (target, key) => {
      if (key === 'bytes') return bytes;
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const got = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        bytes[String(key)] = (bytes[String(key)] ?? 0) + (JSON.stringify(got) ?? '').length;
        return got;
      };
    },
  }) as MarketStore & { bytes: Record<string, number> };
}

const total = (bytes: Record<string, number>) => Object.values(bytes).reduce((a, b) => a + b, 0);

await forEachStore('outcome pages read no record content', (kind) => {
  let store: LedgerStore;
  let made: PerformanceApp;
  let market: ReturnType<typeof metered>;

  before(async () => {
    store = await kind.open();
    market = metered(store.market);
    made = await performanceApp(store, new SyntheticMarketData('outcome-reads'), market);
  });
  after(async () => {
    await made.ledger.close();
    await store.close();
    await kind.cleanup();
  });

  async function agentWith(handle: string, n: number) {
    const created = await new Operators(store, made.clock).createAgent({ handle });
    assert.ok(created.ok);
    for (let i = 0; i < n; i++) {
      const res = await postDecision(made.ledger, created.value.apiKey.secret, heavy(i), idempotencyKey());
      assert.equal(res.statusCode, 201, res.body);
      made.clock.t += DAY;
    }
    return created.value.agent;
  }

  /** One request, and what the market sub-port's reads returned meanwhile. */
  async function read(url: string) {
    for (const k of Object.keys(market.bytes)) delete market.bytes[k];
    const res = await made.ledger.app.inject({ url });
    assert.equal(res.statusCode, 200, res.body);
    return { res, bytes: { ...market.bytes } };
  }

  it('observed decisions: JSON and CSV pages read the projection, not the records', async () => {
    const agent = await agentWith(`heavy-${kind.name}`, 12);
    await observeDecisions(store, market, made.provider, agent.id);
    made.clock.t += 3 * DAY;
    await read(`/v1/agents/${agent.handle}/performance`);
    const json = await read(`/v1/agents/${agent.handle}/performance/outcomes?limit=500`);
    assert.equal(json.res.json().data.length, 12);
    assert.ok(json.res.json().data.every((r: { price: string | null }) => r.price !== null));
    assert.ok(total(json.bytes) < FEW_BYTES, `the reads returned ${JSON.stringify(json.bytes)}`);
    const csv = await read(`/v1/agents/${agent.handle}/performance/outcomes?limit=500&format=csv`);
    assert.equal(csv.res.body.trimEnd().split('\r\n').length, 13);
    assert.ok(total(csv.bytes) < FEW_BYTES, `the reads returned ${JSON.stringify(csv.bytes)}`);
  });

  it('decisions not observed yet: each page reads at most the budget of content, returns none, and the cursors reach every decision once', async () => {
    const n = 30;
    const agent = await agentWith(`pending-${kind.name}`, n);
    const chain = (await store.listChain(agent.id, 0, n)).map((r) => r.id);
    const perPage = Math.floor(TAIL_CONTENT_BYTES / RECORD_BYTES) + 1;
    const seen: string[] = [];
    let url: string | null = `/v1/agents/${agent.handle}/performance/outcomes?limit=500`;
    let pages = 0;
    while (url !== null) {
      const { res, bytes } = await read(url.replace(/^https?:\/\/[^/]+/, ''));
      const page = res.json();
      assert.ok(page.data.length <= perPage, `a page of ${page.data.length} decisions of ${RECORD_BYTES} bytes`);
      assert.ok(page.data.every((r: { price: string | null; price_reason: string }) => r.price === null && /awaiting its price/.test(r.price_reason)));
      assert.ok(total(bytes) < FEW_BYTES, `the reads returned ${JSON.stringify(bytes)}`);
      seen.push(...page.data.map((r: { record_id: string }) => r.record_id));
      url = page.next;
      pages++;
    }
    assert.ok(pages > 1, 'the budget split the decisions');
    assert.deepEqual(seen, chain);
  });
});
