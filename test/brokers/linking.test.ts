// Linking rules (ledger-interface rules 3 and 4; issue 13 item 6), one test per rule.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  INFERRED_WINDOW_WEEKDAYS, decideLink, linkFills, inferredWindowEnd, isVerifiedLink, linkTokenOf, orderKey, parseLinkToken, recordedBefore, sameSymbol,
  type LinkableDecision,
} from '../../src/brokers/linking.ts';
import type { BrokerFill } from '../../src/brokers/normalise.ts';
import { linkToken } from '../../src/ledger/ids.ts';

const TOKEN = linkToken(Date.parse('2026-03-13T14:00:00Z'));
const OTHER_TOKEN = linkToken(Date.parse('2026-03-13T14:00:01Z'));

function fill(over: Partial<BrokerFill> = {}): BrokerFill {
  return {
    broker: 'alpaca', accountRef: 'acc-1', brokerOrderId: 'ord-1', brokerFillId: 'fill-1', clientOrderId: null, symbol: 'AAPL', side: 'buy',
    quantity: '1', price: '200', filledAt: '2026-03-13T14:31:03.020551Z', filledAtPrecision: 'instant', cumulativeQuantity: '1',
    lineage: [{ orderId: 'ord-1', clientOrderId: null }], ...over,
  };
}

function decision(over: Partial<LinkableDecision> = {}): LinkableDecision {
  return { id: 'dec_01HV3K8Q2ZJ9M4W7XAB3CDEF00', agent: 'agt_A', symbol: 'AAPL', action: 'BUY', recordedAt: '2026-03-13T14:30:00.000Z', ...over };
}

const withToken = (clientOrderId: string): BrokerFill => fill({ clientOrderId, lineage: [{ orderId: 'ord-1', clientOrderId }] });

describe('parseLinkToken', () => {
  it('reads a token issued by the ledger, alone or with -suffix', () => {
    assert.equal(TOKEN.length, 27);
    assert.equal(parseLinkToken(TOKEN), TOKEN);
    assert.equal(parseLinkToken(`${TOKEN}-retry2`), TOKEN);
    assert.equal(parseLinkToken(`${TOKEN}-a_b.c-d`), TOKEN);
  });
  it('refuses anything else', () => {
    for (const bad of [null, undefined, '', 'lt_', TOKEN.toUpperCase(), `${TOKEN}x`, `${TOKEN}-`, `x${TOKEN}`, '5d8f2a0e-7c1b-4a8e-9a55-0b3c9a4e2f10', `${TOKEN}-has space`, TOKEN.slice(0, 26)]) {
      assert.equal(parseLinkToken(bad), null, String(bad));
    }
  });
});

describe('link_token links', () => {
  it('links to the same agent\'s decision recorded before the fill', () => {
    const link = decideLink({ agent: 'agt_A', fill: withToken(TOKEN), tokenDecision: decision(), candidates: [] });
    assert.deepEqual(link, { method: 'link_token', decision_id: decision().id });
    assert.ok(isVerifiedLink(link));
  });
  it('with a suffix too', () => {
    assert.equal(decideLink({ agent: 'agt_A', fill: withToken(`${TOKEN}-7`), tokenDecision: decision(), candidates: [] })?.method, 'link_token');
  });
  it('never to another agent\'s decision', () => {
    assert.equal(decideLink({ agent: 'agt_A', fill: withToken(TOKEN), tokenDecision: decision({ agent: 'agt_B' }), candidates: [] }), null);
  });
  it('never to a decision recorded after the fill, or at the same instant', () => {
    assert.equal(decideLink({ agent: 'agt_A', fill: withToken(TOKEN), tokenDecision: decision({ recordedAt: '2026-03-13T14:31:04.000Z' }), candidates: [] }), null);
    const atSameMs = fill({ clientOrderId: TOKEN, lineage: [{ orderId: 'o', clientOrderId: TOKEN }], filledAt: '2026-03-13T14:30:00.000Z' });
    assert.equal(decideLink({ agent: 'agt_A', fill: atSameMs, tokenDecision: decision(), candidates: [] }), null);
    const justAfter = { ...atSameMs, filledAt: '2026-03-13T14:30:00.000001Z' };
    assert.equal(decideLink({ agent: 'agt_A', fill: justAfter, tokenDecision: decision(), candidates: [] })?.method, 'link_token');
  });
  it('a refused token falls back to inference among the agent\'s own decisions', () => {
    const own = decision({ id: 'dec_01HV3K8Q2ZJ9M4W7XAB3CDEF11' });
    const link = decideLink({ agent: 'agt_A', fill: withToken(TOKEN), tokenDecision: decision({ agent: 'agt_B' }), candidates: [own] });
    assert.deepEqual(link, { method: 'inferred', decision_id: own.id });
  });
  it('a replacement inherits the original\'s token (walks the replaces chain, original first)', () => {
    const replacement = fill({
      clientOrderId: '0f7c2b7e-1c1e-4c55-9a43-2b1b8a9d0c11',
      lineage: [{ orderId: 'ord-2', clientOrderId: `${OTHER_TOKEN}-r` }, { orderId: 'ord-1', clientOrderId: TOKEN }],
    });
    assert.equal(linkTokenOf(replacement), TOKEN);
    assert.equal(linkTokenOf(fill({ lineage: [{ orderId: 'o2', clientOrderId: 'uuid' }, { orderId: 'o1', clientOrderId: `${TOKEN}-a1` }] })), TOKEN);
    assert.equal(linkTokenOf(fill({ lineage: [{ orderId: 'o2', clientOrderId: TOKEN }, { orderId: 'o1', clientOrderId: 'auto' }] })), TOKEN, 'a token on a later order still counts');
    assert.equal(orderKey(replacement), 'alpaca:acc-1:ord-1', 'partials of the chain share one order key');
  });
  it('SnapTrade fills carry no client order id, so never a link_token', () => {
    const f = fill({ broker: 'snaptrade', clientOrderId: null, lineage: [] });
    assert.equal(linkTokenOf(f), null);
    assert.equal(decideLink({ agent: 'agt_A', fill: f, tokenDecision: decision(), candidates: [] }), null);
  });
});

