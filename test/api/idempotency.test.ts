// Idempotency rules 1-4 of POST /v1/decisions, scoped per agent: replay, reuse with another body,
// a concurrent duplicate, the key's length bounds, and refused requests that never burn a key.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { assertChainVerifies, assertError, headOf, storedChain } from './record-helpers.ts';

await forEachStore('idempotency', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  let run = 0;
  const key = (label: string) => `${label}-${kind.name}-${++run}-${Date.now()}`;

  before(async () => {
    store = await kind.open();
    t = await testApp(store);
  });
  after(() => closeTestApp(t, kind));

  test('a replay returns the original status and body byte for byte, marked as a replay, and records nothing', async () => {
    const agent = await t.agent();
    const k = key('replay');
    const first = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', quantity: '2' }, k);
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const head = await headOf(store, agent.agentId);
    for (let i = 0; i < 3; i++) {
      const again = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', quantity: '2' }, k);
      assert.equal(again.statusCode, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body, first.body);
      assert.match(String(again.headers['content-type']), /^application\/json/);
    }
    assert.equal(await headOf(store, agent.agentId), head);
    await assertChainVerifies(store, agent, 1);
  });

  test('the same decision written differently (1.5 vs "1.50", key order) is the same body', async () => {
    const agent = await t.agent();
    const k = key('same');
    const first = await postDecision(t, agent.secret, '{"symbol":"AAPL","action":"BUY","quantity":1.5}', k);
    const again = await postDecision(t, agent.secret, '{"quantity":"1.50","action":"BUY","symbol":"AAPL"}', k);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body);
  });

  test('a different body with a used key is 409 idempotency_key_reused and records nothing', async () => {
    const agent = await t.agent();
    const k = key('reuse');
    const first = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }, k);
    assert.equal(first.statusCode, 201);
    const head = await headOf(store, agent.agentId);
    for (const body of [{ symbol: 'AAPL', action: 'SELL' }, { symbol: 'AAPL', action: 'BUY', thesis: 'x' }, { symbol: 'AAPL', action: 'BUY', currency: 'EUR' }]) {
      const res = await postDecision(t, agent.secret, body, k);
      const e = assertError(res, 409, 'idempotency_key_reused', 'Idempotency-Key');
      assert.equal(e.type, 'idempotency_error');
      assert.equal(res.headers['idempotent-replayed'], undefined);
    }
    assert.equal(await headOf(store, agent.agentId), head);
    const replay = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }, k);
    assert.equal(replay.body, first.body, 'the original is still replayed after a refused reuse');
  });

  test('an explicit default is the same decision as an omitted one', async () => {
    const agent = await t.agent();
    const k = key('defaults');
    const first = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }, k);
    const again = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', currency: 'USD', asset_class: 'US_EQUITY' }, k);
    assert.equal(again.statusCode, 201);
    assert.equal(again.body, first.body);
  });

  test('a concurrent duplicate is 409 idempotency_request_in_flight; exactly one record', async () => {
    const agent = await t.agent();
    // Warm the store's connection pool so neither request waits for a new connection.
    await Promise.all(Array.from({ length: 4 }, () => postDecision(t, agent.secret, { symbol: 'WARM', action: 'HOLD' })));
    const k = key('flight');
    const body = { symbol: 'AAPL', action: 'BUY' };
    const first = postDecision(t, agent.secret, body, k); // not awaited: still processing
    const second = postDecision(t, agent.secret, body, k);
    // Which of the two reaches the ledger first is up to the scheduler; one records, one waits.
    const [a, b] = [...(await Promise.all([first, second]))].sort((x, y) => x.statusCode - y.statusCode);
    assert.equal(a!.statusCode, 201, a!.body);
    const e = assertError(b!, 409, 'idempotency_request_in_flight', 'Idempotency-Key');
    assert.equal(e.type, 'idempotency_error');
    const after = await postDecision(t, agent.secret, body, k);
    assert.equal(after.statusCode, 201);
    assert.equal(after.headers['idempotent-replayed'], 'true', 'once finished, the key replays');
    assert.equal(after.body, a!.body);
    await assertChainVerifies(store, agent, 5);
  });

  test('many concurrent duplicates make one record; every other answer is in-flight or the replay', async () => {
    const agent = await t.agent();
    const k = key('burst');
    const results = await Promise.all(Array.from({ length: 10 }, () => postDecision(t, agent.secret, { symbol: 'TSLA', action: 'SELL' }, k)));
    const created = results.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
    assert.equal(created.length, 1, results.map((r) => r.statusCode).join(','));
    for (const r of results) {
      if (r === created[0]) continue;
      if (r.statusCode === 201) assert.equal(r.body, created[0]!.body);
      else assertError(r, 409, 'idempotency_request_in_flight', 'Idempotency-Key');
    }
    await assertChainVerifies(store, agent, 1);
  });

  test('two app instances on one store racing on one key record once', async () => {
    const second = await testApp(store);
    try {
      const agent = await t.agent();
      const k = key('two-apps');
      const body = { symbol: 'NVDA', action: 'BUY' };
      const results = await Promise.all([postDecision(t, agent.secret, body, k), postDecision(second, agent.secret, body, k)]);
      const fresh = results.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
      assert.equal(fresh.length, 1, results.map((r) => `${r.statusCode} ${r.body}`).join('\n'));
      for (const r of results) {
        if (r.statusCode === 201) assert.equal(r.body, fresh[0]!.body);
        else assertError(r, 409, 'idempotency_request_in_flight', 'Idempotency-Key');
      }
      await assertChainVerifies(store, agent, 1);
    } finally {
      await second.close();
    }
  });

  test('keys are scoped per agent: one key, two agents, two records', async () => {
    const a = await t.agent();
    const b = await t.agent();
    const k = key('per-agent');
    const ra = await postDecision(t, a.secret, { symbol: 'AAPL', action: 'BUY' }, k);
    const rb = await postDecision(t, b.secret, { symbol: 'AAPL', action: 'BUY' }, k);
    assert.equal(ra.statusCode, 201);
    assert.equal(rb.statusCode, 201);
    assert.equal(rb.headers['idempotent-replayed'], undefined);
    assert.notEqual(ra.json().id, rb.json().id);
    const rbDifferent = await postDecision(t, b.secret, { symbol: 'AAPL', action: 'SELL' }, key('per-agent-other'));
    assert.equal(rbDifferent.statusCode, 201);
    await assertChainVerifies(store, a, 1);
    await assertChainVerifies(store, b, 2);
  });

  test('keys belong to the agent, not the API key: a second key of the agent replays', async () => {
    const agent = await t.agent();
    const issued = await t.operators.issueKey(agent.handle);
    assert.ok(issued.ok);
    const k = key('agent-scope');
    const first = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }, k);
    const again = await postDecision(t, issued.value.apiKey.secret, { symbol: 'AAPL', action: 'BUY' }, k);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body);
  });

  test('a missing Idempotency-Key is 400 missing_idempotency_key', async () => {
    const agent = await t.agent();
    const res = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }, null);
    assertError(res, 400, 'missing_idempotency_key', 'Idempotency-Key');
    assert.equal((await storedChain(store, agent.agentId)).length, 0);
  });

  test('Idempotency-Key length: 7 and 256 refused, 8 and 255 accepted', async () => {
    const agent = await t.agent();
    for (const k of ['k'.repeat(7), 'k'.repeat(256), '']) {
      const res = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }, k);
      assertError(res, 400, 'invalid_request', 'Idempotency-Key');
    }
    assert.equal((await storedChain(store, agent.agentId)).length, 0);
    for (const k of ['8'.repeat(8), '5'.repeat(255)]) {
      const res = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', thesis: k }, k);
      assert.equal(res.statusCode, 201, res.body);
      const replay = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', thesis: k }, k);
      assert.equal(replay.body, res.body);
    }
    await assertChainVerifies(store, agent, 2);
  });

  test('a refused (400) request does not burn its key', async () => {
    const agent = await t.agent();
    const k = key('not-burned');
    const bad = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'WAIT' }, k);
    assertError(bad, 400, 'invalid_request', 'action');
    const malformed = await postDecision(t, agent.secret, '{"symbol":', k);
    assertError(malformed, 400, 'invalid_request');
    const good = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }, k);
    assert.equal(good.statusCode, 201, good.body);
    assert.equal(good.headers['idempotent-replayed'], undefined);
    await assertChainVerifies(store, agent, 1);
  });

  test('a refused (403) request does not burn its key', async () => {
    const agent = await t.agent();
    const k = key('paused');
    assert.ok((await t.operators.setStatus(agent.handle, 'paused')).ok);
    assertError(await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }, k), 403, 'agent_not_active');
    assert.ok((await t.operators.setStatus(agent.handle, 'active')).ok);
    const good = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }, k);
    assert.equal(good.statusCode, 201);
    assert.equal(good.headers['idempotent-replayed'], undefined);
  });
});
