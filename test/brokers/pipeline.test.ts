// The wing end to end, without a store: simulator -> client -> normalise -> link -> execution
// content -> a chain that verifies. This is the path the sync worker will take.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { AlpacaClient, type AlpacaFillActivity, type AlpacaOrder } from '../../src/brokers/alpaca.ts';
import { executionContent } from '../../src/brokers/execution.ts';
import { isVerifiedLink, linkFills, type Link, type LinkableDecision } from '../../src/brokers/linking.ts';
import { alpacaFills, checkCumulative, dedupeFills, indexOrders, snapTradeFills, type BrokerFill } from '../../src/brokers/normalise.ts';
import { SnapTradeClient, type SnapTradeActivity } from '../../src/brokers/snaptrade.ts';
import { GENESIS_PREV_HASH, chainHash, contentHash, verifyChain, type CanonValue, type ChainRecord } from '../../src/core/index.ts';
import { dayOfFills, simLinkToken, startAlpacaSim, type AlpacaSim } from '../sim/alpaca.ts';
import { snapTradeDay, startSnapTradeSim, type SnapTradeSim } from '../sim/snaptrade.ts';

let alpaca: AlpacaSim;
let snap: SnapTradeSim;
after(async () => {
  await alpaca?.close();
  await snap?.close();
});

let n = 0;
const decision = (agent: string, symbol: string, action: string, recordedAt: string): LinkableDecision => ({
  id: `dec_01HV3K8Q2ZJ9M4W7XAB3CD${String(++n).padStart(4, '0')}`, agent, symbol, action, recordedAt,
});

function chain(agent: string, docs: CanonValue[]): ChainRecord[] {
  let prev = GENESIS_PREV_HASH;
  return docs.map((content, i) => {
    const entry = { agent, seq: i + 1, id: `exe_01HV3K8Q2ZJ9M4W7XAB3CD${String(i).padStart(4, '0')}`, type: 'execution' as const, recordedAt: '2026-03-14T00:00:00.000Z', contentHash: contentHash(content), prevHash: prev };
    const record: ChainRecord = { seq: entry.seq, id: entry.id, type: 'execution', recorded_at: entry.recordedAt, content, content_hash: entry.contentHash, prev_hash: prev, chain_hash: chainHash(entry) };
    prev = record.chain_hash;
    return record;
  });
}

function record(agent: string, fills: BrokerFill[], links: (Link | null)[]): ChainRecord[] {
  const docs = fills.map((fill, i) => {
    const r = executionContent({ agent, fill, link: links[i] ?? null });
    assert.ok(r.ok, JSON.stringify(!r.ok && r.error));
    return r.document;
  });
  return chain(agent, docs);
}