describe('inferred links', () => {
  it('by symbol, side and time; labelled inferred and never verified', () => {
    const link = decideLink({ agent: 'agt_A', fill: fill(), tokenDecision: null, candidates: [decision()] });
    assert.deepEqual(link, { method: 'inferred', decision_id: decision().id });
    assert.equal(isVerifiedLink(link), false);
    assert.equal(isVerifiedLink(null), false);
  });
  it('maps BUY and INCREASE to buy; SELL, REDUCE and CLOSE to sell; HOLD to nothing', () => {
    for (const [action, side] of [['BUY', 'buy'], ['INCREASE', 'buy'], ['SELL', 'sell'], ['REDUCE', 'sell'], ['CLOSE', 'sell']] as const) {
      assert.ok(decideLink({ agent: 'agt_A', fill: fill({ side }), tokenDecision: null, candidates: [decision({ action })] }), action);
      const other = side === 'buy' ? 'sell' : 'buy';
      assert.equal(decideLink({ agent: 'agt_A', fill: fill({ side: other }), tokenDecision: null, candidates: [decision({ action })] }), null, `${action} vs ${other}`);
    }
    for (const side of ['buy', 'sell'] as const) {
      assert.equal(decideLink({ agent: 'agt_A', fill: fill({ side }), tokenDecision: null, candidates: [decision({ action: 'HOLD' })] }), null);
    }
  });
  it('only the same agent and the same symbol (BTC/USD is BTCUSD)', () => {
    assert.equal(decideLink({ agent: 'agt_A', fill: fill(), tokenDecision: null, candidates: [decision({ agent: 'agt_B' })] }), null);
    assert.equal(decideLink({ agent: 'agt_A', fill: fill(), tokenDecision: null, candidates: [decision({ symbol: 'MSFT' })] }), null);
    assert.ok(sameSymbol('BTC/USD', 'btcusd'));
    assert.ok(decideLink({ agent: 'agt_A', fill: fill({ symbol: 'BTCUSD' }), tokenDecision: null, candidates: [decision({ symbol: 'BTC/USD' })] }));
  });
  it('never a decision recorded after the fill', () => {
    assert.equal(decideLink({ agent: 'agt_A', fill: fill(), tokenDecision: null, candidates: [decision({ recordedAt: '2026-03-13T14:32:00.000Z' })] }), null);
  });
  it('the newest eligible decision wins', () => {
    const older = decision({ id: 'dec_01HV3K8Q2ZJ9M4W7XAB3CDEF01', recordedAt: '2026-03-12T15:00:00.000Z' });
    const newer = decision({ id: 'dec_01HV3K8Q2ZJ9M4W7XAB3CDEF02', recordedAt: '2026-03-13T14:00:00.000Z' });
    const late = decision({ id: 'dec_01HV3K8Q2ZJ9M4W7XAB3CDEF03', recordedAt: '2026-03-13T15:00:00.000Z' });
    assert.equal(decideLink({ agent: 'agt_A', fill: fill(), tokenDecision: null, candidates: [older, late, newer] })?.decision_id, newer.id);
  });
  it('skips a decision already linked to another order; partials of the same order share it', () => {
    const taken = decision({ id: 'dec_01HV3K8Q2ZJ9M4W7XAB3CDEF05', recordedAt: '2026-03-13T14:10:00.000Z', linkedOrderKeys: ['alpaca:acc-1:ord-9'] });
    const free = decision({ id: 'dec_01HV3K8Q2ZJ9M4W7XAB3CDEF04', recordedAt: '2026-03-13T14:00:00.000Z' });
    assert.equal(decideLink({ agent: 'agt_A', fill: fill(), tokenDecision: null, candidates: [taken, free] })?.decision_id, free.id);
    const mine = { ...taken, linkedOrderKeys: ['alpaca:acc-1:ord-1'] };
    assert.equal(decideLink({ agent: 'agt_A', fill: fill(), tokenDecision: null, candidates: [mine, free] })?.decision_id, mine.id);
  });
  it(`within ${INFERRED_WINDOW_WEEKDAYS} weekdays of the decision`, () => {
    const friday = Date.parse('2026-03-13T14:00:00.000Z');
    assert.equal(new Date(friday).getUTCDay(), 5);
    assert.equal(new Date(inferredWindowEnd(friday)).toISOString(), '2026-03-20T14:00:00.000Z');
    const d = decision({ recordedAt: '2026-03-13T14:00:00.000Z' });
    assert.ok(decideLink({ agent: 'agt_A', fill: fill({ filledAt: '2026-03-20T14:00:00Z' }), tokenDecision: null, candidates: [d] }));
    assert.equal(decideLink({ agent: 'agt_A', fill: fill({ filledAt: '2026-03-20T14:00:00.001Z' }), tokenDecision: null, candidates: [d] }), null);
  });
  it('a date-only fill links only to decisions recorded before that day began (UTC)', () => {
    const dated = fill({ broker: 'snaptrade', filledAt: '2026-03-13', filledAtPrecision: 'date', lineage: [] });
    assert.equal(decideLink({ agent: 'agt_A', fill: dated, tokenDecision: null, candidates: [decision({ recordedAt: '2026-03-13T00:00:00.000Z' })] }), null);
    assert.ok(decideLink({ agent: 'agt_A', fill: dated, tokenDecision: null, candidates: [decision({ recordedAt: '2026-03-12T23:59:59.999Z' })] }));
    assert.equal(recordedBefore(decision({ recordedAt: '2026-03-13T09:00:00.000Z' }), dated), false);
  });
  it('an unreadable time links nothing', () => {
    assert.equal(decideLink({ agent: 'agt_A', fill: fill({ filledAt: 'yesterday' }), tokenDecision: decision(), candidates: [decision()] }), null);
  });
});

