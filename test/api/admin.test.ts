// The operator API under /v1/admin: disabled (404) without LEDGER_ADMIN_TOKEN, guarded by it
// otherwise; agents, status transitions (retired is final), API keys; secrets shown once only.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LedgerStore } from '../../src/store/port.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { PostgresStore } from '../../src/store/postgres/store.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, ADMIN_TOKEN, postDecision, testApp, uniqueHandle, type TestApp } from '../support/app.ts';
import { assertError } from './record-helpers.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { systemClock } from '../../src/domain/clock.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const ALL_SCOPES = ['decisions:write', 'decisions:read', 'keys:write', 'brokers:write', 'brokers:read', 'webhooks:write', 'webhooks:read'];

type Call = { method: 'GET' | 'POST'; url: string; payload?: unknown };
const adminCalls = (handle: string, keyId: string): Call[] => [
  { method: 'POST', url: '/v1/admin/agents', payload: { handle: uniqueHandle('adm') } },
  { method: 'GET', url: '/v1/admin/agents' },
  { method: 'POST', url: `/v1/admin/agents/${handle}/status`, payload: { status: 'paused' } },
  { method: 'POST', url: `/v1/admin/agents/${handle}/api-keys`, payload: {} },
  { method: 'POST', url: `/v1/admin/api-keys/${keyId}/revoke` },
];

/** Every stored row of the operator tables, as text, to prove a secret is never kept. */
async function operatorRowsText(store: LedgerStore): Promise<string> {
  const tables = ['agents', 'api_keys', 'records', 'idempotency_keys'];
  if (store instanceof SqliteStore) return JSON.stringify(tables.map((x) => store.db.prepare(`SELECT * FROM ${x}`).all()));
  if (store instanceof PostgresStore) return JSON.stringify(await Promise.all(tables.map(async (x) => (await store.pool.query(`SELECT * FROM ${x}`)).rows)));
  throw new Error('unknown store');
}

