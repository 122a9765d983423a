// The client's recordDecision against a real service on both stores: one Idempotency-Key kept
// across every retry (a lost answer, a 503, a 409 in flight, a 429 with Retry-After), so a retry
// yields one record; a 4xx that will not change is never retried; errors carry the spec's fields.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { LedgerApiError, LedgerClient, LedgerNetworkError } from '../../src/client/index.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp } from '../support/app.ts';
import { DECISION, errorResponse, faultyFetch, serve, type Served } from './support.ts';

const noWait = () => {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
};

await forEachStore('client recordDecision', (kind) => {
  let s: Served;
  before(async () => {
    s = await serve(kind);
  });
  after(() => closeTestApp(s, kind));

  /** Every decision of the agent, through the client. */
  const decisionsOf = async (client: LedgerClient) => (await client.listDecisions({ limit: 200 })).data;

  test('records a decision; the answer is the interface\'s, with the key it used', async () => {
    const { secret } = await s.agent();
    const client = new LedgerClient({ baseUrl: s.baseUrl, apiKey: secret });
    const d = await client.recordDecision(DECISION);
    assert.match(d.id, /^dec_/);
    assert.equal(d.verification.chain_seq, 1);
    assert.equal(d.replayed, false);
    assert.ok(d.idempotency_key.length >= 8);
    const again = await client.recordDecision(DECISION, { idempotencyKey: d.idempotency_key });
    assert.equal(again.id, d.id, 'same key and body: the original answer');
    assert.equal(again.replayed, true);
  });

  test('a lost answer after the commit: the retry carries the same key and yields one record', async () => {
    const { secret } = await s.agent();
    const f = faultyFetch((call, n) => (call.method === 'POST' && n === 1 ? 'drop-after' : undefined));
    const sleep = noWait();
    const client = new LedgerClient({ baseUrl: s.baseUrl, apiKey: secret, fetch: f.fetch, sleep: sleep.sleep });
    const d = await client.recordDecision(DECISION);
    const posts = f.calls.filter((c) => c.method === 'POST');
    assert.equal(posts.length, 2);
    assert.equal(posts[0]!.headers['idempotency-key'], posts[1]!.headers['idempotency-key']);
    assert.equal(posts[0]!.body, posts[1]!.body, 'the same bytes');
    assert.equal(d.replayed, true, 'the second answer is the replay of the committed first');
    assert.equal(sleep.waits.length, 1);
    const all = await decisionsOf(client);
    assert.deepEqual(all.map((x) => x.id), [d.id], 'exactly one record');
  });

  test('a 503 after the commit, then a 409 in flight: retried with the same key, one record', async () => {
    const { secret } = await s.agent();
    const f = faultyFetch((call, n) => {
      if (call.method !== 'POST') return undefined;
      if (n === 1) return { after: errorResponse(503, 'service_unavailable') };
      if (n === 2) return errorResponse(409, 'idempotency_request_in_flight');
      return undefined;
    });
    const sleep = noWait();
    const client = new LedgerClient({ baseUrl: s.baseUrl, apiKey: secret, fetch: f.fetch, sleep: sleep.sleep });
    const d = await client.recordDecision(DECISION);
    assert.equal(f.calls.length, 3);
    assert.equal(new Set(f.calls.map((c) => c.headers['idempotency-key'])).size, 1);
    assert.equal(d.replayed, true);
    assert.equal(sleep.waits.length, 2);
    assert.ok(sleep.waits[1]! >= sleep.waits[0]! / 2, 'backoff does not shrink below half');
    assert.deepEqual((await decisionsOf(client)).map((x) => x.id), [d.id]);
  });

  test('a 429 with Retry-After: waits as long as it says, then records', async () => {
    const { secret } = await s.agent();
    const f = faultyFetch((call, n) => (n === 1 ? errorResponse(429, 'rate_limit_exceeded', { 'retry-after': '3' }) : undefined));
    const sleep = noWait();
    const client = new LedgerClient({ baseUrl: s.baseUrl, apiKey: secret, fetch: f.fetch, sleep: sleep.sleep });
    const d = await client.recordDecision(DECISION);
    assert.equal(d.replayed, false, 'the 429 never reached the service');
    assert.equal(sleep.waits.length, 1);
    assert.ok(sleep.waits[0]! >= 3000 && sleep.waits[0]! <= 3300, `waited ${sleep.waits[0]} ms for Retry-After: 3`);
  });

  test('backoff is bounded: a service that keeps failing costs maxAttempts requests, then the last error', async () => {
    const { secret } = await s.agent();
    const f = faultyFetch(() => errorResponse(502, 'provider_error'));
    const sleep = noWait();
    const client = new LedgerClient({ baseUrl: s.baseUrl, apiKey: secret, fetch: f.fetch, sleep: sleep.sleep, retry: { maxAttempts: 6, baseDelayMs: 100, maxDelayMs: 400 } });
    const e = await client.recordDecision(DECISION).then(() => null, (x: unknown) => x);
    assert.ok(e instanceof LedgerApiError);
    assert.equal(e.status, 502);
    assert.equal(e.attempts, 6);
    assert.equal(f.calls.length, 6);
    assert.ok(e.idempotencyKey, 'the key is handed back to resume with');
    assert.ok(sleep.waits.every((w) => w <= 400), `waits ${sleep.waits} are capped`);
    assert.ok(sleep.waits[3]! >= 200, 'and grow');
  });

  test('a 4xx that will not change is not retried, and carries code, param, request_id and status', async () => {
    const { secret } = await s.agent();
    const f = faultyFetch(() => undefined);
    const client = new LedgerClient({ baseUrl: s.baseUrl, apiKey: secret, fetch: f.fetch });
    const e = await client.recordDecision({ ...DECISION, confidence: '1.5' }).then(() => null, (x: unknown) => x);
    assert.ok(e instanceof LedgerApiError);
    assert.equal(e.code, 'invalid_request');
    assert.equal(e.type, 'invalid_request_error');
    assert.equal(e.param, 'confidence');
    assert.equal(e.status, 400);
    assert.match(e.requestId ?? '', /\S/);
    assert.equal(f.calls.length, 1, 'sent once');
    assert.deepEqual((await decisionsOf(client)), []);
  });

  test('the same key with another body: 409 idempotency_key_reused, final', async () => {
    const { secret } = await s.agent();
    const client = new LedgerClient({ baseUrl: s.baseUrl, apiKey: secret });
    const d = await client.recordDecision(DECISION);
    const e = await client.recordDecision({ ...DECISION, quantity: '11' }, { idempotencyKey: d.idempotency_key }).then(() => null, (x: unknown) => x);
    assert.ok(e instanceof LedgerApiError);
    assert.equal(e.code, 'idempotency_key_reused');
    assert.equal(e.type, 'idempotency_error');
    assert.equal(e.param, 'Idempotency-Key');
    assert.equal(e.attempts, 1);
  });

  test('authentication and scope errors are typed and final', async () => {
    const bad = new LedgerClient({ baseUrl: s.baseUrl, apiKey: 'dl_live_notakey0000000000000000000000' });
    const e1 = await bad.recordDecision(DECISION).then(() => null, (x: unknown) => x);
    assert.ok(e1 instanceof LedgerApiError);
    assert.equal(e1.code, 'invalid_api_key');
    assert.equal(e1.status, 401);
    const none = new LedgerClient({ baseUrl: s.baseUrl });
    const e2 = await none.listDecisions().then(() => null, (x: unknown) => x);
    assert.ok(e2 instanceof LedgerApiError);
    assert.equal(e2.code, 'missing_api_key');
    const { secret } = await s.agent(undefined, { scopes: ['decisions:read'] });
    const readOnly = new LedgerClient({ baseUrl: s.baseUrl, apiKey: secret });
    const e3 = await readOnly.recordDecision(DECISION).then(() => null, (x: unknown) => x);
    assert.ok(e3 instanceof LedgerApiError);
    assert.equal(e3.code, 'insufficient_scope');
    assert.equal(e3.status, 403);
  });

  test('an unknown record: 404 not_found naming the parameter', async () => {
    const client = new LedgerClient({ baseUrl: s.baseUrl });
    const e = await client.getProof('dec_01ARZ3NDEKTSV4RRFFQ69G5FAV').then(() => null, (x: unknown) => x);
    assert.ok(e instanceof LedgerApiError);
    assert.equal(e.code, 'not_found');
    assert.equal(e.param, 'record_id');
    assert.equal(e.status, 404);
  });

  test('no service at all: a LedgerNetworkError after the retries', async () => {
    const sleep = noWait();
    const client = new LedgerClient({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'dl_live_x', sleep: sleep.sleep, retry: { maxAttempts: 3 } });
    const e = await client.recordDecision(DECISION).then(() => null, (x: unknown) => x);
    assert.ok(e instanceof LedgerNetworkError);
    assert.equal(e.code, 'network_error');
    assert.equal(e.status, 0);
    assert.equal(e.attempts, 3);
  });
});

await forEachStore('client against the service\'s own rate limit', (kind) => {
  let s: Served;
  before(async () => {
    s = await serve(kind, { LEDGER_WRITE_LIMIT_PER_MIN: '1' });
  });
  after(() => closeTestApp(s, kind));

  test('a real 429 asking for longer than the client will wait is returned, typed, with Retry-After', async () => {
    const { secret } = await s.agent();
    const client = new LedgerClient({ baseUrl: s.baseUrl, apiKey: secret, retry: { maxRetryAfterMs: 1000 } });
    await client.recordDecision(DECISION);
    const e = await client.recordDecision(DECISION).then(() => null, (x: unknown) => x);
    assert.ok(e instanceof LedgerApiError);
    assert.equal(e.code, 'rate_limit_exceeded');
    assert.equal(e.status, 429);
    assert.ok((e.retryAfterMs ?? 0) > 1000, `Retry-After ${e.retryAfterMs}`);
    assert.match(e.requestId ?? '', /\S/);
    assert.equal(e.attempts, 1);
  });
});
