// BrokerStore.linkCounts on SQLite and PostgreSQL: executions (records, not fill keys) of one
// agent by link method, what the `verified` badge's linked share is made of.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ImportedFill } from '../../src/brokers/port.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';

let n = 0;
function fill(agentId: string, recordId: string, linkMethod: string | null, key = `fill-${++n}`): ImportedFill {
  return {
    agentId, key, connectionId: 'brk_test', recordId, orderKey: `order-${recordId}`, brokerOrderId: null, symbol: 'AAPL', side: 'buy',
    quantity: '1', cumulativeQuantity: null, decisionId: linkMethod === null ? null : 'dec_01HV3K8Q2ZJ9M4W7XAB3CDEF00', linkMethod,
  };
}

await forEachStore('broker link counts', (kind) => {
  let store: LedgerStore;
  before(async () => {
    store = await kind.open();
  });
  after(async () => {
    await store?.close();
    await kind.cleanup();
  });

  test('an agent with no imported fill has none of either', async () => {
    assert.deepEqual(await store.brokers.linkCounts('agt_none'), { link_token: 0, inferred: 0 });
  });

  test('counts records by link method: a fill indexed under two keys once, unlinked fills and other agents not at all', async () => {
    const brokers = store.brokers;
    await brokers.saveImportedFills([
      fill('agt_a', 'exe_1', 'link_token'),
      fill('agt_a', 'exe_2', 'link_token'),
      fill('agt_a', 'exe_2', 'link_token'), // a SnapTrade fill: its id and its fingerprint, one record
      fill('agt_a', 'exe_3', 'inferred'),
      fill('agt_a', 'exe_4', 'inferred'),
      fill('agt_a', 'exe_4', 'inferred'),
      fill('agt_a', 'exe_5', 'inferred'),
      fill('agt_a', 'exe_6', null),
      fill('agt_b', 'exe_7', 'link_token'),
    ]);
    assert.deepEqual(await brokers.linkCounts('agt_a'), { link_token: 2, inferred: 3 });
    assert.deepEqual(await brokers.linkCounts('agt_b'), { link_token: 1, inferred: 0 });
  });

  test('saving the same keys again changes nothing', async () => {
    const brokers = store.brokers;
    await brokers.saveImportedFills([fill('agt_c', 'exe_8', 'link_token', 'k1'), fill('agt_c', 'exe_9', 'inferred', 'k2')]);
    await brokers.saveImportedFills([fill('agt_c', 'exe_8', 'link_token', 'k1'), fill('agt_c', 'exe_9', 'inferred', 'k2')]);
    assert.deepEqual(await brokers.linkCounts('agt_c'), { link_token: 1, inferred: 1 });
  });
});
