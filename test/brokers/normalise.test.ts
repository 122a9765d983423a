// Normalising both brokers' fills: lineage, partial fills, dedupe keys, date-only reports.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { AlpacaClient, type AlpacaFillActivity, type AlpacaOrder } from '../../src/brokers/alpaca.ts';
import {
  addDecimal, alpacaFills, alpacaLineage, checkCumulative, dedupeFills, fillKeys, indexOrders, missingOrderIds, sameDecimal, snapTradeFills,
  type BrokerFill,
} from '../../src/brokers/normalise.ts';
import { SnapTradeClient, type SnapTradeActivity } from '../../src/brokers/snaptrade.ts';
import { dayOfFills, simLinkToken, startAlpacaSim, type AlpacaSim } from '../sim/alpaca.ts';
import { snapTradeDay, startSnapTradeSim, type SnapTradeSim } from '../sim/snaptrade.ts';

let alpaca: AlpacaSim;
let snap: SnapTradeSim;
after(async () => {
  await alpaca?.close();
  await snap?.close();
});

type AlpacaData = { orders: AlpacaOrder[]; activities: AlpacaFillActivity[]; accountId: string };
let cached: AlpacaData | undefined;

/** Read once through the client (10-row pages, the millisecond paging quirk on) and shared. */
async function alpacaData(pageSize = 10): Promise<AlpacaData> {
  if (cached) return cached;
  alpaca ??= await startAlpacaSim({ scenario: dayOfFills({ quirks: { prefixPaging: true } }) });
  const k = alpaca.scenario.keys[0]!;
  const c = new AlpacaClient({ credentials: { keyId: k.keyId, secretKey: k.secretKey }, environment: 'paper', baseUrl: alpaca.url });
  const orders: AlpacaOrder[] = [];
  for await (const p of c.orders({ limit: 7 })) {
    assert.ok(p.ok);
    orders.push(...p.value.orders);
  }
  const activities: AlpacaFillActivity[] = [];
  for await (const p of c.fills({ pageSize })) {
    assert.ok(p.ok);
    activities.push(...p.value.fills);
  }
  cached = { orders, activities, accountId: alpaca.scenario.account.id };
  return cached;
}

describe('exact decimals', () => {
  it('adds without floats and compares values', () => {
    assert.equal(addDecimal('0.1', '0.2'), '0.3');
    assert.equal(addDecimal('3', '-3'), '0');
    assert.equal(addDecimal('1.50', '2.5'), '4');
    assert.equal(addDecimal('-0.001', '0.0001'), '-0.0009');
    assert.equal(addDecimal('x', '1'), null);
    assert.ok(sameDecimal('4', '4.00'));
    assert.ok(!sameDecimal('4', '4.01'));
  });
});