describe('linkFills (a batch, as a sync links it)', () => {
  it('a decision inferred for one order is not inferred for the next; its partials share it; inputs untouched', () => {
    const d = decision();
    const candidates = [d];
    const a1 = fill({ brokerFillId: 'f1', lineage: [{ orderId: 'A', clientOrderId: null }] });
    const a2 = fill({ brokerFillId: 'f2', lineage: [{ orderId: 'A', clientOrderId: null }], filledAt: '2026-03-13T14:32:00Z' });
    const b1 = fill({ brokerFillId: 'f3', lineage: [{ orderId: 'B', clientOrderId: null }], filledAt: '2026-03-13T14:33:00Z' });
    const links = linkFills({ agent: 'agt_A', fills: [a1, a2, b1], decisionByToken: () => null, candidates });
    assert.deepEqual(links.map((l) => l?.decision_id ?? null), [d.id, d.id, null]);
    assert.equal(candidates[0]!.linkedOrderKeys, undefined);
  });
  it('a link_token link also takes the decision out of inference for other orders', () => {
    const d = decision();
    const tokenFill = fill({ clientOrderId: TOKEN, lineage: [{ orderId: 'T', clientOrderId: TOKEN }] });
    const other = fill({ brokerFillId: 'f9', lineage: [{ orderId: 'U', clientOrderId: null }], filledAt: '2026-03-13T14:40:00Z' });
    const links = linkFills({ agent: 'agt_A', fills: [tokenFill, other], decisionByToken: (t) => (t === TOKEN ? d : null), candidates: [d] });
    assert.deepEqual(links, [{ method: 'link_token', decision_id: d.id }, null]);
  });
});
