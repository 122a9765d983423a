// The rate limits' bounds as docs/ state them, pinned: a write budget of 120 per key per 60 s
// window (the 121st write in a minute is refused, the first after the window is recorded), and a
// public read budget of 600 per client IP per 60 s by default. The budgets count on Date.now (the
// in-memory store), so node:test's mock clock moves time on: no test sleeps a minute.
import assert from 'node:assert/strict';
import { after, before, mock, test } from 'node:test';
import type { LedgerStore } from '../../src/store/port.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { forEachStore } from '../support/stores.ts';

await forEachStore('the rate-limit windows', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  before(async () => {
    store = await kind.open();
    t = await testApp(store); // neither LEDGER_WRITE_LIMIT_PER_MIN nor LEDGER_READ_LIMIT_PER_MIN: the defaults
  });
  after(() => closeTestApp(t, kind));

  test('writes: 120 in a 60 s window; the 121st is refused until the window ends, the first after it is recorded', async () => {
    const agent = await t.agent();
    mock.timers.enable({ apis: ['Date'], now: Date.now() });
    try {
      for (let i = 0; i < 120; i += 20) {
        const batch = await Promise.all(Array.from({ length: 20 }, (_, j) => postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', quantity: String(i + j + 1) })));
        assert.deepEqual(batch.map((r) => r.statusCode), Array(20).fill(201));
      }
      const refused = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' });
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.headers['retry-after'], '60', 'the window is 60 s from its first write');
      mock.timers.tick(59_000);
      const stillRefused = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' });
      assert.equal(stillRefused.statusCode, 429, '59 s into the window, the budget is still spent');
      assert.equal(stillRefused.headers['retry-after'], '1');
      mock.timers.tick(1_000);
      const next = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' });
      assert.equal(next.statusCode, 201, `the first write after the window: ${next.body}`);
      assert.equal(next.headers['ratelimit-remaining'], '119', 'a new window, a new budget');
    } finally {
      mock.timers.reset();
    }
  });

  test('public reads: 600 per client IP in a 60 s window by default; the 601st is refused, the first after the window answered', async () => {
    const ip = '10.60.0.1';
    const read = () => t.app.inject({ method: 'GET', url: '/v1/transparency', remoteAddress: ip });
    mock.timers.enable({ apis: ['Date'], now: Date.now() });
    try {
      const first = await read();
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers['ratelimit-limit'], '600');
      // Four at a time: the read gate's bound on one client's reads at once (config.readBounds).
      for (let i = 1; i < 600; i += 4) {
        const batch = await Promise.all(Array.from({ length: Math.min(4, 600 - i) }, read));
        assert.deepEqual(new Set(batch.map((r) => r.statusCode)), new Set([200]));
      }
      const refused = await read();
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.headers['retry-after'], '60');
      mock.timers.tick(60_000);
      assert.equal((await read()).statusCode, 200, 'the first read after the window');
    } finally {
      mock.timers.reset();
    }
  });
});