describe('Alpaca fills', () => {
  it('every fill once, partials in cumulative order, and the cumulative check passes', async () => {
    const { orders, activities, accountId } = await alpacaData();
    const index = indexOrders(orders);
    assert.deepEqual(missingOrderIds(activities, index), []);
    const { fills, problems } = alpacaFills({ accountRef: accountId, activities, orders: index });
    assert.deepEqual(problems, []);
    assert.equal(fills.length, alpaca.scenario.fills.length);
    assert.deepEqual(checkCumulative(fills, { orders: index }), []);
    const aapl = fills.filter((f) => f.symbol === 'AAPL').map((f) => f.cumulativeQuantity);
    assert.deepEqual(aapl, ['3', '4', '10']);
    const nvda = fills.filter((f) => f.symbol === 'NVDA').map((f) => f.cumulativeQuantity);
    assert.deepEqual(nvda, Array.from({ length: 12 }, (_, i) => String(i + 1)), 'one millisecond, ordered by cum_qty');
  });

  it('keeps quantity, price and time exactly as Alpaca wrote them, and no account number', async () => {
    const { orders, activities, accountId } = await alpacaData();
    const { fills } = alpacaFills({ accountRef: accountId, activities, orders: indexOrders(orders) });
    const f = fills.find((x) => x.symbol === 'AAPL' && x.cumulativeQuantity === '4')!;
    const raw = activities.find((a) => a.id === f.brokerFillId)!;
    assert.equal(f.price, raw.price);
    assert.equal(f.quantity, raw.qty);
    assert.equal(f.filledAt, raw.transaction_time);
    assert.ok(!JSON.stringify(fills).includes(String(alpaca.scenario.account.account_number)));
  });

  it('a replacement lists the original it replaced, with the original client order id', async () => {
    const { orders, activities, accountId } = await alpacaData();
    const { fills } = alpacaFills({ accountRef: accountId, activities, orders: indexOrders(orders) });
    const msft = fills.find((f) => f.symbol === 'MSFT')!;
    assert.equal(msft.lineage.length, 2);
    assert.equal(msft.lineage[1]!.clientOrderId, `${simLinkToken(2)}-a1`);
    assert.notEqual(msft.clientOrderId, msft.lineage[1]!.clientOrderId, 'the replacement has its own client id');
  });

  it('a bracket leg rolls up to its parent', async () => {
    const { orders, activities, accountId } = await alpacaData();
    const { fills } = alpacaFills({ accountRef: accountId, activities, orders: indexOrders(orders) });
    const leg = fills.find((f) => f.symbol === 'TSLA' && f.side === 'sell')!;
    assert.equal(leg.lineage.length, 2);
    assert.equal(leg.lineage[1]!.clientOrderId, simLinkToken(3));
  });

  it('names orders it cannot place (fetch them by id before linking)', async () => {
    const { orders, activities } = await alpacaData();
    const withoutOriginal = orders.filter((o) => o.status !== 'replaced');
    const index = indexOrders(withoutOriginal);
    const original = orders.find((o) => o.status === 'replaced')!;
    assert.deepEqual(missingOrderIds(activities, index), [original.id]);
    const replacement = orders.find((o) => o.replaces === original.id)!;
    assert.deepEqual(alpacaLineage(replacement.id, index).map((r) => r.orderId), [replacement.id, original.id]);
  });

  it('the cumulative check catches a lost partial and an over-fill', async () => {
    const { orders, activities, accountId } = await alpacaData();
    const index = indexOrders(orders);
    const { fills } = alpacaFills({ accountRef: accountId, activities, orders: index });
    const lost = fills.filter((f) => !(f.symbol === 'AAPL' && f.cumulativeQuantity === '4'));
    const p = checkCumulative(lost, { orders: index });
    assert.equal(p.length, 1);
    assert.match(p[0]!.message, /cumulative quantity 10 but 3 \+ 6 = 9/);
    const aapl = fills.filter((f) => f.symbol === 'AAPL');
    const doubled = aapl.concat({ ...aapl[2]!, brokerFillId: 'x', cumulativeQuantity: '16' });
    assert.ok(checkCumulative(doubled, { orders: index }).some((x) => /more than the order's filled_qty/.test(x.message)));
    const resumed = checkCumulative(aapl.slice(2), { prior: new Map([[aapl[0]!.brokerOrderId!, '4']]), orders: index });
    assert.deepEqual(resumed, [], 'an incremental sync starts from what was recorded before');
  });

  it('a page re-read by the sync is deduplicated by activity id', async () => {
    const { orders, activities, accountId } = await alpacaData();
    const { fills } = alpacaFills({ accountRef: accountId, activities: activities.concat(activities.slice(0, 15)), orders: indexOrders(orders) });
    assert.equal(dedupeFills(fills).length, alpaca.scenario.fills.length);
    const recorded = new Set(fillKeys(dedupeFills(fills).slice(0, 5)).flat());
    assert.equal(dedupeFills(fills, (k) => recorded.has(k)).length, alpaca.scenario.fills.length - 5);
  });
});

describe('SnapTrade fills', () => {
  async function snapData(): Promise<{ c: SnapTradeClient; user: { userId: string; userSecret: string }; accounts: string[] }> {
    snap ??= await startSnapTradeSim({ scenario: snapTradeDay() });
    const c = new SnapTradeClient({ partner: snap.scenario.partner, baseUrl: snap.url });
    const reg = await c.registerUser(`agt_${snap.users.size}`);
    assert.ok(reg.ok);
    const link = await c.loginLink(reg.value);
    assert.ok(link.ok);
    await (await fetch(link.value.redirectURI)).text();
    const acc = await c.accounts(reg.value);
    assert.ok(acc.ok);
    return { c, user: reg.value, accounts: acc.value.map((a) => a.id) };
  }
  async function read(c: SnapTradeClient, user: { userId: string; userSecret: string }, accountId: string): Promise<SnapTradeActivity[]> {
    const out: SnapTradeActivity[] = [];
    for await (const p of c.activities(user, accountId)) {
      assert.ok(p.ok);
      out.push(...p.value.activities);
    }
    return out;
  }

  it('BUY and SELL are fills; cash rows are counted, not recorded; quantities are absolute', async () => {
    const { c, user, accounts } = await snapData();
    const { fills, skipped, problems } = snapTradeFills({ accountRef: accounts[0]!, activities: await read(c, user, accounts[0]!) });
    assert.deepEqual(problems, []);
    assert.deepEqual(skipped, { DIVIDEND: 1, FEE: 1, CONTRIBUTION: 1 });
    assert.equal(fills.length, 6);
    const sell = fills.find((f) => f.side === 'sell')!;
    assert.equal(sell.quantity, '1');
    assert.equal(sell.price, '563.05');
    assert.ok(fills.every((f) => f.clientOrderId === null && f.filledAtPrecision === 'instant'));
  });

  it('a date-only broker gives a date, not an invented time', async () => {
    const { c, user, accounts } = await snapData();
    const { fills } = snapTradeFills({ accountRef: accounts[1]!, activities: await read(c, user, accounts[1]!) });
    assert.deepEqual(fills.map((f) => [f.filledAt, f.filledAtPrecision]).sort(), [['2026-03-13', 'date'], ['2026-03-16', 'date']]);
  });

  it('identical fills stay two fills; a re-ingest with new ids records nothing twice', async () => {
    const { c, user, accounts } = await snapData();
    const first = snapTradeFills({ accountRef: accounts[0]!, activities: await read(c, user, accounts[0]!) }).fills;
    const ko = first.filter((f) => f.symbol === 'KO');
    assert.equal(ko.length, 2);
    assert.equal(dedupeFills(first).length, first.length);
    const recorded = new Set(fillKeys(first).flat());
    snap.reingest();
    const again = snapTradeFills({ accountRef: accounts[0]!, activities: await read(c, user, accounts[0]!) }).fills;
    assert.ok(again.every((f) => !first.some((g) => g.brokerFillId === f.brokerFillId)), 'ids changed');
    assert.equal(dedupeFills(again, (k) => recorded.has(k)).length, 0);
    snap.advanceDay();
    const later = snapTradeFills({ accountRef: accounts[0]!, activities: await read(c, user, accounts[0]!) }).fills;
    const fresh = dedupeFills(later, (k) => recorded.has(k));
    assert.equal(fresh.length, 1, 'the lagged fill is recorded once when it appears');
    assert.equal(fresh[0]!.symbol, 'AAPL');
  });

  it('reports fills it cannot use as problems, not as fills', () => {
    const base: SnapTradeActivity = {
      id: 'a1', type: 'BUY', trade_date: '2026-03-13T14:00:00Z', symbol: { symbol: 'SPY' }, option_symbol: null, price: '1', units: '1', amount: '-1', fee: '0', external_reference_id: null,
    };
    const { fills, problems } = snapTradeFills({
      accountRef: 'acc',
      activities: [base, { ...base, id: 'a2', symbol: null }, { ...base, id: 'a3', price: null }, { ...base, id: 'a4', trade_date: null }],
    });
    assert.equal(fills.length, 1);
    assert.deepEqual(problems.map((p) => p.brokerFillId), ['a2', 'a3', 'a4']);
  });
});

export type { BrokerFill };
