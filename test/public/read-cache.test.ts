// The read cache (docs/operations.md, "Bounds on public reads"; src/api/read-cache.ts): while
// public reads queue, a repeated read is answered from a copy, takes no turn, and is the same
// answer (body, ETag, Cache-Control) with its own Request-Id; a copy never outlives its max-age
// nor a write by the agent it shows; quiet, nothing is copied. The gate is made busy by taking a
// turn from it, as a long read would.
import assert from 'node:assert/strict';
import { brotliDecompressSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { ReadCache, scopeOf, sharedMaxAgeS } from '../../src/api/read-cache.ts';
import type { ReadGate } from '../../src/api/read-gate.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { get } from './helpers.ts';

const INJECT_IP = '127.0.0.1';
const DECISION = { symbol: 'AAPL', action: 'BUY', quantity: 1 };

async function hold(gate: ReadGate, client: string): Promise<() => void> {
  const turn = await gate.enter(client);
  assert.ok(turn.ok, `a turn for ${client}`);
  return turn.leave;
}

describe('read cache: what may be copied, for how long, of whom', () => {
  test('only public answers with a max-age, for that long', () => {
    assert.equal(sharedMaxAgeS('public, max-age=5'), 5);
    assert.equal(sharedMaxAgeS('public, max-age=31536000, immutable'), 31536000);
    for (const no of [undefined, 'public, no-cache', 'no-store', 'private, max-age=5', 'max-age=5', 'public, max-age=0', 'public']) {
      assert.equal(sharedMaxAgeS(no), null, String(no));
    }
  });

  test('a read of one agent is in that agent\'s scope; the rest are global', () => {
    for (const url of ['/v1/agents/Alpha', '/v1/agents/alpha/chain?after_seq=3', '/agents/alpha', '/badge/alpha.svg?style=return', '/v1/export?agent=alpha', '/v1/ledger?agent=alpha&limit=5']) {
      assert.equal(scopeOf(url), 'agent:alpha', url);
    }
    for (const url of ['/', '/v1/ledger', '/v1/agents', '/v1/agents?sort=records', '/v1/proof/rec_1', '/records/rec_1', '/v1/transparency']) {
      assert.equal(scopeOf(url), '', url);
    }
  });

  test('a copy goes at its max-age, at a write of its scope, and the oldest go past the byte bound', () => {
    let now = 1_000;
    const cache = new ReadCache({ maxBytes: 4_000, busy: () => true, now: () => now });
    const body = (n: number) => Buffer.alloc(n, 'x');
    cache.put('a', cache.seenBy('/v1/agents/a'), { 'cache-control': 'public, max-age=5', 'content-type': 'image/png' }, body(900));
    assert.ok(cache.get('a'));
    now += 5_000;
    assert.equal(cache.get('a'), null, 'expired at its max-age');

    cache.put('a', cache.seenBy('/v1/agents/a'), { 'cache-control': 'public, max-age=5', 'content-type': 'image/png' }, body(900));
    cache.put('b', cache.seenBy('/v1/agents/b'), { 'cache-control': 'public, max-age=5', 'content-type': 'image/png' }, body(900));
    cache.put('g', cache.seenBy('/v1/ledger'), { 'cache-control': 'public, max-age=5', 'content-type': 'image/png' }, body(900));
    cache.wrote('a');
    assert.equal(cache.get('a'), null, 'the writer\'s reads go');
    assert.equal(cache.get('g'), null, 'the global reads go');
    assert.ok(cache.get('b'), 'another agent\'s stay');
    cache.wrote(null);
    assert.equal(cache.get('b'), null, 'a write without an agent drops all');

    cache.put('big', cache.seenBy('/x'), { 'cache-control': 'public, max-age=5', 'content-type': 'image/png' }, body(1_001));
    assert.equal(cache.get('big'), null, 'an answer over a quarter of the bound is not kept');
    for (let i = 0; i < 6; i++) cache.put(`k${i}`, cache.seenBy('/x'), { 'cache-control': 'public, max-age=5', 'content-type': 'image/png' }, body(1_000));
    assert.equal(cache.get('k0'), null, 'the oldest went');
    assert.equal(cache.get('k1'), null);
    assert.ok(cache.get('k5'));
  });

  test('a read that began before a write makes no copy: what it rendered may predate the write', () => {
    const cache = new ReadCache({ maxBytes: 1_000_000, busy: () => true });
    const headers = { 'cache-control': 'public, max-age=5', 'content-type': 'image/png' };
    const ofA = cache.seenBy('/v1/agents/a');
    const global = cache.seenBy('/v1/ledger');
    const ofB = cache.seenBy('/v1/agents/b');
    cache.wrote('a');
    assert.equal(cache.put('a', ofA, headers, Buffer.alloc(10)), null, 'the writer\'s read');
    assert.equal(cache.put('g', global, headers, Buffer.alloc(10)), null, 'a global read');
    assert.ok(cache.put('b', ofB, headers, Buffer.alloc(10)), 'another agent\'s read is as new as it was');
    const later = cache.seenBy('/v1/agents/b');
    cache.wrote(null);
    assert.equal(cache.put('b2', later, headers, Buffer.alloc(10)), null, 'after a write without an agent, none');
    assert.equal(cache.get('b'), null);
  });

  test('quiet, it copies nothing; turned off (0 MB), never', () => {
    let busy = false;
    const cache = new ReadCache({ maxBytes: 1_000_000, busy: () => busy });
    assert.equal(cache.active(), false);
    busy = true;
    assert.equal(cache.active(), true);
    busy = false;
    assert.equal(cache.active(), true, 'held a moment after the load');
    assert.equal(new ReadCache({ maxBytes: 0, busy: () => true }).active(), false);
  });
});

await forEachStore('the read cache', (kind) => {
  let t: TestApp;
  let alice: { handle: string; secret: string };
  let bob: { handle: string; secret: string };
  before(async () => {
    // One read at a time per client: a turn held by another client is load.
    t = await testApp(await kind.open(), { env: { LEDGER_READ_CACHE_MB: '16', LEDGER_METRICS: 'true', LEDGER_READ_CONCURRENCY_PER_CLIENT: '1', LEDGER_READ_QUEUE_WAIT_MS: '0', LEDGER_READ_REFUSAL_DELAY_MS: '0' } });
    [alice, bob] = [await t.agent(), await t.agent()];
    await postDecision(t, alice.secret, DECISION);
  });
  after(() => closeTestApp(t, kind));

  test('off by default', async () => {
    const plain = await testApp(t.store, {});
    try {
      assert.equal(plain.cache.active(), false);
    } finally {
      await plain.close();
    }
  });

  test('quiet, every read is answered afresh', async () => {
    const stored = t.cache.counts.stored;
    for (let i = 0; i < 3; i++) assert.equal((await get(t, `/v1/agents/${alice.handle}/chain`)).statusCode, 200);
    assert.equal(t.cache.counts.stored, stored, 'nothing copied');
  });

  test('while reads queue, a repeated read is the same answer from a copy, taking no turn, with its own Request-Id', async () => {
    const leaveOther = await hold(t.gate, '192.0.2.1');
    try {
      const url = `/v1/agents/${alice.handle}/chain`;
      const first = await get(t, url);
      assert.equal(first.statusCode, 200);
      const hits = t.cache.counts.hits;
      const leaveMine = await hold(t.gate, INJECT_IP);
      try {
        assert.equal((await get(t, `/v1/agents/${alice.handle}`)).statusCode, 429, 'a read not copied waits for a turn this client has not');
        const again = await get(t, url);
        assert.equal(again.statusCode, 200, 'the copy takes no turn');
        assert.equal(t.cache.counts.hits, hits + 1);
        assert.equal(again.body, first.body);
        for (const name of ['etag', 'cache-control', 'content-type', 'access-control-allow-origin', 'x-content-type-options']) {
          assert.equal(again.headers[name], first.headers[name], name);
        }
        assert.notEqual(again.headers['request-id'], first.headers['request-id']);
        assert.equal((await get(t, url, { 'if-none-match': String(first.headers.etag) })).statusCode, 304, 'a copy honours If-None-Match');
      } finally {
        leaveMine();
      }
    } finally {
      leaveOther();
    }
  });

  test('a copy is sent compressed as the client accepts', async () => {
    const leaveOther = await hold(t.gate, '192.0.2.1');
    try {
      const page = `/agents/${alice.handle}`;
      const fresh = await get(t, page, { 'accept-encoding': 'identity' });
      assert.equal(fresh.statusCode, 200);
      const br = await get(t, page, { 'accept-encoding': 'gzip, br' });
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(br.headers['content-type'], fresh.headers['content-type']);
      assert.match(String(br.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.equal(brotliDecompressSync(br.rawPayload).toString(), fresh.body);
      assert.equal((await get(t, page, { 'accept-encoding': 'identity' })).body, fresh.body);

      const made = await get(t, `/agents/${bob.handle}`, { 'accept-encoding': 'br' });
      assert.equal(made.headers['content-encoding'], 'br', 'the answer that makes a copy is compressed as its copies');
      assert.equal(Number(made.headers['content-length']), made.rawPayload.length);
      const copied = await get(t, `/agents/${bob.handle}`, { 'accept-encoding': 'identity' });
      assert.equal(brotliDecompressSync(made.rawPayload).toString(), copied.body);
    } finally {
      leaveOther();
    }
  });

  test('an agent reads what it wrote; another agent\'s write keeps its copies but not the global ones', async () => {
    const leaveOther = await hold(t.gate, '192.0.2.1');
    try {
      const chain = `/v1/agents/${alice.handle}/chain`;
      const before = (await get(t, chain)).json().records.length;
      assert.equal((await postDecision(t, alice.secret, { ...DECISION, quantity: 2 })).statusCode, 201);
      assert.equal((await get(t, chain)).json().records.length, before + 1, 'the new record is there at once');

      const ledgerBefore = (await get(t, '/v1/ledger')).json().data.length;
      await get(t, chain);
      const hits = t.cache.counts.hits;
      assert.equal((await postDecision(t, bob.secret, DECISION)).statusCode, 201);
      assert.equal((await get(t, chain)).statusCode, 200);
      assert.equal(t.cache.counts.hits, hits + 1, 'alice\'s chain is still a copy after bob wrote');
      assert.equal((await get(t, '/v1/ledger')).json().data.length, ledgerBefore + 1, 'the global ledger is afresh');
    } finally {
      leaveOther();
    }
  });

  test('/metrics counts the answers from copies, the copies made and their bytes', async () => {
    const text = (await get(t, '/metrics')).body;
    assert.ok(t.cache.counts.hits > 0 && t.cache.counts.stored > 0);
    assert.match(text, new RegExp(`ledger_read_cache_total\\{event="hit"\\} ${t.cache.counts.hits}\\b`));
    assert.match(text, new RegExp(`ledger_read_cache_total\\{event="stored"\\} ${t.cache.counts.stored}\\b`));
    assert.match(text, new RegExp(`ledger_read_cache_bytes ${t.cache.size.bytes}\\b`));
  });

  test('never copied: the export (no-cache), an error, a HEAD', async () => {
    const leaveOther = await hold(t.gate, '192.0.2.1');
    try {
      const stored = t.cache.counts.stored;
      for (const [url, status] of [[`/v1/export?agent=${alice.handle}`, 200], ['/v1/agents/nobody-here', 404], [`/v1/agents/${alice.handle}/chain?limit=0`, 400]] as const) {
        assert.equal((await get(t, url)).statusCode, status, url);
      }
      assert.equal((await t.app.inject({ method: 'HEAD', url: `/v1/agents/${bob.handle}` })).statusCode, 200);
      assert.equal(t.cache.counts.stored, stored);
    } finally {
      leaveOther();
    }
  });
});
