// Write rate limits on POST /v1/decisions: 120 per minute per API key by default, RateLimit-*
// headers on every answer, 429 rate_limit_exceeded with Retry-After, and one budget shared by
// several API processes through Redis.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { skipUnless, REDIS_URL } from '../support/services.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { assertError, headOf, storedChain } from './record-helpers.ts';

type Res = Awaited<ReturnType<typeof postDecision>>;

/** Posts `n` decisions, `parallel` at a time. */
async function postMany(t: TestApp, secret: string, n: number, parallel = 20): Promise<Res[]> {
  const out: Res[] = [];
  for (let i = 0; i < n; i += parallel) {
    const size = Math.min(parallel, n - i);
    out.push(...await Promise.all(Array.from({ length: size }, (_, j) => postDecision(t, secret, { symbol: 'AAPL', action: 'BUY', quantity: i + j }))));
  }
  return out;
}

function assertLimitHeaders(res: Res, limit: number): number {
  assert.equal(res.headers['ratelimit-limit'], String(limit));
  const remaining = Number(res.headers['ratelimit-remaining']);
  const reset = Number(res.headers['ratelimit-reset']);
  assert.ok(Number.isInteger(remaining) && remaining >= 0 && remaining < limit, `RateLimit-Remaining ${res.headers['ratelimit-remaining']}`);
  assert.ok(Number.isInteger(reset) && reset >= 0 && reset <= 60, `RateLimit-Reset ${res.headers['ratelimit-reset']}`);
  return remaining;
}

const redisSkip = await skipUnless('redis');

