// The connections API on both stores: authentication on every authenticated endpoint (no key, a bad
// key, a revoked key, a paused agent, a missing scope), Alpaca's refusal (400, param api_key_id)
// and Alpaca unreachable (502 provider_error) storing nothing, the SnapTrade portal flow, disconnect.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import type { Scope } from '../../src/domain/types.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { assertError } from '../api/record-helpers.ts';
import { startAlpacaSim, type AlpacaSim } from '../sim/alpaca.ts';
import { startSnapTradeSim, type SnapTradeSim } from '../sim/snaptrade.ts';
import { brokerTestApp, type BrokerTestApp } from './wiring-support.ts';

type Endpoint = { name: string; scopes: Scope[]; request: (auth: string | null, id: string) => InjectOptions };
const h = (auth: string | null, json = false) => ({ ...(auth === null ? {} : { authorization: auth }), ...(json ? { 'content-type': 'application/json' } : {}) });

await forEachStore('broker connections API', (kind) => {
  let alpaca: AlpacaSim;
  let snap: SnapTradeSim;
  let store: LedgerStore;
  let t: BrokerTestApp;
  let owner: Awaited<ReturnType<BrokerTestApp['agent']>>;
  let connectionId: string;

  const endpoints = (): Endpoint[] => {
    const k = alpaca.scenario.keys[0]!;
    return [
      { name: 'POST /v1/brokers/alpaca', scopes: ['brokers:write'], request: (auth) => ({ method: 'POST', url: '/v1/brokers/alpaca', headers: h(auth, true), payload: JSON.stringify({ api_key_id: k.keyId, api_secret: k.secretKey, environment: 'paper' }) }) },
      { name: 'POST /v1/brokers/snaptrade', scopes: ['brokers:write'], request: (auth) => ({ method: 'POST', url: '/v1/brokers/snaptrade', headers: h(auth, true), payload: '{}' }) },
      { name: 'GET /v1/brokers', scopes: ['brokers:read', 'decisions:read'], request: (auth) => ({ method: 'GET', url: '/v1/brokers', headers: h(auth) }) },
      { name: 'GET /v1/brokers/{id}', scopes: ['brokers:read', 'decisions:read'], request: (auth, id) => ({ method: 'GET', url: `/v1/brokers/${id}`, headers: h(auth) }) },
      { name: 'POST /v1/brokers/{id}/sync', scopes: ['brokers:write'], request: (auth, id) => ({ method: 'POST', url: `/v1/brokers/${id}/sync`, headers: h(auth) }) },
      { name: 'POST /v1/brokers/{id}/disconnect', scopes: ['brokers:write'], request: (auth, id) => ({ method: 'POST', url: `/v1/brokers/${id}/disconnect`, headers: h(auth) }) },
    ];
  };

  /** A new Alpaca connection of the agent's, by the scenario's first key; answers its id. */
  const connect = async (agent: { secret: string }): Promise<string> => {
    const res = await t.app.inject(endpoints()[0]!.request(`Bearer ${agent.secret}`, ''));
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id;
  };

  before(async () => {
    alpaca = await startAlpacaSim();
    snap = await startSnapTradeSim();
    store = await kind.open();
    const p = snap.scenario.partner;
    t = await brokerTestApp(store, {
      LEDGER_ALPACA_TRADING_URL: alpaca.url, LEDGER_SNAPTRADE_URL: snap.url, LEDGER_SNAPTRADE_CLIENT_ID: p.clientId, LEDGER_SNAPTRADE_CONSUMER_KEY: p.consumerKey,
    }, new Date().toISOString());
    owner = await t.agent();
    connectionId = await connect(owner);
  });
  after(async () => {
    await t?.close();
    await store?.close();
    await alpaca?.close();
    await snap?.close();
    await kind.cleanup();
  });

  describe('authentication on every endpoint', () => {
    for (const ep of [0, 1, 2, 3, 4, 5]) {
      test(`endpoint ${ep}: no key, bad key, revoked key, paused agent, missing scope`, async () => {
        const e = endpoints()[ep]!;
        // Disconnecting is final, so that endpoint is tried on a connection of its own.
        const id = e.name.endsWith('/disconnect') ? await connect(owner) : connectionId;
        const call = (auth: string | null) => t.app.inject(e.request(auth, id));
        assertError(await call(null), 401, 'missing_api_key');
        assertError(await call(`Bearer dl_live_${'x'.repeat(32)}`), 401, 'invalid_api_key');
        const issued = await t.operators.issueKey(owner.handle);
        assert.ok(issued.ok);
        assert.ok((await t.operators.revokeKey(issued.value.apiKey.id)).ok);
        assertError(await call(`Bearer ${issued.value.apiKey.secret}`), 401, 'invalid_api_key');
        const paused = await t.agent();
        assert.ok((await t.operators.setStatus(paused.handle, 'paused')).ok);
        assertError(await call(`Bearer ${paused.secret}`), 403, 'agent_not_active');
        const all: Scope[] = ['decisions:write', 'decisions:read', 'keys:write', 'brokers:write', 'brokers:read'];
        const lacking = await t.agent({ scopes: all.filter((s) => !e.scopes.includes(s)) });
        assertError(await call(`Bearer ${lacking.secret}`), 403, 'insufficient_scope');
        for (const scope of e.scopes) {
          const scoped = await t.operators.issueKey(owner.handle, [scope]);
          assert.ok(scoped.ok);
          const res = await call(`Bearer ${scoped.value.apiKey.secret}`);
          assert.ok(res.statusCode !== 401 && res.statusCode !== 403, `${e.name} with only ${scope}: ${res.body}`);
        }
      });
    }
  });

  test('Alpaca refuses the keys: 400 invalid_request, param api_key_id; nothing stored', async () => {
    const a = await t.agent();
    const res = await t.app.inject({ method: 'POST', url: '/v1/brokers/alpaca', headers: h(`Bearer ${a.secret}`, true), payload: JSON.stringify({ api_key_id: 'PKWRONG', api_secret: 'nope', environment: 'paper' }) });
    assertError(res, 400, 'invalid_request', 'api_key_id');
    assert.deepEqual(await store.brokers.listConnections(a.agentId), []);
  });

  test('Alpaca unreachable: 502 provider_error; nothing stored', async () => {
    const down = await startAlpacaSim();
    const url = down.url;
    await down.close();
    const s2 = await kind.open();
    const t2 = await brokerTestApp(s2, { LEDGER_ALPACA_TRADING_URL: url });
    try {
      const a = await t2.agent();
      const k = alpaca.scenario.keys[0]!;
      const res = await t2.app.inject({ method: 'POST', url: '/v1/brokers/alpaca', headers: h(`Bearer ${a.secret}`, true), payload: JSON.stringify({ api_key_id: k.keyId, api_secret: k.secretKey, environment: 'paper' }) });
      assertError(res, 502, 'provider_error');
      assert.ok(!res.body.includes(k.secretKey));
      assert.deepEqual(await s2.brokers.listConnections(a.agentId), []);
    } finally {
      await t2.close();
      await s2.close();
    }
  });

  test('validation: unknown field and bad environment are 400 with param', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/brokers/alpaca', headers: h(`Bearer ${owner.secret}`, true), payload: JSON.stringify({ api_key_id: 'a', api_secret: 'b', environment: 'demo' }) });
    assertError(res, 400, 'invalid_request', 'environment');
  });

  test("another agent's connection is 404", async () => {
    const a = await t.agent();
    assertError(await t.app.inject({ method: 'GET', url: `/v1/brokers/${connectionId}`, headers: h(`Bearer ${a.secret}`) }), 404, 'not_found');
  });

  test('SnapTrade: register once, the portal redirect completes the connection, a sync imports, state works once', async () => {
    const a = await t.agent();
    const start = await t.app.inject({ method: 'POST', url: '/v1/brokers/snaptrade', headers: h(`Bearer ${a.secret}`, true), payload: '{}' });
    assert.equal(start.statusCode, 201, start.body);
    const { id, portal_url } = start.json();
    // The owner's browser at the portal, which redirects back to the service.
    const portal = await fetch(portal_url, { redirect: 'manual' });
    assert.equal(portal.status, 302);
    const back = new URL(portal.headers.get('location')!);
    const state = back.searchParams.get('state')!;
    assert.ok(state.length >= 20);
    const logged = t.logs.length;
    const done = await t.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` });
    assert.equal(done.statusCode, 200, done.body);
    const callbackLog = t.logs.slice(logged).join('');
    assert.match(callbackLog, /brokers\/snaptrade\/callback\?state=\[redacted\]/, 'the callback is logged, its state is not');
    assert.ok(!callbackLog.includes(state), 'the single-use state token is not logged');
    assert.equal(done.json().status, 'active');
    assert.equal(done.json().accounts.length, snap.scenario.accounts.length);
    assertError(await t.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` }), 404, 'not_found');
    await t.brokers.drain();
    const shown = await t.app.inject({ method: 'GET', url: `/v1/brokers/${id}`, headers: h(`Bearer ${a.secret}`) });
    const c = shown.json();
    assert.equal(c.last_sync?.ok, true, shown.body);
    assert.ok(c.last_sync.counts.executions_recorded > 0);
    assert.ok((c.last_sync.counts.not_fills.DIVIDEND ?? 0) >= 1, 'dividends counted, not recorded');
    const registrations = () => snap.requests.filter((r) => r.path.endsWith('/snapTrade/registerUser')).length;
    const registered = registrations();
    const again = await t.app.inject({ method: 'POST', url: '/v1/brokers/snaptrade', headers: h(`Bearer ${a.secret}`, true), payload: '{}' });
    assert.equal(again.statusCode, 201);
    assert.equal(registrations(), registered, 'the user is registered once per agent');
    assert.deepEqual(snap.requests.filter((r) => r.stateChanging), []);

    // No SnapTrade secret (the partner's consumer key, the user's secret) leaves the service.
    const exported = await t.app.inject({ method: 'GET', url: `/v1/export?agent=${a.handle}` });
    const listed = await t.app.inject({ method: 'GET', url: '/v1/brokers', headers: h(`Bearer ${a.secret}`) });
    const openapi = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    const seen = [start.body, done.body, shown.body, again.body, exported.body, listed.body, openapi.body, t.logs.join('')].join('\n');
    const secrets = [snap.scenario.partner.consumerKey, ...[...snap.users.values()].map((u) => u.userSecret)];
    assert.ok(secrets.length >= 2);
    for (const secret of secrets) assert.ok(!seen.includes(secret), 'a SnapTrade secret appears in a response, the export, OpenAPI or the log');
  });

  test('sync is 202 with progress; disconnect destroys credentials and keeps the records', async () => {
    const res = await t.app.inject({ method: 'POST', url: `/v1/brokers/${connectionId}/sync`, headers: h(`Bearer ${owner.secret}`) });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().syncing, true);
    await t.brokers.drain();
    const before = (await store.countRecords(owner.agentId)).byType.execution;
    assert.ok(before > 0);
    const off = await t.app.inject({ method: 'POST', url: `/v1/brokers/${connectionId}/disconnect`, headers: h(`Bearer ${owner.secret}`) });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(off.json().status, 'disconnected');
    assert.equal((await store.brokers.findConnection(connectionId))?.credentials, null);
    assert.equal((await store.countRecords(owner.agentId)).byType.execution, before);
    assertError(await t.app.inject({ method: 'POST', url: `/v1/brokers/${connectionId}/sync`, headers: h(`Bearer ${owner.secret}`) }), 400, 'invalid_request');
  });

  test('a sync under way when the owner disconnects cannot bring the connection back', async () => {
    const id = await connect(owner);
    await t.brokers.drain();
    const held = alpaca.hold();
    const answered = alpaca.requests.length;
    try {
      const res = await t.app.inject({ method: 'POST', url: `/v1/brokers/${id}/sync`, headers: h(`Bearer ${owner.secret}`) });
      assert.equal(res.statusCode, 202, res.body);
      await held.arrived;
      const off = await t.app.inject({ method: 'POST', url: `/v1/brokers/${id}/disconnect`, headers: h(`Bearer ${owner.secret}`) });
      assert.equal(off.statusCode, 200, off.body);
      assert.equal(alpaca.requests.length, answered, 'the sync is still waiting on Alpaca');
    } finally {
      held.release();
    }
    await t.brokers.drain();
    const shown = await t.app.inject({ method: 'GET', url: `/v1/brokers/${id}`, headers: h(`Bearer ${owner.secret}`) });
    assert.equal(shown.json().status, 'disconnected', shown.body);
    assert.equal(shown.json().progress, null, shown.body);
    assert.equal((await store.brokers.findConnection(id))?.credentials, null);
  });
});
