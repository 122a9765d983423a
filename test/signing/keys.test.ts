// Signing keys over HTTP: registration and its refusals (test/vectors/signing/public-keys.json),
// the same key twice, listing, reading, revoking, another agent's keys, and authentication.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, testApp, type TestApp } from '../support/app.ts';
import { assertError, authenticationCases, call, newKeypair, registerKey } from './helpers.ts';

type PublicKeyVectors = {
  rejected: { name: string; public_key: string; message_contains: string }[];
  accepted: { name: string; public_key: string }[];
};
const vectors = JSON.parse(readFileSync(new URL('../vectors/signing/public-keys.json', import.meta.url), 'utf8')) as PublicKeyVectors;

await forEachStore('signing keys', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  before(async () => {
    store = await kind.open();
    t = await testApp(store);
  });
  after(() => closeTestApp(t, kind));

  describe('registration', () => {
    test('registers a raw 32-byte public key and answers the key with an aid_ id', async () => {
      const agent = await t.agent();
      const key = newKeypair();
      const res = await call(t, 'POST', '/v1/keys', agent.secret, { public_key: key.publicKey, label: 'prod signer' });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.match(body.id, /^aid_[0-9A-Z]{26}$/);
      assert.deepEqual(Object.keys(body).sort(), ['created_at', 'id', 'label', 'object', 'public_key', 'revoked_at']);
      assert.equal(body.object, 'signing_key');
      assert.equal(body.public_key, key.publicKey);
      assert.equal(body.label, 'prod signer');
      assert.equal(body.revoked_at, null);
      assert.ok(!Number.isNaN(Date.parse(body.created_at)));
    });

    test('the same public key twice returns the existing key, not a second one', async () => {
      const agent = await t.agent();
      const key = newKeypair();
      const first = await call(t, 'POST', '/v1/keys', agent.secret, { public_key: key.publicKey, label: 'one' });
      const second = await call(t, 'POST', '/v1/keys', agent.secret, { public_key: key.publicKey, label: 'two' });
      assert.equal(first.statusCode, 201);
      assert.equal(second.statusCode, 200, second.body);
      assert.deepEqual(second.json(), first.json());
      const list = await call(t, 'GET', '/v1/keys', agent.secret);
      assert.equal(list.json().data.length, 1);
    });

    test('two agents registering one public key get a key each', async () => {
      const [a, b] = [await t.agent(), await t.agent()];
      const key = newKeypair();
      const idA = await registerKey(t, a.secret, key.publicKey);
      const idB = await registerKey(t, b.secret, key.publicKey);
      assert.notEqual(idA, idB);
    });

    for (const v of vectors.accepted) {
      test(`accepts ${v.name}`, async () => {
        const agent = await t.agent();
        const res = await call(t, 'POST', '/v1/keys', agent.secret, { public_key: v.public_key, label: v.name.slice(0, 200) });
        assert.equal(res.statusCode, 201, res.body);
      });
    }

    test('refuses every rejected public key vector with 400 invalid_request, param public_key, and records no key', async () => {
      const agent = await t.agent();
      for (const v of vectors.rejected) {
        const res = await call(t, 'POST', '/v1/keys', agent.secret, { public_key: v.public_key, label: 'bad' });
        const error = assertError(res, 400, 'invalid_request', 'public_key');
        assert.ok(error.message.includes(v.message_contains), `${v.name}: ${error.message}`);
        assert.equal(error.message.includes(v.public_key.trim()), false, `${v.name}: the message must not echo the value`);
      }
      assert.equal((await call(t, 'GET', '/v1/keys', agent.secret)).json().data.length, 0);
    });

    test('refuses a missing, empty or non-string public_key', async () => {
      const agent = await t.agent();
      for (const body of [{ label: 'x' }, { public_key: '', label: 'x' }, { public_key: 42, label: 'x' }, { public_key: null, label: 'x' }]) {
        assertError(await call(t, 'POST', '/v1/keys', agent.secret, body), 400, 'invalid_request', 'public_key');
      }
    });

    test('a private key in any field is refused, naming that field', async () => {
      const agent = await t.agent();
      const key = newKeypair();
      for (const field of ['private_key', 'secret_key', 'privateKey', 'seed']) {
        const res = await call(t, 'POST', '/v1/keys', agent.secret, { public_key: key.publicKey, label: 'x', [field]: Buffer.from(key.secretKey).toString('base64url') });
        const error = assertError(res, 400, 'invalid_request', field);
        assert.match(error.message, /never takes a private key/);
      }
      assertError(await call(t, 'POST', '/v1/keys', agent.secret, { public_key: key.publicKey, label: 'x', colour: 'red' }), 400, 'invalid_request', 'colour');
      assert.equal((await call(t, 'GET', '/v1/keys', agent.secret)).json().data.length, 0);
    });

    test('label is required, 1 to 200 characters, on one line', async () => {
      const agent = await t.agent();
      const pub = newKeypair().publicKey;
      for (const label of [undefined, '', 'x'.repeat(201), 'two\nlines', 'nul\u0000', 7]) {
        const res = await call(t, 'POST', '/v1/keys', agent.secret, { public_key: pub, ...(label === undefined ? {} : { label }) });
        assertError(res, 400, 'invalid_request', 'label');
      }
      const longest = await call(t, 'POST', '/v1/keys', agent.secret, { public_key: pub, label: '😀'.repeat(200) });
      assert.equal(longest.statusCode, 201, longest.body);
    });

    test('a body that is not JSON, or not an object, is 400 and records nothing', async () => {
      const agent = await t.agent();
      assertError(await call(t, 'POST', '/v1/keys', agent.secret, '{"public_key":'), 400, 'invalid_request');
      assertError(await call(t, 'POST', '/v1/keys', agent.secret, '[]'), 400, 'invalid_request');
    });
  });

  describe('listing, reading and revoking', () => {
    test('GET /v1/keys lists the agent\'s own keys only, revoked ones included', async () => {
      const [a, b] = [await t.agent(), await t.agent()];
      const id1 = await registerKey(t, a.secret, newKeypair().publicKey, 'first');
      const id2 = await registerKey(t, a.secret, newKeypair().publicKey, 'second');
      await registerKey(t, b.secret, newKeypair().publicKey, 'other agent');
      await call(t, 'POST', `/v1/keys/${id1}/revoke`, a.secret);
      const res = await call(t, 'GET', '/v1/keys', a.secret);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.object, 'list');
      assert.deepEqual(body.data.map((k: { id: string }) => k.id).sort(), [id1, id2].sort());
      const first = body.data.find((k: { id: string }) => k.id === id1);
      assert.equal(first.label, 'first');
      assert.notEqual(first.revoked_at, null);
      assert.equal(body.data.find((k: { id: string }) => k.id === id2).revoked_at, null);
    });

    test('GET /v1/keys/{key_id} reads one key; another agent\'s key is 404 like an unknown one', async () => {
      const [a, b] = [await t.agent(), await t.agent()];
      const id = await registerKey(t, a.secret, newKeypair().publicKey);
      const own = await call(t, 'GET', `/v1/keys/${id}`, a.secret);
      assert.equal(own.statusCode, 200);
      assert.equal(own.json().id, id);
      const foreign = assertError(await call(t, 'GET', `/v1/keys/${id}`, b.secret), 404, 'not_found', 'key_id');
      const unknown = assertError(await call(t, 'GET', '/v1/keys/aid_01J00000000000000000000000', b.secret), 404, 'not_found', 'key_id');
      assert.equal(foreign.message.replace(id, 'X'), unknown.message.replace('aid_01J00000000000000000000000', 'X'));
    });

    test('revoking is idempotent: the second revoke returns the original revoked_at', async () => {
      const agent = await t.agent();
      const id = await registerKey(t, agent.secret, newKeypair().publicKey);
      const first = await call(t, 'POST', `/v1/keys/${id}/revoke`, agent.secret);
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.json().id, id);
      assert.ok(!Number.isNaN(Date.parse(first.json().revoked_at)));
      await new Promise((r) => setTimeout(r, 5));
      const second = await call(t, 'POST', `/v1/keys/${id}/revoke`, agent.secret, {});
      assert.equal(second.statusCode, 200, second.body);
      assert.deepEqual(second.json(), first.json());
    });

    test('registering a revoked public key again returns it, still revoked', async () => {
      const agent = await t.agent();
      const pub = newKeypair().publicKey;
      const id = await registerKey(t, agent.secret, pub);
      const revoked = (await call(t, 'POST', `/v1/keys/${id}/revoke`, agent.secret)).json();
      const again = await call(t, 'POST', '/v1/keys', agent.secret, { public_key: pub, label: 'again' });
      assert.equal(again.statusCode, 200);
      assert.deepEqual(again.json(), revoked);
    });

    test('revoking another agent\'s key is 404 exactly like an unknown key, and leaves it unrevoked', async () => {
      const [a, b] = [await t.agent(), await t.agent()];
      const id = await registerKey(t, a.secret, newKeypair().publicKey);
      const unknownId = 'aid_01J00000000000000000000000';
      const foreign = await call(t, 'POST', `/v1/keys/${id}/revoke`, b.secret);
      const unknown = await call(t, 'POST', `/v1/keys/${unknownId}/revoke`, b.secret);
      const fe = assertError(foreign, 404, 'not_found', 'key_id');
      const ue = assertError(unknown, 404, 'not_found', 'key_id');
      assert.equal(fe.message.replace(id, 'X'), ue.message.replace(unknownId, 'X'));
      assert.equal((await call(t, 'GET', `/v1/keys/${id}`, a.secret)).json().revoked_at, null);
    });

    test('a key id of any other shape is 404 like an unknown one (never reaches the database)', async () => {
      const agent = await t.agent();
      for (const id of ['%00', 'aid_%00', 'key_01J00000000000000000000000', 'aid_' + 'A'.repeat(65), '%F0%9F%98%80']) {
        assertError(await call(t, 'GET', `/v1/keys/${id}`, agent.secret), 404, 'not_found', 'key_id');
        assertError(await call(t, 'POST', `/v1/keys/${id}/revoke`, agent.secret), 404, 'not_found', 'key_id');
      }
    });

    test('revoke takes no body', async () => {
      const agent = await t.agent();
      const id = await registerKey(t, agent.secret, newKeypair().publicKey);
      assertError(await call(t, 'POST', `/v1/keys/${id}/revoke`, agent.secret, { reason: 'lost' }), 400, 'invalid_request', 'reason');
      assert.equal((await call(t, 'GET', `/v1/keys/${id}`, agent.secret)).json().revoked_at, null);
    });

    test('the key endpoints are in /v1/openapi.json', async () => {
      const doc = (await call(t, 'GET', '/v1/openapi.json', null)).json();
      for (const path of ['/v1/keys', '/v1/keys/{key_id}', '/v1/keys/{key_id}/revoke', '/v1/decisions/assertion']) {
        assert.ok(doc.paths[path], `${path} is documented`);
      }
      assert.deepEqual(doc.paths['/v1/keys'].post.requestBody.content['application/json'].schema.required.sort(), ['label', 'public_key']);
    });
  });

  describe('authentication', () => {
    const app = () => t;
    authenticationCases('POST /v1/keys', 'keys:write', app, (t, secret) =>
      call(t, 'POST', '/v1/keys', secret, { public_key: newKeypair().publicKey, label: 'auth' }));
    authenticationCases('GET /v1/keys', 'keys:write', app, (t, secret) => call(t, 'GET', '/v1/keys', secret));
    authenticationCases('GET /v1/keys/{key_id}', 'keys:write', app, (t, secret) => call(t, 'GET', '/v1/keys/aid_01J00000000000000000000000', secret));
    authenticationCases('POST /v1/keys/{key_id}/revoke', 'keys:write', app, (t, secret) =>
      call(t, 'POST', '/v1/keys/aid_01J00000000000000000000000/revoke', secret));

    test('a refused registration records no key', async () => {
      const agent = await t.agent(undefined, { scopes: ['decisions:write'] });
      assertError(await call(t, 'POST', '/v1/keys', agent.secret, { public_key: newKeypair().publicKey, label: 'x' }), 403, 'insufficient_scope');
      assert.deepEqual(await store.listSigningKeys(agent.agentId), []);
    });
  });
});