await forEachStore('write rate limits', (kind) => {
  let store: LedgerStore;
  let t: TestApp;

  before(async () => {
    store = await kind.open();
    t = await testApp(store); // LEDGER_WRITE_LIMIT_PER_MIN unset: the default 120
  });
  after(() => closeTestApp(t, kind));

  test('the default is 120 writes a minute per key; the 121st is 429 with Retry-After and records nothing', async () => {
    const agent = await t.agent();
    const results = await postMany(t, agent.secret, 120);
    assert.deepEqual(results.map((r) => r.statusCode), Array(120).fill(201));
    const remaining = results.map((r) => assertLimitHeaders(r, 120)).sort((a, b) => a - b);
    assert.deepEqual(remaining, Array.from({ length: 120 }, (_, i) => i), 'each write spends one unit');

    const head = await headOf(store, agent.agentId);
    const limited = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', thesis: 'one too many' });
    const e = assertError(limited, 429, 'rate_limit_exceeded');
    assert.equal(e.type, 'rate_limit_error');
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${limited.headers['retry-after']}`);
    assert.equal(limited.headers['ratelimit-limit'], '120');
    assert.equal(limited.headers['ratelimit-remaining'], '0');
    assert.equal(await headOf(store, agent.agentId), head, 'a limited write records nothing');
    assert.equal((await storedChain(store, agent.agentId)).length, 120);

    // A second key of the same agent has its own budget.
    const second = await t.operators.issueKey(agent.handle);
    assert.ok(second.ok);
    const fresh = await postDecision(t, second.value.apiKey.secret, { symbol: 'AAPL', action: 'SELL' });
    assert.equal(fresh.statusCode, 201, fresh.body);
    assert.equal(fresh.headers['ratelimit-remaining'], '119');
    // Another agent is untouched too.
    const other = await t.agent();
    assert.equal((await postDecision(t, other.secret, { symbol: 'AAPL', action: 'BUY' })).statusCode, 201);
  });

  test('LEDGER_WRITE_LIMIT_PER_MIN sets the budget', async () => {
    const small = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '3' } });
    try {
      const agent = await small.agent();
      const results = await postMany(small, agent.secret, 4, 1);
      assert.deepEqual(results.map((r) => r.statusCode), [201, 201, 201, 429]);
      assert.deepEqual(results.slice(0, 3).map((r) => r.headers['ratelimit-remaining']), ['2', '1', '0']);
      assert.ok(results[3]!.headers['retry-after']);
    } finally {
      await small.close();
    }
  });

  test('a concurrent burst across the limit: exactly the budget passes, each with its own remaining count', async () => {
    const small = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '5' } });
    try {
      const agent = await small.agent();
      assert.equal((await postDecision(small, agent.secret, { symbol: 'AAPL', action: 'BUY' })).statusCode, 201);
      const burst = await postMany(small, agent.secret, 8, 8);
      const passed = burst.filter((r) => r.statusCode === 201);
      assert.equal(passed.length, 4, burst.map((r) => r.statusCode).join(','));
      assert.deepEqual(passed.map((r) => r.headers['ratelimit-remaining']).sort(), ['0', '1', '2', '3']);
      for (const r of burst.filter((x) => x.statusCode !== 201)) assertError(r, 429, 'rate_limit_exceeded');
      assert.equal((await storedChain(store, agent.agentId)).length, 5);
    } finally {
      await small.close();
    }
  });

  test('idempotent replays are not charged to the write budget, and are answered past it', async () => {
    const small = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '3' } });
    try {
      const agent = await small.agent();
      const key = `replayed-${Date.now()}`;
      const decision = { symbol: 'AAPL', action: 'BUY', quantity: 1 };
      const first = await postDecision(small, agent.secret, decision, key);
      assert.equal(first.statusCode, 201, first.body);
      assert.equal(first.headers['ratelimit-remaining'], '2');
      for (let i = 0; i < 5; i++) {
        const replay = await postDecision(small, agent.secret, decision, key);
        assert.equal(replay.statusCode, 201, replay.body);
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.equal(replay.body, first.body);
        assert.equal(replay.headers['ratelimit-remaining'], '2', 'a replay spends nothing');
      }
      const fresh = await postMany(small, agent.secret, 3, 1);
      assert.deepEqual(fresh.map((r) => r.statusCode), [201, 201, 429], 'the budget was intact for new writes');
      const pastTheLimit = await postDecision(small, agent.secret, decision, key);
      assert.equal(pastTheLimit.statusCode, 201, `a replay past the limit is still answered: ${pastTheLimit.body}`);
      assert.equal(pastTheLimit.headers['idempotent-replayed'], 'true');
      assert.equal(pastTheLimit.body, first.body);
      const reused = await postDecision(small, agent.secret, { ...decision, quantity: 2 }, key);
      assert.equal(reused.statusCode, 409, 'a reused key with another body past the limit is told so, not replayed');
      assertError(await postDecision(small, agent.secret, decision), 429, 'rate_limit_exceeded');
      assert.equal((await storedChain(store, agent.agentId)).length, 3);
    } finally {
      await small.close();
    }
  });

  test('reads are not charged to the write budget', async () => {
    const small = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '2' } });
    try {
      const agent = await small.agent();
      for (let i = 0; i < 5; i++) {
        const res = await small.app.inject({ method: 'GET', url: '/v1/decisions', headers: { authorization: `Bearer ${agent.secret}` } });
        assert.equal(res.statusCode, 200);
      }
      assert.equal((await postDecision(small, agent.secret, { symbol: 'AAPL', action: 'BUY' })).headers['ratelimit-remaining'], '1');
    } finally {
      await small.close();
    }
  });

  describe('on Redis', { skip: redisSkip }, () => {
    test('two app instances share one budget per key', async () => {
      const env = { LEDGER_REDIS_URL: REDIS_URL, LEDGER_WRITE_LIMIT_PER_MIN: '5' };
      const a = await testApp(store, { env });
      const b = await testApp(store, { env });
      try {
        const agent = await a.agent(); // a fresh API key id: reruns never share a budget
        const order = [a, b, a, b, a, b, a];
        const results: Res[] = [];
        for (const app of order) results.push(await postDecision(app, agent.secret, { symbol: 'AAPL', action: 'BUY', quantity: results.length }));
        assert.deepEqual(results.map((r) => r.statusCode), [201, 201, 201, 201, 201, 429, 429]);
        assert.deepEqual(results.slice(0, 5).map((r) => r.headers['ratelimit-remaining']), ['4', '3', '2', '1', '0']);
        assertError(results[5]!, 429, 'rate_limit_exceeded');
        assert.ok(Number(results[5]!.headers['retry-after']) >= 1);
        assert.equal((await storedChain(store, agent.agentId)).length, 5);
        const other = await a.operators.issueKey(agent.handle);
        assert.ok(other.ok);
        assert.equal((await postDecision(b, other.value.apiKey.secret, { symbol: 'AAPL', action: 'BUY' })).statusCode, 201, 'another key has its own budget');
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
});
