// A key revoked or an agent paused through another connection (another API process, or the
// `ledger` CLI) stops working at once on this one, though this one has just used the key.
import { after, before, test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { systemClock } from '../../src/domain/clock.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { postDecision, testApp, type TestApp } from '../support/app.ts';
import { assertError } from './record-helpers.ts';
import assert from 'node:assert/strict';

await forEachStore('changes made through another connection', (kind) => {
  let t: TestApp;
  let elsewhere: LedgerStore;
  let operatorsElsewhere: Operators;
  before(async () => {
    const url = await kind.freshUrl();
    const store = openStore(url);
    await store.migrate();
    t = await testApp(store);
    elsewhere = openStore(url);
    await elsewhere.migrate();
    operatorsElsewhere = new Operators(elsewhere, systemClock);
  });
  after(async () => {
    await t.close();
    await t.store.close();
    await elsewhere.close();
    await kind.cleanup();
  });

  test('a key revoked elsewhere is refused on the next request', async () => {
    const agent = await t.agent();
    assert.equal((await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' })).statusCode, 201);
    const revoked = await operatorsElsewhere.revokeKey(agent.keyId);
    assert.ok(revoked.ok);
    assertError(await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }), 401, 'invalid_api_key', 'Authorization');
  });

  test('an agent paused elsewhere cannot record on the next request', async () => {
    const agent = await t.agent();
    assert.equal((await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' })).statusCode, 201);
    assert.ok((await operatorsElsewhere.setStatus(agent.handle, 'paused')).ok);
    assertError(await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }), 403, 'agent_not_active');
  });

  test('a key revoked on this connection is refused on the next request', async () => {
    const agent = await t.agent();
    assert.equal((await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' })).statusCode, 201);
    assert.ok((await t.operators.revokeKey(agent.keyId)).ok);
    assertError(await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }), 401, 'invalid_api_key', 'Authorization');
  });
});
