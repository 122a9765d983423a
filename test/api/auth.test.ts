// Authentication per interface section 5 on every authenticated endpoint: missing key, bad key,
// revoked key, paused and retired agents, missing scope. A refused request records nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import type { Scope } from '../../src/domain/types.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, idempotencyKey, testApp, type TestApp } from '../support/app.ts';
import { assertError, headOf } from './record-helpers.ts';

type Endpoint = { name: string; scope: Scope; request: (auth: string | null, ids: { decisionId: string }) => InjectOptions };

const headersWith = (auth: string | null, extra: Record<string, string> = {}) => ({ ...(auth === null ? {} : { authorization: auth }), ...extra });

const endpoints: Endpoint[] = [
  {
    name: 'POST /v1/decisions', scope: 'decisions:write',
    request: (auth) => ({
      method: 'POST', url: '/v1/decisions', payload: JSON.stringify({ symbol: 'AAPL', action: 'BUY' }),
      headers: headersWith(auth, { 'content-type': 'application/json', 'idempotency-key': idempotencyKey() }),
    }),
  },
  { name: 'GET /v1/decisions', scope: 'decisions:read', request: (auth) => ({ method: 'GET', url: '/v1/decisions', headers: headersWith(auth) }) },
  { name: 'GET /v1/decisions/{id}', scope: 'decisions:read', request: (auth, ids) => ({ method: 'GET', url: `/v1/decisions/${ids.decisionId}`, headers: headersWith(auth) }) },
];

await forEachStore('authentication', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  let owner: Awaited<ReturnType<TestApp['agent']>>;
  let decisionId: string;

  before(async () => {
    store = await kind.open();
    t = await testApp(store);
    owner = await t.agent();
    const res = await t.app.inject(endpoints[0]!.request(`Bearer ${owner.secret}`, { decisionId: '' }));
    assert.equal(res.statusCode, 201, res.body);
    decisionId = res.json().id;
  });
  after(() => closeTestApp(t, kind));

  for (const ep of endpoints) {
    describe(ep.name, () => {
      const call = async (auth: string | null, agentId = owner.agentId) => {
        const head = await headOf(store, agentId);
        const res = await t.app.inject(ep.request(auth, { decisionId }));
        if (res.statusCode >= 400) assert.equal(await headOf(store, agentId), head, 'a refused request records nothing');
        return res;
      };

      test('no key: 401 missing_api_key', async () => {
        const e = assertError(await call(null), 401, 'missing_api_key');
        assert.equal(e.type, 'authentication_error');
        assertError(await call(''), 401, 'missing_api_key');
      });

      test('a bad key: 401 invalid_api_key', async () => {
        for (const auth of [`Bearer dl_live_${'x'.repeat(32)}`, 'Bearer not-a-key', `Basic ${owner.secret}`, 'Bearer', `Bearer ${owner.secret}x`, `Bearer ${owner.secret.slice(0, -1)}`, `Bearer dl_live_${'y'.repeat(500)}`]) {
          const e = assertError(await call(auth), 401, 'invalid_api_key');
          assert.equal(e.type, 'authentication_error');
        }
      });

      test('a revoked key: 401 invalid_api_key', async () => {
        const issued = await t.operators.issueKey(owner.handle);
        assert.ok(issued.ok);
        const secret = issued.value.apiKey.secret;
        assert.ok((await t.app.inject(ep.request(`Bearer ${secret}`, { decisionId }))).statusCode < 400, 'works before revoking');
        assert.ok((await t.operators.revokeKey(issued.value.apiKey.id)).ok);
        assertError(await call(`Bearer ${secret}`), 401, 'invalid_api_key');
      });

      test('a paused agent: 403 agent_not_active; resumed, it works again', async () => {
        const agent = await t.agent();
        assert.ok((await t.operators.setStatus(agent.handle, 'paused')).ok);
        const e = assertError(await call(`Bearer ${agent.secret}`, agent.agentId), 403, 'agent_not_active');
        assert.equal(e.type, 'permission_error');
        assert.ok((await t.operators.setStatus(agent.handle, 'active')).ok);
        const res = await t.app.inject(ep.request(`Bearer ${agent.secret}`, { decisionId }));
        assert.notEqual(res.statusCode, 403, res.body);
        assert.notEqual(res.statusCode, 401, res.body);
      });

      test('a retired agent: 403 agent_not_active', async () => {
        const agent = await t.agent();
        assert.ok((await t.operators.setStatus(agent.handle, 'retired')).ok);
        assertError(await call(`Bearer ${agent.secret}`, agent.agentId), 403, 'agent_not_active');
      });

      test(`a key without ${ep.scope}: 403 insufficient_scope`, async () => {
        const other = (['decisions:write', 'decisions:read', 'keys:write'] as Scope[]).filter((s) => s !== ep.scope);
        const agent = await t.agent(undefined, { scopes: other });
        const e = assertError(await call(`Bearer ${agent.secret}`, agent.agentId), 403, 'insufficient_scope');
        assert.equal(e.type, 'permission_error');
        const scoped = await t.operators.issueKey(agent.handle, [ep.scope]);
        assert.ok(scoped.ok);
        const res = await t.app.inject(ep.request(`Bearer ${scoped.value.apiKey.secret}`, { decisionId }));
        assert.ok(res.statusCode !== 401 && res.statusCode !== 403, `a key with only ${ep.scope} passes: ${res.body}`);
      });
    });
  }

  test('authentication comes before the body: no key and a malformed body is still 401', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/decisions', payload: '{"symbol":', headers: { 'content-type': 'application/json' } });
    assertError(res, 401, 'missing_api_key');
  });

  test('the bearer scheme is case-insensitive', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/decisions', headers: { authorization: `bearer ${owner.secret}` } });
    assert.equal(res.statusCode, 200, res.body);
  });
});
