// The webhook endpoints API on both stores: authentication on every endpoint (no key, a bad key, a
// revoked key, a paused agent, a missing scope), the secret shown once (no-store) and stored only
// sealed, validation with the spec's error body, private addresses refused at creation when not
// allowed (literals and a name resolving to 127.0.0.1), another agent's endpoint not found,
// disable, and the delivery log paged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import type { Scope } from '../../src/domain/types.ts';
import { ALL_SCOPES } from '../../src/domain/types.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import type { PostgresStore } from '../../src/store/postgres/store.ts';
import type { SqliteStore } from '../../src/store/sqlite/store.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, testApp, type TestApp } from '../support/app.ts';
import { assertError } from '../api/record-helpers.ts';
import { record } from '../log/helpers.ts';
import { createEndpoint, deliveryLog, startReceiver, testDeliverer, testKeyring, WEBHOOK_ENV, type Receiver } from './helpers.ts';
import { addKeyVersion, dropKeyVersions } from '../../src/vault/vault.ts';
import { openSecret, resealSecrets } from '../../src/webhooks/endpoints.ts';

type Endpoint = { name: string; scopes: Scope[]; request: (auth: string | null, id: string) => InjectOptions };
const h = (auth: string | null, json = false) => ({ ...(auth === null ? {} : { authorization: auth }), ...(json ? { 'content-type': 'application/json' } : {}) });
const create = (auth: string | null, body: unknown): InjectOptions => ({ method: 'POST', url: '/v1/webhooks', headers: h(auth, true), payload: JSON.stringify(body) });

const endpoints: Endpoint[] = [
  { name: 'POST /v1/webhooks', scopes: ['webhooks:write'], request: (auth) => create(auth, { url: 'https://example.com/hook', events: ['decision.recorded'] }) },
  { name: 'GET /v1/webhooks', scopes: ['webhooks:read', 'webhooks:write'], request: (auth) => ({ method: 'GET', url: '/v1/webhooks', headers: h(auth) }) },
  { name: 'GET /v1/webhooks/{id}/deliveries', scopes: ['webhooks:read', 'webhooks:write'], request: (auth, id) => ({ method: 'GET', url: `/v1/webhooks/${id}/deliveries`, headers: h(auth) }) },
  { name: 'POST /v1/webhooks/{id}/disable', scopes: ['webhooks:write'], request: (auth, id) => ({ method: 'POST', url: `/v1/webhooks/${id}/disable`, headers: h(auth) }) },
];

async function storedSecrets(store: LedgerStore): Promise<string[]> {
  if ('db' in store) return ((store as SqliteStore).db.prepare('SELECT secret FROM webhook_endpoints').all() as { secret: string }[]).map((r) => r.secret);
  return ((await (store as PostgresStore).pool.query('SELECT secret FROM webhook_endpoints')).rows as { secret: string }[]).map((r) => r.secret);
}

