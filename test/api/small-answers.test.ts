// Issue 16, finding 8: small wrong answers, each refused or answered as the interface says.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import { idempotencyKey, postDecision, testAppClosedAfter } from '../support/app.ts';
import { assertError, validDecision } from './record-helpers.ts';

const store = openStore('sqlite::memory:');
await store.migrate();
let now = new Date('2026-11-23T12:00:00Z');
const t = await testAppClosedAfter(store, { clock: { now: () => now } });
const agent = await t.agent();

test('a currency with a control character is refused, naming currency', async () => {
  const res = await postDecision(t, agent.secret, validDecision({ currency: 'U\u0007D' }));
  assertError(res, 400, 'invalid_request', 'currency');
});

test('two Idempotency-Key headers are a 400 naming the header, not one key "a, b"', async () => {
  const res = await t.app.inject({
    method: 'POST', url: '/v1/decisions',
    headers: { authorization: `Bearer ${agent.secret}`, 'content-type': 'application/json', 'idempotency-key': ['first-key-123', 'second-key-456'] },
    payload: JSON.stringify(validDecision()),
  });
  assertError(res, 400, 'invalid_request', 'Idempotency-Key');
});

for (const charset of ['latin1', 'utf-16', 'ISO-8859-1']) {
  test(`a body declared charset=${charset} is a 415, not decoded as UTF-8`, async () => {
    const res = await postDecision(t, agent.secret, validDecision(), idempotencyKey(), { 'content-type': `application/json; charset=${charset}` });
    assertError(res, 415, 'unsupported_media_type', 'Content-Type');
  });
}

test('charset=utf-8 (any case, quoted or not) is accepted', async () => {
  for (const type of ['application/json; charset=utf-8', 'application/json; charset="UTF-8"', 'application/json;charset=utf8']) {
    const res = await postDecision(t, agent.secret, validDecision(), idempotencyKey(), { 'content-type': type });
    assert.equal(res.statusCode, 201, `${type}: ${res.body}`);
  }
});

for (const [url, param] of [
  ['/v1/ledger?limit=0x10', 'limit'], ['/v1/ledger?limit=1e2', 'limit'], ['/v1/ledger?limit=%2050', 'limit'],
  ['/v1/ledger?limit=5&limit=6', 'limit'], [`/v1/agents/${agent.handle}/chain?after_seq=1e3`, 'after_seq'],
] as const) {
  test(`${url} is refused naming ${param}, not coerced`, async () => {
    const res = await t.app.inject({ method: 'GET', url });
    assertError(res, 400, 'invalid_request', param);
  });
}

test('decimal whole numbers are still accepted', async () => {
  assert.equal((await t.app.inject({ method: 'GET', url: '/v1/ledger?limit=10' })).statusCode, 200);
  assert.equal((await t.app.inject({ method: 'GET', url: `/v1/agents/${agent.handle}/chain?after_seq=0&limit=5` })).statusCode, 200);
});

test('/transparency answers 304 to its ETag while nothing changed, though generated_at did', async () => {
  const first = await t.app.inject({ method: 'GET', url: '/v1/transparency' });
  assert.equal(first.statusCode, 200);
  const tag = String(first.headers.etag);
  now = new Date(now.getTime() + 60_000);
  const again = await t.app.inject({ method: 'GET', url: '/v1/transparency', headers: { 'if-none-match': tag } });
  assert.equal(again.statusCode, 304);
  assert.equal((await postDecision(t, agent.secret, validDecision())).statusCode, 201);
  const changed = await t.app.inject({ method: 'GET', url: '/v1/transparency', headers: { 'if-none-match': tag } });
  assert.equal(changed.statusCode, 200, 'a new record changes the document and its ETag');
  assert.notEqual(changed.headers.etag, tag);
});
