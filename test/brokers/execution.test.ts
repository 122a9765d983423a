// The execution content document: members, canon_v1 bytes and hash, validation.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { executionContent, executionHash } from '../../src/brokers/execution.ts';
import type { BrokerFill } from '../../src/brokers/normalise.ts';
import { canonicalJson, contentHash, sha256Hex, verifyChain, chainHash, GENESIS_PREV_HASH } from '../../src/core/index.ts';

const fill: BrokerFill = {
  broker: 'alpaca', accountRef: '0f7c2b7e-1c1e-4c55-9a43-2b1b8a9d0c11', brokerOrderId: '5d8f2a0e-7c1b-4a8e-9a55-0b3c9a4e2f10',
  brokerFillId: '20260313103105004::7b2c19de-90f3-4b1e-bd11-26c9f0a8e5c2', clientOrderId: 'lt_01hv3k8q2zj9m4w7xab3cdef0a', symbol: 'AAPL', side: 'buy',
  quantity: '1', price: '211.40', filledAt: '2026-03-13T14:31:05.004117Z', filledAtPrecision: 'instant', cumulativeQuantity: '4',
  lineage: [{ orderId: '5d8f2a0e-7c1b-4a8e-9a55-0b3c9a4e2f10', clientOrderId: 'lt_01hv3k8q2zj9m4w7xab3cdef0a' }],
};
const link = { method: 'link_token' as const, decision_id: 'dec_01HV3K8Q2ZJ9M4W7XAB3CDEF00' };

describe('executionContent', () => {
  it('has exactly the documented members, decimals normalised', () => {
    const r = executionContent({ agent: 'bot', fill, link });
    assert.ok(r.ok);
    assert.deepEqual(r.document, {
      canon: 'canon_v1', type: 'execution', agent: 'bot', broker: 'alpaca', account_ref: fill.accountRef, broker_order_id: fill.brokerOrderId,
      broker_fill_id: fill.brokerFillId, client_order_id: fill.clientOrderId, original_order: null, symbol: 'AAPL', side: 'buy', quantity: '1',
      price: '211.4', filled_at: '2026-03-13T14:31:05.004117Z', filled_at_precision: 'instant', link,
    });
  });

  it('serialises to the canon_v1 bytes of docs/executions.md and hashes them', () => {
    const r = executionContent({ agent: 'bot', fill, link });
    assert.ok(r.ok);
    const expected =
      '{"account_ref":"0f7c2b7e-1c1e-4c55-9a43-2b1b8a9d0c11","agent":"bot","broker":"alpaca","broker_fill_id":"20260313103105004::7b2c19de-90f3-4b1e-bd11-26c9f0a8e5c2",' +
      '"broker_order_id":"5d8f2a0e-7c1b-4a8e-9a55-0b3c9a4e2f10","canon":"canon_v1","client_order_id":"lt_01hv3k8q2zj9m4w7xab3cdef0a",' +
      '"filled_at":"2026-03-13T14:31:05.004117Z","filled_at_precision":"instant","link":{"decision_id":"dec_01HV3K8Q2ZJ9M4W7XAB3CDEF00","method":"link_token"},' +
      '"original_order":null,"price":"211.4","quantity":"1","side":"buy","symbol":"AAPL","type":"execution"}';
    const h = executionHash(r.document);
    assert.equal(h.canonical, expected);
    assert.equal(h.contentHash, sha256Hex(expected));
    assert.equal(h.contentHash, contentHash(r.document));
    const doc = readFileSync(new URL('../../docs/executions.md', import.meta.url), 'utf8');
    assert.ok(doc.split('\n').includes(expected), 'docs/executions.md shows these exact bytes');
  });

  it('the link is hashed: another link is another hash', () => {
    const a = executionContent({ agent: 'bot', fill, link });
    const b = executionContent({ agent: 'bot', fill, link: { method: 'inferred', decision_id: link.decision_id } });
    const c = executionContent({ agent: 'bot', fill, link: null });
    assert.ok(a.ok && b.ok && c.ok);
    assert.equal(new Set([a, b, c].map((x) => (x.ok ? contentHash(x.document) : ''))).size, 3);
    assert.equal((c.document as { link: unknown }).link, null);
  });

  it('names the original order of a replacement', () => {
    const replaced = { ...fill, clientOrderId: 'auto-uuid', lineage: [{ orderId: 'o2', clientOrderId: 'auto-uuid' }, { orderId: 'o1', clientOrderId: 'lt_01hv3k8q2zj9m4w7xab3cdef0a-a1' }] };
    const r = executionContent({ agent: 'bot', fill: replaced, link });
    assert.ok(r.ok);
    assert.deepEqual((r.document as { original_order: unknown }).original_order, { broker_order_id: 'o1', client_order_id: 'lt_01hv3k8q2zj9m4w7xab3cdef0a-a1' });
  });

  it('keeps a date-only fill as a date', () => {
    const r = executionContent({ agent: 'bot', fill: { ...fill, broker: 'snaptrade', filledAt: '2026-03-13', filledAtPrecision: 'date', clientOrderId: null, brokerOrderId: null, lineage: [] }, link: null });
    assert.ok(r.ok);
    assert.equal((r.document as { filled_at: string }).filled_at, '2026-03-13');
    assert.ok(canonicalJson(r.document).includes('"filled_at_precision":"date"'));
  });

  it('refuses what cannot be an execution', () => {
    const bad: [Partial<BrokerFill>, string][] = [
      [{ quantity: '0' }, 'quantity'], [{ quantity: '-1' }, 'quantity'], [{ quantity: '1,5' }, 'quantity'], [{ price: '-0.01' }, 'price'],
      [{ filledAt: '2026-03-13 14:31' }, 'filled_at'], [{ filledAt: '2026-02-30', filledAtPrecision: 'date' }, 'filled_at'],
      [{ side: 'short' as 'buy' }, 'side'], [{ symbol: '' }, 'symbol'], [{ accountRef: '' }, 'account_ref'], [{ symbol: 'A\uD800' }, 'symbol'],
    ];
    for (const [over, field] of bad) {
      const r = executionContent({ agent: 'bot', fill: { ...fill, ...over }, link });
      assert.ok(!r.ok, JSON.stringify(over));
      assert.equal(r.error.field, field);
    }
    const r = executionContent({ agent: 'bot', fill, link: { method: 'guessed' as 'inferred', decision_id: link.decision_id } });
    assert.ok(!r.ok);
    assert.equal(executionContent({ agent: '', fill, link }).ok, false);
  });

  it('chains and verifies like a decision', () => {
    const r = executionContent({ agent: 'bot', fill, link });
    assert.ok(r.ok);
    const entry = { agent: 'bot', seq: 1, id: 'exe_01HV3K8Q2ZJ9M4W7XAB3CDEF00', type: 'execution' as const, recordedAt: '2026-03-13T14:40:00.000Z', contentHash: contentHash(r.document), prevHash: GENESIS_PREV_HASH };
    const result = verifyChain({
      agent: 'bot',
      records: [{ seq: 1, id: entry.id, type: 'execution', recorded_at: entry.recordedAt, content: r.document, content_hash: entry.contentHash, prev_hash: entry.prevHash, chain_hash: chainHash(entry) }],
    });
    assert.ok(result.ok, JSON.stringify(result.failures));
  });
});
