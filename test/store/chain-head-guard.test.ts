// Issue 16, finding 5: the database refuses a chain head that does not advance to the agent's
// newest record, so nobody with SQL access can hide the end of a chain by moving its head back.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore, runSql as sql } from '../support/stores.ts';
import { idempotencyKey, postDecision, testApp, type TestApp } from '../support/app.ts';
import { assertChainVerifies, validDecision } from '../api/record-helpers.ts';

await forEachStore('the chain head guard', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  before(async () => {
    store = openStore(await kind.freshUrl());
    await store.migrate();
    t = await testApp(store);
  });
  after(async () => {
    await t.close();
    await store.close();
    await kind.cleanup();
  });

  test('moving a head back, sideways or past the newest record is refused; appends still advance it', async () => {
    const agent = await t.agent();
    for (let i = 0; i < 3; i++) assert.equal((await postDecision(t, agent.secret, validDecision(), idempotencyKey())).statusCode, 201);
    const head = await store.chainHead(agent.agentId);
    const attempts: [string, string, unknown[]][] = [
      ['back to seq 1', 'UPDATE chain_heads SET seq = 1 WHERE agent_id = $1', [agent.agentId]],
      ['another hash at the same seq', "UPDATE chain_heads SET hash = 'ab' WHERE agent_id = $1", [agent.agentId]],
      ['past the newest record', 'UPDATE chain_heads SET seq = 4 WHERE agent_id = $1', [agent.agentId]],
      ['deleted', 'DELETE FROM chain_heads WHERE agent_id = $1', [agent.agentId]],
    ];
    for (const [what, statement, params] of attempts) {
      await assert.rejects(sql(store, statement, params), /chain_heads/, `a head ${what} is refused`);
    }
    assert.deepEqual(await store.chainHead(agent.agentId), head);
    assert.equal((await postDecision(t, agent.secret, validDecision(), idempotencyKey())).statusCode, 201);
    await assertChainVerifies(store, agent, 4);
  });
});