await forEachStore('webhook endpoints API', (kind) => {
  let t: TestApp;
  let strict: TestApp;
  let owner: Awaited<ReturnType<TestApp['agent']>>;
  let endpointId: string;

  before(async () => {
    const store = await kind.open();
    t = await testApp(store, { env: WEBHOOK_ENV });
    // The same database, private addresses not allowed (the default).
    strict = await testApp(store, { env: { ...WEBHOOK_ENV, LEDGER_WEBHOOKS_ALLOW_PRIVATE: 'false' } });
    owner = await t.agent();
    endpointId = (await createEndpoint(t, owner.secret, 'http://127.0.0.1:9/hook')).id;
  });
  after(async () => {
    await strict?.close();
    await closeTestApp(t, kind);
  });

  describe('authentication on every endpoint', () => {
    for (const e of endpoints) {
      test(`${e.name}: no key, bad key, revoked key, paused agent, missing scope`, async () => {
        const call = (auth: string | null) => t.app.inject(e.request(auth, endpointId));
        assertError(await call(null), 401, 'missing_api_key');
        assertError(await call(`Bearer dl_live_${'x'.repeat(32)}`), 401, 'invalid_api_key');
        const issued = await t.operators.issueKey(owner.handle);
        assert.ok(issued.ok);
        assert.ok((await t.operators.revokeKey(issued.value.apiKey.id)).ok);
        assertError(await call(`Bearer ${issued.value.apiKey.secret}`), 401, 'invalid_api_key');
        const paused = await t.agent();
        assert.ok((await t.operators.setStatus(paused.handle, 'paused')).ok);
        assertError(await call(`Bearer ${paused.secret}`), 403, 'agent_not_active');
        const lacking = await t.agent(undefined, { scopes: ALL_SCOPES.filter((s) => !e.scopes.includes(s)) });
        assertError(await call(`Bearer ${lacking.secret}`), 403, 'insufficient_scope');
        for (const scope of e.scopes) {
          const scoped = await t.operators.issueKey(owner.handle, [scope]);
          assert.ok(scoped.ok);
          const res = await call(`Bearer ${scoped.value.apiKey.secret}`);
          assert.ok(res.statusCode < 400, `${e.name} with only ${scope}: ${res.statusCode} ${res.body}`);
        }
      });
    }
  });

  test('the secret (whsec_, 32 bytes) is in the creation answer only (no-store), and stored sealed', async () => {
    const a = await t.agent();
    const res = await t.app.inject(create(`Bearer ${a.secret}`, { url: 'https://example.com/a', events: ['decision.recorded', 'anchor.confirmed'], description: 'mine' }));
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json();
    assert.match(body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual({ ...body, secret: undefined, id: undefined, created_at: undefined }, {
      object: 'webhook_endpoint', url: 'https://example.com/a', events: ['decision.recorded', 'anchor.confirmed'], description: 'mine',
      status: 'active', disabled_reason: null, disabled_at: null, secret: undefined, id: undefined, created_at: undefined,
    });
    const list = await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: h(`Bearer ${a.secret}`) });
    assert.equal(list.statusCode, 200);
    assert.equal(list.json().data.length, 1);
    assert.ok(!list.body.includes(body.secret) && !('secret' in list.json().data[0]), 'never listed');
    const disabled = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${body.id}/disable`, headers: h(`Bearer ${a.secret}`) });
    assert.ok(!disabled.body.includes(body.secret));
    const stored = await storedSecrets(t.store);
    assert.ok(stored.every((s) => s.startsWith('v1.') && !s.includes(body.secret.slice(6))), 'sealed by the vault');
  });

  test('bad input: the spec error body, nothing stored', async () => {
    const a = await t.agent();
    const auth = `Bearer ${a.secret}`;
    const cases: [unknown, string][] = [
      [{ url: 'https://example.com', events: [] }, 'events'],
      [{ url: 'https://example.com', events: ['decision.deleted'] }, 'events.0'],
      [{ url: 'https://example.com', events: ['decision.recorded', 'decision.recorded'] }, 'events'],
      [{ url: 'ftp://example.com/x', events: ['decision.recorded'] }, 'url'],
      [{ url: 'not a url', events: ['decision.recorded'] }, 'url'],
      [{ url: 'https://user:pw@example.com/', events: ['decision.recorded'] }, 'url'],
      [{ url: 'https://example.com', events: ['decision.recorded'], secret: 'whsec_mine' }, 'secret'],
      [{ events: ['decision.recorded'] }, 'url'],
    ];
    for (const [body, param] of cases) assertError(await t.app.inject(create(auth, body)), 400, 'invalid_request', param);
    assertError(await t.app.inject({ method: 'GET', url: '/v1/webhooks/wh_nope/deliveries', headers: h(auth) }), 400, 'invalid_request', 'id');
    const list = await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: h(auth) });
    assert.deepEqual(list.json().data, []);
  });

  test('private addresses are refused at creation when not allowed, including a name resolving to 127.0.0.1', async () => {
    const a = await strict.agent();
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost:8080/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest', 'https://10.1.2.3/',
      'http://192.168.1.20/', 'http://[::ffff:127.0.0.1]/', 'http://[fe80::1]/', 'http://0.0.0.0/',
      'http://[::ffff:0:7f00:1]/', 'http://[::127.0.0.1]/', 'http://[64:ff9b::7f00:1]/', 'http://[::ffff:0:a9fe:a9fe]/latest']) {
      const res = await strict.app.inject(create(`Bearer ${a.secret}`, { url, events: ['decision.recorded'] }));
      assertError(res, 400, 'invalid_request', 'url');
      const literal = !url.includes('localhost');
      assert.match(res.json().error.message, literal ? /(loopback|private|link-local|this-network) address: webhooks go to public addresses only/ : /is not a public host/, url);
    }
    const named = (await strict.app.inject(create(`Bearer ${a.secret}`, { url: 'http://localhost/', events: ['decision.recorded'] }))).json().error.message;
    assert.match(named, /localhost is not a public host .*: webhooks go to public addresses only/);
    assert.doesNotMatch(named, /127\.0\.0\.1|::1|loopback/, 'what the name resolves to is not told');
    assert.deepEqual((await strict.app.inject({ method: 'GET', url: '/v1/webhooks', headers: h(`Bearer ${a.secret}`) })).json().data, []);
  });

  test("another agent's endpoint is not found; disable is idempotent; at most 10 active endpoints", async () => {
    const a = await t.agent();
    const b = await t.agent();
    const ep = await createEndpoint(t, a.secret, 'https://example.com/x');
    assertError(await t.app.inject({ method: 'POST', url: `/v1/webhooks/${ep.id}/disable`, headers: h(`Bearer ${b.secret}`) }), 404, 'not_found');
    assertError(await t.app.inject({ method: 'GET', url: `/v1/webhooks/${ep.id}/deliveries`, headers: h(`Bearer ${b.secret}`) }), 404, 'not_found');
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${ep.id}/disable`, headers: h(`Bearer ${a.secret}`) });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().status, 'disabled');
      assert.equal(res.json().disabled_reason, 'disabled_by_agent');
    }
    for (let i = 0; i < 10; i++) await createEndpoint(t, a.secret, `https://example.com/${i}`);
    const res = await t.app.inject(create(`Bearer ${a.secret}`, { url: 'https://example.com/11', events: ['decision.recorded'] }));
    assertError(res, 400, 'invalid_request');
    assert.match(res.json().error.message, /at most 10 active/);
  });

  test('the delivery log pages newest first, with each attempt', async () => {
    const a = await t.agent();
    let secret: string | null = null;
    const rx: Receiver = await startReceiver(() => secret);
    const deliverer = testDeliverer(t.store);
    try {
      const ep = await createEndpoint(t, a.secret, rx.url);
      secret = ep.secret;
      const ids = await record(t, a.secret, 5);
      await rx.waitFor(() => rx.accepted.length >= 5);
      await deliveryLog(t, a.secret, ep.id, (log) => log.every((m) => m.status === 'delivered'));
      const seen: string[] = [];
      type Page = { data: { subject: string; status: string; attempts: { status_code: number; error: string | null }[] }[]; next_cursor: string | null };
      let cursor: string | null = null;
      for (let i = 0; i === 0 || cursor !== null; i++) {
        assert.ok(i < 5);
        const url: string = `/v1/webhooks/${ep.id}/deliveries?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`;
        const res = await t.app.inject({ method: 'GET', url, headers: h(`Bearer ${a.secret}`) });
        assert.equal(res.statusCode, 200, res.body);
        const page = res.json() as Page;
        seen.push(...page.data.map((d) => d.subject));
        for (const d of page.data) {
          assert.equal(d.status, 'delivered');
          assert.deepEqual(d.attempts.map((x) => [x.status_code, x.error]), [[204, null]]);
        }
        cursor = page.next_cursor;
      }
      assert.deepEqual(seen, [...ids].reverse());
    } finally {
      await deliverer.stop();
      await rx.close();
    }
  });
});

await forEachStore('webhook secrets under master key rotation', (kind) => {
  test('resealSecrets moves every secret to the new key version; it opens to the same secret, and a second run changes nothing', async () => {
    const store = await kind.open();
    const t = await testApp(store, { env: WEBHOOK_ENV });
    try {
      const a = await t.agent();
      const ep = await createEndpoint(t, a.secret, 'https://example.com/r');
      const old = await testKeyring()();
      const ring = addKeyVersion(old);
      const webhooks = store.webhooks;
      assert.deepEqual(await resealSecrets(webhooks, ring), { ok: true, value: 1 });
      assert.deepEqual(await resealSecrets(webhooks, ring), { ok: true, value: 0 });
      const stored = (await webhooks.findEndpoint(ep.id))!;
      assert.equal(stored.secret.keyVersion, 2);
      const onlyNew = dropKeyVersions(ring, () => false);
      assert.equal(await openSecret(async () => onlyNew, stored), ep.secret);
    } finally {
      await closeTestApp(t, kind);
    }
  });
});
