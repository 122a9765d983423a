// Every error is the 2.7 body with a request_id equal to the request-id header: unknown routes,
// malformed JSON, wrong content types, oversized bodies, modification attempts, bad list queries.
// Also the decision list: limit bounds and cursor paging, newest first, every decision once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { assertError, headOf } from './record-helpers.ts';

const KiB = 1024;

await forEachStore('errors and the decision list', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  let agent: Awaited<ReturnType<TestApp['agent']>>;
  let auth: Record<string, string>;

  before(async () => {
    store = await kind.open();
    t = await testApp(store);
    agent = await t.agent();
    auth = { authorization: `Bearer ${agent.secret}` };
  });
  after(() => closeTestApp(t, kind));

  describe('every response', () => {
    test('carries a unique request-id header', async () => {
      const ids = new Set<string>();
      for (const r of [
        await t.app.inject({ method: 'GET', url: '/healthz' }),
        await t.app.inject({ method: 'GET', url: '/v1/openapi.json' }),
        await t.app.inject({ method: 'GET', url: '/v1/decisions', headers: auth }),
        await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' }),
        await t.app.inject({ method: 'GET', url: '/nowhere' }),
      ]) {
        assert.match(String(r.headers['request-id']), /^req_[0-9a-f]{24}$/);
        ids.add(String(r.headers['request-id']));
      }
      assert.equal(ids.size, 5);
    });

    test('an incoming request-id header is not trusted as the id', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/nowhere', headers: { 'request-id': 'req_forged' } });
      assert.notEqual(res.headers['request-id'], 'req_forged');
      assertError(res, 404, 'not_found');
    });
  });

  describe('unknown routes and methods', () => {
    test('404 not_found for unknown paths, any method', async () => {
      // (GET / is the public site's home page: test/site.)
      for (const [method, url] of [['GET', '/v1/nope'], ['POST', '/v1/nope'], ['GET', '/nowhere'], ['GET', '/v2/decisions'], ['POST', '/v1/decisions/dec_x']] as const) {
        assertError(await t.app.inject({ method, url, headers: auth }), 404, 'not_found');
      }
    });

    test('health and readiness answer', async () => {
      assert.deepEqual((await t.app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' });
      const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 200);
      assert.equal(ready.json().status, 'ready');
    });
  });

  describe('bodies', () => {
    const post = (payload: string | Buffer, contentType?: string) => t.app.inject({
      method: 'POST', url: '/v1/decisions', payload,
      headers: { ...auth, 'idempotency-key': `body-${Math.random()}`, ...(contentType === undefined ? {} : { 'content-type': contentType }) },
    });

    test('malformed JSON is 400 invalid_request and records nothing', async () => {
      const head = await headOf(store, agent.agentId);
      for (const text of ['{', '{"symbol":"AAPL","action":"BUY",}', "{'symbol':'AAPL'}", '{"symbol":"AAPL" "action":"BUY"}', '{"a":1}x', 'NaN', '{"symbol":"A\u0001"}', '\uFEFF{"symbol":"AAPL","action":"BUY"}', '[' .repeat(100) + ']'.repeat(100)]) {
        const e = assertError(await post(text, 'application/json'), 400, 'invalid_request');
        assert.ok(e.param, `param names where: ${text.slice(0, 20)}`);
      }
      assert.equal(await headOf(store, agent.agentId), head);
    });

    test('a wrong or missing content type is 415 unsupported_media_type naming Content-Type', async () => {
      const head = await headOf(store, agent.agentId);
      const json = JSON.stringify({ symbol: 'AAPL', action: 'BUY' });
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
        assertError(await post(json, type), 415, 'unsupported_media_type', 'Content-Type');
      }
      assertError(await post(json), 415, 'unsupported_media_type', 'Content-Type');
      assert.equal(await headOf(store, agent.agentId), head);
      assert.equal((await post(json, 'application/json; charset=utf-8')).statusCode, 201, 'a charset parameter is fine');
    });

    test('a body over 128 KiB is 413; exactly 128 KiB is accepted', async () => {
      const sized = (bytes: number) => {
        const shell = JSON.stringify({ symbol: 'AAPL', action: 'BUY', metadata: { pad: '' } });
        return JSON.stringify({ symbol: 'AAPL', action: 'BUY', metadata: { pad: 'p'.repeat(bytes - shell.length) } });
      };
      assert.equal(Buffer.byteLength(sized(128 * KiB)), 128 * KiB);
      const head = await headOf(store, agent.agentId);
      assertError(await post(sized(128 * KiB + 1), 'application/json'), 413, 'request_too_large');
      assertError(await post(sized(1024 * KiB), 'application/json'), 413, 'request_too_large');
      assert.equal(await headOf(store, agent.agentId), head);
      const fits = await post(sized(128 * KiB), 'application/json');
      assert.equal(fits.statusCode, 201, fits.body);
    });
  });

  describe('records are immutable', () => {
    test('PATCH, PUT and DELETE on a decision are 409 record_is_immutable; the record is unchanged', async () => {
      const created = (await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY' })).json();
      const before = await store.findRecord(created.id);
      for (const method of ['PATCH', 'PUT', 'DELETE'] as const) {
        for (const headers of [{}, auth]) {
          const res = await t.app.inject({ method, url: `/v1/decisions/${created.id}`, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify({ symbol: 'MSFT' }) });
          assertError(res, 409, 'record_is_immutable');
        }
        assertError(await t.app.inject({ method, url: `/v1/decisions/${created.id}` }), 409, 'record_is_immutable');
      }
      assert.deepEqual(await store.findRecord(created.id), before);
    });

    test('on an unknown id they are 404 not_found', async () => {
      for (const method of ['PATCH', 'PUT', 'DELETE'] as const) {
        assertError(await t.app.inject({ method, url: '/v1/decisions/dec_01ARZ3NDEKTSV4RRFFQ69G5FAV' }), 404, 'not_found');
      }
    });

    test('PATCH, PUT and DELETE on the collection are 409 too', async () => {
      for (const method of ['PATCH', 'PUT', 'DELETE'] as const) {
        assertError(await t.app.inject({ method, url: '/v1/decisions', headers: auth }), 409, 'record_is_immutable');
      }
    });
  });

  describe('GET /v1/decisions', () => {
    test('limit must be an integer from 1 to 200', async () => {
      for (const limit of ['0', '201', 'abc', '-1', '1.5', '', '999999999999999999999']) {
        assertError(await t.app.inject({ method: 'GET', url: `/v1/decisions?limit=${limit}`, headers: auth }), 400, 'invalid_request', 'limit');
      }
      for (const limit of ['1', '200']) {
        assert.equal((await t.app.inject({ method: 'GET', url: `/v1/decisions?limit=${limit}`, headers: auth })).statusCode, 200);
      }
    });

    test('other bad queries name the parameter', async () => {
      assertError(await t.app.inject({ method: 'GET', url: `/v1/decisions?cursor=${'x'.repeat(65)}`, headers: auth }), 400, 'invalid_request', 'cursor');
      assertError(await t.app.inject({ method: 'GET', url: '/v1/decisions?colour=red', headers: auth }), 400, 'invalid_request', 'colour');
    });

    test('pages with cursor: every decision once, newest first; default limit 50', async () => {
      const writer = await t.agent();
      const ids: string[] = [];
      for (let i = 0; i < 57; i++) ids.push((await postDecision(t, writer.secret, { symbol: `S${i}`, action: 'HOLD' })).json().id);
      const newestFirst = [...ids].reverse();
      const get = async (query: string) => {
        const res = await t.app.inject({ method: 'GET', url: `/v1/decisions${query}`, headers: { authorization: `Bearer ${writer.secret}` } });
        assert.equal(res.statusCode, 200, res.body);
        return res.json();
      };

      const first = await get('');
      assert.equal(first.object, 'list');
      assert.equal(first.data.length, 50, 'default limit 50');
      assert.equal(first.has_more, true);

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await get(`?limit=10${cursor ? `&cursor=${cursor}` : ''}`);
        pages++;
        seen.push(...page.data.map((d: { id: string }) => d.id));
        assert.equal(page.has_more, page.next_cursor !== null);
        if (page.has_more) assert.equal(page.next_cursor, page.data[page.data.length - 1].id);
        cursor = page.next_cursor;
      } while (cursor);
      assert.equal(pages, 6);
      assert.deepEqual(seen, newestFirst, 'every decision once, newest first');

      const all = await get('?limit=200');
      assert.equal(all.data.length, 57);
      assert.equal(all.has_more, false);
      assert.equal(all.next_cursor, null);
      const item = all.data[0];
      assert.equal(item.id, newestFirst[0]);
      assert.equal(item.verification.chain_seq, 57);
      assert.equal(item.content.symbol, 'S56');
      assert.equal(item.object, 'decision');

      const exact = await get('?limit=57');
      assert.equal(exact.has_more, false, 'a page that ends exactly at the last decision has no more');
      const last = await get(`?cursor=${newestFirst[56]}`);
      assert.deepEqual(last.data, []);
      assert.equal(last.has_more, false);
    });

    test("an agent sees only its own decisions", async () => {
      const a = await t.agent();
      const b = await t.agent();
      await postDecision(t, a.secret, { symbol: 'AAPL', action: 'BUY' });
      const res = await t.app.inject({ method: 'GET', url: '/v1/decisions', headers: { authorization: `Bearer ${b.secret}` } });
      assert.deepEqual(res.json().data, []);
    });
  });
});
