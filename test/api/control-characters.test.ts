// Text that no database column may hold (PostgreSQL refuses U+0000 in text) is refused at the
// edge with the spec's error, or simply not found, on every store: never a 500. Text inside the
// canonical content (thesis, metadata) is escaped by canon_v1 and recorded as sent.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachStore } from '../support/stores.ts';
import { ADMIN_TOKEN, closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { assertError } from './record-helpers.ts';

await forEachStore('control characters in identifiers and filters', (kind) => {
  let t: TestApp;
  let agent: Awaited<ReturnType<TestApp['agent']>>;
  before(async () => {
    t = await testApp(await kind.open());
    agent = await t.agent();
  });
  after(() => closeTestApp(t, kind));

  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${agent.secret}` } });

  test('lookups by an id holding NUL are not found or refused, never a 500', async () => {
    assertError(await get('/v1/proof/%00'), 404, 'not_found', 'record_id');
    assertError(await get('/v1/decisions/%00'), 400, 'invalid_request', 'id');
    assertError(await get('/v1/decisions?cursor=%00'), 400, 'invalid_request', 'cursor');
    assertError(await get('/v1/ledger?cursor=%00'), 400, 'invalid_request', 'cursor');
    assertError(await get('/v1/ledger?symbol=%00'), 400, 'invalid_request', 'symbol');
    assert.equal((await get('/v1/agents/%00')).statusCode, 404);
  });

  test('a symbol or an Idempotency-Key with control characters is a 400 naming it', async () => {
    assertError(await postDecision(t, agent.secret, { symbol: 'A\u0000', action: 'BUY' }), 400, 'invalid_request', 'symbol');
    assertError(await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }, 'key\u0000\u0000\u0000\u0000\u0000'), 400, 'invalid_request', 'Idempotency-Key');
  });

  test('a time_horizon with a TAB or CR is a 400 naming it, saying why; nothing is recorded', async () => {
    for (const time_horizon of ['5\ttd', '5 td\r', '5 td\r\n=1+2']) {
      const e = assertError(await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', time_horizon }), 400, 'invalid_request', 'time_horizon');
      assert.match(e.message, /^time_horizon cannot hold control characters/);
    }
    const e = assertError(await postDecision(t, agent.secret, { symbol: 'A\tB', action: 'BUY' }), 400, 'invalid_request', 'symbol');
    assert.match(e.message, /^symbol cannot hold control characters/);
    const list = (await get('/v1/decisions?limit=5')).json();
    assert.ok(list.data.every((d: { content: { time_horizon?: string } }) => !/[\t\r]/.test(d.content.time_horizon ?? '')));
  });

  test('an agent display name with control characters is a 400 naming it', async () => {
    const res = await t.app.inject({
      method: 'POST', url: '/v1/admin/agents',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ handle: `nul-${Date.now().toString(36)}`, display_name: 'x\u0000' }),
    });
    assertError(res, 400, 'invalid_request', 'display_name');
  });

  test('NUL inside the thesis and metadata is content: escaped by canon_v1 and recorded', async () => {
    const res = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', thesis: 'x\u0000y', metadata: { 'k\u0000': 'v\u0000' } });
    assert.equal(res.statusCode, 201, res.body);
    const list = (await get('/v1/decisions?limit=1')).json();
    assert.equal(list.data[0].content.thesis, 'x\u0000y');
  });
});