describe('Alpaca, end to end', () => {
  it('imports a day, links by token through replacements and legs, infers the rest, and verifies', async () => {
    alpaca = await startAlpacaSim({ scenario: dayOfFills({ quirks: { prefixPaging: true }, faults: { rateLimitStorm: { from: 4, count: 2, retryAfterS: 1 } } }) });
    const k = alpaca.scenario.keys[0]!;
    const c = new AlpacaClient({ credentials: k, environment: 'paper', baseUrl: alpaca.url, http: { sleep: async () => {} } });
    const orders: AlpacaOrder[] = [];
    for await (const p of c.orders()) orders.push(...(p.ok ? p.value.orders : assert.fail(p.error.message)));
    const activities: AlpacaFillActivity[] = [];
    for await (const p of c.fills({ pageSize: 10 })) activities.push(...(p.ok ? p.value.fills : assert.fail(p.error.message)));

    const index = indexOrders(orders);
    const { fills, problems } = alpacaFills({ accountRef: alpaca.scenario.account.id, activities, orders: index });
    assert.deepEqual(problems, []);
    assert.deepEqual(checkCumulative(fills, { orders: index }), []);
    const unique = dedupeFills(fills);
    assert.equal(unique.length, alpaca.scenario.fills.length);

    const agent = 'agt_A';
    const before = '2026-03-13T13:29:00.000Z';
    const byToken = new Map<string, LinkableDecision>([
      [simLinkToken(1), decision(agent, 'AAPL', 'BUY', before)],
      [simLinkToken(2), decision(agent, 'MSFT', 'BUY', before)],
      [simLinkToken(3), decision(agent, 'TSLA', 'BUY', before)],
      [simLinkToken(4), decision(agent, 'NVDA', 'BUY', '2026-03-13T14:30:00.000Z')], // after its fills
    ]);
    const spy = decision(agent, 'SPY', 'INCREASE', '2026-03-13T13:00:00.000Z');
    const lateNvda = decision(agent, 'NVDA', 'BUY', '2026-03-13T14:30:00.000Z');
    const links = linkFills({ agent, fills: unique, decisionByToken: (t) => byToken.get(t) ?? null, candidates: [...byToken.values(), spy, lateNvda] });

    const by = (symbol: string): (Link | null)[] => unique.map((f, i) => (f.symbol === symbol ? links[i] : undefined)).filter((l) => l !== undefined) as (Link | null)[];
    assert.ok(by('AAPL').every((l) => l?.method === 'link_token' && l.decision_id === byToken.get(simLinkToken(1))!.id));
    assert.ok(by('MSFT').every((l) => l?.method === 'link_token' && l.decision_id === byToken.get(simLinkToken(2))!.id), 'the replacement carries the original token');
    assert.deepEqual(by('TSLA').map((l) => l?.decision_id), [byToken.get(simLinkToken(3))!.id, byToken.get(simLinkToken(3))!.id], 'the bracket leg carries its parent token');
    assert.ok(by('NVDA').every((l) => l === null), 'a decision recorded after the fills is never linked');
    const spyLinks = by('SPY').filter((l) => l !== null);
    assert.deepEqual(spyLinks, [{ method: 'inferred', decision_id: spy.id }], 'inferred once: one order per decision');
    assert.equal(links.filter(isVerifiedLink).length, 3 + 2 + 2);

    const records = record(agent, unique, links);
    const verified = verifyChain({ agent, records });
    assert.ok(verified.ok, JSON.stringify(verified.failures));
    assert.ok(alpaca.requests.every((r) => r.method === 'GET' && !r.stateChanging));
    assert.ok(alpaca.requests.some((r) => r.status === 429), 'the storm happened and was ridden out');
  });
});

describe('SnapTrade, end to end', () => {
  it('imports two accounts, infers links only, never to a later or same-day decision for date-only fills', async () => {
    snap = await startSnapTradeSim({ scenario: snapTradeDay() });
    const c = new SnapTradeClient({ partner: snap.scenario.partner, baseUrl: snap.url });
    const reg = await c.registerUser('agt_B');
    assert.ok(reg.ok);
    const link = await c.loginLink(reg.value, { broker: 'ROBINHOOD' });
    assert.ok(link.ok);
    await (await fetch(link.value.redirectURI)).text();
    const accounts = await c.accounts(reg.value);
    assert.ok(accounts.ok);
    const fills: BrokerFill[] = [];
    for (const account of accounts.value) {
      const rows: SnapTradeActivity[] = [];
      for await (const p of c.activities(reg.value, account.id)) rows.push(...(p.ok ? p.value.activities : assert.fail(p.error.message)));
      fills.push(...snapTradeFills({ accountRef: account.id, activities: rows }).fills);
    }
    fills.sort((a, b) => (a.filledAt < b.filledAt ? -1 : 1));
    assert.ok(!JSON.stringify(fills).includes('5XX-12345678'), 'no account number');

    const agent = 'agt_B';
    const aapl = decision(agent, 'AAPL', 'BUY', '2026-03-13T14:00:00.000Z');
    const spy = decision(agent, 'SPY', 'BUY', '2026-03-13T14:00:00.000Z');
    const vtiSameDay = decision(agent, 'VTI', 'BUY', '2026-03-13T09:00:00.000Z');
    const links = linkFills({ agent, fills, decisionByToken: () => assert.fail('SnapTrade has no tokens'), candidates: [aapl, spy, vtiSameDay] });
    const of = (symbol: string, side: string): (Link | null)[] => fills.flatMap((f, i) => (f.symbol === symbol && f.side === side ? [links[i] ?? null] : []));
    assert.deepEqual(of('AAPL', 'buy'), [{ method: 'inferred', decision_id: aapl.id }, { method: 'inferred', decision_id: aapl.id }], 'partials of one order share the decision');
    assert.deepEqual(of('SPY', 'buy'), [{ method: 'inferred', decision_id: spy.id }]);
    assert.deepEqual(of('VTI', 'buy'), [null], 'a date-only fill never links to a decision of the same day');
    assert.ok(links.every((l) => !isVerifiedLink(l)));

    const verified = verifyChain({ agent, records: record(agent, fills, links) });
    assert.ok(verified.ok, JSON.stringify(verified.failures));
  });
});
