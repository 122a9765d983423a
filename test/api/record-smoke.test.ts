import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachStore } from '../support/stores.ts';
import { postDecision, testApp } from '../support/app.ts';

await forEachStore('recording a decision', (kind) => {
  test('a decision is chained and replayed', async () => {
    const store = await kind.open();
    const t = await testApp(store);
    try {
      const { secret } = await t.agent();
      const first = await postDecision(t, secret, { symbol: 'AAPL', action: 'BUY', quantity: '1.50' }, 'key-00000001');
      assert.equal(first.statusCode, 201, first.body);
      const again = await postDecision(t, secret, { symbol: 'AAPL', action: 'BUY', quantity: 1.5 }, 'key-00000001');
      assert.equal(again.statusCode, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body, first.body);
      const second = await postDecision(t, secret, { symbol: 'MSFT', action: 'SELL' });
      assert.equal(second.json().verification.chain_seq, 2);
    } finally {
      await t.close();
      await store.close();
      await kind.cleanup();
    }
  });
});