await forEachStore('the admin API', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  const secretsSeen: string[] = [];
  const laterBodies: string[] = [];

  const call = async (c: Call, headers: Record<string, string> = admin) => {
    const res = await t.app.inject({
      method: c.method, url: c.url, headers: { ...headers, ...(c.payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(c.payload === undefined ? {} : { payload: JSON.stringify(c.payload) }),
    });
    laterBodies.push(res.body);
    return res;
  };
  const createAgent = async (payload: Record<string, unknown>) => {
    const res = await call({ method: 'POST', url: '/v1/admin/agents', payload });
    if (res.statusCode === 201) secretsSeen.push(res.json().api_key.secret);
    return res;
  };

  before(async () => {
    store = await kind.open();
    t = await testApp(store);
  });
  after(() => closeTestApp(t, kind));

  describe('without LEDGER_ADMIN_TOKEN', () => {
    test('every admin route is 404 not_found', async () => {
      const off = await testApp(store, { env: { LEDGER_ADMIN_TOKEN: '' } });
      try {
        for (const c of adminCalls('someone', 'key_x')) {
          const res = await off.app.inject({ method: c.method, url: c.url, headers: { ...admin, 'content-type': 'application/json' }, payload: JSON.stringify(c.payload ?? {}) });
          assertError(res, 404, 'not_found');
        }
      } finally {
        await off.close();
      }
    });
  });

  describe('the admin token', () => {
    test('missing: 401 missing_api_key; wrong: 401 invalid_api_key; an agent key is not an admin token', async () => {
      const agent = await t.agent();
      for (const c of adminCalls(agent.handle, agent.keyId)) {
        assertError(await call(c, {}), 401, 'missing_api_key');
        assertError(await call(c, { authorization: `Bearer ${ADMIN_TOKEN}x` }), 401, 'invalid_api_key');
        assertError(await call(c, { authorization: `Bearer ${ADMIN_TOKEN.slice(1)}` }), 401, 'invalid_api_key');
        assertError(await call(c, { authorization: `Bearer ${agent.secret}` }), 401, 'invalid_api_key');
        assertError(await call(c, { authorization: ADMIN_TOKEN }), 401, 'invalid_api_key');
      }
      const still = (await store.findAgentByHandle(agent.handle))!;
      assert.equal(still.status, 'active', 'nothing changed');
      assert.equal((await store.listApiKeys(agent.agentId)).length, 1);
    });
  });

  describe('agents', () => {
    test('create: 201 with the agent and a first key whose secret is shown once', async () => {
      const handle = uniqueHandle('new');
      const res = await createAgent({ handle, display_name: 'New Agent', demo: true });
      assert.equal(res.statusCode, 201, res.body);
      const { agent, api_key } = res.json();
      assert.deepEqual(Object.keys(res.json()).sort(), ['agent', 'api_key']);
      assert.equal(agent.object, 'agent');
      assert.match(agent.id, /^agt_/);
      assert.equal(agent.handle, handle);
      assert.equal(agent.display_name, 'New Agent');
      assert.equal(agent.status, 'active');
      assert.equal(agent.demo, true);
      assert.ok(!Number.isNaN(Date.parse(agent.created_at)));
      assert.equal(api_key.object, 'api_key');
      assert.match(api_key.id, /^key_/);
      assert.equal(api_key.agent, handle);
      assert.deepEqual([...api_key.scopes].sort(), [...ALL_SCOPES].sort(), 'a new key gets every scope');
      assert.equal(api_key.revoked_at, null);
      assert.match(api_key.secret, /^dl_live_[A-Za-z0-9_-]{32,}$/, 'live-key prefix and at least 128 random bits');
      assert.equal(api_key.prefix, api_key.secret.slice(0, api_key.prefix.length));
      assert.ok(api_key.prefix.length < api_key.secret.length - 16, 'the prefix does not give the secret away');
      const posted = await postDecision(t, api_key.secret, { symbol: 'AAPL', action: 'BUY' });
      assert.equal(posted.statusCode, 201, 'the key records');
    });

    test('create with scopes: the key has only those', async () => {
      const res = await createAgent({ handle: uniqueHandle('ro'), scopes: ['decisions:read'] });
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual(res.json().api_key.scopes, ['decisions:read']);
      assertError(await postDecision(t, res.json().api_key.secret, { symbol: 'AAPL', action: 'BUY' }), 403, 'insufficient_scope');
    });

    test('a duplicate handle is 409', async () => {
      const handle = uniqueHandle('dup');
      assert.equal((await createAgent({ handle })).statusCode, 201);
      const e = assertError(await createAgent({ handle }), 409, 'handle_taken', 'handle');
      assert.match(e.message, /already exists/);
      assert.equal((await store.listAgents()).filter((a) => a.handle === handle).length, 1);
    });

    test('handles must match ^[a-z0-9][a-z0-9_-]{2,31}$', async () => {
      for (const handle of ['ab', 'Abc', '-abc', '_abc', 'a'.repeat(33), 'ab c', 'abc!', 'abç', '', 123, null]) {
        assertError(await createAgent({ handle }), 400, 'invalid_request', 'handle');
      }
      assertError(await createAgent({}), 400, 'invalid_request', 'handle');
      for (const handle of ['abc', '0x_-', `m${'a'.repeat(31)}`]) {
        assert.equal((await createAgent({ handle: handle.length === 32 ? handle : `${handle}${kind.name}` })).statusCode, 201, handle);
      }
    });

    test('other bad bodies name the field', async () => {
      assertError(await createAgent({ handle: uniqueHandle('x'), extra: 1 }), 400, 'invalid_request', 'extra');
      assertError(await createAgent({ handle: uniqueHandle('x'), demo: 'yes' }), 400, 'invalid_request', 'demo');
      assertError(await createAgent({ handle: uniqueHandle('x'), scopes: ['decisions:delete'] }), 400, 'invalid_request', 'scopes.0');
      assertError(await createAgent({ handle: uniqueHandle('x'), scopes: [] }), 400, 'invalid_request', 'scopes');
      assertError(await createAgent({ handle: uniqueHandle('x'), display_name: '' }), 400, 'invalid_request', 'display_name');
    });

    test('a display name with a bidirectional control (it could render as another name, UTS #39) is 400 display_name, here and from the command line', async () => {
      for (const name of ['Alpha \u202Etob', 'Beta\u2066x\u2069', '\u200FGamma', 'Delta\u061C']) {
        assertError(await createAgent({ handle: uniqueHandle('x'), display_name: name }), 400, 'invalid_request', 'display_name');
        const direct = await new Operators(store, systemClock).createAgent({ handle: uniqueHandle('x'), displayName: name });
        assert.ok(!direct.ok && direct.error.param === 'display_name', JSON.stringify(name));
      }
      const direct = await new Operators(store, systemClock).createAgent({ handle: uniqueHandle('x'), displayName: 'Tab\there' });
      assert.ok(!direct.ok && direct.error.param === 'display_name', 'control characters, as the API refuses them');
      assert.equal((await createAgent({ handle: uniqueHandle('x'), display_name: 'עברית Bot' })).statusCode, 201, 'right-to-left letters are fine');
    });

    test('list agents', async () => {
      const agent = await t.agent();
      const res = await call({ method: 'GET', url: '/v1/admin/agents' });
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.object, 'list');
      assert.ok(body.data.some((a: { handle: string }) => a.handle === agent.handle));
      for (const a of body.data) assert.deepEqual(Object.keys(a).sort(), ['created_at', 'demo', 'display_name', 'handle', 'id', 'object', 'status']);
    });
  });

  describe('status', () => {
    const setStatus = (handle: string, status: unknown) => call({ method: 'POST', url: `/v1/admin/agents/${handle}/status`, payload: { status } });

    test('active -> paused -> active -> retired; retired is final (409)', async () => {
      const agent = await t.agent();
      const paused = await setStatus(agent.handle, 'paused');
      assert.equal(paused.statusCode, 200, paused.body);
      assert.equal(paused.json().agent.status, 'paused');
      assertError(await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }), 403, 'agent_not_active');
      assert.equal((await setStatus(agent.handle, 'paused')).statusCode, 200, 'setting the same status again is harmless');
      const resumed = await setStatus(agent.handle, 'active');
      assert.equal(resumed.json().agent.status, 'active');
      assert.equal((await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' })).statusCode, 201);
      const retired = await setStatus(agent.handle, 'retired');
      assert.equal(retired.json().agent.status, 'retired');
      for (const status of ['active', 'paused']) {
        assertError(await setStatus(agent.handle, status), 409, 'agent_retired', 'status');
      }
      assert.equal((await store.findAgentByHandle(agent.handle))!.status, 'retired');
      assertError(await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }), 403, 'agent_not_active');
      assert.equal((await store.chainHead(agent.agentId)).seq, 1, 'a retired agent keeps its history');
    });

    test('a bad status is 400 naming status; an unknown agent is 404', async () => {
      const agent = await t.agent();
      assertError(await setStatus(agent.handle, 'deleted'), 400, 'invalid_request', 'status');
      assertError(await setStatus(agent.handle, null), 400, 'invalid_request', 'status');
      assertError(await setStatus('no-such-agent', 'paused'), 404, 'not_found');
    });
  });

  describe('API keys', () => {
    test('issue: 201 with the secret once, all scopes by default; the key records', async () => {
      const agent = await t.agent();
      const res = await call({ method: 'POST', url: `/v1/admin/agents/${agent.handle}/api-keys` });
      assert.equal(res.statusCode, 201, res.body);
      const key = res.json().api_key;
      secretsSeen.push(key.secret);
      assert.deepEqual([...key.scopes].sort(), [...ALL_SCOPES].sort());
      assert.equal(key.agent, agent.handle);
      assert.notEqual(key.secret, agent.secret);
      assert.equal((await postDecision(t, key.secret, { symbol: 'AAPL', action: 'BUY' })).statusCode, 201);
      const scoped = await call({ method: 'POST', url: `/v1/admin/agents/${agent.handle}/api-keys`, payload: { scopes: ['decisions:read'] } });
      assert.equal(scoped.statusCode, 201);
      secretsSeen.push(scoped.json().api_key.secret);
      assert.deepEqual(scoped.json().api_key.scopes, ['decisions:read']);
      assertError(await call({ method: 'POST', url: '/v1/admin/agents/no-such-agent/api-keys', payload: {} }), 404, 'not_found');
      assertError(await call({ method: 'POST', url: `/v1/admin/agents/${agent.handle}/api-keys`, payload: { scopes: ['root'] } }), 400, 'invalid_request', 'scopes.0');
    });

    test('revoke: the key stops working at once; revoking again is harmless; unknown id is 404', async () => {
      const agent = await t.agent();
      const res = await call({ method: 'POST', url: `/v1/admin/api-keys/${agent.keyId}/revoke` });
      assert.equal(res.statusCode, 200, res.body);
      const key = res.json().api_key;
      assert.equal(key.id, agent.keyId);
      assert.equal(key.agent, agent.handle);
      assert.ok(key.revoked_at && !Number.isNaN(Date.parse(key.revoked_at)));
      assert.equal(key.secret, undefined);
      assertError(await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }), 401, 'invalid_api_key');
      const again = await call({ method: 'POST', url: `/v1/admin/api-keys/${agent.keyId}/revoke` });
      assert.equal(again.statusCode, 200);
      assert.equal(again.json().api_key.revoked_at, key.revoked_at, 'the first revocation time stands');
      assertError(await call({ method: 'POST', url: '/v1/admin/api-keys/key_nope/revoke' }), 404, 'not_found');
    });
  });

  test('secrets never appear in a later response nor in the database', async () => {
    assert.ok(secretsSeen.length >= 5);
    const list = await call({ method: 'GET', url: '/v1/admin/agents' });
    assert.equal(list.statusCode, 200);
    const creations = new Set(secretsSeen.map((s) => laterBodies.findIndex((b) => b.includes(s))));
    for (const secret of secretsSeen) {
      const shownIn = laterBodies.filter((b) => b.includes(secret));
      assert.equal(shownIn.length, 1, 'each secret is shown exactly once, when created');
    }
    assert.equal(creations.size, secretsSeen.length);
    const rows = await operatorRowsText(store);
    for (const secret of secretsSeen) assert.ok(!rows.includes(secret), 'only a hash of the secret is stored');
  });
});
